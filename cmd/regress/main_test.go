package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// result is what one in-process invocation of the command produced.
type result struct {
	code           int
	stdout, stderr string
}

// invoke runs the command in-process in dir.
func invoke(t *testing.T, dir string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, dir: dir}
	code := run(e, args)
	return result{code, out.String(), errb.String()}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// samples renders n result lines of one benchmark around ns nanoseconds.
func samples(name string, n int, ns float64, extra string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		v := ns * (1 + 0.002*float64(i%5))
		b.WriteString("Benchmark" + name + "-8\t1000\t" + ftoa(v) + " ns/op" + extra + "\n")
	}
	return b.String()
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

const good = "goos: linux\ngoarch: amd64\n"

func TestCompareExitCodes(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, "")+samples("B", 10, 2000, ""))
	same := write(t, dir, "same.txt", good+samples("A", 10, 1001, "")+samples("B", 10, 2001, ""))
	slow := write(t, dir, "slow.txt", good+samples("A", 10, 1200, "")+samples("B", 10, 2000, ""))
	gone := write(t, dir, "gone.txt", good+samples("A", 10, 1000, ""))
	other := write(t, dir, "other.txt", good+samples("C", 10, 1000, ""))
	classA := write(t, dir, "classa.txt", good+"class: cpu-amd64-a\n"+samples("A", 10, 1000, ""))
	classB := write(t, dir, "classb.txt", good+"class: cpu-amd64-b\n"+samples("A", 10, 1000, ""))
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"identical", []string{"compare", "--config", "none", base, same}, 0, "PASS"},
		{"regression", []string{"compare", "--config", "none", base, slow}, 1, "regression"},
		{"flags after files", []string{"compare", base, slow, "--config", "none", "--format", "json"}, 1, `"verdict": "fail"`},
		{"high threshold passes", []string{"compare", "--config", "none", "--threshold", "25%", base, slow}, 0, "PASS"},
		{"removed benchmark fails", []string{"compare", "--config", "none", base, gone}, 1, "removed"},
		{"nothing in common", []string{"compare", "--config", "none", base, other}, 3, "NO DATA"},
		{"class mismatch", []string{"compare", "--config", "none", classA, classB}, 3, "hardware classes differ"},
		{"class forced", []string{"compare", "--config", "none", "--force-class", classA, classB}, 0, "PASS"},
		{"repeated flags", []string{"compare", "--config", "none", "--old", base, "--new", same}, 0, "PASS"},
		{"comma lists", []string{"compare", "--config", "none", base + "," + gone, same}, 0, "PASS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := invoke(t, dir, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", tc.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestCompareStdin(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, ""))
	r := invoke(t, dir, good+samples("A", 10, 1000, ""), "compare", "--config", "none", base, "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = invoke(t, dir, good+samples("A", 10, 1000, ""), "compare", "--config", "none", "-", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "standard input can be read only once") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// TestBadInput checks that every kind of bad input exits 2 with one line
// naming the file (and the line, where there is one), and never panics.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, ""))
	long := strings.Repeat("x", 2<<20)
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919%251 + 1)
	}
	garbage[100] = 0
	tests := []struct {
		name    string
		content string // written to bad.txt unless empty and file is set
		args    []string
		want    string // the one-line message must contain it
	}{
		{"missing file", "", []string{"compare", "--config", "none", base, "nosuch.txt"}, "nosuch.txt: no such file or directory"},
		{"empty file", "\x00EMPTY", nil, "bad.txt: no benchmark results"},
		{"no benchmark lines", "goos: linux\nhello world\n", nil, "bad.txt: no benchmark results"},
		{"truncated line", good + "BenchmarkA-8 1000 12\n", nil, "bad.txt:3: missing units"},
		{"truncated after name", good + "BenchmarkA-8 10", nil, "bad.txt:3: missing measurements"},
		{"NaN", good + samples("A", 3, 1000, "") + "BenchmarkA-8 1000 NaN ns/op\n", nil, "bad.txt:6: BenchmarkA-8: NaN ns/op is not a finite, non-negative measurement"},
		{"negative", good + "BenchmarkA-8 1000 -5 ns/op\n", nil, "bad.txt:3: BenchmarkA-8: -5 ns/op is not a finite"},
		{"infinite", good + "BenchmarkA-8 1000 +Inf ns/op\n", nil, "bad.txt:3:"},
		{"binary garbage", string(garbage), nil, "bad.txt: binary data"},
		{"2 MB line", good + samples("A", 2, 1000, "") + "BenchmarkA-8 1000 5 ns/op " + long + "\n", nil, "bad.txt:5: line longer than"},
		{"conflicting unit metadata", "Unit GB/s better=higher\n" + good + samples("A", 2, 1000, "") + "Unit GB/s better=lower\n" + samples("A", 2, 1000, ""), nil, "bad.txt:6: metadata better of unit GB/s already set to higher"},
		{"unknown flag", "", []string{"compare", "--bogus", base, base}, "regress compare: flag --bogus: not a flag of regress compare; see 'regress help compare'"},
		{"bad flag value", "", []string{"compare", "--alpha", "x", base, base}, `regress compare: flag --alpha: invalid value "x": want a number; see 'regress help compare'`},
		{"flag without value", "", []string{"compare", base, base, "--format"}, "regress compare: flag --format: needs a value; see 'regress help compare'"},
		{"bad threshold flag", "", []string{"compare", "--config", "none", "--threshold", "5 percent", base, base}, "--threshold"},
		{"threshold without %", "", []string{"compare", "--config", "none", "--threshold", "5", base, base}, `--threshold: "5" is 500% as a fraction: write 5% or 0.05`},
		{"bad alpha flag", "", []string{"compare", "--config", "none", "--alpha", "2", base, base}, "--alpha 2"},
		{"bad format", "", []string{"compare", "--config", "none", "--format", "xml", base, base}, `--format "xml"`},
		{"bad correction", "", []string{"compare", "--config", "none", "--correction", "sidak", base, base}, `--correction "sidak"`},
		{"one side only", "", []string{"compare", "--config", "none", base}, "need baseline and current"},
		{"extra argument", "", []string{"compare", "--config", "none", base, base, base}, "unexpected argument"},
		{"unknown verb", "", []string{"frobnicate"}, `unknown verb "frobnicate"`},
		{"missing config", "", []string{"compare", "--config", "nope.yaml", base, base}, "nope.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args == nil {
				content := tc.content
				if content == "\x00EMPTY" {
					content = ""
				}
				bad := write(t, dir, "bad.txt", content)
				args = []string{"compare", "--config", "none", base, bad}
			}
			r := invoke(t, dir, "", args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			first, _, _ := strings.Cut(r.stderr, "\n")
			if !strings.Contains(first, tc.want) {
				t.Errorf("first stderr line %q lacks %q", first, tc.want)
			}
			if len(first) > 400 {
				t.Errorf("message is %d bytes long: it should be one short line", len(first))
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty on error: %q", r.stdout)
			}
		})
	}
}

// TestBadConfig checks benchmarks.yaml problems reach the user as exit 2
// with the file and line.
func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, ""))
	tests := []struct{ name, yaml, want string }{
		{"unknown key", "version: 1\ndefaults:\n  treshold: 5%\n", "bench.yaml:3:"},
		{"bad threshold", "version: 1\ndefaults:\n  threshold: 5 percent\n", "bench.yaml:3:"},
		{"threshold without %", "version: 1\ndefaults:\n  threshold: 5\n", `bench.yaml:3: threshold "5" is 500% as a fraction: write 5% or 0.05`},
		{"malformed", "version: 1\nrules:\n  - match: [\n", "bench.yaml:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write(t, dir, "bench.yaml", tc.yaml)
			r := invoke(t, dir, "", "compare", "--config", "bench.yaml", base, base)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != 2 || !strings.Contains(first, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// TestConfigFoundAtRepoRoot checks that benchmarks.yaml at the root of the
// enclosing git repository is used without --config.
func TestConfigFoundAtRepoRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	base := write(t, sub, "base.txt", good+samples("A", 10, 1000, ""))
	slow := write(t, sub, "slow.txt", good+samples("A", 10, 1100, ""))
	if r := invoke(t, sub, "", "compare", base, slow); r.code != 1 {
		t.Fatalf("without a config a 10%% slowdown should fail: exit %d %s", r.code, r.stderr)
	}
	write(t, root, "benchmarks.yaml", "version: 1\ndefaults: {threshold: 20%}\n")
	if r := invoke(t, sub, "", "compare", base, slow); r.code != 0 {
		t.Fatalf("with threshold 20%% from the root config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestUnknownUnitIsReportedNotGated(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, " 5 widgets"))
	cur := write(t, dir, "cur.txt", good+samples("A", 10, 1000, " 50 widgets"))
	r := invoke(t, dir, "", "compare", "--config", "none", "--format", "json", base, cur)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (an unknown unit is not gated)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "unit widgets has no known direction") {
		t.Errorf("no warning naming the unit:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, `"gate": "off"`) {
		t.Errorf("the widgets comparison should have gate off:\n%s", r.stdout)
	}
}

func TestOutFileIsWrittenAtomically(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, ""))
	r := invoke(t, dir, "", "compare", "--config", "none", "--format", "json", "--out", "report.json", base, base)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "report.json")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("report.json mode %v, want -rw-r--r--", fi.Mode())
	}
	if !json.Valid(data) {
		t.Fatalf("report.json is not JSON: %s", data)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	r = invoke(t, dir, "", "compare", "--config", "none", "--out", filepath.Join(dir, "nosuchdir", "r.txt"), base, base)
	if r.code != 2 || !strings.Contains(r.stderr, "--out") {
		t.Errorf("unwritable --out: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestBaselineSaveNeedsMinSamples stores files given on the command line: a 5-sample file is refused (exit 2,
// naming the benchmark, its count and min_samples) and nothing is written; --force stores it; a 6-sample file
// is stored without it. A gate: off unit with fewer samples does not count.
func TestBaselineSaveNeedsMinSamples(t *testing.T) {
	dir := t.TempDir()
	const head = "class: gpu-test-card\nUnit hot-ns better=lower\n"
	five := write(t, dir, "five.bench", head+samples("RMSNorm/rows=8", 5, 1000, " 900 hot-ns")+samples("GELU/rows=8", 7, 500, ""))
	six := write(t, dir, "six.bench", head+samples("RMSNorm/rows=8", 6, 1000, ""))
	stored := filepath.Join(dir, "baselines", "gpu-test-card.bench")

	res := invoke(t, dir, "", "baseline", "save", five)
	if res.code != 2 {
		t.Fatalf("5 samples: exit %d, want 2\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"RMSNorm/rows=8 has 5 samples of sec/op", "below min_samples 6", "--force"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("message lacks %q: %s", want, res.stderr)
		}
	}
	if _, err := os.Stat(stored); !os.IsNotExist(err) {
		t.Fatalf("a refused baseline was written (%v)", err)
	}

	if res := invoke(t, dir, "", "baseline", "save", "--force", five); res.code != 0 {
		t.Fatalf("--force: exit %d\n%s", res.code, res.stderr)
	}
	if data, err := os.ReadFile(stored); err != nil || !strings.Contains(string(data), "RMSNorm/rows=8") {
		t.Fatalf("--force did not store the file: %v", err)
	}

	if res := invoke(t, dir, "", "baseline", "save", six); res.code != 0 {
		t.Fatalf("6 samples: exit %d\n%s", res.code, res.stderr)
	}

	// With hot-ns gated off, a short hot-ns series does not block a 6-sample file.
	write(t, dir, "benchmarks.yaml", "version: 1\nunits:\n  hot-ns: {better: lower, gate: off}\n")
	mixed := write(t, dir, "mixed.bench", head+samples("RMSNorm/rows=8", 6, 1000, "")+
		"BenchmarkRMSNorm/rows=8-8\t1000\t1000 ns/op\t900 hot-ns\n")
	if res := invoke(t, dir, "", "baseline", "save", "--config", "benchmarks.yaml", mixed); res.code != 0 {
		t.Fatalf("gate-off unit short: exit %d\n%s", res.code, res.stderr)
	}
}

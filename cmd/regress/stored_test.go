package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// markerSuite writes a stand-in for a prebuilt test binary: a script that
// leaves the file marker when it is started, and otherwise prints one
// result of BenchmarkA.
func markerSuite(t *testing.T, dir, marker string) string {
	t.Helper()
	path := filepath.Join(dir, "suite.test")
	script := "#!/bin/sh\necho started >> '" + marker + "'\necho 'BenchmarkA-8 1 1000 ns/op'\necho PASS\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// corruptBaseline is a stored baseline whose line 20 holds NaN.
func corruptBaseline() string {
	var b strings.Builder
	b.WriteString("class: cpu-test\n")
	for i := 2; i < 20; i++ {
		b.WriteString("BenchmarkA-8\t1000\t1000 ns/op\n")
	}
	b.WriteString("BenchmarkA-8\t1000\tNaN ns/op\n")
	return b.String()
}

// TestStoredBaselineIsCheckedFirst checks that a stored-mode check reads
// and parses the stored baseline before it builds or runs anything: a
// corrupt baseline fails at once, named as committed (path@commit:line),
// and the suite was never started (its marker file does not exist).
func TestStoredBaselineIsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	bin := markerSuite(t, dir, marker)

	// Without git: --baseline-file.
	write(t, dir, "corrupt.bench", corruptBaseline())
	res := invoke(t, dir, "", "check", "--mode", "stored", "--baseline-file", "corrupt.bench", "--current-bin", bin,
		"--config", "none", "--count", "6", "--quiet")
	want := "regress check: corrupt.bench:20: BenchmarkA-8: NaN ns/op is not a finite, non-negative measurement\n"
	if res.code != 2 || res.stderr != want {
		t.Errorf("--baseline-file: exit %d, stderr %q; want 2 and %q", res.code, res.stderr, want)
	}

	// In a repository: baselines/<class>.bench as committed at the
	// baseline ref, with a package whose build or run would show.
	r := &gitRepo{t: t, dir: filepath.Join(dir, "repo")}
	os.Mkdir(r.dir, 0o755)
	r.git("init", "-q", "-b", "main")
	r.write("go.mod", "module example.com/stored\n\ngo 1.26\n")
	r.write("p/p_test.go", `package p

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	os.WriteFile("`+marker+`", []byte("started"), 0o644)
	os.Exit(m.Run())
}

func BenchmarkA(b *testing.B) {
	for b.Loop() {
	}
}
`)
	r.write("baselines/cpu-test.bench", corruptBaseline())
	r.git("add", "-A")
	r.git("commit", "-qm", "a corrupt baseline")
	short := r.git("rev-parse", "--short=7", "HEAD")
	want = "baselines/cpu-test.bench@" + short + ":20: BenchmarkA-8: NaN ns/op is not a finite, non-negative measurement\n"
	for _, args := range [][]string{
		{"check", "--mode", "stored", "--class", "cpu-test", "--config", "none", "--count", "6"},
		{"check", "--mode", "stored", "--class", "cpu-test", "--config", "none", "--count", "6", "--current-bin", bin},
		{"check", "--mode", "stored", "--class", "cpu-test", "--config", "none", "--count", "6", "--current", "."},
	} {
		res := invoke(t, r.dir, "", args...)
		if res.code != 2 || !strings.HasSuffix(res.stderr, "regress check: "+want) || strings.Contains(res.stderr, "building") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args, res.code, res.stderr, want)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the suite was started before the stored baseline was read (%v)", err)
	}

	// A good stored baseline: the progress line names it once.
	good := strings.Replace(corruptBaseline(), "NaN", "1000", 1)
	r.write("baselines/cpu-test.bench", good)
	r.git("commit", "-qam", "a good baseline")
	res = invoke(t, r.dir, "", "check", "--mode", "stored", "--class", "cpu-test", "--config", "none", "--count", "6",
		"--current-bin", bin, "--format", "json")
	if res.code == 2 {
		t.Fatalf("good baseline: exit 2\n%s", res.stderr)
	}
	if !strings.Contains(res.stderr, "regress check: stored main@") || strings.Contains(res.stderr, "stored stored") {
		t.Errorf("progress line:\n%s", res.stderr)
	}
}

// TestBaselineShowOutsideRepository: outside a git repository there is
// nothing stored and nowhere to store, and the message says so.
func TestBaselineShowOutsideRepository(t *testing.T) {
	dir := t.TempDir()
	res := invoke(t, dir, "", "baseline", "show", "--class", "cpu-test", "--config", "none")
	if res.code != 2 || !strings.Contains(res.stderr, dir+" is not a git repository") || strings.Contains(res.stderr, "store one on main") {
		t.Errorf("exit %d, stderr %q", res.code, res.stderr)
	}
	// A baselines directory there is still shown.
	os.Mkdir(filepath.Join(dir, "baselines"), 0o755)
	write(t, dir, filepath.Join("baselines", "cpu-test.bench"), strings.Replace(corruptBaseline(), "NaN", "1000", 1))
	if res := invoke(t, dir, "", "baseline", "show", "--class", "cpu-test", "--config", "none"); res.code != 0 {
		t.Errorf("with baselines/: exit %d, stderr %q", res.code, res.stderr)
	}
}

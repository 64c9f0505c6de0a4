package main

import (
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/runner"
)

var update = flag.Bool("update", false, "rewrite docs/commands.md and the golden files in testdata")

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		res := invoke(t, t.TempDir(), "", args...)
		if res.code != 0 || res.stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, res.code, res.stderr)
		}
		for _, want := range []string{"regress " + runner.Version + "\n", "\nmodule:   ", "\nrevision: ", "\ngo:       go1."} {
			if !strings.Contains(res.stdout, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, res.stdout)
			}
		}
	}
	if res := invoke(t, t.TempDir(), "", "version", "extra"); res.code != 2 {
		t.Errorf("version extra: exit %d, want 2", res.code)
	}
}

// TestVersionText checks what regress version says of a build from a
// checkout with changes, of a tagged module and of a build without VCS
// information.
func TestVersionText(t *testing.T) {
	dev := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/kernelwatch/kernelwatch", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
			{Key: "vcs.revision", Value: "c0fd044b321e6c477142a18636164a708b2c16d9"}, {Key: "vcs.time", Value: "2026-11-26T07:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}}
	want := "regress " + runner.Version + "\n" +
		"module:   github.com/kernelwatch/kernelwatch (devel)\n" +
		"revision: c0fd044b321e6c477142a18636164a708b2c16d9+dirty (2026-11-26T07:00:00Z)\n" +
		"go:       go1.26.8 linux/amd64\n"
	if got := versionText(dev); got != want {
		t.Errorf("devel build:\n%s\nwant:\n%s", got, want)
	}
	tagged := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/kernelwatch/kernelwatch", Version: "v0.1.0"}}
	got := versionText(tagged)
	if !strings.Contains(got, "module:   github.com/kernelwatch/kernelwatch v0.1.0\n") || !strings.Contains(got, "revision: unknown (built without version control information") {
		t.Errorf("tagged module without VCS settings:\n%s", got)
	}
}

// TestHelpVerb checks that regress help VERB prints that verb's help, the
// same as VERB -h, and that bare help lists the verbs.
func TestHelpVerb(t *testing.T) {
	dir := t.TempDir()
	for _, v := range verbs {
		args := append([]string{"help"}, strings.Fields(v.name)...)
		res := invoke(t, dir, "", args...)
		if res.code != 0 || !strings.HasPrefix(res.stdout, usageLine(&v)+"\n\n") || strings.Contains(res.stdout, " \n") {
			t.Errorf("%v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
			continue
		}
		if v.name == "help" {
			continue
		}
		if dash := invoke(t, dir, "", append(strings.Fields(v.name), "-h")...); dash.code != 0 || dash.stdout != res.stdout {
			t.Errorf("%s -h differs from regress help %s:\n%s", v.name, v.name, dash.stdout)
		}
	}
	res := invoke(t, dir, "", "help")
	if res.code != 0 || !strings.Contains(res.stdout, "  baseline save ") || !strings.Contains(res.stdout, "exit codes:") {
		t.Errorf("help: exit %d\n%s", res.code, res.stdout)
	}
	res = invoke(t, dir, "", "help", "frobnicate")
	if res.code != 2 || !strings.Contains(res.stderr, `unknown verb "frobnicate"`) {
		t.Errorf("help frobnicate: exit %d %q", res.code, res.stderr)
	}
}

// flagNames lists the flags a verb's help shows.
func flagNames(t *testing.T, help string) []string {
	t.Helper()
	_, list, ok := strings.Cut(help, "\nflags:\n")
	if !ok {
		t.Fatalf("no flags in:\n%s", help)
	}
	var names []string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "--") && strings.HasPrefix(l, "  --") {
			names = append(names, f[0])
		}
	}
	return names
}

// TestEachVerbListsItsOwnFlags checks the flags help lists against what
// each verb acts on, and that their texts are true for the verb.
func TestEachVerbListsItsOwnFlags(t *testing.T) {
	dir := t.TempDir()
	help := func(verb ...string) string {
		res := invoke(t, dir, "", append([]string{"help"}, verb...)...)
		if res.code != 0 {
			t.Fatalf("help %v: exit %d %s", verb, res.code, res.stderr)
		}
		return res.stdout
	}
	want := map[string][]string{
		"baseline show": {"--baselines-ref", "--class", "--config", "--device"},
		"merge":         {"--out"},
		"run": {"--bench", "--benchtime", "--bin", "--config", "--count", "--device", "--gpus", "--list", "--out", "--quiet",
			"--shard", "--shard-by", "--tags"},
		"baseline save": {"--baselines-ref", "--bench", "--benchtime", "--class", "--commit", "--config", "--count", "--device",
			"--force", "--gpus", "--quiet", "--tags"},
		"calibrate": {"--across-history", "--baselines-ref", "--bench", "--benchtime", "--class", "--commit", "--config", "--count",
			"--device", "--dir", "--gpus", "--quiet", "--ref", "--seed", "--since", "--tags"},
	}
	for verb, flags := range want {
		if got := flagNames(t, help(strings.Fields(verb)...)); !slices.Equal(got, flags) {
			t.Errorf("help %s lists %v, want %v", verb, got, flags)
		}
	}
	check := help("check")
	for _, f := range []string{"--baseline", "--seed", "--shard", "--threshold", "--wide", "--deadline"} {
		if !slices.Contains(flagNames(t, check), f) {
			t.Errorf("help check lacks %s", f)
		}
	}
	for _, f := range []string{"--list", "--bin", "--commit"} {
		if slices.Contains(flagNames(t, check), f) {
			t.Errorf("help check lists %s, a flag of another verb", f)
		}
	}
	// One side runs in regress run: no side to pick, no count per side.
	run := help("run")
	if strings.Contains(run, "--seed") || strings.Contains(run, "side") {
		t.Errorf("help run speaks of sides:\n%s", run)
	}
	if !strings.Contains(check, "picks which side runs first") || !strings.Contains(check, "--count N               interleaved rounds") {
		t.Errorf("help check does not say what --seed and --count do in a check:\n%s", check)
	}
	// Old spellings are accepted but not listed.
	for verb, old := range map[string]string{"merge": "-o ", "report": "--html", "calibrate": "--rounds"} {
		if h := help(verb); strings.Contains(h, "\n  "+old) {
			t.Errorf("help %s lists the old spelling %s", verb, old)
		}
	}
}

// TestOldSpellings checks that the hidden old spellings still work.
func TestOldSpellings(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "a.bench", good+samples("A", 2, 1000, ""))
	for _, args := range [][]string{{"merge", "-o", "o1.bench", f}, {"merge", "--out", "o2.bench", f}} {
		if res := invoke(t, dir, "", args...); res.code != 0 {
			t.Fatalf("%v: exit %d %s", args, res.code, res.stderr)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir, "o1.bench"))
	b, _ := os.ReadFile(filepath.Join(dir, "o2.bench"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("merge -o and --out wrote different files:\n%s\n%s", a, b)
	}
	if res := invoke(t, dir, "", "calibrate", "--rounds", "3"); res.code != 2 || !strings.Contains(res.stderr, "--count 3: want at least 6") {
		t.Errorf("calibrate --rounds 3: exit %d %q", res.code, res.stderr)
	}
	if res := invoke(t, dir, "", "report", "--html"); res.code != 2 || !strings.Contains(res.stderr, "flag --html: needs a value") {
		t.Errorf("report --html: exit %d %q", res.code, res.stderr)
	}
}

// TestFlagErrorsPointAtHelp checks that command-line mistakes say what is
// wrong and where the verb's help is, in one line that never ends in
// ": usage".
func TestFlagErrorsPointAtHelp(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--count", "x"}, `regress check: flag --count: invalid value "x": want an integer; see 'regress help check'`},
		{[]string{"--count", "x"}, `regress check: flag --count: invalid value "x": want an integer; see 'regress help check'`},
		{[]string{"check", "--bogus"}, "regress check: flag --bogus: not a flag of regress check; see 'regress help check'"},
		{[]string{"run", "--quiet=maybe"}, `regress run: flag --quiet: invalid value "maybe": want true or false; see 'regress help run'`},
		{[]string{"run", "--seed", "1"}, "regress run: flag --seed: not a flag of regress run; see 'regress help run'"},
		{[]string{"baseline", "show", "--bench", "x"}, "regress baseline show: flag --bench: not a flag of regress baseline show; see 'regress help baseline show'"},
		{[]string{"comment", "--timeout", "soon", "r.json"}, `regress comment: flag --timeout: invalid value "soon": want a duration such as 30s or 2m; see 'regress help comment'`},
		{[]string{"check", "extra"}, `regress check: unexpected argument "extra" (go test flags go after --); see 'regress help check'`},
		{[]string{"merge"}, "regress merge: no files to merge; see 'regress help merge'"},
		{[]string{"check", "--threshold", "5", "--config", "none"}, `regress check: --threshold: "5" is 500% as a fraction: write 5% or 0.05`},
		{[]string{"frobnicate"}, `regress: unknown verb "frobnicate"; see 'regress help'`},
	} {
		res := invoke(t, dir, "", tc.args...)
		if res.code != 2 || res.stderr != tc.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q\nwant 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
		if strings.Contains(res.stderr, ": usage") {
			t.Errorf("%v: %q", tc.args, res.stderr)
		}
	}
}

// TestCommandReference keeps docs/commands.md in step with the verbs'
// flag sets: -update rewrites it.
func TestCommandReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "commands.md")
	got := commandReference()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/regress -run TestCommandReference -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("docs/commands.md is not what the flag sets say; rerun go test ./cmd/regress -run TestCommandReference -update\n%s",
			firstDifference(string(want), got))
	}
	for _, v := range verbs {
		if !strings.Contains(got, "\n## regress "+v.name+"\n") {
			t.Errorf("the reference lacks regress %s", v.name)
		}
		for _, f := range listedFlags(&v) {
			if !strings.Contains(got, "| `--"+f.Name) {
				t.Errorf("the reference lacks %s --%s", v.name, f.Name)
			}
		}
	}
	for _, code := range []string{"| 0 | pass", "| 1 | a gated regression", "| 2 | usage", "| 3 | nothing comparable"} {
		if !strings.Contains(got, code) {
			t.Errorf("the exit-code table lacks %q", code)
		}
	}
}

// firstDifference shows the first line where two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + a + "\n  from code: " + b
		}
	}
	return ""
}

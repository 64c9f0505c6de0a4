package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/history"
)

// benchFile renders one stored baseline: 5 samples of two benchmarks, with
// 1% log-normal noise, FNV scaled by fnv.
func benchFile(rng *rand.Rand, commit string, fnv float64) string {
	var b strings.Builder
	b.WriteString("class: cpu-x\ncommit: " + commit + "\ngoos: linux\n")
	for i := 0; i < 5; i++ {
		for _, bm := range []struct {
			name string
			ns   float64
		}{{"FNV", 20000 * fnv}, {"Xor", 9000}} {
			fmt.Fprintf(&b, "Benchmark%s-8\t1000\t%.1f ns/op\n", bm.name, bm.ns*math.Exp(rng.NormFloat64()*0.01))
		}
	}
	return b.String()
}

// newReadmeRepo is a repository with one commit on main: a README.
func newReadmeRepo(t *testing.T) *gitRepo {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("README", "x\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "start")
	return r
}

// TestHistoryFindsStepCommit is the acceptance test of issue #12: a
// repository whose baselines/cpu-x.bench gets a 10% step at a known commit;
// regress history names that commit, and --gate fails on it.
func TestHistoryFindsStepCommit(t *testing.T) {
	r := newReadmeRepo(t)
	rng := rand.New(rand.NewPCG(12, 12))
	const n, at = 24, 15
	var stepSHA string
	for i := 0; i < n; i++ {
		fnv := 1.0
		if i >= at {
			fnv = 1.10
		}
		r.write("baselines/cpu-x.bench", benchFile(rng, fmt.Sprintf("c%02d", i), fnv))
		if i%4 == 1 {
			r.write("README", fmt.Sprintf("unrelated change %d\n", i)) // commits that do not touch the baseline too
			r.git("commit", "-qm", "unrelated", "--", "README")
		}
		r.git("add", "-A")
		r.git("commit", "-qm", fmt.Sprintf("baseline %d", i))
		if i == at {
			stepSHA = r.git("rev-parse", "HEAD")
		}
	}
	res := invoke(t, r.dir, "", "history", "--config", "none", "--format", "json")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var h history.History
	if err := json.Unmarshal([]byte(res.stdout), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Snapshots) != n || h.Class != "cpu-x" {
		t.Fatalf("%d snapshots of class %q, want %d of cpu-x", len(h.Snapshots), h.Class, n)
	}
	var found bool
	for _, s := range h.Steps {
		t.Logf("step: %s %s at %s, %+.1f%% [%+.1f%%, %+.1f%%], p=%.3f, gated=%v", s.Name, s.Unit, s.Label,
			100*float64(s.Delta), 100*float64(s.DeltaLo), 100*float64(s.DeltaHi), s.P, s.Gated)
		if s.Name == "FNV" && s.Unit == "sec/op" {
			found = s.Commit == stepSHA && s.Gated && float64(s.Delta) > 0.08 && float64(s.Delta) < 0.12
		} else {
			t.Errorf("step in %s %s, which did not change", s.Name, s.Unit)
		}
	}
	if !found {
		t.Errorf("no gated FNV step at %s (the commit of baseline %d):\n%s", stepSHA[:7], at, res.stdout)
	}

	text := invoke(t, r.dir, "", "history", "--config", "none", "--gate")
	if text.code != 1 || !strings.Contains(text.stdout, stepSHA[:7]) || !strings.Contains(text.stdout, "1 step (1 worse and gated)") {
		t.Errorf("--gate: exit %d, want 1 naming %s\n%s%s", text.code, stepSHA[:7], text.stdout, text.stderr)
	}
	// After the step, the window holds no step: --gate passes.
	after := invoke(t, r.dir, "", "history", "--config", "none", "--gate", "--since", stepSHA)
	if after.code != 0 || !strings.Contains(after.stdout, "no steps") {
		t.Errorf("--since the step: exit %d, want 0 and no steps\n%s%s", after.code, after.stdout, after.stderr)
	}
	// The same history from a directory of runs.
	dir := filepath.Join(t.TempDir(), "runs")
	os.Mkdir(dir, 0o755)
	for i := 0; i < n; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("run-%02d.bench", i)), []byte(r.git("show", fmt.Sprintf("HEAD~%d:baselines/cpu-x.bench", 0))), 0o644)
	}
	flat := invoke(t, r.dir, "", "history", "--config", "none", "--dir", dir, "--format", "markdown")
	if flat.code != 0 || !strings.Contains(flat.stdout, "no steps") {
		t.Errorf("identical runs: exit %d\n%s%s", flat.code, flat.stdout, flat.stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--since", "nope"}, 2, "--since nope: no such commit"},
		{[]string{"--class", "cpu-y"}, 3, "no commit on HEAD@"},
		{[]string{"--class", "Bad Class"}, 2, "--class \"Bad Class\""},
		{[]string{"--dir", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"--format", "csv"}, 2, "--format \"csv\""},
		{[]string{"--baselines-ref", "kernelwatch-baselines"}, 2, "--baselines-ref kernelwatch-baselines: no such commit"},
	} {
		res := invoke(t, r.dir, "", append([]string{"history", "--config", "none"}, tc.args...)...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.want) || strings.Count(strings.TrimSpace(res.stderr), "\n") > 1 {
			t.Errorf("history %v: exit %d, stderr %q; want %d and %q", tc.args, res.code, res.stderr, tc.code, tc.want)
		}
	}
	os.WriteFile(filepath.Join(dir, "run-99.bench"), []byte("BenchmarkFNV-8 1000 NaN ns/op\n"), 0o644)
	if res := invoke(t, r.dir, "", "history", "--dir", dir); res.code != 2 || !strings.Contains(res.stderr, "run-99.bench:1:") {
		t.Errorf("bad file: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestBaselinesRef is the acceptance test of issue #12 for --baselines-ref:
// baselines are committed to and read back from a separate branch while
// main, the index and the working tree stay as they were.
func TestBaselinesRef(t *testing.T) {
	r := newReadmeRepo(t)
	r.write("README", "work in progress\n") // an uncommitted change that must survive
	mainSHA := r.git("rev-parse", "main")
	status := r.git("status", "--porcelain")
	rng := rand.New(rand.NewPCG(1, 2))
	in := filepath.Join(t.TempDir(), "run.bench")
	for i, fnv := range []float64{1, 1, 1.2} {
		os.WriteFile(in, []byte(benchFile(rng, fmt.Sprintf("c%d", i), fnv)), 0o644)
		res := invoke(t, r.dir, "", "baseline", "save", "--force", "--config", "none", "--baselines-ref", "kernelwatch-baselines", in)
		if res.code != 0 || !strings.Contains(res.stderr, "committed to kernelwatch-baselines@") {
			t.Fatalf("save %d: exit %d\n%s", i, res.code, res.stderr)
		}
	}
	if got := r.git("rev-parse", "main"); got != mainSHA {
		t.Errorf("main moved: %s → %s", mainSHA, got)
	}
	if got := r.git("status", "--porcelain"); got != status {
		t.Errorf("working tree changed: %q → %q", status, got)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "baselines")); !os.IsNotExist(err) {
		t.Errorf("baselines/ written into the working tree: %v", err)
	}
	if got := r.git("rev-list", "--count", "kernelwatch-baselines"); got != "3" {
		t.Errorf("kernelwatch-baselines has %s commits, want 3", got)
	}
	show := invoke(t, r.dir, "", "baseline", "show", "--class", "cpu-x", "--baselines-ref", "kernelwatch-baselines", "--config", "none")
	if show.code != 0 || !strings.Contains(show.stdout, "commit           c2") || !strings.Contains(show.stdout, "on kernelwatch-baselines@") {
		t.Errorf("show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	hist := invoke(t, r.dir, "", "history", "--baselines-ref", "kernelwatch-baselines", "--config", "none", "--format", "json")
	var h history.History
	if hist.code != 0 || json.Unmarshal([]byte(hist.stdout), &h) != nil || len(h.Snapshots) != 3 {
		t.Errorf("history: exit %d, %d snapshots\n%s", hist.code, len(h.Snapshots), hist.stderr)
	}
	// Storing the same file again commits nothing.
	res := invoke(t, r.dir, "", "baseline", "save", "--force", "--config", "none", "--baselines-ref", "kernelwatch-baselines", in)
	if res.code != 0 || !strings.Contains(res.stderr, "unchanged on kernelwatch-baselines@") {
		t.Errorf("save again: exit %d\n%s", res.code, res.stderr)
	}
	// The branch checked out here is refused.
	res = invoke(t, r.dir, "", "baseline", "save", "--force", "--config", "none", "--baselines-ref", "main", in)
	if res.code != 2 || !strings.Contains(res.stderr, "main is the branch checked out here") {
		t.Errorf("save to main: exit %d\n%s", res.code, res.stderr)
	}
	// --commit without a ref commits only the baseline on this branch.
	res = invoke(t, r.dir, "", "baseline", "save", "--force", "--config", "none", "--commit", in)
	if res.code != 0 || !strings.Contains(res.stderr, "committed as HEAD@") {
		t.Fatalf("--commit: exit %d\n%s", res.code, res.stderr)
	}
	if got := r.git("show", "--name-only", "--format=", "HEAD"); got != "baselines/cpu-x.bench" {
		t.Errorf("--commit committed %q", got)
	}
	if got := r.git("status", "--porcelain"); got != status {
		t.Errorf("--commit changed the rest of the working tree: %q → %q", status, got)
	}
}

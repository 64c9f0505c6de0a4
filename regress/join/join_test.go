package join_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress"
	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/join"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
	"github.com/kernelwatch/kernelwatch/regress/synth"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// splitShards writes the two sides of a synthetic suite as n shard
// directories, the way regress check --shard i/n --results writes them: each
// shard's files hold the header of the run and the results of the
// top-level benchmarks runner.Shard gives it.
func splitShards(t *testing.T, base, cur []byte, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 1; i <= n; i++ {
		sh := runner.Shard{I: i, N: n}
		dir := filepath.Join(root, fmt.Sprintf("shard%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, side := range []struct {
			file string
			data []byte
		}{{join.BaselineFile, base}, {join.CurrentFile, cur}} {
			h := runner.Header{Run: runner.RunInfo{Count: 10, Seed: 1, Shard: sh.String()}}
			out := bytes.NewBuffer(h.Lines())
			s := bufio.NewScanner(bytes.NewReader(side.data))
			for s.Scan() {
				l := s.Text()
				if name, ok := strings.CutPrefix(l, "Benchmark"); ok {
					top, _, _ := strings.Cut(strings.Fields(name)[0], "/")
					if !sh.Has("Benchmark" + top) {
						continue
					}
				}
				out.WriteString(l + "\n")
			}
			if err := os.WriteFile(filepath.Join(dir, side.file), out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func same(a, b report.Number) bool {
	return a == b || math.IsNaN(float64(a)) && math.IsNaN(float64(b))
}

// TestJoinedCorrectionIsOneCorrection splits a synthetic suite with injected
// regressions into three shards and joins them: every comparison's
// p_adjusted and verdict equal those of one comparison of the whole suite,
// that is, one correction over all shards; and they differ from what a
// correction per shard would give.
func TestJoinedCorrectionIsOneCorrection(t *testing.T) {
	s := synth.Default(11)
	effects := map[int]synth.Effect{}
	for i := 0; i < s.Benchmarks; i += 9 {
		effects[i] = synth.Effect{Time: 1.12}
	}
	base, cur := s.Generate(effects)
	dir := t.TempDir()
	whole := [2]string{filepath.Join(dir, "base.txt"), filepath.Join(dir, "cur.txt")}
	os.WriteFile(whole[0], base, 0o644)
	os.WriteFile(whole[1], cur, 0o644)
	opt := verdict.Options{Config: config.Default()}
	want, err := regress.Compare(regress.Input{Baseline: whole[:1], Current: whole[1:]}, opt)
	if err != nil {
		t.Fatal(err)
	}

	dirs := splitShards(t, base, cur, 3)
	set, err := join.Read(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Baseline) != 3 || len(set.Current) != 3 || set.Stopped != "" || set.Rounds != 10 {
		t.Fatalf("set: %d+%d files, stopped %q after %d rounds", len(set.Baseline), len(set.Current), set.Stopped, set.Rounds)
	}
	got, err := regress.Compare(regress.Input{Baseline: set.Baseline, Current: set.Current}, opt)
	if err != nil {
		t.Fatal(err)
	}
	wantBy := map[string]report.Comparison{}
	for _, c := range want.Comparisons {
		wantBy[c.Name+" "+c.Unit] = c
	}
	family := 0
	for _, c := range got.Comparisons {
		w, ok := wantBy[c.Name+" "+c.Unit]
		if !ok {
			t.Errorf("%s %s: not in the unsharded report", c.Name, c.Unit)
			continue
		}
		if !same(c.PAdjusted, w.PAdjusted) || !same(c.P, w.P) || c.Verdict != w.Verdict {
			t.Errorf("%s %s: joined p %v adj %v %s, unsharded p %v adj %v %s", c.Name, c.Unit, c.P, c.PAdjusted, c.Verdict, w.P, w.PAdjusted, w.Verdict)
		}
		if c.PAdjusted.Valid() {
			family++
		}
	}
	if len(got.Comparisons) != len(want.Comparisons) || got.Counts != want.Counts {
		t.Errorf("joined %d comparisons %+v, unsharded %d %+v", len(got.Comparisons), got.Counts, len(want.Comparisons), want.Counts)
	}
	t.Logf("%d comparisons, %d in the corrected family, %d regressions: joined p_adjusted = unsharded p_adjusted for each",
		len(got.Comparisons), family, got.Counts.Regression)

	// A correction per shard corrects over smaller families: it would
	// report smaller p_adjusted than the one correction does.
	smaller := 0
	for i := range dirs {
		per, err := regress.Compare(regress.Input{Baseline: set.Baseline[i : i+1], Current: set.Current[i : i+1]}, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range per.Comparisons {
			if w := wantBy[c.Name+" "+c.Unit]; c.PAdjusted.Valid() && float64(c.PAdjusted) < float64(w.PAdjusted) {
				smaller++
			}
		}
	}
	if smaller == 0 {
		t.Errorf("a correction per shard gave the same p_adjusted as one correction: the test cannot tell them apart")
	}
	t.Logf("a correction per shard would have given %d comparisons a smaller p_adjusted", smaller)
}

// TestJoinIncomplete joins shards of which one stopped at its deadline and
// one was interrupted: the joined run has the fewest rounds and the signal.
func TestJoinIncomplete(t *testing.T) {
	s := synth.Default(2)
	s.Benchmarks = 16
	base, cur := s.Generate(nil)
	dirs := splitShards(t, base, cur, 3)
	stop := func(dir, how string, rounds int) {
		for _, f := range []string{join.BaselineFile, join.CurrentFile} {
			p := filepath.Join(dir, f)
			data, _ := os.ReadFile(p)
			data = bytes.Replace(data, []byte("seed: 1\n"), fmt.Appendf(nil, "seed: 1\nrounds-done: %d\nstopped: %s\n", rounds, how), 1)
			os.WriteFile(p, data, 0o644)
		}
	}
	stop(dirs[0], runner.StopDeadline, 8)
	set, err := join.Read(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if set.Rounds != 8 || set.Stopped != runner.StopDeadline {
		t.Errorf("one deadline stop: %d rounds, stopped %q", set.Rounds, set.Stopped)
	}
	stop(dirs[2], runner.StopSignal, 9)
	if set, err = join.Read(dirs); err != nil {
		t.Fatal(err)
	}
	if set.Rounds != 8 || set.Stopped != runner.StopSignal {
		t.Errorf("and a signal: %d rounds, stopped %q; want 8 and signal", set.Rounds, set.Stopped)
	}
	// The sides of one shard must describe the same run.
	p := filepath.Join(dirs[1], join.CurrentFile)
	data, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(data, []byte("count: 10\n"), []byte("count: 9\n"), 1), 0o644)
	if _, err := join.Read(dirs); err == nil || !strings.Contains(err.Error(), "describe different runs (count 10, seed 1, shard 2/3; count 9, seed 1, shard 2/3)") {
		t.Errorf("sides of different runs: %v", err)
	}
}

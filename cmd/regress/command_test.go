package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// commandBench is a suite command that needs nothing but a POSIX shell and
// awk: a synthetic, deterministic sample stream. Each process prints one
// sample of four kernels: a base time times the factor in kernel.conf
// (what the code under test "costs"), times noise of ±1% drawn from the
// seed, round and side (so that no two processes print the same numbers).
const commandBench = `#!/bin/sh
# Synthetic kernels for the suite.command tests.
factor=$(cat kernel.conf)
awk -v f="$factor" -v seed="$KERNELWATCH_SEED" -v r="$KERNELWATCH_ROUND" -v side="$KERNELWATCH_SIDE" 'BEGIN {
  srand(seed * 1000 + r * 2 + (side == "current"))
  split("Alpha Beta Gamma Delta", names, " ")
  print "device: synthetic"
  for (k = 1; k <= 4; k++) {
    noise = 1 + 0.02 * (rand() - 0.5)
    printf "Benchmark%s/dtype=fp32/rows=%d 1 %.2f ns/op\n", names[k], 256 * k, 1000 * k * f * noise
  }
}'
`

const commandConfig = `version: 1
suite:
  command: [sh, bench.sh]
  count: 10
`

// newCommandRepo is a repository whose suite is commandBench:
//
//	main:    the baseline (factor 1.00)
//	same:    an identical change (a comment in bench.sh)
//	slow:    every kernel 20% slower (factor 1.20)
//	crashes: bench.sh exits 1 with a message on the current side's 4th round
//	silent:  bench.sh prints no benchmark
func newCommandRepo(t *testing.T) *gitRepo {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("benchmarks.yaml", commandConfig)
	r.write("bench.sh", commandBench)
	r.write("kernel.conf", "1.00\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "baseline")

	r.git("checkout", "-qb", "same")
	r.write("bench.sh", strings.Replace(commandBench, "# Synthetic kernels", "# Synthetic kernels (an identical change)", 1))
	r.git("commit", "-qam", "identical change")

	r.git("checkout", "-qb", "slow", "main")
	r.write("kernel.conf", "1.20\n")
	r.git("commit", "-qam", "20% slower")

	r.git("checkout", "-qb", "crashes", "main")
	r.write("bench.sh", strings.Replace(commandBench, "factor=$(cat kernel.conf)\n",
		"factor=$(cat kernel.conf)\n[ \"$KERNELWATCH_SIDE$KERNELWATCH_ROUND\" = current3 ] && { echo 'CUDA error: an illegal memory access' >&2; exit 1; }\n", 1))
	r.git("commit", "-qam", "crashes")

	r.git("checkout", "-qb", "silent", "main")
	r.write("bench.sh", "#!/bin/sh\necho 'no GPU here: skipping' >&2\n")
	r.git("commit", "-qam", "silent")
	r.git("checkout", "-q", "main")
	return r
}

func TestCheckCommandSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a suite command through git worktrees")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := newCommandRepo(t)

	t.Run("A/A passes", func(t *testing.T) {
		res := invoke(t, r.dir, "", "check", "--current", "same", "--format", "json", "--seed", "11")
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		if len(rep.Comparisons) != 4 || rep.Counts.Unchanged != 4 {
			t.Errorf("counts %+v over %d comparisons, want 4 unchanged", rep.Counts, len(rep.Comparisons))
		}
		for _, c := range rep.Comparisons {
			if len(c.Baseline.Rounds) != 10 || len(c.Current.Rounds) != 10 {
				t.Errorf("%s: rounds %v / %v, want 10 each", c.Name, c.Baseline.Rounds, c.Current.Rounds)
			}
		}
		if !strings.HasPrefix(rep.Baseline.Label, "main@") || !strings.HasPrefix(rep.Current.Label, "same@") ||
			rep.Current.Config["class"] != runner.CPUClass() || rep.Current.Config["device"] != "synthetic" {
			t.Errorf("labels %q, %q; current config %v", rep.Baseline.Label, rep.Current.Label, rep.Current.Config)
		}
		if !strings.Contains(res.stderr, "checked out baseline (main@") || !strings.Contains(res.stderr, "for suite.command [sh bench.sh]") {
			t.Errorf("stderr does not say what it checked out for the command:\n%s", res.stderr)
		}
	})

	t.Run("20% slower fails, every kernel named", func(t *testing.T) {
		res := invoke(t, r.dir, "", "check", "--current", "slow", "--format", "json")
		if res.code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		for _, c := range rep.Comparisons {
			if c.Verdict != report.Regression || c.Delta < 0.18 || c.Delta > 0.22 {
				t.Errorf("%s: %s %+.3f, want a regression near +20%%", c.Name, c.Verdict, c.Delta)
			}
		}
		if rep.Counts.Regression != 4 {
			t.Errorf("counts %+v", rep.Counts)
		}
	})

	t.Run("a command that fails is exit 2 naming side and round", func(t *testing.T) {
		res := invoke(t, r.dir, "", "check", "--current", "crashes", "--quiet")
		want := "regress check: current: round 4 of 10 (KERNELWATCH_ROUND=3): suite.command [sh bench.sh] exited with exit status 1: CUDA error: an illegal memory access"
		if res.code != 2 || !strings.Contains(res.stderr, want) {
			t.Errorf("exit %d, want 2 and %q\n%s", res.code, want, res.stderr)
		}
	})

	t.Run("a command that prints no benchmark is exit 2", func(t *testing.T) {
		res := invoke(t, r.dir, "", "check", "--current", "silent", "--quiet", "--seed", "2")
		want := "current: round 1 of 10 (KERNELWATCH_ROUND=0): suite.command [sh bench.sh] printed no benchmark results on its standard output (its standard error ends: no GPU here: skipping)"
		if res.code != 2 || !strings.Contains(res.stderr, want) {
			t.Errorf("exit %d, want 2 and %q\n%s", res.code, want, res.stderr)
		}
	})

	t.Run("--bench selects from what the command prints", func(t *testing.T) {
		res := invoke(t, r.dir, "", "check", "--current", "slow", "--bench", "Beta|Gamma//rows=768", "--format", "json", "--quiet")
		if res.code != 1 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		var names []string
		for _, c := range decodeReport(t, res.stdout).Comparisons {
			names = append(names, c.Name)
		}
		if strings.Join(names, " ") != "Beta/dtype=fp32/rows=512 Gamma/dtype=fp32/rows=768" {
			t.Errorf("compared %v", names)
		}
		res = invoke(t, r.dir, "", "check", "--current", "slow", "--bench", "Epsilon", "--quiet")
		if res.code != 3 || !strings.Contains(res.stderr, `no benchmark matches --bench "Epsilon"`) {
			t.Errorf("nothing selected: exit %d, want 3\n%s", res.code, res.stderr)
		}
	})

	t.Run("shards joined by judge", func(t *testing.T) {
		dirs := []string{filepath.Join(tmp, "s1"), filepath.Join(tmp, "s2")}
		for i, d := range dirs {
			res := invoke(t, r.dir, "", "check", "--current", "slow", "--shard", []string{"1/2", "2/2"}[i], "--seed", "5", "--results", d, "--quiet")
			if res.code != 1 && res.code != 3 {
				t.Fatalf("shard %d: exit %d\n%s", i+1, res.code, res.stderr)
			}
			data, err := os.ReadFile(filepath.Join(d, "current.bench"))
			if err != nil || !strings.Contains(string(data), "shard-by: name\n") {
				t.Errorf("shard %d: %v; current.bench lacks shard-by: name:\n%s", i+1, err, data)
			}
		}
		res := invoke(t, r.dir, "", "judge", dirs[0], dirs[1], "--format", "json")
		if res.code != 1 {
			t.Fatalf("judge: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		if rep := decodeReport(t, res.stdout); rep.Counts.Regression != 4 {
			t.Errorf("judge: counts %+v, want the 4 regressions", rep.Counts)
		}
	})

	t.Run("stored mode", func(t *testing.T) {
		res := invoke(t, r.dir, "", "baseline", "save", "--quiet")
		if res.code != 0 {
			t.Fatalf("baseline save: exit %d\n%s", res.code, res.stderr)
		}
		path := filepath.Join("baselines", runner.CPUClass()+".bench")
		data, err := os.ReadFile(filepath.Join(r.dir, path))
		if err != nil || strings.Count(string(data), "\nBenchmarkAlpha/") != 10 {
			t.Fatalf("%v; stored:\n%s", err, data)
		}
		r.git("add", path)
		r.git("commit", "-qm", "store the baseline")
		res = invoke(t, r.dir, "", "check", "--mode", "stored", "--baseline-tip", "--current", "slow", "--quiet")
		if res.code != 1 || !strings.Contains(res.stdout, "FAIL: 4 regressions") {
			t.Errorf("stored check of slow: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		r.git("reset", "-q", "--hard", "HEAD~1")
	})

	t.Run("run writes one result file; --list and --bin are errors", func(t *testing.T) {
		res := invoke(t, r.dir, "", "run", "--count", "3", "--quiet")
		if res.code != 0 || strings.Count(res.stdout, "BenchmarkDelta/dtype=fp32/rows=1024 1 ") != 3 || !strings.Contains(res.stdout, "round: 2\n") {
			t.Errorf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		for _, args := range [][]string{{"run", "--list"}, {"run", "--bin", "x.test"}, {"check", "--baseline-bin", "a", "--current-bin", "b"}} {
			res := invoke(t, r.dir, "", args...)
			if res.code != 2 || !strings.Contains(res.stderr, "suite.command") {
				t.Errorf("%v: exit %d\n%s", args, res.code, res.stderr)
			}
		}
	})

	if n := r.worktrees(); n != 1 {
		t.Errorf("%d worktrees left:\n%s", n, r.git("worktree", "list"))
	}
	if l := leftovers(t, tmp); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// TestCommandSuiteConfigErrors: suite.command with suite.packages is a
// configuration error naming file and line, through the command.
func TestCommandSuiteConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "benchmarks.yaml", "version: 1\nsuite:\n  packages: [./...]\n  command: [sh, bench.sh]\n")
	res := invoke(t, dir, "", "check", "--config", "benchmarks.yaml")
	if res.code != 2 || !strings.Contains(res.stderr, "benchmarks.yaml:4: suite.command and suite.packages") {
		t.Errorf("exit %d, want 2 naming benchmarks.yaml:4\n%s", res.code, res.stderr)
	}
	write(t, dir, "benchmarks.yaml", "version: 1\nsuite:\n  command: [sh, bench.sh]\n  format: csv\n")
	res = invoke(t, dir, "", "run", "--config", "benchmarks.yaml")
	if res.code != 2 || !strings.Contains(res.stderr, `benchmarks.yaml:4: format "csv": want go, pytest-benchmark, gbench or nvbench`) {
		t.Errorf("exit %d, want 2 naming benchmarks.yaml:4\n%s", res.code, res.stderr)
	}
}

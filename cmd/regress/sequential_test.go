package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// noisySource is a benchmark package whose samples are made up rather than
// timed: Quiet reports 1 ms ± 0.1% and Noisy 1 ms ± 30% (log-normal), so
// that a check of identical code has one benchmark that 10 rounds leave
// unable to detect 5% and one they do not, whatever the machine is doing.
// Each sample is drawn from a generator seeded by how many samples the
// processes before it drew (counted in the file $NOISY_STATE), so a check
// with a fixed --seed sees the same samples every time, and its A/A verdict
// does not depend on luck.
const noisySource = `package noisy

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

func sample(b *testing.B, cv float64) {
	for b.Loop() {
	}
	path := os.Getenv("NOISY_STATE")
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(string(data))
	os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o644)
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	b.ReportMetric(1e6*math.Exp(cv*rng.NormFloat64()), "ns/op")
}

func BenchmarkQuiet(b *testing.B) { sample(b, 0.001) }

func BenchmarkNoisy(b *testing.B) { sample(b, 0.30) }
`

// invokeNoisy is invoke with the sample counter of noisySource reset.
func invokeNoisy(t *testing.T, r *gitRepo, args ...string) result {
	t.Helper()
	state := filepath.Join(r.dir, "noisy-state")
	os.Remove(state)
	t.Setenv("NOISY_STATE", state)
	return invoke(t, r.dir, "", args...)
}

func newNoisyRepo(t *testing.T) *gitRepo {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("go.mod", "module example.com/noisy\n\ngo 1.26\n")
	r.write("noisy/noisy_test.go", noisySource)
	r.git("add", "-A")
	r.git("commit", "-qm", "noisy and quiet")
	return r
}

// TestCheckSequential: after the configured rounds, only the benchmark that
// cannot detect its threshold runs again, both sides, up to --max-rounds;
// the report says so in JSON and text, and the result files hold its
// further rounds. A budget already spent adds none and is no error.
func TestCheckSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	t.Setenv("TMPDIR", t.TempDir())
	r := newNoisyRepo(t)
	results := filepath.Join(t.TempDir(), "results")
	quick := []string{"check", "--config", "none", "--baseline", "main", "--current", "main", "--count", "10", "--benchtime", "1x", "--seed", "1", "--quiet"}

	res := invokeNoisy(t, r, append(quick, "--max-rounds", "14", "--results", results, "--format", "json")...)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	rep := decodeReport(t, res.stdout)
	rounds := map[string]int{}
	for _, c := range rep.Comparisons {
		rounds[c.Name] = c.Baseline.N
		if c.Current.N != c.Baseline.N {
			t.Errorf("%s: %d baseline and %d current samples", c.Name, c.Baseline.N, c.Current.N)
		}
	}
	if rounds["Quiet"] != 10 || rounds["Noisy"] != 14 {
		t.Errorf("samples per benchmark %v, want Quiet 10 and Noisy 14", rounds)
	}
	sq := rep.Sequential
	if sq == nil || sq.Rounds != 10 || sq.MaxRounds != 14 || sq.Stopped != report.SeqMaxRounds || len(sq.Benchmarks) != 1 {
		t.Fatalf("sequential section %+v", sq)
	}
	if b := sq.Benchmarks[0]; b.Name != "Noisy" || b.Rounds != 14 || !b.Underpowered || b.Reason != report.SeqUnderpowered {
		t.Errorf("sequential benchmark %+v", b)
	}
	for _, side := range []string{"baseline.bench", "current.bench"} {
		data, err := os.ReadFile(filepath.Join(results, side))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\nround: 13\n") || strings.Count(string(data), "BenchmarkNoisy") != 14 || strings.Count(string(data), "BenchmarkQuiet") != 10 {
			t.Errorf("%s lacks Noisy's rounds 10–13 or has more of Quiet:\n%s", side, data)
		}
	}

	// Text: the summary line and Noisy's row.
	res = invokeNoisy(t, r, append(quick, "--max-rounds", "12")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "rounds: 10 configured, up to 12; 1 benchmark wanted more: 0 can now detect the threshold, 1 still cannot (stopped at max_rounds)") ||
		!strings.Contains(res.stdout, "  Noisy  12 rounds  detects") {
		t.Errorf("text lacks the sequential lines:\n%s", res.stdout)
	}

	// A budget spent before the configured rounds end adds no round.
	res = invokeNoisy(t, r, append(quick, "--max-rounds", "14", "--budget", "1ms", "--format", "json")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if sq := decodeReport(t, res.stdout).Sequential; sq == nil || sq.Stopped != report.SeqBudget || sq.BudgetSeconds != 0.001 || len(sq.Benchmarks) != 1 || sq.Benchmarks[0].Rounds != 10 {
		t.Errorf("spent budget: %+v", sq)
	}

	// Without --max-rounds (and no suite.max_rounds) nothing changes.
	res = invokeNoisy(t, r, append(quick, "--format", "json")...)
	if rep := decodeReport(t, res.stdout); res.code != 0 || rep.Sequential != nil {
		t.Errorf("no max_rounds: exit %d, sequential %+v", res.code, rep.Sequential)
	}
}

// TestCheckSequentialShards: in a check sharded by cost (a stored baseline
// weighs the benchmarks), the shard that holds Noisy gives it its further
// rounds, though dealt again on their own its benchmarks could go to
// another shard; the other shard adds none.
func TestCheckSequentialShards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	t.Setenv("TMPDIR", t.TempDir())
	r := newNoisyRepo(t)
	// Quiet weighs 3 and Noisy 1: Quiet goes to shard 1 and Noisy to
	// shard 2, where Noisy dealt alone would go to shard 1.
	r.write(filepath.Join("baselines", runner.CPUClass()+".bench"), "BenchmarkQuiet 1 1 ns/op\nBenchmarkQuiet 1 1 ns/op\nBenchmarkQuiet 1 1 ns/op\nBenchmarkNoisy 1 1 ns/op\n")
	got := map[string]int{}
	for _, shard := range []string{"1/2", "2/2"} {
		res := invokeNoisy(t, r, "check", "--config", "none", "--baseline", "main", "--current", "main", "--count", "10", "--benchtime", "1x",
			"--seed", "1", "--quiet", "--shard", shard, "--max-rounds", "12", "--format", "json")
		if res.code != 0 {
			t.Fatalf("shard %s: exit %d\n%s\n%s", shard, res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		if len(rep.Comparisons) != 1 {
			t.Fatalf("shard %s: %d comparisons, want one benchmark per shard", shard, len(rep.Comparisons))
		}
		got[rep.Comparisons[0].Name] = rep.Comparisons[0].Current.N
	}
	if got["Quiet"] != 10 || got["Noisy"] != 12 {
		t.Errorf("samples per benchmark over the shards %v, want Quiet 10 and Noisy 12", got)
	}
}

func TestCheckSequentialFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--max-rounds -1", "--max-rounds -1: want at least 1"},
		{"--budget soon", `--budget: invalid value "soon"`},
		{"--budget -1m", "--budget -1m0s: want a positive duration"},
	} {
		res := invoke(t, t.TempDir(), "", append([]string{"check"}, strings.Fields(tc.args)...)...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
}

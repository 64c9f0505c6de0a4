package sequential

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/synth"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// simulated is a check on a synthetic suite: rounds of the benchmarks that
// Run names are drawn from a synth.Stream, and Judge runs the verdict step
// on every sample so far, as regress check does on its result files.
type simulated struct {
	time   func(i, side, k int) float64 // benchmark i's sample on a side in round k
	n      int                          // benchmarks
	rounds [][]int                      // per benchmark, the rounds it ran
	names  map[string]int               // comparison name → benchmark
	cfg    *config.Config               // thresholds and alpha
	runs   [][]string                   // the names each Run was given, in order
	stop   func(int) error              // when set, Run fails with its error from that round on
	judged []*report.Report             // every judgement, in order
}

func newSimulated(s synth.Suite, effects map[int]synth.Effect, rounds int) *simulated {
	sim := &simulated{time: s.Stream(effects).Time, n: s.Benchmarks, rounds: make([][]int, s.Benchmarks), names: map[string]int{}, cfg: config.Default()}
	for i := range sim.rounds {
		for k := range rounds {
			sim.rounds[i] = append(sim.rounds[i], k)
		}
		sim.names[name(i)] = i
	}
	return sim
}

// name is benchmark i's comparison name: synth's, without "/impl=fused"
// and made unique per benchmark.
func name(i int) string {
	return strings.TrimSuffix(synth.Name(i), "/impl=fused") + "/i=" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
}

func (sim *simulated) Judge() (*report.Report, error) {
	g := &group.Grouping{BaseConfig: map[string]string{}, CurConfig: map[string]string{}}
	for i, rs := range sim.rounds {
		s := &group.Series{Name: name(i), Unit: "sec/op"}
		for _, k := range rs {
			s.Base = append(s.Base, sim.time(i, 0, k))
			s.Cur = append(s.Cur, sim.time(i, 1, k))
		}
		g.Series = append(g.Series, s)
	}
	r := verdict.Judge(g, verdict.Options{Config: sim.cfg})
	sim.judged = append(sim.judged, r)
	return r, nil
}

func (sim *simulated) Run(ctx context.Context, bs []Benchmark, first, n int, stop time.Time) (int, error) {
	var names []string
	for _, b := range bs {
		names = append(names, b.Name)
	}
	sim.runs = append(sim.runs, names)
	for k := first; k < first+n; k++ {
		if sim.stop != nil {
			if err := sim.stop(k); err != nil {
				return k - first, err
			}
		}
		for _, b := range bs {
			i := sim.names[b.Name]
			sim.rounds[i] = append(sim.rounds[i], k)
		}
	}
	return n, nil
}

// noisy is a one-benchmark suite whose CV is drawn from [lo, hi], with
// synth's usual outliers (5%, up to +30%).
func noisy(seed uint64, lo, hi float64) synth.Suite {
	return synth.Suite{Benchmarks: 1, CVMin: lo, CVMax: hi, OutlierRate: 0.05, OutlierMax: 0.30, Seed: seed}
}

// significant reports whether the report's one comparison is significant
// at alpha 0.05 in either direction, whatever its delta: the level of the
// test, which sampling on until something shows would inflate. (A verdict
// also needs the delta past the threshold, so it flags fewer.)
func significant(r *report.Report) bool {
	c := r.Comparisons[0]
	return c.PAdjusted.Valid() && c.PAdjusted < 0.05 || !c.PAdjusted.Valid() && c.P < 0.05
}

// peeking is a rule that looks at the effect: go on while p is between
// alpha and 0.5 ("almost significant"), stop once it is significant.
func peeking(r *report.Report, _ func(*report.Comparison) bool) []Benchmark {
	var out []Benchmark
	for _, c := range r.Comparisons {
		if p := float64(c.P); p >= 0.05 && p < 0.5 {
			out = append(out, Benchmark{Name: c.Name, Reason: report.SeqUnderpowered})
		}
	}
	return out
}

// falseAlarms runs trials null comparisons (identical sides) of noisy
// one-benchmark suites through 10 configured rounds and Extend up to 40,
// and returns the share flagged after the configured rounds and after the
// whole procedure, and the mean rounds the benchmark got.
func falseAlarms(t *testing.T, trials int, wants func(*report.Report, func(*report.Comparison) bool) []Benchmark) (fixed, seq, rounds float64) {
	t.Helper()
	var nFixed, nSeq, total int
	for trial := range trials {
		sim := newSimulated(noisy(uint64(trial)+1, 0.01, 0.10), nil, 10)
		r, err := Extend(context.Background(), sim, Options{Rounds: 10, MaxRounds: 40, wants: wants})
		if err != nil {
			t.Fatal(err)
		}
		if significant(sim.judged[0]) {
			nFixed++
		}
		if significant(r) {
			nSeq++
		}
		total += len(sim.rounds[0])
	}
	n := float64(trials)
	return float64(nFixed) / n, float64(nSeq) / n, float64(total) / n
}

// TestFalseAlarmsStayWithinAlpha is the acceptance test of sequential
// sampling's error rate: over 2000 null comparisons of one benchmark each
// (CV 1–30%, 5% outliers up to +30%; threshold 5%, alpha 0.05), 10 rounds
// and then more up to 40 while the comparison cannot detect 5%, the share
// flagged as a regression or an improvement stays within alpha (plus 2.6
// standard errors of the Monte Carlo estimate). The same procedure with a
// rule that peeks at p is shown to exceed that bound, so the test can tell.
func TestFalseAlarmsStayWithinAlpha(t *testing.T) {
	const trials, alpha = 2000, 0.05
	bound := alpha + 2.6*math.Sqrt(alpha*(1-alpha)/trials)
	fixed, seq, rounds := falseAlarms(t, trials, nil)
	t.Logf("null: flagged after 10 rounds %.2f%%, after sequential sampling %.2f%% (bound %.2f%%), %.1f rounds on average", 100*fixed, 100*seq, 100*bound, rounds)
	if seq > bound {
		t.Errorf("sequential sampling flags %.2f%% of null comparisons, above alpha %.0f%% (bound %.2f%%)", 100*seq, 100*alpha, 100*bound)
	}
	if rounds <= 12 || rounds >= 39 {
		t.Errorf("%.1f rounds on average: the suite should have some benchmarks stop early and some run to 40", rounds)
	}
	_, peek, _ := falseAlarms(t, trials/2, peeking)
	t.Logf("null, peeking at p: flagged %.2f%%", 100*peek)
	if peek <= bound {
		t.Errorf("a rule that peeks at p flags only %.2f%%: the test cannot tell it from one that does not", 100*peek)
	}
}

// TestPowerImprovesForNoisyBenchmark: a +25% slowdown of a benchmark whose
// samples spread by 20–30% (a CPU runner with busy neighbours) is found far
// more often with rounds up to 40 than with the configured 10.
func TestPowerImprovesForNoisyBenchmark(t *testing.T) {
	const trials = 300
	var fixed, seq int
	for trial := range trials {
		sim := newSimulated(noisy(uint64(trial)+5000, 0.20, 0.30), map[int]synth.Effect{0: {Time: 1.25}}, 10)
		r, err := Extend(context.Background(), sim, Options{Rounds: 10, MaxRounds: 40})
		if err != nil {
			t.Fatal(err)
		}
		if sim.judged[0].Comparisons[0].Verdict == report.Regression {
			fixed++
		}
		if r.Comparisons[0].Verdict == report.Regression {
			seq++
		}
	}
	pf, ps := float64(fixed)/trials, float64(seq)/trials
	t.Logf("+25%% at CV 20–30%%: found %.0f%% of the time after 10 rounds, %.0f%% with up to 40", 100*pf, 100*ps)
	if ps < pf+0.3 || ps < 0.8 {
		t.Errorf("power %.0f%% with sequential sampling against %.0f%% without: want at least 80%% and 30 points more", 100*ps, 100*pf)
	}
}

// TestExtendRunsOnlyUnderpowered: of a quiet benchmark (CV 0.5%) and a
// noisy one (CV 25%), only the noisy one gets more rounds, two at a time
// and numbered on from the configured ones, until max_rounds; the section
// says so.
func TestExtendRunsOnlyUnderpowered(t *testing.T) {
	quiet := synth.Suite{Benchmarks: 1, CVMin: 0.005, CVMax: 0.005, Seed: 3}.Stream(nil)
	loud := synth.Suite{Benchmarks: 1, CVMin: 0.25, CVMax: 0.25, Seed: 3}.Stream(nil)
	sim := newSimulated(synth.Suite{Benchmarks: 2, Seed: 3}, nil, 10)
	sim.time = func(i, side, k int) float64 {
		if i == 1 {
			return loud.Time(0, side, k)
		}
		return quiet.Time(0, side, k)
	}
	r, err := Extend(context.Background(), sim, Options{Rounds: 10, MaxRounds: 15, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(sim.rounds[0]); got != 10 {
		t.Errorf("quiet benchmark got %d rounds, want 10", got)
	}
	if got := sim.rounds[1]; len(got) != 15 || got[10] != 10 || got[14] != 14 {
		t.Errorf("noisy benchmark's rounds %v, want 0–14", got)
	}
	if len(sim.runs) != 3 || len(sim.runs[0]) != 1 || sim.runs[0][0] != name(1) {
		t.Errorf("runs %q, want three of the noisy benchmark alone (2+2+1 rounds)", sim.runs)
	}
	sq := r.Sequential
	if sq == nil || sq.Rounds != 10 || sq.MaxRounds != 15 || sq.BudgetSeconds != 60 || sq.Stopped != report.SeqMaxRounds {
		t.Fatalf("Sequential = %+v", sq)
	}
	if len(sq.Benchmarks) != 1 {
		t.Fatalf("Benchmarks = %+v", sq.Benchmarks)
	}
	b := sq.Benchmarks[0]
	if b.Name != name(1) || b.Rounds != 15 || b.Reason != report.SeqUnderpowered || !b.Underpowered || b.Detectable == nil || !(float64(*b.Detectable) > 0.05) {
		t.Errorf("benchmark %+v", b)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}

// TestExtendStops: nothing to do when every comparison can detect its
// threshold; the budget's stop and an interrupted Run end the extension
// with the rounds that finished.
func TestExtendStops(t *testing.T) {
	quiet := newSimulated(synth.Suite{Benchmarks: 3, CVMin: 0.005, CVMax: 0.01, Seed: 9}, nil, 10)
	r, err := Extend(context.Background(), quiet, Options{Rounds: 10, MaxRounds: 40})
	if err != nil || r.Sequential.Stopped != report.SeqDetectable || len(r.Sequential.Benchmarks) != 0 || len(quiet.runs) != 0 {
		t.Errorf("quiet suite: %v, %+v, runs %q", err, r.Sequential, quiet.runs)
	}

	past := newSimulated(noisy(1, 0.25, 0.25), nil, 10)
	r, err = Extend(context.Background(), past, Options{Rounds: 10, MaxRounds: 40, Stop: time.Now().Add(-time.Second), StopReason: report.SeqBudget})
	if err != nil || r.Sequential.Stopped != report.SeqBudget || len(past.runs) != 0 {
		t.Fatalf("budget spent: %v, %+v", err, r.Sequential)
	}
	if b := r.Sequential.Benchmarks; len(b) != 1 || b[0].Rounds != 10 || !b[0].Underpowered {
		t.Errorf("budget spent: benchmarks %+v, want the one underpowered at 10 rounds", b)
	}

	cut := newSimulated(noisy(2, 0.25, 0.25), nil, 10)
	stopErr := errors.New("interrupted")
	cut.stop = func(k int) error {
		if k >= 15 {
			return stopErr
		}
		return nil
	}
	r, err = Extend(context.Background(), cut, Options{Rounds: 10, MaxRounds: 40})
	if !errors.Is(err, stopErr) || r == nil || r.Sequential.Stopped != report.SeqSignal || r.Sequential.Benchmarks[0].Rounds != 15 || len(cut.rounds[0]) != 15 {
		t.Errorf("interrupted at round 15: %v, %+v", err, r)
	}
	if n := r.Comparisons[0].Baseline.N; n != 15 {
		t.Errorf("interrupted: the last judgement has %d samples, want the 15 rounds that finished", n)
	}
}

// TestExtendTwoMode: a benchmark the two-mode predicate names gets more
// rounds even when it can detect its threshold, and is reported as such.
func TestExtendTwoMode(t *testing.T) {
	sim := newSimulated(synth.Suite{Benchmarks: 2, CVMin: 0.005, CVMax: 0.005, Seed: 4}, nil, 10)
	twoMode := func(c *report.Comparison) bool { return c.Name == name(0) }
	r, err := Extend(context.Background(), sim, Options{Rounds: 10, MaxRounds: 14, TwoMode: twoMode})
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.rounds[0]) != 14 || len(sim.rounds[1]) != 10 {
		t.Errorf("rounds %d and %d, want 14 and 10", len(sim.rounds[0]), len(sim.rounds[1]))
	}
	if b := r.Sequential.Benchmarks; len(b) != 1 || b[0].Reason != report.SeqTwoMode || b[0].Underpowered {
		t.Errorf("benchmarks %+v", b)
	}
}

func TestBenchRegexp(t *testing.T) {
	bs := []Benchmark{{Name: "RMSNorm/dtype=fp32/rows=256/impl=fused"}, {Name: "A+B/x=(1)"}, {Name: "RMSNorm/dtype=fp32/rows=256/impl=fused"}}
	got := BenchRegexp(bs)
	want := `^BenchmarkA\+B$/^x=\(1\)$|^BenchmarkRMSNorm$/^dtype=fp32$/^rows=256$/^impl=fused$`
	if got != want {
		t.Errorf("BenchRegexp = %s, want %s", got, want)
	}
	for _, level := range strings.Split(strings.Split(got, "|")[1], "/") {
		if _, err := regexp.Compile(level); err != nil {
			t.Error(err)
		}
	}
}

// Package sequential decides, after the configured rounds of an interleaved
// check, which benchmarks get more rounds and when to stop giving them.
//
// The opinion: on a noisy runner a fixed number of rounds leaves the noisy
// benchmarks unable to see the change their gate is for (a CPU runner with
// busy neighbours: samples spread by ±20–55%, and ten rounds detect 17–74%
// where the gate is 5%), while the quiet ones had enough long ago. So
// after the configured rounds, only the benchmarks with a gated comparison
// that cannot yet detect its threshold (package power's figure, which the
// report carries as Comparison.Detectable) run again, both sides
// interleaved as before, until each can, has max_rounds rounds, or the time
// budget is spent. Benchmarks whose samples fall in two modes in a way more
// rounds could settle (a predicate the caller passes, Options.TwoMode) get
// more rounds the same way.
//
// Sampling until something is seen inflates false alarms when the decision
// to go on looks at the effect: go on while p is "almost" significant, stop
// once it is, and identical code is flagged far more often than α (13.7%
// at α = 0.05 in the tests). Less obviously, so does a decision on each
// side's own spread: two sides that each cluster tightly, apart from each
// other, have a small spread and an extreme U, so stopping once the
// per-side spread allows it stops where U happens to be extreme (20000
// synthetic null comparisons, CV 1–10%: 5.42% significant at 0.05, against
// 5.0–5.2% for a fixed 16–40 rounds).
//
// The rule here therefore looks only at what is blind to the sides: the
// spread of both sides' samples taken together around their common median
// (power.DetectableBlinded, the blinded variance of sample-size
// re-estimation in clinical trials) and the sample counts. When the code
// did not change, that is a function of the samples with their sides
// forgotten, which says nothing about how the sides interleave, all the U
// test looks at: the same 20000 comparisons were significant 5.04% of the
// time, what a fixed number of rounds gives. A benchmark's verdict, delta
// and p-value are never consulted: one already judged a regression runs on
// while it is underpowered, as it would if it were unchanged. The level the
// figure is computed at is the report's own (Comparison.DetectableAlpha:
// alpha over the floor-holm family counting the comparison itself, so not
// its own delta). The price: a real change widens the blinded spread, so a
// benchmark that did change gets rounds up to max_rounds or the budget,
// which costs time but never hides the change. An α-spending design (a
// test at a reduced level at every look) was the alternative; it pays for
// every look with power, where deciding on the blinded spread pays nothing.
//
// The tests run the whole procedure (configured rounds, then the
// extension, judged by package verdict) on synthetic noisy benchmarks from
// package synth: 2000 null comparisons stay within α, and a +25% change of
// a benchmark with a 20–30% spread is found 96% of the time with up to 40
// rounds against 44% with 10.
package sequential

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/power"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Benchmark is one benchmark that wants more rounds: a comparison name
// (without "Benchmark") and its distinguishing configuration.
type Benchmark struct {
	Name   string
	Config map[string]string
	Reason string // report.SeqUnderpowered or report.SeqTwoMode
}

// key identifies a benchmark across judgements.
func (b Benchmark) key() string { return b.Name + "\x00" + fmt.Sprint(b.Config) }

// Sampler is what Extend needs from a check.
type Sampler interface {
	// Judge compares every round run so far.
	Judge() (*report.Report, error)
	// Run runs n more rounds of the benchmarks, numbered from first,
	// interleaved as the configured rounds were, and returns how many
	// finished on both sides: fewer than n (with a nil error) when the next
	// would not have finished before stop (zero: no limit). After an error
	// the rounds that finished are kept all the same.
	Run(ctx context.Context, benchmarks []Benchmark, first, n int, stop time.Time) (int, error)
}

// Options bound the extension.
type Options struct {
	// Rounds is how many rounds every benchmark has already had.
	Rounds int
	// MaxRounds is the most rounds a benchmark may get in all; at or below
	// Rounds, none is added.
	MaxRounds int
	// Budget is the time the check may take (for the report); Stop is when
	// no more round may be running: the end of the budget or the check's
	// deadline, whichever comes first, StopReason which one it is
	// (report.SeqBudget or report.SeqDeadline). A zero Stop sets no limit.
	Budget     time.Duration
	Stop       time.Time
	StopReason string
	// Step is how many rounds run between two judgements: 2 when 0, one
	// round in each order of the sides.
	Step int
	// TwoMode, when set, reports comparisons whose samples fall in two
	// modes and that more rounds could settle: their benchmarks get more
	// rounds too, within the same limits. regress check passes
	// verdict.WantsMoreRounds, which asks for more when one side shows two
	// modes and the other, in one of them, may only have drawn a different
	// mix. That looks at the medians' difference, but only at a difference
	// the verdict never calls a regression (a mix is not a speed); what can
	// be a regression there, a mode's center moving, the mix does not move.
	// A predicate must not look at what the verdict tests (see the package
	// comment).
	TwoMode func(c *report.Comparison) bool

	// wants replaces Wanting, for the test of a rule that peeks.
	wants func(r *report.Report, twoMode func(*report.Comparison) bool) []Benchmark
}

// Extend judges the configured rounds and then, while some benchmark wants
// more and the limits allow, runs opt.Step rounds of those benchmarks and
// judges again. It returns the last judgement with its Sequential section
// filled in. An error from Run (an interrupted check) comes back with the
// judgement of the rounds that finished, stopped as report.SeqSignal.
func Extend(ctx context.Context, s Sampler, opt Options) (*report.Report, error) {
	step := opt.Step
	if step <= 0 {
		step = 2
	}
	if opt.StopReason == "" {
		opt.StopReason = report.SeqBudget
	}
	wants := opt.wants
	if wants == nil {
		wants = Wanting
	}
	r, err := s.Judge()
	if err != nil {
		return nil, err
	}
	sq := &report.Sequential{Rounds: opt.Rounds, MaxRounds: max(opt.MaxRounds, opt.Rounds), BudgetSeconds: opt.Budget.Seconds(),
		Benchmarks: []report.SequentialBenchmark{}}
	rounds := map[string]int{} // of every benchmark that wanted more
	var order []Benchmark
	next := opt.Rounds // the number of the next round
	for {
		var run []Benchmark
		want := wants(r, opt.TwoMode)
		for _, b := range want {
			k := b.key()
			if _, ok := rounds[k]; !ok {
				rounds[k] = opt.Rounds
				order = append(order, b)
			}
			if rounds[k] < sq.MaxRounds {
				run = append(run, b)
			}
		}
		if len(run) == 0 {
			sq.Stopped = report.SeqDetectable
			if len(want) > 0 {
				sq.Stopped = report.SeqMaxRounds
			}
			break
		}
		n := step
		for _, b := range run {
			n = min(n, sq.MaxRounds-rounds[b.key()])
		}
		if !opt.Stop.IsZero() && !time.Now().Before(opt.Stop) {
			sq.Stopped = opt.StopReason
			break
		}
		ran, runErr := s.Run(ctx, run, next, n, opt.Stop)
		next += ran
		for _, b := range run {
			rounds[b.key()] += ran
		}
		if ran > 0 {
			if r, err = s.Judge(); err != nil {
				return nil, err
			}
		}
		if runErr != nil {
			sq.Stopped = report.SeqSignal
			err = runErr
			break
		}
		if ran < n {
			sq.Stopped = opt.StopReason
			break
		}
	}
	// What each benchmark can detect after its last round.
	weakest, blind := detectables(r)
	for _, b := range order {
		k := b.key()
		sb := report.SequentialBenchmark{Name: b.Name, Config: b.Config, Rounds: rounds[k], Reason: b.Reason, Underpowered: blind[k]}
		if d, ok := weakest[k]; ok && !math.IsInf(d, 1) {
			n := report.Number(d)
			sb.Detectable = &n
		}
		sq.Benchmarks = append(sq.Benchmarks, sb)
	}
	r.Sequential = sq
	return r, err
}

// Wanting returns the benchmarks of r that want more rounds, in report
// order: those with an Underpowered comparison, and those with a
// fail-gated comparison twoMode (when not nil) reports. Comparisons that
// only warn never ask: the rounds go to what the gate decides.
func Wanting(r *report.Report, twoMode func(*report.Comparison) bool) []Benchmark {
	var out []Benchmark
	seen := map[string]int{}
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		reason := ""
		switch {
		case Underpowered(c):
			reason = report.SeqUnderpowered
		case twoMode != nil && c.Gate == report.GateFail && twoMode(c):
			reason = report.SeqTwoMode
		default:
			continue
		}
		b := Benchmark{Name: c.Name, Config: maps.Clone(c.Config), Reason: reason}
		if len(b.Config) == 0 {
			b.Config = nil
		}
		k := b.key()
		if j, ok := seen[k]; ok {
			if reason == report.SeqUnderpowered {
				out[j].Reason = reason // underpowered says more than two modes
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, b)
	}
	return out
}

// Underpowered reports whether c is a fail-gated comparison that cannot
// yet detect its threshold by the blinded figure (power.DetectableBlinded:
// the spread of both sides' samples taken together) at the level the
// report's own detectable figure was computed at. It looks at no delta and
// no p-value.
func Underpowered(c *report.Comparison) bool {
	if c.Gate != report.GateFail || c.Detectable == nil || c.Baseline == nil || c.Current == nil {
		return false
	}
	if c.DetectableAlpha == nil {
		return c.Blind() // a report from before the level was recorded
	}
	return !(power.DetectableBlinded(c.Baseline.Values, c.Current.Values, *c.DetectableAlpha) <= c.Threshold)
}

// detectables returns, per benchmark key, the largest detectable change of
// its fail-gated comparisons (+Inf when one detects nothing), and whether
// one of them is blind.
func detectables(r *report.Report) (weakest map[string]float64, blind map[string]bool) {
	weakest, blind = map[string]float64{}, map[string]bool{}
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		if c.Gate != report.GateFail || c.Detectable == nil {
			continue
		}
		cfg := c.Config
		if len(cfg) == 0 {
			cfg = nil
		}
		k := Benchmark{Name: c.Name, Config: cfg}.key()
		d := float64(*c.Detectable)
		if !c.Detectable.Valid() {
			d = math.Inf(1)
		}
		if old, ok := weakest[k]; !ok || d > old {
			weakest[k] = d
		}
		blind[k] = blind[k] || c.Blind()
	}
	return weakest, blind
}

// BenchRegexp returns the go test -bench regexp that selects exactly the
// benchmarks named (comparison names, without "Benchmark"): one alternative
// per benchmark, each level anchored, in sorted order without repeats.
func BenchRegexp(benchmarks []Benchmark) string {
	var alts []string
	for _, b := range benchmarks {
		levels := strings.Split(b.Name, "/")
		for i, l := range levels {
			if i == 0 {
				l = "Benchmark" + l
			}
			levels[i] = "^" + regexp.QuoteMeta(l) + "$"
		}
		alts = append(alts, strings.Join(levels, "/"))
	}
	slices.Sort(alts)
	return strings.Join(slices.Compact(alts), "|")
}

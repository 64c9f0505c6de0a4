// Package verdict judges paired series and produces the report: for each
// comparison a verdict, and for the whole report pass, fail, no-data or
// inconclusive.
//
// For each (benchmark, distinguishing config, unit):
//
//   - direction comes from benchmarks.yaml units, else the results' Unit
//     better= metadata, else the defaults (time, B/op, allocs/op and scratch
//     memory lower is better; anything per second, pct-* and TFLOP/s higher).
//     A unit with no direction is reported, never gated, with a warning.
//   - a side with fewer than min_samples values (default 6) is inconclusive,
//     and so is one whose samples are too few for the U test to ever reach
//     significance after the multiple-comparison correction; the warning says
//     how many samples per side are needed.
//   - regression: adjusted p < alpha and the delta is worse than the
//     threshold in the unit's direction; improvement symmetrically;
//     otherwise unchanged.
//   - exact units (assume=exact) change verdict on any relative difference
//     beyond the tolerance, with no test.
//   - over-budget: the current median misses a rule's absolute budget. It
//     needs no baseline and takes precedence over the relative verdict.
//   - added / removed: one side only. A removed benchmark fails a fail gate.
//   - failed: the benchmark (or a parent benchmark) failed or panicked on a
//     side (Options.Failed). It takes precedence over every other verdict,
//     is left out of the correction, and fails a fail gate even when nothing
//     else could be compared.
//   - two modes: a side whose samples fall in two modes (stats.Modes) is
//     judged by its modes' centers, never by the mix of the modes: a change
//     only in the mix is unchanged, and one that might be only the mix is
//     inconclusive and wants more rounds (modes.go, WantsMoreRounds).
//
// The multiple-comparison correction runs over the gated families, one per
// gate (fail, warn): comparisons with both sides, a known direction, a
// non-exact unit and enough samples. The default, floor-holm, first applies the effect floor and
// then Holm's step-down correction over only the comparisons whose delta
// passes it. On synthetic suites (regress/synth: 480 comparisons, n = 10, CV
// 0.5–3%, 5% outliers) it kept identical-code suites quiet and missed fewer
// 12% regressions than Holm or Benjamini–Hochberg over everything, since
// comparisons that cannot matter no longer dilute the family (design §4).
// p_adjusted is absent (null) for comparisons outside the family.
//
// The report fails when a gated comparison fails; it is no-data when
// nothing was compared, and inconclusive when comparisons were made but not
// one gated comparison that the statistics test could be judged (every one
// short of samples): a suite measured with --count 2 proves nothing, so it
// must not pass. Exact units do not make such a report pass: they are side
// metrics (scratch bytes) of benchmarks whose timing went unjudged. When
// only some gated comparisons are unjudged the verdict stands and
// Report.Unjudged says how many could not be, and what they lacked.
package verdict

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/power"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Options controls a judgement.
type Options struct {
	// Config is benchmarks.yaml (config.Default() when nil).
	Config *config.Config
	// Units is the Unit metadata of the result files.
	Units benchfmt.UnitMetadataMap
	// Correction is report.FloorHolm, Holm, BH or NoCorrect; "" takes the
	// config's, else FloorHolm.
	Correction string
	// ForceClass compares sides of different hardware classes.
	ForceClass bool
	// BaseLabel and CurLabel name the sides for people.
	BaseLabel, CurLabel string
	// BaseFiles and CurFiles are recorded in the report.
	BaseFiles, CurFiles []string
	// Failed lists the benchmarks that failed or panicked while the sides
	// were run.
	Failed []Failure
	// Noise is the calibrated noise of the class (nil: none); NoiseFile
	// names it in the report.
	Noise     *noise.File
	NoiseFile string
	// Floors are the cross-host floors of the class (nil: none), for a
	// stored check, whose baseline was recorded on another host; FloorsFile
	// names them in the report.
	Floors     *noise.Floors
	FloorsFile string
}

// Failure is a benchmark that failed or panicked on one side of a run.
type Failure struct {
	// Name is the benchmark name without "Benchmark" and the -N suffix.
	// It covers the sub-benchmarks under it: a failure of "RMSNorm" fails
	// every "RMSNorm/..." comparison.
	Name string
	// Side is "baseline" or "current".
	Side string
	// Message says what went wrong, for people.
	Message string
}

// Sides of a Failure.
const (
	SideBaseline = "baseline"
	SideCurrent  = "current"
)

// covers reports whether the failure applies to benchmark name.
func (f *Failure) covers(name string) bool {
	return name == f.Name || strings.HasPrefix(name, f.Name+"/")
}

// DefaultCorrection is the correction used when none is configured.
const DefaultCorrection = report.FloorHolm

// item is one comparison under way.
type item struct {
	c      report.Comparison
	policy config.Resolved
	exact  bool
	base   *stats.Summary
	cur    *stats.Summary
	change stats.Change
	inFam  bool
	minP   float64  // smallest p the U test can reach with these sample sizes
	failed []string // messages of the failures that cover this comparison
	// bModes and cModes are the two modes of each side (stats.Modes), nil
	// for a side of one mode.
	bModes, cModes []stats.Mode
	// modes compares two sides of two modes mode by mode; nil otherwise.
	modes *stats.ModeChange
	// testP is the p of the test that decides: the medians' U test, or
	// the modes' (modes).
	testP float64
	need  int // samples a side an inconclusive verdict needs (decide)
}

// Judge turns paired series into a report.
func Judge(g *group.Grouping, opt Options) *report.Report {
	cfg := opt.Config
	if cfg == nil {
		cfg = config.Default()
	}
	corr := opt.Correction
	if corr == "" {
		corr = cfg.Correction
	}
	if corr == "" {
		corr = DefaultCorrection
	}
	conf := cfg.Confidence
	if conf == 0 {
		conf = 0.95
	}
	r := &report.Report{
		Schema: report.Schema,
		Settings: report.Settings{
			Alpha: cfg.Defaults.Alpha, Confidence: conf, Threshold: cfg.Defaults.Threshold,
			Correction: corr, MinSamples: cfg.Defaults.MinSamples,
		},
		Baseline:    report.Side{Label: opt.BaseLabel, Config: nonNil(g.BaseConfig), Files: opt.BaseFiles},
		Current:     report.Side{Label: opt.CurLabel, Config: nonNil(g.CurConfig), Files: opt.CurFiles},
		Comparisons: []report.Comparison{},
		Warnings:    []string{},
	}
	warn := func(format string, args ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...)) }

	bc, cc := g.BaseConfig[group.ClassKey], g.CurConfig[group.ClassKey]
	class := cc
	if class == "" {
		class = bc
	}
	if bc != "" && cc != "" && bc != cc {
		if !opt.ForceClass {
			warn("hardware classes differ: baseline %s, current %s; results are only compared within one class (force it with --force-class)", bc, cc)
			r.Verdict = report.NoData
			return r
		}
		warn("hardware classes differ (baseline %s, current %s): compared because --force-class was given", bc, cc)
	} else if (bc == "") != (cc == "") {
		warn("only one side names its hardware class (baseline %q, current %q)", bc, cc)
	}
	sideWarnings(r, g, warn)

	items := make([]*item, 0, len(g.Series))
	unknown := map[string]bool{}
	covered := make([]bool, len(opt.Failed))
	for _, s := range g.Series {
		it := prepare(s, cfg, opt.Units, class, conf)
		applyNoise(it, opt.Noise, cfg.Unstable)
		applyFloors(it, opt.Floors)
		findModes(it)
		if it.c.Better == report.Unknown && !unknown[s.Unit] {
			unknown[s.Unit] = true
			warn("unit %s has no known direction (better=higher or lower): reported, not gated; declare it with a \"Unit %s better=...\" line or in benchmarks.yaml units", s.Unit, s.Unit)
		}
		for i := range opt.Failed {
			if f := &opt.Failed[i]; f.covers(s.Name) {
				covered[i] = true
				it.failed = append(it.failed, f.Side+": "+f.Message)
				it.inFam = false
			}
		}
		items = append(items, it)
	}
	if h := healthWarning(g, smallestThreshold(items, cfg.Defaults.Threshold)); h != "" {
		warn("%s", h)
	}
	items = append(items, uncovered(opt.Failed, covered, cfg, class)...)
	correct(items, corr)
	detectable(items, corr)
	if opt.Noise != nil {
		r.Settings.NoiseFile, r.Settings.NoiseK = opt.NoiseFile, noise.K
	}
	if opt.Floors != nil {
		r.Settings.FloorsFile = opt.FloorsFile
	}
	compared, failed := false, false
	for _, it := range items {
		decide(it)
		if it.failed != nil {
			it.c.Verdict = report.Failed
			it.c.Warnings = append(it.failed, it.c.Warnings...)
			failed = failed || it.c.Fails()
		} else if it.base != nil && it.cur != nil || it.c.Budget != nil {
			compared = true
		}
		r.Comparisons = append(r.Comparisons, it.c)
		r.Counts.Add(it.c.Verdict)
	}
	switch {
	case !compared && failed:
		// A gated benchmark that failed fails the report even when
		// nothing else could be compared.
		r.Verdict = report.Fail
	case !compared:
		// Removed benchmarks do not fail a report that compared
		// nothing: two unrelated files are an input problem.
		r.Verdict = report.NoData
		if len(g.Series) > 0 {
			warn("no benchmark is present on both sides: nothing was compared")
		}
	case len(r.Failing()) > 0:
		r.Verdict = report.Fail
	default:
		r.Verdict = report.Pass
	}
	r.Unjudged = unjudged(items)
	if r.Verdict == report.Pass && r.Unjudged.AllUnjudged() {
		// Not one gated comparison was judged: nothing says the code
		// did not regress.
		r.Verdict = report.Inconclusive
	}
	return r
}

// unjudged counts the gated comparisons the statistics test (gate fail,
// both sides, not exact, not failed) and those of them left inconclusive,
// with the samples a side those short of samples need and have (none when
// every one was left inconclusive by its modes); nil when every one was
// judged.
func unjudged(items []*item) *report.Unjudged {
	u := &report.Unjudged{}
	for _, it := range items {
		if it.c.Gate != report.GateFail || it.base == nil || it.cur == nil || it.exact || it.failed != nil {
			continue
		}
		u.Of++
		if it.c.Verdict != report.Inconclusive {
			continue
		}
		u.Count++
		if it.need == 0 {
			continue // two modes, not too few samples: its warning says why
		}
		have := min(len(it.base.Values), len(it.cur.Values))
		if u.NeedSamples == 0 || have < u.HaveSamples {
			u.HaveSamples = have
		}
		u.NeedSamples = max(u.NeedSamples, it.need)
	}
	if u.Count == 0 {
		return nil
	}
	return u
}

// smallestThreshold is the smallest threshold a gated comparison with both
// sides is judged by (def when there is none): the finest change the
// report claims to tell from noise.
func smallestThreshold(items []*item, def float64) float64 {
	t := math.Inf(1)
	for _, it := range items {
		if it.c.Gate == report.GateFail && !it.exact && it.base != nil && it.cur != nil && it.c.Threshold > 0 {
			t = math.Min(t, it.c.Threshold)
		}
	}
	if math.IsInf(t, 1) {
		return def
	}
	return t
}

// uncovered returns a comparison for each failure (merged by name) that
// covers no series: a benchmark that failed before it reported anything.
// It is judged in sec/op, the unit every benchmark reports, and the failing
// side gets an empty summary.
func uncovered(failures []Failure, covered []bool, cfg *config.Config, class string) []*item {
	var out []*item
	byName := map[string]*item{}
	for i, f := range failures {
		if covered[i] {
			continue
		}
		it := byName[f.Name]
		if it == nil {
			pol := cfg.Resolve(f.Name, class, "sec/op")
			it = &item{policy: pol}
			it.c = report.Comparison{
				Name: f.Name, Config: map[string]string{}, Unit: "sec/op", Better: report.Lower,
				Delta: nan(), DeltaLo: nan(), DeltaHi: nan(), P: nan(), PAdjusted: nan(),
				Threshold: pol.Threshold, Gate: string(pol.Gate),
			}
			byName[f.Name] = it
			out = append(out, it)
		}
		empty := &report.Summary{Center: nan(), Lo: nan(), Hi: nan(), Values: []float64{}}
		if f.Side == SideBaseline {
			it.c.Baseline = empty
		} else {
			it.c.Current = empty
		}
		it.failed = append(it.failed, f.Side+": "+f.Message)
	}
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// sideWarnings reports configuration that differs between the sides (the
// run's health is healthWarning's).
func sideWarnings(r *report.Report, g *group.Grouping, warn func(string, ...any)) {
	var keys []string
	for k, v := range g.BaseConfig {
		if w, ok := g.CurConfig[k]; ok && w != v && !isRunKey(k) && k != group.ClassKey {
			keys = append(keys, fmt.Sprintf("%s (%s → %s)", k, v, w))
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		warn("the sides ran with different configuration: %s", strings.Join(keys, ", "))
	}
}

func isRunKey(k string) bool {
	for _, rk := range group.RunKeys {
		if k == rk {
			return true
		}
	}
	return false
}

func prepare(s *group.Series, cfg *config.Config, units benchfmt.UnitMetadataMap, class string, conf float64) *item {
	pol := cfg.Resolve(s.Name, class, s.Unit)
	it := &item{policy: pol}
	it.c = report.Comparison{
		Name: s.Name, Config: nonNil(s.Config), Unit: s.Unit,
		Better: direction(s.Unit, cfg, units),
		Delta:  nan(), DeltaLo: nan(), DeltaHi: nan(), P: nan(), PAdjusted: nan(),
		Threshold: pol.Threshold, Gate: string(pol.Gate),
	}
	if it.c.Better == report.Unknown {
		it.c.Gate = report.GateOff
	}
	if exact, set := cfg.Exact(s.Unit); set {
		it.exact = exact
	} else {
		it.exact = units != nil && units.GetAssumption(s.Unit) == benchmath.AssumeExact
	}
	if it.exact {
		it.c.Threshold = pol.Tolerance
	}
	if len(s.Base) > 0 {
		rounds := sortWithRounds(s.Base, s.BaseRounds)
		sum := stats.Summarize(s.Base, it.exact, conf)
		it.base = &sum
		it.c.Baseline = summary(sum)
		it.c.Baseline.Rounds = rounds
	}
	if len(s.Cur) > 0 {
		rounds := sortWithRounds(s.Cur, s.CurRounds)
		sum := stats.Summarize(s.Cur, it.exact, conf)
		it.cur = &sum
		it.c.Current = summary(sum)
		it.c.Current.Rounds = rounds
	}
	if it.base != nil && it.cur != nil {
		it.change = stats.Compare(*it.base, *it.cur, it.exact, pol.Alpha, conf)
		it.c.Delta = report.Number(it.change.Delta)
		it.c.DeltaLo = report.Number(it.change.DeltaLo)
		it.c.DeltaHi = report.Number(it.change.DeltaHi)
		if !it.exact {
			// Exact units are not tested: p stays null.
			it.c.P = report.Number(it.change.P)
		}
		it.minP = stats.MinP(len(it.base.Values), len(it.cur.Values))
		enough := len(it.base.Values) >= pol.MinSamples && len(it.cur.Values) >= pol.MinSamples
		it.inFam = !it.exact && it.c.Gate != report.GateOff && enough
	}
	return it
}

// sortWithRounds sorts values in place, as stats.Summarize would, and
// returns a copy of rounds permuted the same way (nil when rounds does not
// hold one round per value).
func sortWithRounds(values []float64, rounds []int) []int {
	if len(rounds) != len(values) {
		return nil
	}
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return values[idx[a]] < values[idx[b]] })
	sorted := make([]float64, len(values))
	out := make([]int, len(values))
	for i, j := range idx {
		sorted[i], out[i] = values[j], rounds[j]
	}
	copy(values, sorted)
	return out
}

func summary(s stats.Summary) *report.Summary {
	return &report.Summary{
		Center: report.Number(s.Center), Lo: report.Number(s.Lo), Hi: report.Number(s.Hi),
		N: len(s.Values), Values: s.Values,
	}
}

func nan() report.Number { return report.Number(math.NaN()) }

// direction returns the unit's direction: benchmarks.yaml, then Unit
// metadata, then the defaults of design §2.
func direction(unit string, cfg *config.Config, units benchfmt.UnitMetadataMap) string {
	if d := cfg.Direction(unit); d != "" {
		return d
	}
	if units != nil {
		switch units.GetBetter(unit) {
		case 1:
			return report.Higher
		case -1:
			return report.Lower
		}
	}
	return DefaultDirection(unit)
}

// DefaultDirection is the direction of a unit without metadata: time,
// memory and allocation counts are better lower; rates (anything per
// second), pct-* shares and TFLOP/s better higher; anything else unknown.
func DefaultDirection(unit string) string {
	switch {
	case unit == "B/op" || unit == "allocs/op" || unit == "scratch-B":
		return report.Lower
	case strings.HasPrefix(unit, "sec/") || strings.HasSuffix(unit, "-sec") || unit == "sec":
		return report.Lower
	case strings.HasSuffix(unit, "/s") || strings.HasPrefix(unit, "pct-"):
		return report.Higher
	}
	return report.Unknown
}

// worse and better report whether delta is beyond threshold in the bad or
// good direction of the unit.
func worse(c *report.Comparison, delta float64) bool {
	switch c.Better {
	case report.Lower:
		return delta > c.Threshold
	case report.Higher:
		return delta < -c.Threshold
	}
	return false
}

func better(c *report.Comparison, delta float64) bool {
	switch c.Better {
	case report.Lower:
		return delta < -c.Threshold
	case report.Higher:
		return delta > c.Threshold
	}
	return false
}

// correct fills PAdjusted over the families chosen by method, one per gate: the comparisons that can fail the
// gate are corrected among themselves, and those that can only warn (naive impls, tail latency) among
// themselves, so that noisy warn-only comparisons passing the effect floor do not dilute the correction that
// decides the exit code. Each family keeps its own family-wise error rate at alpha.
func correct(items []*item, method string) {
	tests := make([]Test, len(items))
	for i, it := range items {
		if !it.inFam {
			continue
		}
		tests[i] = Test{P: it.testP, Gate: it.c.Gate, Hypothesis: hypothesisOf(it), PastFloor: it.pastFloor()}
	}
	adjusted, families := Correct(tests, method)
	for i, it := range items {
		it.c.PAdjusted = report.Number(adjusted[i])
		if it.c.PAdjusted.Valid() && (method == report.Holm || method == report.FloorHolm) {
			it.minP *= float64(families[it.c.Gate]) // the best this comparison could do is rank first
		}
	}
}

// hypotheses groups a family's comparisons into the distinct hypotheses they test. Units that are a monotone
// function of one another sample by sample (GB/s and pct-copy of ns/op: bytes / time) put the two sides' samples
// in the same order, or exactly the reverse, so the U test sees the same ranks and returns the same p: one
// hypothesis, which Holm must count once, not three times. Comparisons of one benchmark (name and config) with
// the same rank pattern form one hypothesis; different benchmarks never do.
func hypotheses(fam []*item) [][]*item {
	var groups [][]*item
	index := map[string]int{}
	for _, it := range fam {
		key := hypothesisOf(it)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], it)
	}
	return groups
}

// hypothesisOf is the key of the hypothesis a comparison tests (hypotheses).
func hypothesisOf(it *item) string {
	return fmt.Sprint(it.c.Name, it.c.Config, "|", rankPattern(it.base.Values, it.cur.Values))
}

// rankPattern is what the U test sees of two samples: walking the pooled values in ascending order, the number
// of baseline and current values at each distinct value ("b,c;" per value), written in whichever of the two
// directions comes first in byte order, since a decreasing transform reverses the walk.
func rankPattern(base, cur []float64) string {
	b, c := slices.Sorted(slices.Values(base)), slices.Sorted(slices.Values(cur))
	var runs []string
	for i, j := 0, 0; i < len(b) || j < len(c); {
		v := math.Inf(1)
		if i < len(b) {
			v = b[i]
		}
		if j < len(c) && c[j] < v {
			v = c[j]
		}
		nb, nc := 0, 0
		for ; i < len(b) && b[i] == v; i++ {
			nb++
		}
		for ; j < len(c) && c[j] == v; j++ {
			nc++
		}
		runs = append(runs, fmt.Sprintf("%d,%d;", nb, nc))
	}
	fwd := strings.Join(runs, "")
	slices.Reverse(runs)
	return min(fwd, strings.Join(runs, ""))
}

// decide sets the verdict of one comparison.
func decide(it *item) {
	c := &it.c
	pol := it.policy
	if pol.Budget != nil && it.cur != nil && c.Better != report.Unknown {
		if b, ok := pol.Budget.In(c.Unit); ok {
			c.Budget = &b
			missed := it.cur.Center > b
			if c.Better == report.Higher {
				missed = it.cur.Center < b
			}
			if missed {
				c.Verdict = report.OverBudget
				c.Warnings = append(c.Warnings, fmt.Sprintf("median %.4g %s misses the budget %s", it.cur.Center, c.Unit, pol.Budget))
				if it.base == nil {
					return
				}
			}
		}
	}
	switch {
	case it.base == nil:
		setVerdict(c, report.Added)
		return
	case it.cur == nil:
		setVerdict(c, report.Removed)
		return
	}
	for _, w := range it.base.Warnings {
		c.Warnings = append(c.Warnings, "baseline: "+w)
	}
	for _, w := range it.cur.Warnings {
		c.Warnings = append(c.Warnings, "current: "+w)
	}
	delta := float64(c.Delta)
	if it.exact {
		switch {
		case worse(c, delta) || math.IsInf(delta, 0) && c.Better == report.Lower:
			setVerdict(c, report.Regression)
		case better(c, delta):
			setVerdict(c, report.Improvement)
		default:
			setVerdict(c, report.Unchanged)
		}
		return
	}
	n1, n2 := len(it.base.Values), len(it.cur.Values)
	if n1 < pol.MinSamples || n2 < pol.MinSamples {
		c.Warnings = append(c.Warnings, fmt.Sprintf("need ≥ %d samples per side for a verdict, have %d+%d", pol.MinSamples, n1, n2))
		setVerdict(c, report.Inconclusive)
		it.need = pol.MinSamples
		return
	}
	p := float64(c.PAdjusted)
	if !c.PAdjusted.Valid() {
		p = it.testP
	}
	significant := p < pol.Alpha
	if it.inFam && c.PAdjusted.Valid() && it.minP >= pol.Alpha {
		need := samplesFor(pol.Alpha, it.minP/stats.MinP(n1, n2))
		c.Warnings = append(c.Warnings, fmt.Sprintf("need ≥ %d samples per side to detect a change at alpha %v after the correction, have %d+%d", need, pol.Alpha, n1, n2))
		setVerdict(c, report.Inconclusive)
		it.need = need
		return
	}
	if c.Better == report.Unknown {
		if significant && math.Abs(delta) > c.Threshold {
			c.Warnings = append(c.Warnings, fmt.Sprintf("changed by %+.2f%% but the unit's direction is unknown", delta*100))
			setVerdict(c, report.Inconclusive)
			return
		}
		setVerdict(c, report.Unchanged)
		return
	}
	v := report.Unchanged
	switch {
	case significant && worse(c, delta):
		v = report.Regression
	case significant && better(c, delta):
		v = report.Improvement
	}
	setVerdict(c, modeVerdict(it, v, significant))
}

// setVerdict sets v unless a budget verdict is already there.
func setVerdict(c *report.Comparison, v string) {
	if c.Verdict == report.OverBudget {
		if v == report.Regression {
			c.Warnings = append(c.Warnings, fmt.Sprintf("also a %+.2f%% regression", float64(c.Delta)*100))
		}
		return
	}
	c.Verdict = v
}

// samplesFor returns the smallest n per side whose minimum U-test p,
// multiplied by factor, is below alpha.
func samplesFor(alpha, factor float64) int {
	for n := 2; n < 1000; n++ {
		if stats.MinP(n, n)*factor < alpha {
			return n
		}
	}
	return 1000
}

// applyNoise raises the comparison's threshold to the calibrated noise
// floor (noise.K × the 99th percentile of A/A round differences) where that
// is larger, and marks unstable benchmarks, whose gate becomes the
// configuration's unstable gate (warn unless set).
func applyNoise(it *item, nf *noise.File, unstableGate config.Gate) {
	e, ok := nf.Lookup(it.c.Name, it.c.Unit)
	if !ok || it.exact {
		return
	}
	p99 := e.P99
	it.c.NoiseP99 = &p99
	it.c.ThresholdFrom = "config"
	if f := e.Floor(); f > it.c.Threshold {
		configured := it.c.Threshold
		it.c.ConfiguredThreshold = &configured
		it.c.Threshold = f
		it.c.ThresholdFrom = "noise"
	}
	if !e.Unstable() {
		return
	}
	it.c.Unstable = true
	if unstableGate == "" {
		unstableGate = config.GateWarn
	}
	if it.c.Gate == report.GateFail && unstableGate != config.GateFail {
		it.c.Gate = string(unstableGate)
		it.inFam = it.inFam && it.c.Gate != report.GateOff
		it.c.Warnings = append(it.c.Warnings, fmt.Sprintf("unstable: its noise floor %.1f%% exceeds %.0f%%, so it is gated %s (benchmarks.yaml defaults.unstable)",
			100*e.Floor(), 100*noise.UnstableLimit, it.c.Gate))
	}
}

// applyFloors raises the threshold of a stored check's comparison to the
// cross-host floor of its (benchmark, unit) where that is larger, and
// gates as warn a raw unit (sec/op, GB/s, TFLOP/s) of a family whose
// normalized unit moved less between the stored snapshots: the normalized
// comparison of the same benchmark then decides (package noise, floors).
func applyFloors(it *item, fl *noise.Floors) {
	e, ok := fl.Lookup(it.c.Name, it.c.Unit)
	if !ok || it.exact {
		return
	}
	if it.c.ThresholdFrom == "" {
		it.c.ThresholdFrom = "config"
	}
	if e.Floor > it.c.Threshold {
		if it.c.ConfiguredThreshold == nil {
			configured := it.c.Threshold
			it.c.ConfiguredThreshold = &configured
		}
		it.c.Threshold = e.Floor
		it.c.ThresholdFrom = "hosts"
	}
	if e.Gate == string(config.GateWarn) && it.c.Gate == report.GateFail {
		it.c.Gate = report.GateWarn
		it.c.Warnings = append(it.c.Warnings, fmt.Sprintf("stored baseline from another host: gated on %s, which moved less than %s between the stored snapshots of its family, so this unit only warns", e.GatedBy, it.c.Unit))
	}
}

// detectable fills each two-sided comparison's smallest detectable change
// (package power) at the alpha its test faces after the correction: alpha
// divided by the size of the corrected family, counting the comparison
// itself (under floor-holm a change of threshold size would join it).
func detectable(items []*item, method string) {
	// The corrected families' sizes in hypotheses, one family per gate (correct).
	inFam := map[string][]*item{}
	for _, it := range items {
		if it.c.PAdjusted.Valid() {
			inFam[it.c.Gate] = append(inFam[it.c.Gate], it)
		}
	}
	fam := map[string]int{}
	for g, its := range inFam {
		fam[g] = len(hypotheses(its))
	}
	for _, it := range items {
		if it.base == nil || it.cur == nil || it.exact || it.failed != nil {
			continue
		}
		m := 1
		switch method {
		case report.Holm, report.BH:
			m = max(fam[it.c.Gate], 1)
		case report.FloorHolm:
			m = fam[it.c.Gate]
			if !it.c.PAdjusted.Valid() {
				m++
			}
		}
		alpha := it.policy.Alpha / float64(m)
		d := report.Number(power.Detectable(it.base.Values, it.cur.Values, alpha))
		if math.IsNaN(float64(d)) {
			continue
		}
		it.c.Detectable, it.c.DetectableAlpha = &d, &alpha
	}
}

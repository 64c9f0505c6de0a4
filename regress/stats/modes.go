package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Two-mode samples.
//
// Some benchmarks are not one distribution with noise around it but two: a
// GPU kernel whose every process lands in one of two memory placements runs
// at 720 µs in some processes and at 837 µs in the others, and which one a
// process gets does not depend on the code under test. The median of such a
// side is set by the mix — 2 fast of 10 or 5 of 10 — and a change in the
// mix moves it by up to the distance between the modes, which the U test
// calls significant. Verdicts must be about the speed of each mode, not
// about how often a process drew it, so the statistics say when a side
// falls in two modes and where they are.
//
// The rule, on the logarithms of the samples (so that it reads the same at
// any magnitude): split the sorted sample at its widest gap that leaves at
// least MinModeSamples samples on each side; the side falls in two modes
// when
//
//   - the gap is wider than ModeSeparation times the pooled within-cluster
//     standard deviation (the two clusters' squared deviations from their
//     means over n − 2 degrees of freedom), so that the gap is not the
//     ordinary spacing of one noisy cluster; and
//   - the clusters' medians are further apart than the threshold, so that
//     a change in the mix can move the median by more than the threshold;
//     closer modes cannot change a verdict and are not reported.
//
// Why pooled standard deviation and 8: on unimodal log-normal samples the
// widest gap, over the within-cluster spread, has a distribution that does
// not depend on the coefficient of variation. Simulated
// (TestModesFalsePositives: CV 0.1–3%, thresholds 0.5–5%), a pooled-SD
// multiple of 8 flags at most 0.9% of sides of 6 samples, 0.03% of sides
// of 10 and none of 20. The range of the wider cluster in place of the
// pooled SD, at a multiple that still finds the bimodal data below, flags
// 5–9% of sides of 6, since a two-sample cluster's range is often tiny.
// Real two-mode GPU samples clear the rule by far: the RoPE processes
// above have a 15% gap and a 0.3% spread, a ratio near 50.
//
// Clusters of one sample are not modes: a single slow process is an
// outlier, and the median and the U test already tolerate one. A side with
// a lone sample in a mode that the other side shows with two or more is
// different: ModesLike recognizes it from the pooled evidence.
//
// Outliers that come in pairs do look like a second mode (with 5% of
// samples slowed by up to 30%, a few percent of sides of 10 are flagged).
// The verdict rules are built so that this costs nothing but a note: a mode
// seen on one side only withholds only a verdict the other side could owe
// to the mix (package verdict).

// MinModeSamples is the fewest samples a cluster needs to count as a mode.
const MinModeSamples = 2

// ModeSeparation is how many pooled within-cluster standard deviations
// the gap between two modes must exceed.
const ModeSeparation = 8

// Mode is one cluster of a side's samples.
type Mode struct {
	// Center is the median of the cluster's samples.
	Center float64
	// N is the number of samples in the cluster.
	N int
	// Lo and Hi are the smallest and largest sample of the cluster.
	Lo, Hi float64
}

// Modes returns the two modes of values, lower first, when they fall in
// two modes by the rule above, and nil otherwise. threshold is the relative
// change the comparison is judged by (0.05 for 5%); values ≤ 0 or fewer
// than 2·MinModeSamples values give nil. values is not modified.
func Modes(values []float64, threshold float64) []Mode {
	n := len(values)
	if n < 2*MinModeSamples || !(threshold >= 0) {
		return nil
	}
	v := slices.Sorted(slices.Values(values))
	if v[0] <= 0 || math.IsInf(v[n-1], 0) || math.IsNaN(v[n-1]) {
		return nil
	}
	x := make([]float64, n)
	for i, f := range v {
		x[i] = math.Log(f)
	}
	k, gap := -1, -1.0
	for i := MinModeSamples; i <= n-MinModeSamples; i++ {
		if g := x[i] - x[i-1]; g > gap {
			k, gap = i, g
		}
	}
	ss := sumSquares(x[:k]) + sumSquares(x[k:])
	sd := math.Sqrt(ss / float64(n-2))
	if !(gap > ModeSeparation*sd) {
		return nil
	}
	lo, hi := cluster(v[:k]), cluster(v[k:])
	if !(hi.Center/lo.Center-1 > threshold) {
		return nil
	}
	return []Mode{lo, hi}
}

// ModesLike returns the modes of values read with the modes of the other
// side of the comparison (other, from Modes): when values did not show two
// modes of their own but have samples in both of other's modes — split
// where other's modes split, each part's median within threshold of the
// matching mode's center — a lone sample in a mode counts, since the other
// side's samples establish that mode. It returns nil otherwise. This is the
// pooled evidence of both sides: with 2 of 10 baseline processes at 720 µs
// and 8 at 837 µs, one current process at 720 µs is a visit to the fast
// mode, not an outlier.
func ModesLike(values []float64, other []Mode, threshold float64) []Mode {
	if len(other) != 2 || len(values) < 2 {
		return nil
	}
	v := slices.Sorted(slices.Values(values))
	if v[0] <= 0 {
		return nil
	}
	// Split at the geometric midpoint of the gap between the other side's
	// modes.
	cut := math.Sqrt(other[0].Hi * other[1].Lo)
	k, _ := slices.BinarySearch(v, cut)
	if k == 0 || k == len(v) {
		return nil
	}
	lo, hi := cluster(v[:k]), cluster(v[k:])
	if !near(lo.Center, other[0].Center, threshold) || !near(hi.Center, other[1].Center, threshold) {
		return nil
	}
	return []Mode{lo, hi}
}

// SameModes reports whether two pairs of modes have the same centers,
// each within threshold of its counterpart: then only the mix of the modes
// can differ between the sides.
func SameModes(a, b []Mode, threshold float64) bool {
	return len(a) == 2 && len(b) == 2 &&
		near(a[0].Center, b[0].Center, threshold) && near(a[1].Center, b[1].Center, threshold)
}

// near reports whether x is within threshold of ref, relatively.
func near(x, ref, threshold float64) bool { return math.Abs(x/ref-1) <= threshold }

// cluster summarizes sorted values as a Mode.
func cluster(v []float64) Mode {
	n := len(v)
	c := v[n/2]
	if n%2 == 0 {
		c = (v[n/2-1] + v[n/2]) / 2
	}
	return Mode{Center: c, N: n, Lo: v[0], Hi: v[n-1]}
}

// sumSquares is Σ (x − mean)².
func sumSquares(x []float64) float64 {
	m := 0.0
	for _, f := range x {
		m += f
	}
	m /= float64(len(x))
	s := 0.0
	for _, f := range x {
		s += (f - m) * (f - m)
	}
	return s
}

// ModeChange compares two sides that both fall in two modes, mode by mode:
// the lower modes with each other and the upper modes with each other.
type ModeChange struct {
	// Delta is each mode's current center / baseline center − 1, lower
	// mode first.
	Delta [2]float64
	// P is the Bonferroni combination of the two modes' two-sided
	// Mann–Whitney U tests, min(1, 2·min(p_lower, p_upper)): small when
	// either mode's samples moved, whatever the mix.
	P float64
	// MinP is the smallest P these mode sizes can reach.
	MinP float64
}

// CompareModes compares base and cur mode by mode; bm and cm are their
// modes (from Modes or ModesLike: the first N sorted values of a side are
// its lower mode).
func CompareModes(base, cur []float64, bm, cm []Mode) ModeChange {
	b, c := slices.Sorted(slices.Values(base)), slices.Sorted(slices.Values(cur))
	parts := func(v []float64, m []Mode) [2][]float64 { return [2][]float64{v[:m[0].N], v[m[0].N:]} }
	bp, cp := parts(b, bm), parts(c, cm)
	ch := ModeChange{P: 1, MinP: 1}
	for i := range 2 {
		ch.Delta[i] = cm[i].Center/bm[i].Center - 1
		cmp := benchmath.AssumeNothing.Compare(
			&benchmath.Sample{Values: bp[i], Thresholds: &benchmath.DefaultThresholds},
			&benchmath.Sample{Values: cp[i], Thresholds: &benchmath.DefaultThresholds})
		ch.P = math.Min(ch.P, 2*cmp.P)
		ch.MinP = math.Min(ch.MinP, 2*MinP(len(bp[i]), len(cp[i])))
	}
	return ch
}

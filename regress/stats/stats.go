// Package stats computes the statistics of one comparison: a summary of each
// side and the change between them. It decides no verdicts.
//
// The statistics are benchstat's, computed by golang.org/x/perf/benchmath so
// that kernelwatch's numbers equal benchstat's on the same input:
//
//   - Summary: the sample median with its distribution-free order-statistic
//     confidence interval (benchmath.AssumeNothing) or, for units declared
//     assume=exact, the exact value (benchmath.AssumeExact).
//   - Delta: current median / baseline median − 1, as benchstat prints it.
//   - P: the two-sided Mann–Whitney U test (benchmath.AssumeNothing.Compare).
//
// benchstat gives no interval for the delta. kernelwatch adds one that is
// consistent with the U test: the Hodges–Lehmann interval for the shift
// between the two samples on a log scale, obtained by inverting the
// Mann–Whitney test (Bauer 1972). Its bounds are order statistics of the m·n
// pairwise log-ratios log(current_j/baseline_i), chosen with the exact U
// distribution (normal approximation when m or n exceeds 50), so it excludes 0
// exactly when the U test rejects at 1 − confidence, up to the discreteness of
// U. It is reported as a ratio − 1, like Delta. Samples containing values ≤ 0
// use the additive shift divided by the baseline median instead.
package stats

import (
	"math"
	"sort"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Summary describes one side of a comparison.
type Summary struct {
	Center, Lo, Hi float64
	// Values are the samples in ascending order.
	Values []float64
	// Warnings explain missing or doubtful figures (for example too few
	// samples for a confidence interval).
	Warnings []string
}

// Summarize summarizes values (sorted in place). exact selects the
// assume=exact treatment.
func Summarize(values []float64, exact bool, confidence float64) Summary {
	s := benchmath.NewSample(values, &benchmath.DefaultThresholds)
	a := assumption(exact)
	sum := a.Summary(s, confidence)
	out := Summary{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Values: s.Values}
	for _, w := range sum.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

func assumption(exact bool) benchmath.Assumption {
	if exact {
		return benchmath.AssumeExact
	}
	return benchmath.AssumeNothing
}

// Change is the difference between a baseline and a current sample.
type Change struct {
	// Delta = current center / baseline center − 1; +Inf or NaN when the
	// baseline center is 0.
	Delta float64
	// DeltaLo and DeltaHi bound Delta at the requested confidence; NaN when
	// no interval exists (too few samples, or a zero baseline).
	DeltaLo, DeltaHi float64
	// P is the two-sided Mann–Whitney U p-value; 0 for exact units (the
	// values are taken as exact, so any difference is certain).
	P float64
	// MinSamples is the number of samples per side that the U test needs
	// before it can ever reach p < alpha; 0 for exact units.
	MinSamples int
	Warnings   []string
}

// Compare compares two summaries made by Summarize with the same exact flag.
func Compare(base, cur Summary, exact bool, alpha, confidence float64) Change {
	th := &benchmath.Thresholds{CompareAlpha: alpha}
	sb := &benchmath.Sample{Values: base.Values, Thresholds: th}
	sc := &benchmath.Sample{Values: cur.Values, Thresholds: th}
	cmp := assumption(exact).Compare(sb, sc)
	ch := Change{P: cmp.P, Delta: ratio(base.Center, cur.Center), DeltaLo: math.NaN(), DeltaHi: math.NaN()}
	for _, w := range cmp.Warnings {
		ch.Warnings = append(ch.Warnings, w.Error())
	}
	if exact {
		ch.DeltaLo, ch.DeltaHi = ch.Delta, ch.Delta
		return ch
	}
	ch.MinSamples = MinSamplesU(alpha)
	ch.DeltaLo, ch.DeltaHi = shiftCI(base.Values, cur.Values, base.Center, confidence)
	return ch
}

// ratio returns cur/base − 1 with benchstat's conventions: 0 when equal
// (including 0/0), NaN/Inf otherwise when base is 0.
func ratio(base, cur float64) float64 {
	if base == cur {
		return 0
	}
	if base == 0 {
		return math.Inf(int(math.Copysign(1, cur)))
	}
	return cur/base - 1
}

// MinSamplesU is the smallest n such that two samples of n values each can
// reach a two-sided Mann–Whitney p < alpha. At alpha 0.05 it is 4, as
// benchstat says.
func MinSamplesU(alpha float64) int {
	for n := 1; n < 1000; n++ {
		if MinP(n, n) < alpha {
			return n
		}
	}
	return 1000
}

// MinP is the smallest two-sided Mann–Whitney p-value that samples of m and
// n values can reach (complete separation): 2 / C(m+n, m), at most 1.
func MinP(m, n int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return math.Min(1, 2*math.Exp(lg(m)+lg(n)-lg(m+n)))
}

// shiftCI returns the confidence interval for the relative shift of cur
// over base (see the package comment).
func shiftCI(base, cur []float64, baseCenter, confidence float64) (lo, hi float64) {
	m, n := len(base), len(cur)
	if m == 0 || n == 0 {
		return math.NaN(), math.NaN()
	}
	k := uCritical(m, n, confidence)
	if k < 1 {
		// Too few samples for any interval at this confidence.
		return math.Inf(-1), math.Inf(1)
	}
	positive := base[0] > 0 && cur[0] > 0 // values are sorted ascending
	x, y := base, cur
	if positive {
		x, y = logs(base), logs(cur)
	} else if baseCenter == 0 {
		return math.NaN(), math.NaN()
	}
	// The k-th smallest and k-th largest of the m·n differences y_j − x_i.
	dlo := kthDiff(x, y, k)
	dhi := kthDiff(x, y, m*n-k+1)
	if positive {
		return math.Expm1(dlo), math.Expm1(dhi)
	}
	return dlo / math.Abs(baseCenter), dhi / math.Abs(baseCenter)
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}

type critKey struct {
	m, n       int
	confidence float64
}

var critCache sync.Map

// uCritical returns the largest k such that P(U ≤ k−1) ≤ (1−confidence)/2
// under the null hypothesis, for sample sizes m and n; the interval
// [d_(k), d_(mn−k+1)] then has coverage ≥ confidence. 0 means no k works.
func uCritical(m, n int, confidence float64) int {
	key := critKey{m, n, confidence}
	if k, ok := critCache.Load(key); ok {
		return k.(int)
	}
	tail := (1 - confidence) / 2
	var k int
	if m <= stats.MannWhitneyExactLimit && n <= stats.MannWhitneyExactLimit {
		d := stats.UDist{N1: m, N2: n}
		// CDF is monotone in k: binary search the largest k with
		// CDF(k−1) ≤ tail.
		k = sort.Search(m*n/2+1, func(k int) bool { return d.CDF(float64(k)) > tail })
	} else {
		mu := float64(m*n) / 2
		sigma := math.Sqrt(float64(m*n*(m+n+1)) / 12)
		z := -stats.StdNormal.InvCDF(tail)
		k = int(math.Floor(mu - z*sigma))
	}
	if k < 0 {
		k = 0
	}
	critCache.Store(key, k)
	return k
}

// kthDiff returns the k-th smallest (1-based) of the len(x)·len(y) values
// y[j] − x[i], with x and y sorted ascending, in O((m+n)·log) time and no
// allocation of the m·n differences.
func kthDiff(x, y []float64, k int) float64 {
	// countLE counts pairs with y[j] − x[i] ≤ d by a two-pointer walk.
	countLE := func(d float64) int {
		c, j := 0, 0
		for i := 0; i < len(x); i++ {
			// y[j] − x[i] ≤ d, computed as the differences are (rounding is
			// monotone); the bound grows with x[i], so j only advances.
			for j < len(y) && y[j]-x[i] <= d {
				j++
			}
			c += j
		}
		return c
	}
	lo := y[0] - x[len(x)-1] // smallest difference: count ≥ 1
	hi := y[len(y)-1] - x[0] // largest difference: count = m·n
	if countLE(lo) >= k {
		return lo
	}
	// Invariant: countLE(lo) < k ≤ countLE(hi).
	for iter := 0; iter < 200 && hi-lo > 0; iter++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if countLE(mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	// The answer is the smallest difference greater than lo; it is ≤ hi.
	best := hi
	j := len(y) - 1
	for i := len(x) - 1; i >= 0; i-- {
		// Smallest y[j] with y[j] − x[i] > lo, scanning j down as x[i]
		// decreases.
		for j >= 0 && y[j]-x[i] > lo {
			j--
		}
		if j+1 < len(y) {
			if d := y[j+1] - x[i]; d > lo && d < best {
				best = d
			}
		}
	}
	return best
}

// Package power says how large a change a comparison could have detected:
// the minimum detectable effect of the gate's test for the samples at hand.
//
// The opinion: "unchanged" means nothing unless the test could have seen a
// change of the size the gate cares about. On shared CPU runners samples
// spread by ±10–45%, and with ten of them the U test cannot see 5%; a bare
// PASS there promises more than it can. Every comparison therefore reports
// the smallest change it could have detected, and reports say how many
// gated comparisons could not have seen their own threshold.
//
// Method: the spread is estimated robustly from the samples themselves, as
// the pooled median absolute deviation of the logarithms of each side around
// its median, scaled by 1.4826 to estimate a standard deviation (log-normal
// noise is what benchmark timings show; logs make the figure relative). The
// detectable shift of the log median is then the two-sample formula
//
//	δ = (t[1−α/2, df] + t[power, df]) · s · √(1/n₁ + 1/n₂) · √(π/3),    df = n₁+n₂−2
//
// at power 0.8: the t-test's minimum detectable effect, widened by √(π/3),
// the Mann–Whitney test's asymptotic relative efficiency of 3/π against the
// t-test on normal data. It is reported as a relative change, e^δ − 1.
// α is the gate's significance level divided by the number of comparisons
// the multiple-comparison correction spreads it over (Bonferroni, the bound
// Holm's first step uses). Where the U test can never reach α with n₁ and
// n₂ samples (complete separation gives p = 2/C(n₁+n₂, n₁)), nothing is
// detectable: +Inf. A simulation of injected shifts into log-normal samples
// (power_test.go) agrees within 25%.
package power

import (
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/kernelwatch/kernelwatch/regress/stats"
)

// Power is the probability of detection the figure is computed for.
const Power = 0.8

// mad is the scale of the median absolute deviation that estimates a
// normal standard deviation.
const mad = 1.4826

// Spread is the robust standard deviation of log(values) around their
// median; of values/median when a value is ≤ 0. NaN for fewer than 2 values.
func Spread(values []float64) float64 {
	if len(values) < 2 {
		return math.NaN()
	}
	v := slices.Clone(values)
	slices.Sort(v)
	if v[0] > 0 {
		for i := range v {
			v[i] = math.Log(v[i])
		}
	} else if med := median(v); med != 0 {
		for i := range v {
			v[i] /= math.Abs(med)
		}
	}
	m := median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - m)
	}
	slices.Sort(dev)
	return mad * median(dev)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Detectable returns the smallest relative change between base and cur
// that the two-sided U test at level alpha finds with probability Power,
// given the spread of the samples; +Inf when the sample sizes can never
// reach alpha, NaN when a side has fewer than 2 samples.
func Detectable(base, cur []float64, alpha float64) float64 {
	n1, n2 := len(base), len(cur)
	if n1 < 2 || n2 < 2 {
		return math.NaN()
	}
	s1, s2 := Spread(base), Spread(cur)
	df := float64(n1 + n2 - 2)
	return detectable(n1, n2, math.Sqrt((float64(n1-1)*s1*s1+float64(n2-1)*s2*s2)/df), alpha)
}

// DetectableBlinded is Detectable with the spread estimated blind to the
// sides: from all the samples of both taken together, around their common
// median, as if nobody knew which side each came from (the "blinded"
// variance of sample-size re-estimation in clinical trials).
//
// It is what a decision to take more samples may look at without
// inflating false alarms. When the two sides do not differ, it is a
// function of the samples with their sides forgotten, so it tells nothing
// about how the sides' samples interleave, which is all the U test looks
// at; the per-side spread of Detectable does tell: two sides that each
// cluster tightly, apart from each other, have a small spread and an
// extreme U (package sequential has the figures). The price is that a real
// change widens it, by up to about half the change when the change
// dominates the noise, so for a benchmark that did change it overstates
// what could be detected.
func DetectableBlinded(base, cur []float64, alpha float64) float64 {
	n1, n2 := len(base), len(cur)
	if n1 < 2 || n2 < 2 {
		return math.NaN()
	}
	return detectable(n1, n2, Spread(append(slices.Clone(base), cur...)), alpha)
}

// detectable is the smallest relative change that samples of n1 and n2
// values of log spread s can detect at alpha with probability Power.
func detectable(n1, n2 int, s, alpha float64) float64 {
	if stats.MinP(n1, n2) >= alpha {
		return math.Inf(1)
	}
	df := float64(n1 + n2 - 2)
	t := mstats.InvCDF(mstats.TDist{V: df})
	d := (t(1-alpha/2) + t(Power)) * s * math.Sqrt(1/float64(n1)+1/float64(n2)) * math.Sqrt(math.Pi/3)
	return math.Expm1(d)
}

package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// bruteDiff returns the k-th smallest (1-based) of all y[j]-x[i].
func bruteDiff(x, y []float64, k int) float64 {
	var d []float64
	for _, a := range x {
		for _, b := range y {
			d = append(d, b-a)
		}
	}
	sort.Float64s(d)
	return d[k-1]
}

func TestKthDiffMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		m, n := 1+rng.IntN(30), 1+rng.IntN(30)
		x, y := make([]float64, m), make([]float64, n)
		for i := range x {
			x[i] = math.Round(rng.NormFloat64()*4) / 2 // ties on purpose
		}
		for i := range y {
			y[i] = math.Round(rng.NormFloat64()*4)/2 + 0.5
		}
		sort.Float64s(x)
		sort.Float64s(y)
		for _, k := range []int{1, 2, m * n / 3, m * n / 2, m*n - 1, m * n} {
			if k < 1 {
				continue
			}
			if got, want := kthDiff(x, y, k), bruteDiff(x, y, k); got != want {
				t.Fatalf("m=%d n=%d k=%d: kthDiff %v, brute force %v\nx=%v\ny=%v", m, n, k, got, want, x, y)
			}
		}
	}
}

func TestMinSamplesUMatchesBenchstat(t *testing.T) {
	// benchstat: "need >= 4 samples to detect a difference at alpha level 0.05".
	if got := MinSamplesU(0.05); got != 4 {
		t.Errorf("MinSamplesU(0.05) = %d, want 4", got)
	}
	if got := MinP(10, 10); math.Abs(got-2.0/184756) > 1e-12 {
		t.Errorf("MinP(10,10) = %v, want 2/C(20,10)", got)
	}
}

// TestDeltaIntervalCoverage checks that the delta interval covers the true
// ratio about as often as its confidence level says, on log-normal samples.
func TestDeltaIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials, n = 2000, 10
	const trueRatio = 1.07
	covered := 0
	for i := 0; i < trials; i++ {
		a, b := make([]float64, n), make([]float64, n)
		for j := range a {
			a[j] = 100 * math.Exp(rng.NormFloat64()*0.02)
			b[j] = 100 * trueRatio * math.Exp(rng.NormFloat64()*0.02)
		}
		sa, sb := Summarize(a, false, 0.95), Summarize(b, false, 0.95)
		ch := Compare(sa, sb, false, 0.05, 0.95)
		if ch.DeltaLo <= trueRatio-1 && trueRatio-1 <= ch.DeltaHi {
			covered++
		}
		if !(ch.DeltaLo <= ch.Delta+1e-9 && ch.Delta-1e-9 <= ch.DeltaHi) {
			// The median ratio and the Hodges–Lehmann interval can
			// disagree only in pathological samples, not these.
			t.Fatalf("delta %v outside its interval [%v, %v]", ch.Delta, ch.DeltaLo, ch.DeltaHi)
		}
	}
	rate := float64(covered) / trials
	t.Logf("95%% delta interval covered the true ratio in %.1f%% of %d trials", rate*100, trials)
	if rate < 0.93 || rate > 0.99 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
}

func TestCompareEdgeCases(t *testing.T) {
	// Too few samples: no interval, benchstat's warning.
	s1, s2 := Summarize([]float64{1, 2}, false, 0.95), Summarize([]float64{3, 4}, false, 0.95)
	ch := Compare(s1, s2, false, 0.05, 0.95)
	if !math.IsInf(ch.DeltaLo, -1) || !math.IsInf(ch.DeltaHi, 1) {
		t.Errorf("2+2 samples: interval [%v, %v], want unbounded", ch.DeltaLo, ch.DeltaHi)
	}
	if len(ch.Warnings) == 0 {
		t.Error("2+2 samples: no warning about sample size")
	}
	// Zero baseline: delta is infinite, interval absent.
	z := Summarize([]float64{0, 0, 0, 0, 0, 0}, false, 0.95)
	p := Summarize([]float64{1, 1, 1, 1, 1, 1}, false, 0.95)
	ch = Compare(z, p, false, 0.05, 0.95)
	if !math.IsInf(ch.Delta, 1) || !math.IsNaN(ch.DeltaLo) {
		t.Errorf("zero baseline: delta %v [%v, %v], want +Inf with no interval", ch.Delta, ch.DeltaLo, ch.DeltaHi)
	}
	// 0/0 is no change, as in benchstat.
	if ch := Compare(z, z, false, 0.05, 0.95); ch.Delta != 0 {
		t.Errorf("0 vs 0: delta %v, want 0", ch.Delta)
	}
	// Exact units: p = 0 and the interval is the point.
	e1, e2 := Summarize([]float64{100, 100}, true, 0.95), Summarize([]float64{105, 105}, true, 0.95)
	ch = Compare(e1, e2, true, 0.05, 0.95)
	if ch.P != 0 || math.Abs(ch.Delta-0.05) > 1e-12 || ch.DeltaLo != ch.Delta {
		t.Errorf("exact: %+v", ch)
	}
}

package power

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/stats"
)

// lognormal returns n samples with coefficient of variation cv around
// center.
func lognormal(rng *rand.Rand, n int, center, cv float64) []float64 {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	v := make([]float64, n)
	for i := range v {
		v[i] = center * math.Exp(rng.NormFloat64()*sigma)
	}
	return v
}

// simulated finds by simulation the relative shift that the U test at
// alpha detects in 80% of trials, for n samples per side with the given
// cv: the shift is injected into the current side, and the power curve is
// interpolated between the grid points around 80%.
func simulated(t *testing.T, n int, cv, alpha float64) float64 {
	rng := rand.New(rand.NewPCG(99, 1))
	const trials = 400
	powerAt := func(shift float64) float64 {
		hit := 0
		for i := 0; i < trials; i++ {
			b := stats.Summarize(lognormal(rng, n, 1, cv), false, 0.95)
			c := stats.Summarize(lognormal(rng, n, 1+shift, cv), false, 0.95)
			if stats.Compare(b, c, false, alpha, 0.95).P < alpha {
				hit++
			}
		}
		return float64(hit) / trials
	}
	prevS, prevP := 0.0, powerAt(0)
	for s := cv / 8; s < 4*cv; s += cv / 8 {
		p := powerAt(s)
		if p >= Power {
			return prevS + (Power-prevP)/(p-prevP)*(s-prevS)
		}
		prevS, prevP = s, p
	}
	t.Fatalf("power never reached %v", Power)
	return 0
}

// TestDetectableAgreesWithSimulation is the acceptance test of issue #12:
// synthetic sides of a noisy benchmark (CV 20%, 10 samples) are reported as
// unable to detect 5%, a quiet one (CV 0.5%) as able, and the figure is
// within 25% of the shift a simulation detects 80% of the time.
func TestDetectableAgreesWithSimulation(t *testing.T) {
	const n, alpha = 10, 0.05
	for _, cv := range []float64{0.20, 0.005} {
		sim := simulated(t, n, cv, alpha)
		var figures []float64
		for seed := uint64(1); seed <= 50; seed++ {
			rng := rand.New(rand.NewPCG(seed, 2))
			figures = append(figures, Detectable(lognormal(rng, n, 1, cv), lognormal(rng, n, 1, cv), alpha))
		}
		one := figures[0] // the sides of seed 1
		slices.Sort(figures)
		med := figures[len(figures)/2]
		within := 0
		for _, f := range figures {
			if math.Abs(f/sim-1) <= 0.25 {
				within++
			}
		}
		t.Logf("CV %.1f%%, n=%d: simulation detects %.2f%% in 80%% of trials; Detectable: seed 1 %.2f%% (%+.0f%%), median of 50 seeds %.2f%% (%+.0f%%), %d of 50 within 25%%",
			100*cv, n, 100*sim, 100*one, 100*(one/sim-1), 100*med, 100*(med/sim-1), within)
		if math.Abs(one/sim-1) > 0.25 || math.Abs(med/sim-1) > 0.25 {
			t.Errorf("CV %.1f%%: figure %.2f%% (median %.2f%%) not within 25%% of the simulated %.2f%%", 100*cv, 100*one, 100*med, 100*sim)
		}
		switch {
		case cv == 0.20 && !(one > 0.05):
			t.Errorf("CV 20%%: reported able to detect 5%% (%.2f%%)", 100*one)
		case cv == 0.005 && !(one < 0.05):
			t.Errorf("CV 0.5%%: reported unable to detect 5%% (%.2f%%)", 100*one)
		}
	}
}

func TestDetectableEdges(t *testing.T) {
	if d := Detectable([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.05); !math.IsInf(d, 1) {
		t.Errorf("3+3 samples at alpha 0.05: %v, want +Inf (min p is 0.1)", d)
	}
	if d := Detectable([]float64{1}, []float64{1, 2}, 0.05); !math.IsNaN(d) {
		t.Errorf("one sample: %v, want NaN", d)
	}
	same := []float64{5, 5, 5, 5, 5, 5, 5, 5}
	if d := Detectable(same, same, 0.05); d != 0 {
		t.Errorf("no spread: %v, want 0", d)
	}
	// Smaller alpha (a correction over more comparisons) needs more.
	rng := rand.New(rand.NewPCG(1, 1))
	b, c := lognormal(rng, 10, 1, 0.05), lognormal(rng, 10, 1, 0.05)
	if Detectable(b, c, 0.05/100) <= Detectable(b, c, 0.05) {
		t.Errorf("alpha/100 does not raise the detectable change")
	}
	if s := Spread([]float64{-1, 0, 1}); math.IsNaN(s) || s <= 0 {
		t.Errorf("spread of values around 0: %v", s)
	}
}

// TestDetectableBlinded: with identical sides the blinded figure agrees
// with the per-side one; a real change between the sides widens the
// blinded spread (it cannot tell a change from noise) and not the per-side
// one.
func TestDetectableBlinded(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	b, c := lognormal(rng, 20, 1, 0.05), lognormal(rng, 20, 1, 0.05)
	side, blind := Detectable(b, c, 0.05), DetectableBlinded(b, c, 0.05)
	if math.Abs(blind/side-1) > 0.25 {
		t.Errorf("identical sides: blinded %.2f%%, per side %.2f%%", 100*blind, 100*side)
	}
	shifted := make([]float64, len(c))
	for i, v := range c {
		shifted[i] = 1.3 * v
	}
	if got := Detectable(b, shifted, 0.05); math.Abs(got/side-1) > 1e-9 {
		t.Errorf("a shift moved the per-side figure: %.3f%% → %.3f%%", 100*side, 100*got)
	}
	if got := DetectableBlinded(b, shifted, 0.05); got < 2*blind {
		t.Errorf("a 30%% shift left the blinded figure at %.2f%% (%.2f%% without it)", 100*got, 100*blind)
	}
	if d := DetectableBlinded([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.05); !math.IsInf(d, 1) {
		t.Errorf("3+3 samples: %v, want +Inf", d)
	}
}

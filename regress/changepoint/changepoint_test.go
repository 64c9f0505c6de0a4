package changepoint

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naiveQ is Q for the split z[:tau] | z[tau:], straight from the definition.
func naiveQ(z []float64, tau int) float64 {
	x, y := z[:tau], z[tau:]
	mean := func(a, b []float64, same bool) float64 {
		s, n := 0.0, 0
		for i := range a {
			for j := range b {
				if same && j <= i {
					continue
				}
				s += math.Abs(a[i] - b[j])
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return s / float64(n)
	}
	nx, ny := float64(len(x)), float64(len(y))
	return nx * ny / (nx + ny) * (2*mean(x, y, false) - mean(x, x, true) - mean(y, y, true))
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 50; trial++ {
		n := 6 + rng.IntN(40)
		z := make([]float64, n)
		for i := range z {
			z[i] = math.Round(rng.NormFloat64()*4) / 2 // ties on purpose
			if i > n/2 {
				z[i] += 1.5
			}
		}
		tau, q := bestSplit(z, 3)
		wantTau, wantQ := -1, math.Inf(-1)
		for k := 3; k <= n-3; k++ {
			if v := naiveQ(z, k); v > wantQ+1e-12 {
				wantTau, wantQ = k, v
			}
		}
		if tau != wantTau || math.Abs(q-wantQ) > 1e-9*math.Max(1, wantQ) {
			t.Fatalf("n=%d: bestSplit = (%d, %g), definition gives (%d, %g)", n, tau, q, wantTau, wantQ)
		}
	}
}

// series is n points of log-normal noise with coefficient of variation cv
// around 1, multiplied by 1+step from index at on.
func series(rng *rand.Rand, n, at int, step, cv float64) []float64 {
	z := make([]float64, n)
	for i := range z {
		z[i] = rng.NormFloat64() * cv
		if at >= 0 && i >= at {
			z[i] += math.Log1p(step)
		}
	}
	return z
}

// TestKnownSteps is the acceptance test of issue #12: steps of 3%, 10% and
// 30% in 1% noise, series of 40–200 points, must be found at the right
// point ±1 in at least 95% of seeds, and flat series must show no step in
// at least 95% of seeds.
func TestKnownSteps(t *testing.T) {
	const seeds = 100
	for _, step := range []float64{0.03, 0.10, 0.30, 0} {
		hit, extra := 0, 0
		for seed := uint64(1); seed <= seeds; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(step*1000)))
			n := 40 + rng.IntN(161)
			at := -1
			if step != 0 {
				at = 10 + rng.IntN(n-19)
			}
			z := series(rng, n, at, step, 0.01)
			cps, err := Find(z, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, cp := range cps {
				if at >= 0 && cp.Index >= at-1 && cp.Index <= at+1 {
					ok = true
				} else {
					extra++
				}
			}
			if step == 0 && len(cps) == 0 || ok {
				hit++
			}
		}
		rate := float64(hit) / seeds
		if step == 0 {
			t.Logf("flat series: no step in %d of %d seeds (%.0f%%)", hit, seeds, 100*rate)
		} else {
			t.Logf("%.0f%% step: found at ±1 in %d of %d seeds (%.0f%%); %d other change points", 100*step, hit, seeds, 100*rate, extra)
		}
		if rate < 0.95 {
			t.Errorf("step %.0f%%: %.0f%% of seeds right, want ≥ 95%%", 100*step, 100*rate)
		}
	}
}

func TestSeedRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	z := series(rng, 80, 40, 0.02, 0.01)
	a, _ := Find(z, Options{Seed: 5})
	b, _ := Find(z, Options{Seed: 5})
	if len(a) != len(b) {
		t.Fatalf("same seed, different results: %v vs %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different results: %v vs %v", a, b)
		}
	}
}

func TestMinSizeAndShortSeries(t *testing.T) {
	// A step two points from the end cannot be a change point with
	// segments of at least 3.
	z := []float64{0, 0, 0, 0, 0, 0, 0, 0, 5, 5}
	cps, err := Find(z, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range cps {
		if cp.Index < 3 || cp.Index > len(z)-3 {
			t.Errorf("change point at %d leaves a segment shorter than 3", cp.Index)
		}
	}
	if cps, _ := Find([]float64{1, 2, 3, 4, 5}, Defaults); len(cps) != 0 {
		t.Errorf("5 points: %v, want none", cps)
	}
	if _, err := Find([]float64{1, math.NaN(), 3, 4, 5, 6}, Defaults); err != ErrNotFinite {
		t.Errorf("NaN: err %v, want ErrNotFinite", err)
	}
}

// findAllShuffles is Find as it was before it stopped shuffling early:
// every test runs all its permutations.
func findAllShuffles(series []float64, opt Options) []Point {
	opt = opt.withDefaults()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x65646976))
	bounds := []int{0, len(series)}
	var found []Point
	work := make([]float64, len(series))
	for {
		best, bestQ := -1, 0.0
		for s := 0; s+1 < len(bounds); s++ {
			tau, q := bestSplit(series[bounds[s]:bounds[s+1]], opt.MinSize)
			if tau >= 0 && q > bestQ {
				best, bestQ = bounds[s]+tau, q
			}
		}
		if best < 0 {
			break
		}
		exceed := 0
		for r := 0; r < opt.Permutations; r++ {
			copy(work, series)
			maxQ := 0.0
			for s := 0; s+1 < len(bounds); s++ {
				seg := work[bounds[s]:bounds[s+1]]
				rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
				if _, q := bestSplit(seg, opt.MinSize); q > maxQ {
					maxQ = q
				}
			}
			if maxQ >= bestQ {
				exceed++
			}
		}
		p := float64(1+exceed) / float64(1+opt.Permutations)
		if p >= opt.Alpha {
			break
		}
		found = append(found, Point{Index: best, Q: bestQ, P: p})
		bounds = append(bounds, best)
		sort.Ints(bounds)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Index < found[j].Index })
	return found
}

// TestEarlyStopChangesNothing: stopping a permutation test once p ≥ Alpha
// is certain gives exactly the change points of running every shuffle.
func TestEarlyStopChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 60; trial++ {
		n := 20 + rng.IntN(120)
		at := -1
		if trial%2 == 0 {
			at = 5 + rng.IntN(n-10)
		}
		z := series(rng, n, at, 0.01*float64(trial%5), 0.01)
		for _, opt := range []Options{Defaults, {Alpha: 0.05, Permutations: 99, Seed: 3}} {
			got, _ := Find(z, opt)
			want := findAllShuffles(z, opt)
			if len(got) != len(want) {
				t.Fatalf("trial %d: %v, every shuffle gives %v", trial, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("trial %d: %v, every shuffle gives %v", trial, got, want)
				}
			}
		}
	}
}

// TestSegmentP: on flat segments the p-value is valid (p ≤ 0.05 about 5%
// of the time, not more), and on a stepped segment it reaches the
// resolution of its shuffles.
func TestSegmentP(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	const trials = 400
	small := 0
	for i := 0; i < trials; i++ {
		if SegmentP(series(rng, 60, -1, 0, 0.01), 3, 199, 10, uint64(i+1)) <= 0.05 {
			small++
		}
	}
	t.Logf("flat segments: p ≤ 0.05 in %d of %d", small, trials)
	if rate := float64(small) / trials; rate > 0.08 {
		t.Errorf("flat segments: p ≤ 0.05 in %.1f%% of trials, want about 5%%", 100*rate)
	}
	z := series(rng, 200, 120, 0.02, 0.005)
	if p := SegmentP(z, 3, 1999, 10, 1); p != 1.0/2000 {
		t.Errorf("a 2%% step in 0.5%% noise: p %v, want 1/2000", p)
	}
	if p := SegmentP([]float64{1, 2, 3, 4, 5}, 3, 99, 10, 1); p != 1 {
		t.Errorf("5 points: p %v, want 1", p)
	}
}

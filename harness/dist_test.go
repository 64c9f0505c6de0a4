package harness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFillMatchesHost fills buffers in place on every backend and checks them against Dist.FillHost rounded to
// the buffer's dtype: exactly on the CPU; on a GPU within float32 rounding of mean + sd·z, whose log, cosine
// and sum err by a few float32 ulps of |mean| + 6·sd (the largest |z|) — 1e-6 of it, plus 1e-6 relative — and in
// bf16, where such a difference can move a value across a rounding boundary, by at most one bf16 step more, on
// at most 1 in 10000 elements. Several seeds give different data.
func TestFillMatchesHost(t *testing.T) {
	seed := testSeed | 1
	cases := []struct {
		d  Dist
		dt DType
		c  Case
		n  int
	}{
		{Dist{Kind: Normal, Mean: 0, SD: 1}, FP32, Case{Shape: Shape{1000, 1000}}, 1000 * 1000},
		{Dist{Kind: Normal, Mean: 0.5, SD: 2}, BF16, Case{Shape: Shape{999, 1001}}, 999 * 1001},
		{Dist{Kind: Labels}, Int32, Case{Shape: Shape{5000, 32000}}, 5000},
		{Dist{Kind: RoPECos}, FP32, Case{Shape: Shape{300, 256}}, 300 * RoPEHeadDim / 2},
		{Dist{Kind: RoPESin}, FP32, Case{Shape: Shape{300, 256}}, 300 * RoPEHeadDim / 2},
		{Dist{Kind: Uniform, Lo: 0.9, Hi: 1}, FP32, Case{}, 100003},
		{Dist{Kind: Uniform, Lo: -1, Hi: 3}, BF16, Case{}, 100003},
		{Dist{Kind: Bernoulli, P: 0.1}, Int32, Case{}, 100003},
		{Dist{Kind: Polar, Lo: 0.5, Hi: 1}, FP32, Case{}, 100002},
		{Dist{Kind: Polar, Lo: 0.9, Hi: 1}, BF16, Case{}, 100002},
	}
	for name, be := range mainBackends {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/kind=%d/%v", name, tc.d.Kind, tc.dt), func(t *testing.T) {
				buf, err := be.Alloc(tc.dt, tc.n)
				if err != nil {
					t.Fatal(err)
				}
				defer be.Free(buf)
				if err := be.Poison(buf); err != nil {
					t.Fatal(err)
				}
				if err := be.Fill(buf, tc.d, tc.c, seed); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, tc.n)
				if err := be.Download(buf, got); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, tc.n)
				tc.d.FillHost(tc.c, seed, want)
				exact := name == "cpu"
				abs := 0.0
				if tc.d.Kind == Normal {
					abs = 1e-6 * (math.Abs(tc.d.Mean) + 6*tc.d.SD)
				}
				off := 0
				for i := range want {
					w := float64(roundTo(tc.dt, want[i]))
					g := float64(got[i])
					d := math.Abs(g - w)
					switch {
					case g != g:
						t.Fatalf("element %d unwritten (NaN); want %v", i, w)
					case exact && d != 0:
						t.Fatalf("element %d = %v, want %v exactly", i, g, w)
					case tc.dt == BF16 && d > abs:
						if d > math.Abs(w)/128+abs {
							t.Fatalf("element %d = %v, want %v (more than one bf16 step)", i, g, w)
						}
						off++
					case tc.dt != BF16 && d > 1e-6*math.Abs(w)+abs:
						t.Fatalf("element %d = %v, want %v", i, g, w)
					}
				}
				if off*10000 > tc.n {
					t.Errorf("%d of %d bf16 elements one step off the host's rounding", off, tc.n)
				}
				other := make([]float32, tc.n)
				tc.d.FillHost(tc.c, seed+1, other)
				if tc.d.Kind != RoPECos && tc.d.Kind != RoPESin && same(other, want) {
					t.Error("seeds seed and seed+1 gave the same data")
				}
			})
		}
	}
}

func same(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// roundTo rounds v to dt's storage, as Upload does.
func roundTo(dt DType, v float32) float32 {
	switch dt {
	case BF16:
		return F32FromBF16(BF16FromF32(v))
	case Int32:
		return float32(int32(v))
	}
	return v
}

// TestFillDistributions checks that the in-place generator draws what the declarations say, as the host
// sampler does: a normal's mean and standard deviation within 4 standard errors (and its tails: 4.55% of
// values beyond 2 SD, ±0.2%), labels uniform over the vocabulary with 1 in 8 ignored (each within 4 standard
// errors, χ² over 16 bins under its 0.1% critical value), RoPE tables equal to the host sampler's with the
// same start.
func TestFillDistributions(t *testing.T) {
	const n = 1 << 20
	for _, seed := range []uint64{1, testSeed} {
		x := make([]float32, n)
		Dist{Kind: Normal, Mean: 0.5, SD: 2}.FillHost(Case{}, seed, x)
		var sum, sq float64
		tail := 0
		for _, v := range x {
			sum += float64(v)
			sq += float64(v) * float64(v)
			if math.Abs(float64(v)-0.5) > 4 {
				tail++
			}
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		if math.Abs(mean-0.5) > 4*2/math.Sqrt(n) || math.Abs(sd-2) > 4*2/math.Sqrt(2*n) {
			t.Errorf("seed %d: normal(0.5, 2) fill has mean %.4f, sd %.4f", seed, mean, sd)
		}
		if f := float64(tail) / n; math.Abs(f-0.0455) > 0.002 {
			t.Errorf("seed %d: %.4f of values beyond 2 SD, want 0.0455", seed, f)
		}

		const cols = 16
		labels := make([]float32, n)
		Dist{Kind: Labels}.FillHost(Case{Shape: Shape{n, cols}}, seed, labels)
		var bins [cols]int
		ignored := 0
		for _, l := range labels {
			if l == IgnoreIndex {
				ignored++
				continue
			}
			if l < 0 || l >= cols || l != float32(int(l)) {
				t.Fatalf("label %v out of [0, %d)", l, cols)
			}
			bins[int(l)]++
		}
		if p := float64(ignored) / n; math.Abs(p-0.125) > 4*math.Sqrt(0.125*0.875/n) {
			t.Errorf("seed %d: %.4f of labels ignored, want 1/8", seed, p)
		}
		exp := float64(n-ignored) / cols
		var chi2 float64
		for _, b := range bins {
			chi2 += (float64(b) - exp) * (float64(b) - exp) / exp
		}
		if chi2 > 37.7 { // χ²(15) at 0.1%
			t.Errorf("seed %d: labels χ² = %.1f over %d bins", seed, chi2, cols)
		}

		c := Case{Shape: Shape{40, 256}}
		got, want := make([]float32, 40*64), make([]float32, 40*64)
		Dist{Kind: RoPESin}.FillHost(c, seed, got)
		ropeTable(RoPESin, ropeStart(seed), want)
		if !same(got, want) {
			t.Errorf("seed %d: RoPE fill differs from the table at its start", seed)
		}
	}
	// The sequence families' distributions, filled and sampled: uniform within [lo, hi) with mean (lo+hi)/2,
	// Bernoulli at rate p, polar pairs of modulus in [lo, hi) with cos θ averaging 0 — each within 4 standard
	// errors.
	for name, draw := range map[string]func(Dist, []float32){
		"fill":   func(d Dist, x []float32) { d.FillHost(Case{}, testSeed, x) },
		"sample": func(d Dist, x []float32) { d.Sample(rand.New(rand.NewPCG(testSeed, 1)), Case{}, x) },
	} {
		x := make([]float32, n)
		draw(Dist{Kind: Uniform, Lo: 0.9, Hi: 1}, x)
		var sum float64
		for _, v := range x {
			if v < 0.9 || v > 1 { // [0.9, 1) in float64, rounded to float32
				t.Fatalf("%s: uniform(0.9, 1) drew %v", name, v)
			}
			sum += float64(v)
		}
		if m := sum / n; math.Abs(m-0.95) > 4*0.1/math.Sqrt(12*n) {
			t.Errorf("%s: uniform(0.9, 1) mean %.5f", name, m)
		}
		draw(Dist{Kind: Bernoulli, P: 0.1}, x)
		ones := 0
		for _, v := range x {
			if v != 0 && v != 1 {
				t.Fatalf("%s: bernoulli drew %v", name, v)
			}
			ones += int(v)
		}
		if p := float64(ones) / n; math.Abs(p-0.1) > 4*math.Sqrt(0.1*0.9/n) {
			t.Errorf("%s: bernoulli(0.1) rate %.4f", name, p)
		}
		draw(Dist{Kind: Polar, Lo: 0.5, Hi: 1}, x)
		var cos float64
		for i := 0; i < n; i += 2 {
			r := math.Hypot(float64(x[i]), float64(x[i+1]))
			if r < 0.5-1e-6 || r >= 1+1e-6 {
				t.Fatalf("%s: polar(0.5, 1) pair %d has modulus %v", name, i/2, r)
			}
			cos += float64(x[i]) / r
		}
		if m := cos / (n / 2); math.Abs(m) > 4*math.Sqrt(0.5/(n/2)) {
			t.Errorf("%s: polar phases: mean cos θ %.4f", name, m)
		}
	}
	// The host sampler still draws fresh values per source.
	a, b := make([]float32, 100), make([]float32, 100)
	Dist{Kind: Normal, Mean: 0, SD: 1}.Sample(rand.New(rand.NewPCG(1, 2)), Case{}, a)
	Dist{Kind: Normal, Mean: 0, SD: 1}.Sample(rand.New(rand.NewPCG(3, 4)), Case{}, b)
	if same(a, b) {
		t.Error("two sources sampled the same values")
	}
}

package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// testShapes are the correctness shapes: rows = 1, columns that are not multiples of the CPU tile (256), of
// the eight accumulation lanes or of the FP8 block (128), a long row (fp32 accumulation over 65537 elements),
// and multiples of 128 for RoPE (Family.Supports picks).
var testShapes = []Shape{
	{Rows: 1, Cols: 1}, {Rows: 1, Cols: 300}, {Rows: 7, Cols: 129}, {Rows: 33, Cols: 1000}, {Rows: 5, Cols: 4099}, {Rows: 2, Cols: 65537},
	{Rows: 1, Cols: 128}, {Rows: 3, Cols: 384}, {Rows: 17, Cols: 256}, {Rows: 4, Cols: 4096},
}

// TestKernels checks every family × dtype × impl on every backend against its float64 reference.
func TestKernels(t *testing.T) {
	harness.ForEachCase(t, Families, testShapes, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
		harness.Check(t, be, f, c, impl, nil)
	})
}

// TestCrossEntropyIgnoreIndex: rows labelled IgnoreIndex get exactly zero loss and an exactly zero dlogits row,
// the others a positive loss.
func TestCrossEntropyIgnoreIndex(t *testing.T) {
	halfIgnored := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			dst[i] = float32(r.IntN(c.Cols))
			if i%2 == 0 {
				dst[i] = IgnoreIndex
			}
		}
	}
	shapes := []Shape{{Rows: 6, Cols: 1000}, {Rows: 3, Cols: 4099}}
	harness.ForEachCase(t, []*Family{CrossEntropyFamily}, shapes, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
		res := harness.Check(t, be, f, c, impl, map[string]harness.Generator{"labels": halfIgnored})
		loss, dl := res.Got[0], res.Got[1]
		for r := range c.Rows {
			ignored := res.In[1][r] == IgnoreIndex
			if ignored != (r%2 == 0) {
				t.Fatalf("row %d: label %v", r, res.In[1][r])
			}
			if ignored && loss[r] != 0 || !ignored && !(loss[r] > 0) {
				t.Errorf("row %d (label %v): loss %v", r, res.In[1][r], loss[r])
			}
			if ignored && slices.ContainsFunc(dl[r*c.Cols:(r+1)*c.Cols], func(v float64) bool { return v != 0 }) {
				t.Errorf("row %d is ignored but has non-zero dlogits", r)
			}
		}
	})
}

// TestLargeLogits: softmax and cross-entropy of rows around ±30000, where e^x overflows float32 unless the
// row maximum is subtracted.
func TestLargeLogits(t *testing.T) {
	large := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			row := i / c.Cols
			dst[i] = float32(30000*float64(1-2*(row%2)) + 5*r.NormFloat64())
		}
	}
	gens := map[string]harness.Generator{"x": large, "logits": large}
	// 70000 columns: the wide rows' plans (clusters, rings) take their statistics apart from the narrow ones'.
	shapes := []Shape{{Rows: 4, Cols: 1000}, {Rows: 2, Cols: 5000}, {Rows: 3, Cols: 70000}}
	harness.ForEachCase(t, []*Family{SoftmaxFamily, CrossEntropyFamily}, shapes, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
		res := harness.Check(t, be, f, c, impl, gens)
		for _, out := range res.Got {
			if i := slices.IndexFunc(out, func(v float64) bool { return math.IsInf(v, 0) || math.IsNaN(v) }); i >= 0 {
				t.Fatalf("element %d is %v", i, out[i])
			}
		}
	})
}

// TestFP8QuantAmaxIsExactly448: in every scale group the largest-magnitude element, of either sign, becomes the
// code for exactly ±448, whatever its magnitude (the check also holds every element to e4m3's bound).
func TestFP8QuantAmaxIsExactly448(t *testing.T) {
	// Each 64-column stretch gets its own magnitude, 2^-20 … 2^40, and a planted extreme of random sign.
	spiky := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			dst[i] = float32(r.NormFloat64())
		}
		for lo := 0; lo < len(dst); lo += 64 {
			hi := min(lo+64, len(dst))
			mag := math.Ldexp(1, r.IntN(61)-20)
			for i := lo; i < hi; i++ {
				dst[i] *= float32(mag)
			}
			dst[lo+r.IntN(hi-lo)] = float32(mag * 10 * float64(1-2*r.IntN(2)))
		}
	}
	shapes := []Shape{{Rows: 3, Cols: 300}, {Rows: 2, Cols: 4096}, {Rows: 1, Cols: 1}}
	harness.ForEachCase(t, []*Family{FP8QuantFamily}, shapes, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
		res := harness.Check(t, be, f, c, impl, map[string]harness.Generator{"x": spiky})
		g := fp8Group(c)
		for r := range c.Rows {
			for lo := r * c.Cols; lo < (r+1)*c.Cols; lo += g {
				x := res.In[0][lo:min(lo+g, (r+1)*c.Cols)]
				i := 0
				for j, v := range x {
					if math.Abs(v) > math.Abs(x[i]) {
						i = j
					}
				}
				if q := res.Got[0][lo+i]; q != math.Copysign(E4M3Max, x[i]) {
					t.Errorf("group at %d: amax element %v quantized to %v", lo, x[i], q)
				}
			}
		}
	})
}

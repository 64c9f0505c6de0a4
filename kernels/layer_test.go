package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestLlamaLayerBranches checks the layer where its attention and FFN branches, not the residual stream, make
// the output: with the suite's inputs (x of unit scale, weights of 0.02) the branches add little to y, and a
// wrong member (q projected twice, a non-causal mask) moves y by about the bf16 tolerance only. Here x is
// small and each weight matrix is scaled 1/√fan-in, so every branch is of the order of y.
func TestLlamaLayerBranches(t *testing.T) {
	scaled := func(sd func(c Case) float64) harness.Generator {
		return func(r *rand.Rand, c Case, dst []float32) {
			s := sd(c)
			for i := range dst {
				dst[i] = float32(s * r.NormFloat64())
			}
		}
	}
	byHidden := scaled(func(c Case) float64 { return 1 / math.Sqrt(float64(c.Dims[1])) })
	gens := map[string]harness.Generator{
		"x":  scaled(func(Case) float64 { return 0.05 }),
		"wq": scaled(func(c Case) float64 { return 3 / math.Sqrt(float64(c.Dims[1])) }), // peaked scores
		"wk": byHidden, "wv": byHidden, "wo": byHidden, "wg": byHidden, "wu": byHidden,
		"wd": scaled(func(c Case) float64 { return 1 / math.Sqrt(float64(c.Dims[2])) }),
	}
	for name, be := range harness.Backends() {
		for _, dims := range [][]int{{65, 256, 352}, {130, 384, 200}} {
			for _, impl := range Impls {
				c := Case{DType: BF16, Dims: dims}
				t.Run(fmt.Sprintf("%s/%s", name, LlamaLayerFamily.BenchName(c, impl)), func(t *testing.T) {
					harness.Check(t, be, LlamaLayerFamily, c, impl, gens)
				})
			}
		}
	}
}

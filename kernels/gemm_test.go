package kernels

import (
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestGEMMOddShapes runs both CPU implementations on shapes the test grid leaves out: K not a multiple of 8
// (which only the harness.CUDA kernels refuse), K shorter than a vector, and one column.
func TestGEMMOddShapes(t *testing.T) {
	be := harness.Backends()["cpu"]
	for _, dims := range [][]int{{5, 7, 13}, {3, 1, 3}, {17, 65, 257}} {
		c := Case{DType: BF16, Dims: dims}
		for _, impl := range Impls {
			t.Run(GEMMFamily.BenchName(c, impl), func(t *testing.T) {
				if _, err := harness.CheckCase(be, GEMMFamily, c, impl, harness.CaseSeed(t), nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestFFNFlops checks the FLOP counts against the GEMMs of each variant: three for SwiGLU, two for GELU.
func TestFFNFlops(t *testing.T) {
	sw := FFNFamily.Flops(Case{Variant: "swiglu", Dims: []int{512, 4096, 11008}})
	ge := FFNFamily.Flops(Case{Variant: "gelu", Dims: []int{512, 4096, 16384}})
	if want := 3 * GEMMFamily.Flops(Case{Dims: []int{512, 11008, 4096}}); sw != want {
		t.Errorf("swiglu: %v FLOP, want %v", sw, want)
	}
	if want := 2 * GEMMFamily.Flops(Case{Dims: []int{512, 16384, 4096}}); ge != want {
		t.Errorf("gelu: %v FLOP, want %v", ge, want)
	}
	var ran int
	for _, c := range FFNFamily.CasesOn("cuda", nil) {
		if FFNFamily.Skip(c, Fused) == "" {
			ran++
			if inter := map[string]int{"swiglu": 11008, "gelu": 16384}[c.Variant]; c.Dims[2] != inter {
				t.Errorf("%s runs", FFNFamily.BenchName(c, Fused))
			}
		}
	}
	if ran != 6 {
		t.Errorf("%d FFN cuda cases run, want 6", ran)
	}
}

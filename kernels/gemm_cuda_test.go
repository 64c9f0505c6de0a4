//go:build cuda

package kernels

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestCUDAMMAProbe checks the tensor-core yardstick: a positive rate, and one below the table's peak (with 10%
// for a clock above the one the table assumes); on a GPU without bf16 mma.sync, ErrNotImplemented.
func TestCUDAMMAProbe(t *testing.T) {
	be := cudaBackend(t)
	tf, err := be.MeasureMMA()
	if be.CC() < 80 {
		if !errors.Is(err, ErrNotImplemented) {
			t.Fatalf("sm_%d: MeasureMMA = %v, %v; want ErrNotImplemented", be.CC(), tf, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	peak, how := be.PeakMMA()
	t.Logf("mma-tflops %.1f, peak %.1f (%s)", tf, peak, how)
	if !(tf > 0) || peak > 0 && tf > 1.1*peak {
		t.Errorf("mma-tflops %.1f, peak %.1f (%s)", tf, peak, how)
	}
}

// TestCUDAMMAPlans checks every tensor-core plan (mmaPlans) on every GEMM and FFN test case, fused and naive
// (the naive FFN runs the same GEMM kernels), plus shapes where the 128 × 128 blocks leave partial tiles in M,
// N and K over many k-tiles — with the wgmma kernels switched off, so that a Hopper GPU tests the mma.sync path.
func TestCUDAMMAPlans(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 80 {
		t.Skipf("sm_%d has no bf16 mma.sync", be.CC())
	}
	def, defGEMM, defFFN := mmaPlanFor, wgmmaGEMMOn, wgmmaFFNOn
	t.Cleanup(func() { mmaPlanFor, wgmmaGEMMOn, wgmmaFFNOn = def, defGEMM, defFFN })
	wgmmaGEMMOn, wgmmaFFNOn = false, false // on sm_90 too: the mma.sync kernels every other GPU runs
	extra := map[*Family][]Case{
		GEMMFamily: {{DType: BF16, Dims: []int{517, 389, 1032}}, {DType: BF16, Dims: []int{128, 256, 32}}},
		FFNFamily: {{DType: BF16, Dims: []int{200, 264, 328}, Variant: "swiglu"},
			{DType: BF16, Dims: []int{200, 264, 328}, Variant: "gelu"}},
	}
	for _, f := range []*Family{GEMMFamily, FFNFamily} {
		for _, p := range mmaPlans {
			for _, c := range append(f.CasesOn("test", nil), extra[f]...) {
				for _, impl := range Impls {
					if f == GEMMFamily && impl == Naive {
						continue // no tensor cores
					}
					t.Run(fmt.Sprintf("%s/%s/plan=%s", f.Name, f.BenchName(c, impl), p.name), func(t *testing.T) {
						mmaPlanFor = func(cudaLaunch, int, int, bool) mmaPlan { return p }
						if _, err := harness.CheckCase(be, f, c, impl, harness.CaseSeed(t), nil); err != nil {
							t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
						}
					})
				}
			}
		}
	}
}

// TestCUDAGEMMRefusesK checks the clear error for K not a multiple of 8.
func TestCUDAGEMMRefusesK(t *testing.T) {
	be := cudaBackend(t)
	c := Case{DType: BF16, Dims: []int{16, 16, 12}}
	var in, out []harness.Buffer
	defer func() {
		for _, b := range append(in, out...) {
			be.Free(b)
		}
	}()
	for _, ops := range []struct {
		list []Operand
		dst  *[]harness.Buffer
	}{{GEMMFamily.Inputs, &in}, {GEMMFamily.Outputs, &out}} {
		for _, o := range ops.list {
			b, err := be.Alloc(o.Type(c), o.Len(c))
			if err != nil {
				t.Fatal(err)
			}
			*ops.dst = append(*ops.dst, b)
		}
	}
	l, err := be.Prepare(GEMMFamily, Fused, c, in, out)
	if err == nil {
		l.Release()
		t.Fatal("K = 12 accepted")
	}
	if want := "not a multiple of 8"; !strings.Contains(err.Error(), want) && be.CC() >= 80 {
		t.Errorf("error %q does not say %q", err, want)
	}
	t.Log(err)
}

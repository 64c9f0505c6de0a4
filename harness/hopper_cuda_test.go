//go:build cuda

package harness

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// The GPU tests of the Hopper yardstick (wgmma_cuda.go) and the vendor reference (cublaslt_cuda.go), both
// written offline and pending: they run like every CUDA test, and once they pass on an H100/H200 the pending
// strings (wgmmaPending, cublasPending) can be emptied.

// TestCUDAWGMMAProbe checks the wgmma yardstick: on compute capability 9.0 a rate above mma.sync's (what wgmma
// is for) and below the table's peak (with 10% for a boost clock above the one the table assumes); elsewhere
// ErrNotImplemented.
func TestCUDAWGMMAProbe(t *testing.T) {
	be := cudaBackend(t)
	tf, err := be.MeasureWGMMA()
	if be.cc != 90 {
		if !errors.Is(err, ErrNotImplemented) {
			t.Fatalf("sm_%d: MeasureWGMMA = %v, %v; want ErrNotImplemented", be.cc, tf, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	mma, err := be.MeasureMMA()
	if err != nil {
		t.Fatal(err)
	}
	peak, how := be.PeakMMA()
	t.Logf("wgmma-tflops %.1f, mma-tflops %.1f, peak %.1f (%s)", tf, mma, peak, how)
	if !(tf > mma) || peak > 0 && tf > 1.1*peak {
		t.Errorf("wgmma-tflops %.1f, mma-tflops %.1f, peak %.1f (%s)", tf, mma, peak, how)
	}
}

// TestCUDACublasLt checks the vendor reference's GEMM against the float64 reference on a GEMM family's test shapes
// (M, N, K not multiples of any tile), all in one launch: a wrong layout or transpose fails here, not in a
// timing. Without the library it skips, saying why.
func TestCUDACublasLt(t *testing.T) {
	be := cudaBackend(t)
	lib, err := be.VendorGEMM()
	if err != nil {
		t.Skipf("no cuBLASLt: %v", err)
	}
	t.Logf("cublaslt: %s", lib)
	rng := rand.New(rand.NewPCG(testSeed, 7))
	type gemm struct {
		g       vendorGEMM
		x, w    []float32
		m, n, k int
	}
	var gs []gemm
	var bufs []Buffer
	defer func() {
		for _, b := range bufs {
			be.Free(b)
		}
	}()
	alloc := func(n int) Buffer {
		b, err := be.Alloc(BF16, n)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
		return b
	}
	// M, N and K not multiples of any tile (K a multiple of 8, as the suite's GEMM kernels need), one row, several
	// k-tiles and blocks: kernels' GEMM family's test shapes.
	for _, d := range [][3]int{{1, 8, 8}, {37, 45, 64}, {130, 200, 136}, {256, 256, 512}} {
		m, n, k := d[0], d[1], d[2]
		g := gemm{m: m, n: n, k: k, x: make([]float32, m*k), w: make([]float32, n*k)}
		for i := range g.x {
			g.x[i] = F32FromBF16(BF16FromF32(float32(rng.NormFloat64())))
		}
		for i := range g.w {
			g.w[i] = F32FromBF16(BF16FromF32(float32(0.05 * rng.NormFloat64())))
		}
		g.g = vendorGEMM{M: m, N: n, K: k, X: alloc(m * k), W: alloc(n * k), Y: alloc(m * n)}
		for _, up := range []struct {
			b Buffer
			v []float32
		}{{g.g.X, g.x}, {g.g.W, g.w}} {
			if err := be.Upload(up.b, up.v); err != nil {
				t.Fatal(err)
			}
		}
		if err := be.Poison(g.g.Y); err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	var vg []vendorGEMM
	for _, g := range gs {
		vg = append(vg, g.g)
	}
	l, err := be.PrepareVendorGEMM(vg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	if ns, err := be.Time(l, 3, PolicyFor(be.Device()).Timing); err != nil || len(ns) != 3 || !(ns[0] > 0) {
		t.Errorf("Time = %v, %v", ns, err)
	}
	for _, g := range gs {
		y := make([]float32, g.m*g.n)
		if err := be.Download(g.g.Y, y); err != nil {
			t.Fatal(err)
		}
		want := gemmRef(g.x, g.w, g.m, g.n, g.k)
		got := make([]float64, len(y))
		for i, v := range y {
			got[i] = float64(v)
		}
		if err := RelL2Within(got, want, 1e-2); err != nil {
			t.Errorf("cuBLASLt %d×%d×%d: %v (-kernels.seed=%d)", g.m, g.n, g.k, err, testSeed)
		}
	}
}

// gemmRef is x · wᵀ in float64: x [m, k], w [n, k], the result [m, n].
func gemmRef(x, w []float32, m, n, k int) []float64 {
	y := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for t := range k {
				s += float64(x[i*k+t]) * float64(w[j*k+t])
			}
			y[i*n+j] = s
		}
	}
	return y
}

package kernels

import "github.com/kernelwatch/kernelwatch/harness"

// GEMMFamily is a Linear layer in bf16 on tensor cores: y[M, N] = x[M, K] · W[N, K]ᵀ, x and W row-major with K
// contiguous (as torch.nn.Linear stores them), fp32 accumulation, y rounded to bf16. Its yardstick is the tensor
// cores (Flops, pct-mma), not memory. The CUDA kernels need K to be a multiple of 8 (16-byte row chunks).
var GEMMFamily = &Family{
	Name:    "GEMM",
	DimKeys: []string{"m", "n", "k"},
	DTypes:  []DType{BF16},
	Grid: map[string][][]int{
		"cpu": {{128, 128, 128}, {64, 256, 512}},
		// cuda: the square yardstick, and Llama-2-7B's FFN projections at 2048 tokens (up/gate: 4096 → 11008,
		// down: 11008 → 4096).
		"cuda": {{4096, 4096, 4096}, {2048, 11008, 4096}, {2048, 4096, 11008}},
		// test: one row; M, N and K not multiples of any tile (K a multiple of 8); several k-tiles and blocks.
		"test": {{1, 8, 8}, {37, 45, 64}, {130, 200, 136}, {256, 256, 512}},
	},
	Inputs: []Operand{
		{Name: "x", Len: func(c Case) int { return c.Dims[0] * c.Dims[2] }, Gen: normal(0, 1)},
		{Name: "w", Len: func(c Case) int { return c.Dims[1] * c.Dims[2] }, Gen: normal(0, 0.05)},
	},
	Outputs: []Operand{{Name: "y", Len: func(c Case) int { return c.Dims[0] * c.Dims[1] }}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		m, n, k := c.Dims[0], c.Dims[1], c.Dims[2]
		return [][]float64{linearRef(in[0], in[1], m, n, k)}
	},
	Flops: func(c Case) float64 { return 2 * float64(c.Dims[0]) * float64(c.Dims[1]) * float64(c.Dims[2]) },
	// The vendor reference (pct-cublas) is cuBLASLt's GEMM of the same shape.
	VendorGEMMs: func(c Case) [][3]int { return [][3]int{{c.Dims[0], c.Dims[1], c.Dims[2]}} },
}

func init() { registerCPU(GEMMFamily, gemmFused, gemmNaive) }

// linearRef is x · wᵀ in float64: x [m, k], w [n, k], the result [m, n].
func linearRef(x, w []float64, m, n, k int) []float64 {
	y := make([]float64, m*n)
	for i := range m {
		xr := x[i*k : (i+1)*k]
		for j := range n {
			var s float64
			for t, v := range w[j*k : (j+1)*k] {
				s += xr[t] * v
			}
			y[i*n+j] = s
		}
	}
	return y
}

func gemmFused(l cpuLaunch) {
	m, n, k := l.Dims[0], l.Dims[1], l.Dims[2]
	y := actOf(l.Out[0])
	l.linear(actOf(l.In[0]), []act{actOf(l.In[1])}, m, n, k, func(r, n0 int, acc [][]float32) {
		var buf [tile]float32
		d := y.dst(r*n+n0, len(acc[0]), &buf)
		copy(d, acc[0])
		y.store(r*n+n0, d)
	})
}

// gemmNaive is x.float() @ W.float().T, then .to(bf16): both operands widened to fp32 intermediates, a plain
// triple loop into an fp32 result, and a cast.
func gemmNaive(l cpuLaunch) {
	m, n, k := l.Dims[0], l.Dims[1], l.Dims[2]
	x := l.upcast(dense(actOf(l.In[0]), k), m, k)
	w := l.upcast(dense(actOf(l.In[1]), k), n, k)
	acc := l.tmp(m, n)
	xs, ws, ys := x.t.f32, w.t.f32, acc.t.f32
	l.Parallel(m, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			for j := range n {
				var s float32
				for t := range k {
					s += xs[i*k+t] * ws[j*k+t]
				}
				ys[i*n+j] = s
			}
		}
	})
	l.unary(opCopy, dense(actOf(l.Out[0]), n), acc, m, n)
}

// The CPU's cache-blocked GEMM (linear): a worker takes linearMB rows of x at a time and walks the outputs in
// blocks of linearNB columns, K in blocks of linearKB; each block of x and W is widened to fp32 once into
// local arrays (64 KiB of W: the stand-in for shared memory) and multiplied with fp32 accumulation.
const linearMB, linearNB, linearKB = 16, 64, 256

// linear computes x · wᵀ for each w of ws (x [m, k], each w [n, k]) and hands each row's results to emit in
// blocks: emit(r, n0, acc) with acc[i][j] = (x · ws[i]ᵀ)[r, n0+j], j < linearNB (fewer in the last block).
func (l cpuLaunch) linear(x act, ws []act, m, n, k int, emit func(r, n0 int, acc [][]float32)) {
	nw := len(ws)
	l.Parallel(ceilDiv(m, linearMB), func(b0, b1 int) {
		xb := make([]float32, linearMB*linearKB)
		wb := make([]float32, nw*linearNB*linearKB)
		acc := make([]float32, nw*linearMB*linearNB)
		rowAcc := make([][]float32, nw)
		for b := b0; b < b1; b++ {
			r0 := b * linearMB
			mb := min(linearMB, m-r0)
			for n0 := 0; n0 < n; n0 += linearNB {
				nb := min(linearNB, n-n0)
				clear(acc)
				for k0 := 0; k0 < k; k0 += linearKB {
					kb := min(linearKB, k-k0)
					for i := range mb {
						widen(xb[i*linearKB:i*linearKB+kb], x, (r0+i)*k+k0)
					}
					for w := range nw {
						for j := range nb {
							widen(wb[(w*linearNB+j)*linearKB:][:kb], ws[w], (n0+j)*k+k0)
						}
					}
					for w := range nw {
						for i := range mb {
							xr := xb[i*linearKB : i*linearKB+kb]
							a := acc[(w*linearMB+i)*linearNB:][:nb]
							for j := range a {
								a[j] += dot32(xr, wb[(w*linearNB+j)*linearKB:][:kb])
							}
						}
					}
				}
				for i := range mb {
					for w := range nw {
						rowAcc[w] = acc[(w*linearMB+i)*linearNB:][:nb]
					}
					emit(r0+i, n0, rowAcc)
				}
			}
		}
	})
}

// widen copies len(d) elements of a from off into d as fp32.
func widen(d []float32, a act, off int) {
	if a.b16 == nil {
		copy(d, a.f32[off:off+len(d)])
		return
	}
	for i, h := range a.b16[off : off+len(d)] {
		d[i] = harness.F32FromBF16(h)
	}
}

package kernels

// RTUFamily is the low-rank recurrent trace unit cell of the RL suite ("rtu"): a complex diagonal recurrence
// driven by a rank-r projection of its input. x, h (batch, t, d), U (d, rank), V (rank, d), lambda (d),
// resets (batch, t); channels 2j, 2j+1 are one complex unit (d/2 of them), λ a constant decay per unit,
// stored as (|λ| cos θ, |λ| sin θ) with |λ| in [0.9, 1);
//
//	u_t = (x_t U) V,  h_t = λ ⊙ h_{t−1} + u_t,  h_{t−1} := 0 at a reset (and before t = 0),
//
// ⊙ the complex product, fp32 state. The fused kernel computes the projection on chip and scans it (u is never
// written); the naive chain is two matrix products with fp32 intermediates (z = x U, u = z V) and then one
// launch per step, benchmarked up to 1024 steps (seqSkipNaive).
var RTUFamily = &Family{
	Name:    "RTU",
	DimKeys: []string{"batch", "t", "d", "rank"},
	Grid: map[string][][]int{
		"cpu": {{4, 256, 64, 16}},
		// cuda: the suite's config (8 sequences of 1024 steps, 32 complex units, rank 16, 10% resets), an RL
		// batch of 256 episodes, and one 60 FPS frame of a batch-1 sequence of 4096 steps (benchmarks.yaml:
		// budget; fused only).
		"cuda": {{8, 1024, 64, 16}, {256, 1024, 64, 16}, {1, 4096, 64, 16}},
		// test: one unit, widths up to the fused kernel's 256 units, ranks 1 to 64, lengths that are not
		// multiples of a tile's steps, one step.
		"test": {{2, 37, 2, 1}, {3, 100, 64, 16}, {1, 300, 30, 7}, {2, 1, 8, 4}, {1, 20, 512, 64}, {2, 150, 128, 3}},
	},
	Skip: seqSkipNaive(1),
	Inputs: []Operand{
		{Name: "x", Len: seqLen, Gen: normal(0, 1)},
		{Name: "U", Len: func(c Case) int { return c.Dims[2] * c.Dims[3] }, Gen: Dist{Kind: Normal, SD: 0.125}},
		{Name: "V", Len: func(c Case) int { return c.Dims[3] * c.Dims[2] }, Gen: Dist{Kind: Normal, SD: 0.25}},
		{Name: "lambda", Len: func(c Case) int { return c.Dims[2] }, Gen: polar(0.9, 1)},
		resetsOperand(seqMaskLen),
	},
	Outputs:   []Operand{{Name: "h", Len: seqLen}},
	Reference: rtuRef,
}

func init() { registerCPU(RTUFamily, rtuFused, rtuNaive) }

// rtuRef projects and scans sequentially in float64.
func rtuRef(c Case, in [][]float64) [][]float64 {
	x, uw, vw, lambda, resets := in[0], in[1], in[2], in[3], in[4]
	nb, nt, nd, nr := c.Dims[0], c.Dims[1], c.Dims[2], c.Dims[3]
	h := make([]float64, len(x))
	z, state := make([]float64, nr), make([]float64, nd)
	for b := range nb {
		for t := range nt {
			if t == 0 || resets[b*nt+t] != 0 {
				clear(state)
			}
			row := (b*nt + t) * nd
			for k := range nr {
				z[k] = 0
				for j := range nd {
					z[k] += x[row+j] * uw[j*nr+k]
				}
			}
			for d := 0; d < nd; d += 2 {
				var ur, ui float64
				for k := range nr {
					ur += z[k] * vw[k*nd+d]
					ui += z[k] * vw[k*nd+d+1]
				}
				sr, si := state[d], state[d+1]
				state[d], state[d+1] = lambda[d]*sr-lambda[d+1]*si+ur, lambda[d]*si+lambda[d+1]*sr+ui
				h[row+d], h[row+d+1] = state[d], state[d+1]
			}
		}
	}
	return [][]float64{h}
}

// rtuFused runs each sequence step by step: the projection of x_t, then the state update, in fp32 locals.
func rtuFused(l cpuLaunch) {
	x, uw, vw, lambda, h := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[2]), actOf(l.In[3]), actOf(l.Out[0])
	resets := l.In[4].I32
	nt, nd, nr := l.Dims[1], l.Dims[2], l.Dims[3]
	l.Parallel(l.Dims[0], func(b0, b1 int) {
		z, u, state := make([]float32, nr), make([]float32, nd), make([]float32, nd)
		for b := b0; b < b1; b++ {
			for t := range nt {
				if t == 0 || resets[b*nt+t] != 0 {
					clear(state)
				}
				row := (b*nt + t) * nd
				rtuProject(x, uw, vw, row, z, u)
				for d := 0; d < nd; d += 2 {
					lr, li, sr, si := lambda.at(d), lambda.at(d+1), state[d], state[d+1]
					state[d], state[d+1] = lr*sr-li*si+u[d], lr*si+li*sr+u[d+1]
					h.setAt(row+d, state[d])
					h.setAt(row+d+1, state[d+1])
				}
			}
		}
	})
}

// rtuProject computes u = (x U) V for the step whose x starts at element row, through z (rank elements).
func rtuProject(x, uw, vw act, row int, z, u []float32) {
	nr, nd := len(z), len(u)
	for k := range z {
		var acc float32
		for j := range nd {
			acc += x.at(row+j) * uw.at(j*nr+k)
		}
		z[k] = acc
	}
	for d := range u {
		var acc float32
		for k := range nr {
			acc += z[k] * vw.at(k*nd+d)
		}
		u[d] = acc
	}
}

// rtuNaive is the eager chain: z = x U and u = z V (one matrix product each, fp32 intermediates), then the
// per-step passes of the linear recurrence with the constant decays λ.
func rtuNaive(l cpuLaunch) {
	nb, nt, nd, nr := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	rows := nb * nt
	z := l.matmul(actOf(l.In[0]), actOf(l.In[1]), rows, nd, nr)
	u := l.matmul(act{f32: z}, actOf(l.In[2]), rows, nr, nd)
	linRecNaiveSteps(l, actOf(l.In[3]), 0, 0, u, l.In[4].I32, l.ScratchF32(nb*nd), true)
}

// matmul returns a·w as a new fp32 intermediate: a is rows × k, w is k × n, both row-major.
func (l cpuLaunch) matmul(a, w act, rows, k, n int) []float32 {
	out := l.ScratchF32(rows * n)
	l.Parallel(rows, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			for c := range n {
				var acc float32
				for j := range k {
					acc += a.at(r*k+j) * w.at(j*n+c)
				}
				out[r*n+c] = acc
			}
		}
	})
	return out
}

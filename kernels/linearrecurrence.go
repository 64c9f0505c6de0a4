package kernels

// LinearRecurrenceFamily is the diagonal linear recurrence with resets of the streaming RTU ("axons") cell and of
// linear-recurrence scans: a, b, x, h (batch, t, d), resets (batch, t);
//
//	h_t = a_t ⊙ h_{t−1} + b_t ⊙ x_t,  h_{t−1} := 0 at a reset (and before t = 0),
//
// in fp32 state. diag=real: ⊙ is elementwise. diag=complex: channels 2j, 2j+1 are the real and imaginary parts
// of one complex channel and ⊙ is the complex product, so a_t acts on h as a rotation by θ scaled by |λ|.
// The decays are drawn as (|λ| cos θ, |λ| sin θ) pairs with |λ| in [0.9, 1) and any θ: complex decays of modulus
// below 1, or in diag=real two real decays in (−1, 1). The fused kernels are chunked scans, correct at any
// length (the tests run T = 65536); the naive one is an eager loop over time, one launch per step, benchmarked
// up to 1024 steps (seqSkipNaive).
var LinearRecurrenceFamily = &Family{
	Name:       "LinearRecurrence",
	DimKeys:    []string{"batch", "t", "d"},
	VariantKey: "diag",
	Variants:   []string{"real", "complex"},
	Grid: map[string][][]int{
		"cpu": {{4, 512, 128}},
		// cuda: the accelerated-scan shape (8 × 1536 channels × 65536 steps, 12.9 GB in fp32), RL batches of
		// 256 episodes of 1024 and 128 steps, and one 60 FPS frame of a batch-1 long scan (benchmarks.yaml:
		// budget). The naive loop runs at the RL shapes only (Skip).
		"cuda": {{8, 65536, 1536}, {256, 1024, 64}, {256, 128, 256}, {1, 65536, 1536}},
		// test: widths that are and are not multiples of a tile's 16-byte accesses, lengths that are not
		// multiples of a tile's steps, one step.
		"test": {{2, 37, 20}, {3, 200, 64}, {1, 600, 6}, {2, 1, 8}, {1, 300, 136}, {2, 129, 2}},
	},
	Skip: seqSkipNaive(1),
	Inputs: []Operand{
		{Name: "a", Len: seqLen, Gen: polar(0.9, 1)},
		{Name: "b", Len: seqLen, Gen: normal(0, 1)},
		{Name: "x", Len: seqLen, Gen: normal(0, 1)},
		resetsOperand(seqMaskLen),
	},
	Outputs:   []Operand{{Name: "h", Len: seqLen}},
	Reference: linRecRef,
}

func init() { registerCPU(LinearRecurrenceFamily, linRecFused, linRecNaive) }

// linRecRef is the recurrence, sequentially in float64.
func linRecRef(c Case, in [][]float64) [][]float64 {
	a, b, x, resets := in[0], in[1], in[2], in[3]
	nb, nt, nd := c.Dims[0], c.Dims[1], c.Dims[2]
	cplx := c.Variant == "complex"
	h := make([]float64, len(x))
	state := make([]float64, nd)
	for bb := range nb {
		clear(state)
		for t := range nt {
			if resets[bb*nt+t] != 0 {
				clear(state)
			}
			row := (bb*nt + t) * nd
			for d := 0; d < nd; d++ {
				i := row + d
				if !cplx {
					state[d] = a[i]*state[d] + b[i]*x[i]
					h[i] = state[d]
					continue
				}
				ur, ui := b[i]*x[i]-b[i+1]*x[i+1], b[i]*x[i+1]+b[i+1]*x[i]
				sr, si := state[d], state[d+1]
				state[d], state[d+1] = a[i]*sr-a[i+1]*si+ur, a[i]*si+a[i+1]*sr+ui
				h[i], h[i+1] = state[d], state[d+1]
				d++
			}
		}
	}
	return [][]float64{h}
}

// linRecChannels is how many channels a CPU worker scans at a time (even: complex pairs stay together).
const linRecChannels = 64

// linRecFused scans each block of channels of each sequence over time, the state in registers (a local array).
func linRecFused(l cpuLaunch) {
	a, b, x, h := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[2]), actOf(l.Out[0])
	resets := l.In[3].I32
	nt, nd := l.Dims[1], l.Dims[2]
	cplx := l.Variant == "complex"
	blocks := (nd + linRecChannels - 1) / linRecChannels
	l.Parallel(l.Dims[0]*blocks, func(r0, r1 int) {
		var state [linRecChannels]float32
		for r := r0; r < r1; r++ {
			bb, d0 := r/blocks, r%blocks*linRecChannels
			n := min(linRecChannels, nd-d0)
			for t := range nt {
				if resets[bb*nt+t] != 0 {
					clear(state[:n])
				}
				row := (bb*nt+t)*nd + d0
				linRecStep(a, b, x, h, row, state[:n], cplx)
			}
		}
	})
}

// linRecStep advances state (the channels from element row on) by one step and stores it as h.
func linRecStep(a, b, x, h act, row int, state []float32, cplx bool) {
	if !cplx {
		for d := range state {
			state[d] = a.at(row+d)*state[d] + b.at(row+d)*x.at(row+d)
			h.setAt(row+d, state[d])
		}
		return
	}
	for d := 0; d+1 < len(state); d += 2 {
		i := row + d
		ar, ai, br, bi, xr, xi := a.at(i), a.at(i+1), b.at(i), b.at(i+1), x.at(i), x.at(i+1)
		sr, si := state[d], state[d+1]
		state[d], state[d+1] = ar*sr-ai*si+(br*xr-bi*xi), ar*si+ai*sr+(br*xi+bi*xr)
		h.setAt(i, state[d])
		h.setAt(i+1, state[d+1])
	}
}

// linRecNaive is an eager loop over time: u = b ⊙ x as an fp32 intermediate, then one pass per step over every
// sequence's state (fp32): state = (reset ? 0 : a_t) ⊙ state + u_t, h_t = state.
func linRecNaive(l cpuLaunch) {
	nb, nt, nd := l.Dims[0], l.Dims[1], l.Dims[2]
	cplx := l.Variant == "complex"
	u := l.ScratchF32(nb * nt * nd)
	b, x := actOf(l.In[1]), actOf(l.In[2])
	l.Parallel(nb*nt, func(r0, r1 int) {
		for i := r0 * nd; i < r1*nd; i++ {
			switch {
			case !cplx:
				u[i] = b.at(i) * x.at(i)
			case i%2 == 0:
				u[i] = b.at(i)*x.at(i) - b.at(i+1)*x.at(i+1)
			default:
				u[i] = b.at(i-1)*x.at(i) + b.at(i)*x.at(i-1)
			}
		}
	})
	state := l.ScratchF32(nb * nd)
	linRecNaiveSteps(l, actOf(l.In[0]), nt*nd, nd, u, l.In[3].I32, state, cplx)
}

// linRecNaiveSteps runs the per-step passes of a naive chain into the output: for each step t, one pass over
// the nb sequences with a_t at element b·aBatch + t·aStep of a (aStep 0: constant decays), u_t and the fp32
// state; the state is ignored at t = 0 and at a reset.
func linRecNaiveSteps(l cpuLaunch, a act, aBatch, aStep int, u []float32, resets []int32, state []float32, cplx bool) {
	nb, nt, nd := l.Dims[0], l.Dims[1], l.Dims[2]
	h := actOf(l.Out[0])
	for t := range nt {
		l.Parallel(nb, func(b0, b1 int) {
			for bb := b0; bb < b1; bb++ {
				keep := t > 0 && resets[bb*nt+t] == 0
				s := state[bb*nd : (bb+1)*nd]
				ai, ui := bb*aBatch+t*aStep, (bb*nt+t)*nd
				for d := 0; d < nd; d++ {
					var sr, si, ar, aim float32
					if keep {
						sr, ar = s[d], a.at(ai+d)
						if cplx {
							si, aim = s[d+1], a.at(ai+d+1)
						}
					}
					if !cplx {
						s[d] = ar*sr + u[ui+d]
						h.setAt(ui+d, s[d])
						continue
					}
					s[d], s[d+1] = ar*sr-aim*si+u[ui+d], ar*si+aim*sr+u[ui+d+1]
					h.setAt(ui+d, s[d])
					h.setAt(ui+d+1, s[d+1])
					d++
				}
			}
		})
	}
}

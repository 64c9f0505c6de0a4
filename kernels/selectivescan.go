package kernels

import "math"

// scanN is N, the state size of each channel of the selective scan (Mamba's d_state).
const scanN = 16

// SelectiveScanFamily is Mamba's selective scan with resets, over x [batch, t, d] (token-major, so that a
// time step of all channels is one contiguous row):
//
//	Δ_t = softplus(delta_t),  A = −exp(a_log)                         (per channel d; A is [d, N])
//	h_t = exp(Δ_t A) ⊙ h_{t−1} + Δ_t B_t x_t                          (h: N states per channel, zero at a reset)
//	y_t = C_t · h_t + D x_t
//
// with B_t, C_t [batch, t, N] shared by the channels of a row, D [d] and N = 16. The fused kernel keeps each
// channel's 16 states on chip for the whole sequence and reads each input once: the expanded [batch, t, d, N]
// state is never written. The naive form is Mamba's reference scan as a framework runs it: discretize into
// the expanded tensors exp(Δ⊗A) and Δx⊗B, then per step h = mask(h), h = dA_t·h, h = h + dBx_t (eager ops)
// and y_t = einsum(h, C_t), and last y = ys + D·x.
var SelectiveScanFamily = &Family{
	Name:    "SelectiveScan",
	DimKeys: []string{"batch", "t", "d"},
	Grid: map[string][][]int{
		// Correctness: one row per reset pattern of the tests, lengths that are not multiples of the fused
		// kernel's time chunk (8), channel counts that leave a block part-full.
		"test": {{5, 37, 24}, {1, 1, 3}, {6, 70, 130}},
		"cpu":  {{4, 256, 64}},
		// An RL batch (256 rows, 1024 steps) and a long Mamba sequence (d_inner 1536) with the naive form left
		// out (seqSkipNaive).
		"cuda": {{256, 1024, 128}, {8, 4096, 1536}},
	},
	Inputs: []Operand{
		{Name: "x", Len: scanBTD, Gen: normal(0, 1)},
		{Name: "delta", Len: scanBTD, Gen: normal(-2.5, 1)}, // Δ before softplus: ≈ 0.08
		{Name: "a_log", DType: FP32, Len: scanDN, Gen: normal(1, 0.5)},
		{Name: "b", Len: scanBTN, Gen: normal(0, 1)},
		{Name: "c", Len: scanBTN, Gen: normal(0, 1)},
		{Name: "dskip", DType: FP32, Len: func(c Case) int { return c.Dims[2] }, Gen: normal(1, 0.5)},
		seqResets(func(c Case) int { return c.Dims[0] * c.Dims[1] }),
	},
	Outputs:   []Operand{{Name: "y", Len: scanBTD}},
	Reference: scanRef,
	Skip:      seqSkipNaive(1),
}

func init() { registerCPU(SelectiveScanFamily, scanFused, scanNaive) }

// scanDims are a case's batch, time and channel counts.
func scanDims(c Case) (nb, nt, nd int) { return c.Dims[0], c.Dims[1], c.Dims[2] }

func scanBTD(c Case) int { nb, nt, nd := scanDims(c); return nb * nt * nd }
func scanBTN(c Case) int { nb, nt, _ := scanDims(c); return nb * nt * scanN }
func scanDN(c Case) int  { _, _, nd := scanDims(c); return nd * scanN }

// scanRef is the sequential recurrence in float64.
func scanRef(c Case, in [][]float64) [][]float64 {
	x, delta, aLog, bm, cm, dskip, resets := in[0], in[1], in[2], in[3], in[4], in[5], in[6]
	nb, nt, nd := scanDims(c)
	y := make([]float64, len(x))
	var h [scanN]float64
	for b := range nb {
		for d := range nd {
			for t := range nt {
				if resets[b*nt+t] != 0 {
					h = [scanN]float64{}
				}
				i := (b*nt+t)*nd + d
				dt := softplus64(delta[i])
				var acc float64
				for n := range scanN {
					a := -math.Exp(aLog[d*scanN+n])
					h[n] = math.Exp(dt*a)*h[n] + dt*bm[(b*nt+t)*scanN+n]*x[i]
					acc += cm[(b*nt+t)*scanN+n] * h[n]
				}
				y[i] = acc + dskip[d]*x[i]
			}
			h = [scanN]float64{}
		}
	}
	return [][]float64{y}
}

// scanFused runs each batch row's channels through time with their states in a local array.
func scanFused(l cpuLaunch) {
	x, delta, bm, cm, resets, y := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[3]), actOf(l.In[4]), actOf(l.In[6]), actOf(l.Out[0])
	aLog, dskip := l.In[2].F32, l.In[5].F32
	nb, nt, nd := scanDims(l.Case)
	a := make([]float32, nd*scanN)
	for i, v := range aLog {
		a[i] = -exp32(v)
	}
	l.Parallel(nb, func(b0, b1 int) {
		h := make([]float32, nd*scanN)
		for b := b0; b < b1; b++ {
			clear(h)
			for t := range nt {
				if resets.at(b*nt+t) != 0 {
					clear(h)
				}
				var bt, ct [scanN]float32
				for n := range scanN {
					bt[n], ct[n] = bm.at((b*nt+t)*scanN+n), cm.at((b*nt+t)*scanN+n)
				}
				for d := range nd {
					i := (b*nt+t)*nd + d
					xv := x.at(i)
					dt := softplus32(delta.at(i))
					hs, as := h[d*scanN:(d+1)*scanN:(d+1)*scanN], a[d*scanN:(d+1)*scanN:(d+1)*scanN]
					var acc float32
					for n := range scanN {
						hs[n] = exp32(dt*as[n])*hs[n] + dt*bt[n]*xv
						acc += ct[n] * hs[n]
					}
					y.setAt(i, acc+dskip[d]*xv)
				}
			}
		}
	})
}

// scanNaive is the framework's scan (see SelectiveScanFamily): the discretized inputs expanded to
// [batch, t, d, N], then four passes per step, each over every row's state.
func scanNaive(l cpuLaunch) {
	x, delta, bm, cm, resets := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[3]), actOf(l.In[4]), actOf(l.In[6])
	nb, nt, nd := scanDims(l.Case)
	bt, dn := nb*nt, nd*scanN
	dt := l.ScratchF32(bt * nd)
	l.Parallel(bt, func(r0, r1 int) {
		for i := r0 * nd; i < r1*nd; i++ {
			dt[i] = softplus32(delta.at(i))
		}
	})
	a := l.un(opExp, dense(act{f32: l.In[2].F32}, dn), 1, dn)
	a = l.bin(opMul, a, scalar(-1), 1, dn)
	dA, dBx := l.ScratchF32(bt*dn), l.ScratchF32(bt*dn)
	l.Parallel(bt, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			for d := range nd {
				i := r*nd + d
				dtx := dt[i] * x.at(i)
				for n := range scanN {
					dA[i*scanN+n] = exp32(dt[i] * a.t.f32[d*scanN+n])
					dBx[i*scanN+n] = dtx * bm.at(r*scanN+n)
				}
			}
		}
	})
	h, mask := l.seqNaiveState(resets, nb, nt, dn)
	ys := l.ScratchF32(bt * nd)
	for t := range nt {
		step := func(v []float32) view {
			return view{t: act{f32: v}, off: t * dn, rowStride: nt * dn, rowDiv: 1, colDiv: 1}
		}
		mask(t)
		l.binary(opMul, h, h, step(dA), nb, dn)
		l.binary(opAdd, h, h, step(dBx), nb, dn)
		l.Parallel(nb, func(b0, b1 int) {
			for b := b0; b < b1; b++ {
				for d := range nd {
					var acc float32
					for n := range scanN {
						acc += h.t.f32[(b*nd+d)*scanN+n] * cm.at((b*nt+t)*scanN+n)
					}
					ys[(b*nt+t)*nd+d] = acc
				}
			}
		})
	}
	xd := l.bin(opMul, l.upcast(dense(x, nd), bt, nd), perCol(act{f32: l.In[5].F32}), bt, nd)
	l.binary(opAdd, dense(actOf(l.Out[0]), nd), dense(act{f32: ys}, nd), xd, bt, nd)
}

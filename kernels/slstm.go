package kernels

import (
	"fmt"
	"math"
)

// SLSTMFamily is the xLSTM paper's sLSTM cell (Beck et al. 2024, §2.2 and appendix) with resets: per head of
// dh units, scalar memories with exponential input and sigmoid forget gates, a normalizer state and the
// stabilizer state m, and head-wise block-diagonal recurrent weights R. With the gate pre-activations
// (i, f, z, o) of a step
//
//	z̃ = Wx_t + R h_{t−1} + b                       (Wx: the input projections, given; R [heads, 4·dh, dh])
//	m_t = max(log σ(f̃) + m_{t−1}, ĩ)               (m_t = ĩ at the first step and after a reset)
//	i'_t = exp(ĩ − m_t),  f'_t = exp(log σ(f̃) + m_{t−1} − m_t)
//	c_t = f'_t c_{t−1} + i'_t tanh(z̃),  n_t = f'_t n_{t−1} + i'_t,  h_t = σ(õ) c_t / n_t
//
// which is the exponentially gated LSTM with c and n scaled by exp(−m_t) so that no exponential overflows
// (the output is the same for any consistent m). A reset zeroes h, c, n and m before its step; then, as at
// t = 0, m_t = ĩ_t, the elementwise form of the official implementation's "n = 0" case. Layouts: Wx
// [batch, t, heads, 4, dh], bias [heads, 4, dh] fp32, output h [batch, t, heads·dh].
//
// The fused form is one persistent kernel over the sequence, a block per (head, a few batch rows) with the
// head's R in registers; the naive form runs per step the masking of the stacked state [h | c | n | m] by the
// reset flags, the head-wise recurrent GEMM R·h, and the pointwise cell (the official PyTorch loop's three
// launches).
var SLSTMFamily = &Family{
	Name:    "SLSTM",
	DimKeys: []string{"batch", "heads", "t", "dh"},
	Grid: map[string][][]int{
		// Every head size the CUDA kernels are built for (16, 32, 64), batch tails, odd lengths.
		"test": {{5, 2, 37, 16}, {5, 3, 11, 32}, {6, 2, 7, 64}, {1, 1, 1, 16}},
		"cpu":  {{4, 4, 64, 64}},
		// The suite's config and an RL batch at 1024 steps.
		"cuda": {{2, 4, 256, 64}, {256, 4, 1024, 32}},
	},
	Inputs: []Operand{
		{Name: "wx", Len: func(c Case) int { nb, nh, nt, dh := slstmDims(c); return nb * nt * nh * 4 * dh }, Gen: normal(0, 1)},
		{Name: "r", Len: func(c Case) int { _, nh, _, dh := slstmDims(c); return nh * 4 * dh * dh }, Gen: normal(0, 0.1)},
		{Name: "bias", DType: FP32, Len: func(c Case) int { _, nh, _, dh := slstmDims(c); return nh * 4 * dh }, Gen: normal(0, 0.5)},
		seqResets(func(c Case) int { return c.Dims[0] * c.Dims[2] }),
	},
	Outputs:   []Operand{{Name: "h", Len: func(c Case) int { nb, nh, nt, dh := slstmDims(c); return nb * nt * nh * dh }}},
	Reference: slstmRef,
	Skip:      seqSkipNaive(2),
}

func init() { registerCPU(SLSTMFamily, slstmFused, slstmNaive) }

// slstmPlan is how the fused sLSTM runs on a GPU: with tc false, slstm.cu's persistent kernel (rnn.cuh: fp32
// arithmetic on CUDA cores, R in registers, any storage); with tc true, for bf16 on sm_90, rnn_tc.cuh's kernel
// on tensor cores, a block per (head, 16·mt batch rows; r8: 8 rows).
//
// With units true (fp32), the SIMT kernel is rnn.cuh's rnn_units (a thread per unit and 1/lanes of its four gate
// rows, slstmUnitLanes, or lanes), fast: with the gate functions on the special-function unit, bb batch rows a block (0:
// the fewest that keep the grid resident).
type slstmPlan struct {
	tc          bool
	mt          int
	r8          bool
	units, fast bool
	lanes, bb   int
}

func (p slstmPlan) String() string {
	switch {
	case p.units:
		return rnnUnitsPlanName(p.fast, p.lanes, p.bb)
	case !p.tc:
		return "simt"
	case p.r8:
		return "tc_r8"
	}
	return fmt.Sprintf("tc_mt%d", p.mt)
}

// slstmHeadSizes are the head sizes the CUDA kernels are built for.
var slstmHeadSizes = map[int]bool{16: true, 32: true, 64: true}

// slstmChoosePlan is the plan of case c on compute capability cc: the tensor-core kernel in 8-row batch tiles
// for bf16 on sm_90 and later where rnnTCOn allows it, else the SIMT kernel (fp32's 1e-5 tolerance is below
// what bf16 products give). On an H200 (TestCUDASLSTMTune) the 8-row tiles took (2, 4, 256, 64) to 0.165 ms and
// (256, 4, 1024, 32) to 0.48 ms, against 0.186 and 0.876 for the SIMT kernel; 16-row tiles were slower than
// SIMT (0.29, 0.88): a block's per-step cost is the mma of its m16 tile and the cells of its rows.
//
// fp32 takes the unit kernel where rnnUnitsOn allows it, with the batch rows a block left to the launch (one
// at both cuda shapes), and the fast gate functions at head size 64 only: on an H100 (TestCUDASLSTMTune)
// (2, 4, 256, 64) took 0.131 ms with them and 0.173 ms without (SIMT 0.184), but (256, 4, 1024, 32) 0.691 ms
// with them and 0.639 ms without (SIMT 0.815).
func slstmChoosePlan(c Case, cc int) slstmPlan {
	if dh := c.Dims[3]; c.DType == FP32 && rnnUnitsOn && slstmUnitLanes[dh] > 0 {
		return slstmPlan{units: true, fast: dh >= 64}
	}
	if !rnnTCOn || c.DType != BF16 || cc < 90 || !slstmHeadSizes[c.Dims[3]] {
		return slstmPlan{}
	}
	return slstmPlan{tc: true, mt: 1, r8: true}
}

// slstmPlans are the plans built for case c: the SIMT kernel, and for bf16 the tensor-core kernel with 8-, 16-
// and 32-row batch tiles.
//
// For fp32: the unit kernels (rnnUnitsPlans).
func slstmPlans(c Case) []slstmPlan {
	if c.DType != BF16 {
		return append([]slstmPlan{{}}, rnnUnitsPlans(c.Dims[3], slstmUnitLanes, slstmUnitLanesAlt,
			func(fast bool, lanes, bb int) slstmPlan {
				return slstmPlan{units: true, fast: fast, lanes: lanes, bb: bb}
			})...)
	}
	return []slstmPlan{{}, {tc: true, mt: 1}, {tc: true, mt: 2}, {tc: true, mt: 1, r8: true}}
}

// slstmDims are a case's batch, heads, time and head size.
func slstmDims(c Case) (nb, nh, nt, dh int) { return c.Dims[0], c.Dims[1], c.Dims[2], c.Dims[3] }

// slstmRef is the sequential recurrence in float64.
func slstmRef(c Case, in [][]float64) [][]float64 {
	wx, r, bias, resets := in[0], in[1], in[2], in[3]
	nb, nh, nt, dh := slstmDims(c)
	d := nh * dh
	out := make([]float64, nb*nt*d)
	h, cs, ns, ms, raw := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, 4*d)
	for b := range nb {
		for t := range nt {
			first := t == 0 || resets[b*nt+t] != 0
			if first {
				clear(h)
			}
			for hd := range nh {
				for row := range 4 * dh {
					acc := wx[(b*nt+t)*4*d+hd*4*dh+row] + bias[hd*4*dh+row]
					for k := range dh {
						acc += r[(hd*4*dh+row)*dh+k] * h[hd*dh+k]
					}
					raw[hd*4*dh+row] = acc
				}
			}
			for hd := range nh {
				for j := range dh {
					u, z := hd*dh+j, raw[hd*4*dh:]
					ig, fg, zg, og := z[j], z[dh+j], z[2*dh+j], z[3*dh+j]
					if first {
						cs[u], ns[u], ms[u] = 0, 0, 0
					}
					logfm := ms[u] + logSigmoid64(fg)
					m := ig
					if !first {
						m = max(ig, logfm)
					}
					i, f := math.Exp(ig-m), math.Exp(logfm-m)
					cs[u] = f*cs[u] + i*math.Tanh(zg)
					ns[u] = f*ns[u] + i
					ms[u] = m
					h[u] = sigmoid64(og) * cs[u] / ns[u]
					out[(b*nt+t)*d+u] = h[u]
				}
			}
		}
	}
	return [][]float64{out}
}

// slstmCell is the pointwise update of one unit from its four pre-activations (i, f, z, o) and its state
// (c, n, m), first at t = 0 and after a reset; it returns h.
func slstmCell(ig, fg, zg, og float32, c, n, m *float32, first bool) float32 {
	if first {
		*c, *n, *m = 0, 0, 0
	}
	logfm := *m + logSigmoid32(fg)
	mNew := ig
	if !first {
		mNew = max(ig, logfm)
	}
	i, f := exp32(ig-mNew), exp32(logfm-mNew)
	*c = f**c + i*tanh32(zg)
	*n = f**n + i
	*m = mNew
	return sigmoid32(og) * *c / *n
}

// slstmFused runs each batch row through time with its state in local arrays.
func slstmFused(l cpuLaunch) {
	nb, nh, nt, dh := slstmDims(l.Case)
	d := nh * dh
	wx, r, bias, resets, out := actOf(l.In[0]), actOf(l.In[1]), l.In[2].F32, actOf(l.In[3]), actOf(l.Out[0])
	l.Parallel(nb, func(b0, b1 int) {
		h, cs, ns, ms, raw := make([]float32, d), make([]float32, d), make([]float32, d), make([]float32, d), make([]float32, 4*d)
		var tw, tx [tile]float32
		for b := b0; b < b1; b++ {
			for t := range nt {
				first := t == 0 || resets.at(b*nt+t) != 0
				if first {
					clear(h)
				}
				for hd := range nh {
					x := wx.load((b*nt+t)*4*d+hd*4*dh, 4*dh, &tx)
					for row := range 4 * dh {
						w := r.load((hd*4*dh+row)*dh, dh, &tw)
						acc := x[row] + bias[hd*4*dh+row]
						for k, v := range h[hd*dh : (hd+1)*dh] {
							acc += w[k] * v
						}
						raw[hd*4*dh+row] = acc
					}
				}
				for hd := range nh {
					z := raw[hd*4*dh:]
					for j := range dh {
						u := hd*dh + j
						h[u] = slstmCell(z[j], z[dh+j], z[2*dh+j], z[3*dh+j], &cs[u], &ns[u], &ms[u], first)
						out.setAt((b*nt+t)*d+u, h[u])
					}
				}
			}
		}
	})
}

// slstmNaive is the official PyTorch loop: per step the stacked state [batch, h | c | n | m] masked by the reset
// flags (an eager op), the head-wise recurrent GEMM R·h, and the pointwise cell, which adds Wx and the bias
// and takes n = 0 for the first step of a row (t = 0 or after a reset).
func slstmNaive(l cpuLaunch) {
	nb, nh, nt, dh := slstmDims(l.Case)
	d := nh * dh
	wx, bias, out := actOf(l.In[0]), l.In[2].F32, actOf(l.Out[0])
	st, mask := l.seqNaiveState(actOf(l.In[3]), nb, nt, 4*d)
	ry := l.ScratchF32(nb * 4 * d)
	for t := range nt {
		mask(t)
		l.gemm(seqGEMM{a: st.t, aZ: dh, lda: 4 * d, w: actOf(l.In[1]), wZ: 4 * dh * dh, ldw: dh, out: ry, oZ: 4 * dh, ldo: 4 * d,
			m: nb, n: 4 * dh, k: dh, batch: nh})
		l.Parallel(nb, func(b0, b1 int) {
			for b := b0; b < b1; b++ {
				s := st.t.f32[b*4*d : (b+1)*4*d]
				for hd := range nh {
					z, base := ry[b*4*d+hd*4*dh:], (b*nt+t)*4*d+hd*4*dh
					pre := func(g, j int) float32 { return z[g*dh+j] + wx.at(base+g*dh+j) + bias[hd*4*dh+g*dh+j] }
					for j := range dh {
						u := hd*dh + j
						s[u] = slstmCell(pre(0, j), pre(1, j), pre(2, j), pre(3, j), &s[d+u], &s[2*d+u], &s[3*d+u], s[2*d+u] == 0)
						out.setAt((b*nt+t)*d+u, s[u])
					}
				}
			}
		})
	}
}

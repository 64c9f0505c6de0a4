//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/slstm.ptx cuda/slstm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/slstm_sm90.ptx cuda/slstm.cu

import "fmt"

func init() { registerCUDA(SLSTMFamily, "slstm", slstmFusedCUDA, slstmNaiveCUDA) }

// slstmPlanFor picks the plan of a case on a GPU of compute capability cc; the tests swap it.
var slstmPlanFor = slstmChoosePlan

// slstmFusedCUDA runs the case's plan: the SIMT kernel (slstm_rnn), or the tensor-core one (slstmTCCUDA).
func slstmFusedCUDA(l cudaLaunch) {
	nb, nh, nt, dh := slstmDims(l.Case)
	if !slstmHeadSizes[dh] {
		l.Fail(fmt.Errorf("slstm: no kernel for head size %d", dh))
		return
	}
	p := slstmPlanFor(l.Case, l.CC())
	if p.tc {
		slstmTCCUDA(l, p)
		return
	}
	if p.units {
		ks := slstmUnitLanes[dh]
		if p.lanes > 0 {
			ks = p.lanes
		}
		if l.DType != FP32 || ks == 0 {
			l.Fail(fmt.Errorf("slstm: the unit plan %v is built for fp32 at head sizes 16, 32, 64; this is %v at %d: %w",
				p, l.DType, dh, ErrNotImplemented))
			return
		}
		name := func(bb int) string { return rnnUnitsName("slstm", "dh", dh, p.fast, ks, bb) }
		blocks := func(bb int) int { return ceilDiv(nb, bb) * nh }
		bb := p.bb
		if bb == 0 {
			bb = rnnBatchFor(l, name, blocks, dh*ks, 4, false)
		}
		l.Kernel(name(bb), blocks(bb), dh*ks, l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], nb, nt, nh)
		return
	}
	name := func(bb int) string { return fmt.Sprintf("slstm_rnn_%s_dh%d_bb%d", seqDType(l.DType), dh, bb) }
	blocks := func(bb int) int { return ceilDiv(nb, bb) * nh }
	bb := rnnBatchFor(l, name, blocks, 4*dh, 4, false)
	l.Kernel(name(bb), blocks(bb), 4*dh, l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], nb, nt, nh)
}

// slstmTCCUDA runs plan p (tc) from module slstm_sm90: slstm_tc, rnn_tc with the given Wx (bf16, through the
// kernel's input ring) and the bias as the step's inputs, a block per (head, 16·mt batch rows).
func slstmTCCUDA(l cudaLaunch, p slstmPlan) {
	nb, nh, nt, dh := slstmDims(l.Case)
	if l.CC() < 90 || l.DType != BF16 {
		l.Fail(fmt.Errorf("slstm: the tensor-core plan %v needs bf16 and compute capability 9.0; this is %v on %d.%d: %w",
			p, l.DType, l.CC()/10, l.CC()%10, ErrNotImplemented))
		return
	}
	tile, rows := fmt.Sprintf("mt%d", p.mt), 16*p.mt
	if p.r8 {
		tile, rows = "r8", 8
	}
	name := fmt.Sprintf("slstm_tc_bf16_dh%d_%s", dh, tile)
	l.KernelCluster(l.Module()+"_sm90", name, ceilDiv(nb, rows)*nh, 4*dh, 1, rnnTCSmem(dh, 1, p.mt, p.r8, false, 2),
		l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], nb, nt, nh)
}

// slstmNaiveCUDA is the CPU's loop (slstmNaive), op for op.
func slstmNaiveCUDA(l cudaLaunch) {
	nb, nh, nt, dh := slstmDims(l.Case)
	d := nh * dh
	st, mask := l.seqNaiveState(l.In[3], nb, nt, 4*d)
	ry := l.tmpF32(nb * 4 * d)
	for t := range nt {
		mask(t)
		l.gemm(devGEMM{a: st.t, aZ: dh, lda: 4 * d, w: tensorOf(l.In[1]), wZ: 4 * dh * dh, ldw: dh, out: ry, oZ: 4 * dh,
			ldo: 4 * d, m: nb, n: 4 * dh, k: dh, batch: nh})
		l.seqKernel("slstm_cell_"+seqDType(l.DType), nb*d, ry.ptr, l.In[0], l.In[2], st.t.ptr, l.Out[0], t, nb, nt, nh, dh)
	}
}

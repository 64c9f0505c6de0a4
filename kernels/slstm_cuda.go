//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/slstm.ptx cuda/slstm.cu

import "fmt"

func init() { registerCUDA(SLSTMFamily, "slstm", slstmFusedCUDA, slstmNaiveCUDA) }

func slstmFusedCUDA(l cudaLaunch) {
	nb, nh, nt, dh := slstmDims(l.Case)
	if dh != 16 && dh != 32 && dh != 64 {
		l.Fail(fmt.Errorf("slstm: no kernel for head size %d", dh))
		return
	}
	name := func(bb int) string { return fmt.Sprintf("slstm_rnn_%s_dh%d_bb%d", seqDType(l.DType), dh, bb) }
	blocks := func(bb int) int { return ceilDiv(nb, bb) * nh }
	bb := rnnBatchFor(l, name, blocks, 4*dh, 4, false)
	l.Kernel(name(bb), blocks(bb), 4*dh, l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], nb, nt, nh)
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

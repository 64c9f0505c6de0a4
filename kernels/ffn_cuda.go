//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/ffn.ptx cuda/ffn.cu
//go:generate nvcc -ptx -arch=compute_80 -o cuda/ptx/ffn_sm80.ptx cuda/ffn.cu

func init() { registerCUDA(FFNFamily, "ffn", ffnFusedCUDA, ffnNaiveCUDA) }

// ffnFusedCUDA: ffn_fc1_{swiglu,gelu} (FC1 and the activation, h in bf16 scratch) and ffn_linear (FC2),
// cuda/ffn.cu; on compute capability 9.0, while the switch allows (wsffn.go: ffnUsesWGMMA), FC1 is the wgmma
// GEMM with the activation in its epilogue (wsgemm_<act>_*, the plan wsFFNPlanFor picks) and FC2 the plain
// wgmma GEMM (wsPlanFor's plan).
func ffnFusedCUDA(l cudaLaunch) {
	t, hd, it := l.Dims[0], l.Dims[1], l.Dims[2]
	if ffnUsesWGMMA(l.CC(), l.Variant, wgmmaFFNOn) {
		h := l.Temp(BF16, t*it)
		var wu *cudaBuffer
		if l.Variant == "swiglu" {
			wu = l.In[2]
		}
		l.wsGEMM(wsFFNPlanFor(t, it, l.SMs(), l.Variant), l.Variant, l.In[0], l.In[1], wu, h, t, it, hd)
		l.wsGEMM(wsPlanFor(t, hd, l.SMs()), "", h, l.In[3], nil, l.Out[0], t, hd, it)
		return
	}
	h := l.Alloc(int64(t)*int64(it)*2, false)
	if l.Variant == "swiglu" {
		l.mmaLinear("ffn_fc1_swiglu", l.In[0], l.In[1], l.In[2], h, t, it, hd)
	} else {
		l.mmaLinear("ffn_fc1_gelu", l.In[0], l.In[1], nil, h, t, it, hd)
	}
	l.mmaLinear("ffn_linear", h, l.In[3], nil, l.Out[0], t, hd, it)
}

// ffnNaiveCUDA is the CPU's chain (ffnNaive) with bf16 GEMM results, as a bf16 model's Linear layers give them:
// swiglu: g, u = ffn_linear (bf16), s = silu(g) (eager, fp32), h = s·u (eager, to bf16); gelu: a = ffn_linear,
// h = gelu(a) (GELUFamily's kernel: F.gelu on a bf16 tensor); then y = ffn_linear(h).
func ffnNaiveCUDA(l cudaLaunch) {
	t, hd, it := l.Dims[0], l.Dims[1], l.Dims[2]
	bf16 := func() devTensor { return devTensor{l.Alloc(int64(t)*int64(it)*2, false), BF16} }
	a, h := bf16(), devTensor{}
	l.mmaLinear("ffn_linear", l.In[0], l.In[1], nil, a.ptr, t, it, hd)
	if l.Variant == "swiglu" {
		u := bf16()
		l.mmaLinear("ffn_linear", l.In[0], l.In[2], nil, u.ptr, t, it, hd)
		s := l.un(opSiLU, devDense(a, it), t, it)
		h = bf16()
		l.binary(opMul, devDense(h, it), s, devDense(u, it), t, it)
	} else {
		h = bf16()
		n := t * it
		const block, nv = 256, 6 // gelu_bf16_n6 (cuda/gelu.cu): 6 packs of 8 a thread
		l.KernelIn(rowMapModuleOf("gelu", l.CC()), "gelu_bf16_n6", max(ceilDiv(n/8, nv*block), 1),
			block, a.ptr, h.ptr, n)
	}
	l.mmaLinear("ffn_linear", h.ptr, l.In[3], nil, l.Out[0], t, hd, it)
}

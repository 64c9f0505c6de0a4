//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/attention.ptx cuda/attention.cu
//go:generate nvcc -ptx -arch=compute_80 -o cuda/ptx/attention_sm80.ptx cuda/attention.cu

import (
	"fmt"
	"math"
)

// Attention on the GPU (cuda/attention.cu). On compute capability 9.0, while its pending switch allows, the
// fused launch takes the wgmma kernels of cuda/wsattn_sm90a.cu instead (wsattn.go, wsattn_cuda.go). The fused kernel and the naive chain's two matrix products use
// mma.sync bf16 tensor cores, ldmatrix and cp.async: module attention_sm80, which the backend loads on compute
// capability 8.0 and later only; on older GPUs Prepare fails with ErrNotImplemented, and the tests and
// benchmarks skip. The naive chain's softmax is in module attention (compute_75).
//
// Benchmark time on an H100 (PolicyFor: ≥ 3 warm-up launches, then ≥ 10 launches and ≥ 5 ms, more until the
// median is steady, at most 250 ms), estimated from 250 TFLOP/s fused and ~3 ms per 2^28 scores naive:
// (1, 32, 4096, 128) fused 1.1 / 0.6 ms a launch, naive ~3.5 ms, ~0.3 s for the four benchmarks;
// (1, 16, 16384, 128) fused only, 9 / 4.5 ms, ~0.4 s; (8, 16, 2048, 64) fused 0.7 / 0.4 ms, naive ~3.5 ms,
// ~0.3 s; (32, 4, 60, 64) launch-bound (tens of µs, with hot-ns), ~0.2 s. About 1.2–1.5 s in all, plus
// allocating and filling (64 MiB a tensor at most).

func init() { registerCUDA(AttentionFamily, "attention", attentionFusedCUDA, attentionNaiveCUDA) }

// attentionTile is ATT_BM = ATT_BN: queries a block of the fused kernel, keys a tile; attentionThreads is
// ATT_THREADS.
const (
	attentionTile    = 64
	attentionThreads = 128
)

// attentionReady fails the launch unless this GPU and case can run the tensor-core kernels.
func attentionReady(l cudaLaunch) bool {
	if l.CC() < 80 {
		l.Fail(fmt.Errorf("attention: the kernels use bf16 mma.sync, ldmatrix and cp.async, which need compute "+
			"capability 8.0 or later; this GPU is %d.%d: %w", l.CC()/10, l.CC()%10, ErrNotImplemented))
		return false
	}
	if err := attentionCheck(l.Case); err != nil {
		l.Fail(err)
		return false
	}
	if d := l.Dims[3]; d != 64 && d != 128 {
		l.Fail(fmt.Errorf("attention: head dim %d: the kernels are compiled for 64 and 128", d))
		return false
	}
	return true
}

// attentionScaleLog2 is the fused kernel's score scale: log2 e / √d, so that exp2 of a scaled score is e^(s/√d).
func attentionScaleLog2(d int) float64 { return math.Log2E / math.Sqrt(float64(d)) }

func attentionFusedCUDA(l cudaLaunch) {
	if !attentionReady(l) {
		return
	}
	nbh, nt, d := int64(l.Dims[0])*int64(l.Dims[1]), int64(l.Dims[2]), l.Dims[3]
	if attentionUsesWGMMA(l.CC(), d, wgmmaAttnOn) {
		l.wsAttention(wsAttnPlanFor(d, l.Variant), l.In[0], l.In[1], l.In[2], l.Out[0])
		return
	}
	blocks := nbh * int64(ceilDiv(int(nt), attentionTile))
	if blocks >= 1<<31 {
		l.Fail(fmt.Errorf("attention: %d blocks", blocks))
		return
	}
	name := fmt.Sprintf("attention_fused_d%d_%s", d, l.Variant)
	l.KernelIn(l.Module()+"_sm80", name, int(blocks), attentionThreads, l.In[0], l.In[1], l.In[2], l.Out[0], nbh, nt,
		attentionScaleLog2(d))
}

// attentionNaiveCUDA is the eager chain: S = Q·Kᵀ·scale (fp32), P = masked row softmax of S (bf16), O = P·V,
// with S and P of (B·H, Tp, Tp), Tp = T rounded up to the 64-key tile, in scratch.
func attentionNaiveCUDA(l cudaLaunch) {
	if !attentionReady(l) {
		return
	}
	nbh, nt, d := int64(l.Dims[0])*int64(l.Dims[1]), int64(l.Dims[2]), l.Dims[3]
	tp := int64(attentionPad(int(nt)))
	tiles := tp / attentionTile
	if nbh*tiles*tiles >= 1<<31 || nbh*tp >= 1<<31 {
		l.Fail(fmt.Errorf("attention: naive score matrix of %d × %d² too large to launch", nbh, tp))
		return
	}
	s := l.Alloc(nbh*tp*tp*4, false)
	p := l.Alloc(nbh*tp*tp*2, false)
	sm80 := l.Module() + "_sm80"
	l.KernelIn(sm80, fmt.Sprintf("attention_naive_scores_d%d", d), int(nbh*tiles*tiles), attentionThreads,
		l.In[0], l.In[1], s, nt, tp, 1/math.Sqrt(float64(d)))
	causal := 0
	if l.Variant == "causal" {
		causal = 1
	}
	l.Kernel("attention_naive_softmax", int(nbh*tp), attentionThreads, s, p, nt, tp, causal)
	l.KernelIn(sm80, fmt.Sprintf("attention_naive_pv_d%d", d), int(nbh*tiles), attentionThreads, p, l.In[2],
		l.Out[0], nt, tp)
}

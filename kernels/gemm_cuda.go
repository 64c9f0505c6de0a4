//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/gemm.ptx cuda/gemm.cu
//go:generate nvcc -ptx -arch=compute_80 -o cuda/ptx/gemm_sm80.ptx cuda/gemm.cu

import (
	"fmt"
	"math"
)

func init() { registerCUDA(GEMMFamily, "gemm", gemmFusedCUDA, gemmNaiveCUDA) }

// mmaPlan is one block shape of the tensor-core kernels of mma.cuh (MMA_LINEAR): bm × bn shared-memory rows
// of x and W a block, threads a block; name is the kernels' suffix.
type mmaPlan struct {
	name            string
	bm, bn, threads int
}

// mmaPlans are the plans every MMA_LINEAR module holds: 128 × 128 blocks of 8 warps (48 KiB of shared memory,
// two blocks a multiprocessor) and 64 × 64 blocks of 4 warps (32 KiB).
var mmaPlans = []mmaPlan{{"128x128", 128, 128, 256}, {"64x64", 64, 64, 128}}

// mmaPlanFor picks the plan of an M × N problem whose blocks each cover `wide` output columns per bn shared
// rows (bn for a GEMM, bn/2 for the SwiGLU FC1); the tests swap it.
var mmaPlanFor = mmaChoosePlan

// mmaChoosePlan takes the large tiles when they make at least one block per multiprocessor, else the small
// ones (small M or N: more blocks, fewer idle multiprocessors).
func mmaChoosePlan(l cudaLaunch, m, n int, swiglu bool) mmaPlan {
	p := mmaPlans[0]
	if ceilDiv(m, p.bm)*ceilDiv(n, mmaOutCols(p, swiglu)) >= l.SMs() {
		return p
	}
	return mmaPlans[1]
}

// mmaOutCols is how many output columns a block of plan p covers.
func mmaOutCols(p mmaPlan, swiglu bool) int {
	if swiglu {
		return p.bn / 2
	}
	return p.bn
}

// mmaLinear records one launch of kernel <prefix>_<plan> of module <l.Module()>_sm80 (MMA_LINEAR in mma.cuh):
// y[m, n] = epi(x[m, k] · w[n, k]ᵀ), with wu the up weights of the SwiGLU FC1 (else unused).
func (l cudaLaunch) mmaLinear(prefix string, x, w, wu, y any, m, n, k int) {
	if l.Err() != nil {
		return
	}
	if l.CC() < 80 {
		l.Fail(fmt.Errorf("%s: bf16 mma.sync needs compute capability 8.0 or later, this GPU is %d.%d: %w",
			prefix, l.CC()/10, l.CC()%10, ErrNotImplemented))
		return
	}
	if err := mmaCheckDims(m, n, k); err != nil {
		l.Fail(fmt.Errorf("%s: %w", prefix, err))
		return
	}
	swiglu := wu != nil
	if wu == nil {
		wu = uint64(0)
	}
	p := mmaPlanFor(l, m, n, swiglu)
	blocks := int64(ceilDiv(m, p.bm)) * int64(ceilDiv(n, mmaOutCols(p, swiglu)))
	if blocks > math.MaxInt32 {
		l.Fail(fmt.Errorf("%s: %d blocks", prefix, blocks))
		return
	}
	l.KernelIn(l.Module()+"_sm80", prefix+"_"+p.name, int(blocks), p.threads, x, w, wu, y, m, n, k)
}

// mmaCheckDims reports why the tensor-core kernels cannot take an m × n × k problem.
func mmaCheckDims(m, n, k int) error {
	switch {
	case m < 1 || n < 1 || k < 1:
		return fmt.Errorf("empty problem %d × %d × %d", m, n, k)
	case k%8 != 0:
		return fmt.Errorf("K = %d is not a multiple of 8: the tensor-core kernels load rows of x and W in 16-byte chunks", k)
	case k > math.MaxInt32-64:
		return fmt.Errorf("K = %d is too large", k)
	}
	return nil
}

// gemmFusedCUDA is one launch: on compute capability 9.0, while the wgmma GEMM may be chosen (wgmmaGEMMOn),
// the plan wsPlanFor picks of cuda/wsgemm_sm90a.cu; else gemm_bf16_<plan> (cuda/gemm.cu, mma.sync).
func gemmFusedCUDA(l cudaLaunch) {
	m, n, k := l.Dims[0], l.Dims[1], l.Dims[2]
	if gemmUsesWGMMA(l.CC(), wgmmaGEMMOn) {
		l.wsGEMM(wsPlanFor(m, n, l.SMs()), "", l.In[0], l.In[1], nil, l.Out[0], m, n, k)
		return
	}
	l.mmaLinear("gemm_bf16", l.In[0], l.In[1], nil, l.Out[0], m, n, k)
}

// gemmNaiveCUDA is the CPU's chain (gemmNaive): x.float(), W.float(), gemm_simt_f32 (fp32 FMA, no tensor
// cores) into an fp32 result, cast to bf16.
func gemmNaiveCUDA(l cudaLaunch) {
	m, n, k := l.Dims[0], l.Dims[1], l.Dims[2]
	x := l.upcast(denseOf(l.In[0], k), m, k)
	w := l.upcast(denseOf(l.In[1], k), n, k)
	acc := l.tmp(m, n)
	blocks := int64(ceilDiv(m, 64)) * int64(ceilDiv(n, 64))
	if blocks > math.MaxInt32 {
		l.Fail(fmt.Errorf("gemm_simt_f32: %d blocks", blocks))
		return
	}
	l.Kernel("gemm_simt_f32", int(blocks), 256, x.t.ptr, w.t.ptr, acc.t.ptr, m, n, k)
	l.unary(opCopy, denseOf(l.Out[0], n), acc, m, n)
}

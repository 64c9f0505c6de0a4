//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/lstm.ptx cuda/lstm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/lstm_sm90.ptx cuda/lstm.cu

import (
	"fmt"
	"slices"
)

func init() { registerCUDA(LSTMFamily, "lstm", lstmFusedCUDA, lstmNaiveCUDA) }

// lstmSplit is how cuda/lstm.cu's persistent kernels cover a hidden size: units a block (blocks a batch row:
// hidden/units), lanes a gate row, and the most batch rows a block (4·units·lanes threads, one cell a thread).
// Up to 64 units one block holds all of a row's weights, W_ih too (lstm_rnnx).
var lstmSplit = map[int]struct{ units, lanes, maxBB int }{
	16: {16, 1, 4}, 32: {32, 1, 4}, 64: {64, 1, 4}, 128: {64, 2, 8}, 256: {32, 4, 16},
}

// lstmInputCUDA is the input projection G = x·W_ihᵀ + bias [batch·t, 4·hidden], fp32, as one GEMM launch.
func lstmInputCUDA(l cudaLaunch) devTensor {
	nb, nt, nh := lstmDims(l.Case)
	g := l.tmpF32(nb * nt * 4 * nh)
	l.gemm(devGEMM{a: tensorOf(l.In[0]), lda: nh, w: tensorOf(l.In[1]), ldw: nh, bias: l.In[3].Ptr(), out: g, ldo: 4 * nh,
		m: nb * nt, n: 4 * nh, k: nh, batch: 1})
	return g
}

// lstmPlanFor picks the plan of a case on a GPU of compute capability cc with sms multiprocessors; the tests
// swap it.
var lstmPlanFor = lstmChoosePlan

// lstmFusedCUDA runs the case's plan. SIMT: for hidden ≤ 64 one launch (lstm_rnnx: the input projection inside
// the persistent kernel); for 128 and 256 the projection's GEMM, then the persistent kernel over G (lstm_rnn).
func lstmFusedCUDA(l cudaLaunch) {
	p := lstmPlanFor(l.Case, l.CC(), l.SMs())
	if p.tc {
		lstmTCCUDA(l, p)
		return
	}
	if p.x3 {
		lstmX3CUDA(l, p)
		return
	}
	nb, nt, nh := lstmDims(l.Case)
	if p.units {
		ks := lstmUnitLanes[nh]
		if p.lanes > 0 {
			ks = p.lanes
		}
		if l.DType != FP32 || ks == 0 {
			l.Fail(fmt.Errorf("lstm: the unit plan %v is built for fp32 at hidden 16, 32, 64; this is %v at %d: %w",
				p, l.DType, nh, ErrNotImplemented))
			return
		}
		if p.xa && (!p.fast || ks != lstmUnitLanes[nh]) {
			l.Fail(fmt.Errorf("lstm: no kernel for plan %v (x ahead: fast gate functions, default lanes only)", p))
			return
		}
		if p.xt {
			if !p.fast || ks != 4 || !lstmUnitsXT[nh] || l.CC() < 90 {
				l.Fail(fmt.Errorf("lstm: plan %v at hidden %d on %d.%d: the tensor-core projection is built for sm_90, "+
					"fast gate functions, 4 lanes, hidden 64: %w", p, nh, l.CC()/10, l.CC()%10, ErrNotImplemented))
				return
			}
			bb := p.bb
			for bb == 0 || bb < 4 && p.bb == 0 && ceilDiv(nb, bb) > l.SMs() {
				bb = max(1, 2*bb) // the fewest rows a block that keep to one block a multiprocessor
			}
			if !slices.Contains(rnnUnitBatches[1:], bb) || p.xr && !p.early {
				l.Fail(fmt.Errorf("lstm: plan %v: no kernel at %d batch rows a block: %w", p, bb, ErrNotImplemented))
				return
			}
			l.KernelIn(l.Module()+"_sm90", lstmXTKernel(p, nh, bb), ceilDiv(nb, bb), nh*ks,
				l.In[0], l.In[1], l.In[3], l.In[2], l.In[4], l.Out[0], nb, nt)
			return
		}
		threads := nh * ks
		name := func(bb int) string {
			if p.xa {
				return rnnUnitsName("lstm", "h", nh, p.fast, ks, bb) + "_xa"
			}
			return rnnUnitsName("lstm", "h", nh, p.fast, ks, bb)
		}
		blocks := func(bb int) int { return ceilDiv(nb, bb) }
		bb := p.bb
		if bb == 0 {
			bb = rnnBatchFor(l, name, blocks, threads, 4, false)
		}
		l.Kernel(name(bb), blocks(bb), threads, l.In[0], l.In[1], l.In[3], l.In[2], l.In[4], l.Out[0], nb, nt)
		return
	}
	sp, ok := lstmSplit[nh]
	if !ok {
		l.Fail(fmt.Errorf("lstm: no kernel for hidden %d", nh))
		return
	}
	parts, threads := nh/sp.units, 4*sp.units*sp.lanes
	kind := "rnn"
	if parts == 1 {
		kind = "rnnx"
	}
	name := func(bb int) string { return fmt.Sprintf("lstm_%s_%s_h%d_bb%d", kind, seqDType(l.DType), nh, bb) }
	blocks := func(bb int) int { return ceilDiv(nb, bb) * parts }
	bb := rnnBatchFor(l, name, blocks, threads, sp.maxBB, parts > 1)
	if parts == 1 {
		l.Kernel(name(bb), blocks(bb), threads, l.In[0], l.In[1], l.In[3], l.In[2], l.In[4], l.Out[0], nb, nt)
		return
	}
	g := lstmInputCUDA(l)
	hx := l.Alloc(4*2*int64(nb)*int64(nh), false)    // h by step parity
	bar := l.Alloc(4*2*int64(ceilDiv(nb, bb)), true) // a barrier a batch tile
	l.Kernel(name(bb), blocks(bb), threads, g.ptr, l.In[2], l.In[4], l.Out[0], hx, bar, nb, nt)
}

// lstmTCCUDA runs plan p (tc) from module lstm_sm90: lstm_tc with the input projection inside (x_t through its
// input ring, W_ih in registers next to W_hh; hidden ≤ 64), or the projection G = x·W_ihᵀ + bias as one
// tensor-core GEMM (lstm_tc_proj_bf16, fp32 G) and lstm_tc over G (proj).
func lstmTCCUDA(l cudaLaunch, p lstmPlan) {
	nb, nt, nh := lstmDims(l.Case)
	if l.CC() < 90 || l.DType != BF16 {
		l.Fail(fmt.Errorf("lstm: the tensor-core plan %v needs bf16 and compute capability 9.0 (clusters); this is %v "+
			"on %d.%d: %w", p, l.DType, l.CC()/10, l.CC()%10, ErrNotImplemented))
		return
	}
	mod := l.Module() + "_sm90"
	if p.xa {
		if !lstmTCR8X[nh] || p.cluster != 1 || !p.r8 || p.proj {
			l.Fail(fmt.Errorf("lstm: plan %v at hidden %d: the 8-row kernel with x a step ahead is built for one block "+
				"of 8 rows at hidden 64, projecting x inside: %w", p, nh, ErrNotImplemented))
			return
		}
		l.KernelIn(mod, p.kernel(nh), ceilDiv(nb, 8), 4*nh, l.In[0], l.In[1], l.In[3], l.In[2], l.In[4], l.Out[0], nb, nt)
		return
	}
	if !p.proj && (nh > 64 || p.r8) {
		l.Fail(fmt.Errorf("lstm: plan %v at hidden %d: only hidden ≤ 64 in whole m16 tiles projects x inside", p, nh))
		return
	}
	grid, threads := ceilDiv(nb, p.rows())*p.cluster, 4*nh/p.cluster
	if !p.proj {
		l.KernelCluster(mod, p.kernel(nh), grid, threads, p.cluster, rnnTCSmem(nh, p.cluster, p.mt, false, true, 0),
			l.In[0], l.In[1], l.In[3], l.In[2], l.In[4], l.Out[0], nb, nt)
		return
	}
	g := l.tmpF32(nb * nt * 4 * nh)
	m, n := nb*nt, 4*nh
	l.KernelIn(mod, "lstm_tc_proj_bf16", ceilDiv(m, 128)*ceilDiv(n, 128), 256, l.In[0], l.In[1], l.In[3], g.ptr, m, n, nh)
	l.KernelCluster(mod, p.kernel(nh), grid, threads, p.cluster, rnnTCSmem(nh, p.cluster, p.mt, p.r8, false, 4),
		g.ptr, 0, 0, l.In[2], l.In[4], l.Out[0], nb, nt)
}

// lstmX3CUDA runs plan p (x3) from module lstm_sm90: the input projection G = x·W_ihᵀ + bias as one 3xTF32 GEMM
// (lstm_x3_proj_f32), then lstm_x3 over G.
func lstmX3CUDA(l cudaLaunch, p lstmPlan) {
	nb, nt, nh := lstmDims(l.Case)
	if l.CC() < 90 || l.DType != FP32 {
		l.Fail(fmt.Errorf("lstm: the 3xTF32 plan %v needs fp32 and compute capability 9.0 (clusters); this is %v "+
			"on %d.%d: %w", p, l.DType, l.CC()/10, l.CC()%10, ErrNotImplemented))
		return
	}
	built := false
	for _, sh := range lstmX3Shapes[nh] {
		q := p
		q.part = 0
		built = built || sh == q
	}
	koBuilt := nh == 256 && p.cluster == 8 && p.kp == 2 && p.mt == 1 && p.wl && !p.a1 && !p.pa && !p.h3 // lstm_x3 _wl_ko*
	if !built || p.part >= 3 && !koBuilt || p.pa && p.part != 0 {
		l.Fail(fmt.Errorf("lstm: no 3xTF32 kernel for plan %v at hidden %d", p, nh))
		return
	}
	mod := l.Module() + "_sm90"
	g := l.tmpF32(nb * nt * 4 * nh)
	if p.pa {
		// The recurrence's clusters, then as many projection clusters as fit beside them at once.
		name, threads, smem := p.lstmX3Kernel(nh), rnnX3Threads(nh, p.cluster, p.kp), rnnX3Smem(nh, p.cluster, p.kp, p.mt)
		nrc := ceilDiv(nb, 16*p.mt)
		resident := l.ResidentTMA(mod, name, threads, p.cluster, smem) / p.cluster
		if lstmX3Resident != nil {
			lstmX3Resident(p, nrc, resident)
		}
		if l.Err() != nil {
			return
		}
		if resident <= nrc {
			l.Fail(fmt.Errorf("lstm: plan %v: %d clusters of the recurrence and none beside them for the projection: "+
				"this GPU runs %d of kernel %s at once: %w", p, nrc, resident, name, ErrNotImplemented))
			return
		}
		ready := l.Alloc(4*int64(nrc)*int64(ceilDiv(nt, lstmX3PAChunk)), true)
		l.KernelCluster(mod, name, resident*p.cluster, threads, p.cluster, smem,
			l.In[0], l.In[1], l.In[3], g.ptr, l.In[2], l.In[4], l.Out[0], ready, nb, nt, nrc)
		return
	}
	m, n, t := nb*nt, 4*nh, lstmX3ProjTile
	if p.part == 0 || p.part == 1 {
		l.KernelCluster(mod, lstmX3ProjKernel, ceilDiv(m, t[0])*ceilDiv(n, t[1]), 32*t[2]*t[3], 1, lstmX3ProjSmem,
			l.In[0], l.In[1], l.In[3], g.ptr, m, n, nh)
	}
	if p.part != 1 {
		threads, smem := rnnX3Threads(nh, p.cluster, p.kp), rnnX3Smem(nh, p.cluster, p.kp, p.mt)
		if lstmX3Resident != nil && p.cluster <= 8 { // ResidentTMA asks for portable cluster sizes only
			lstmX3Resident(p, ceilDiv(nb, 16*p.mt), l.ResidentTMA(mod, p.lstmX3Kernel(nh), threads, p.cluster, smem)/p.cluster)
		}
		l.KernelCluster(mod, p.lstmX3Kernel(nh), ceilDiv(nb, 16*p.mt)*p.cluster, threads, p.cluster, smem,
			g.ptr, l.In[2], l.In[4], l.Out[0], nb, nt)
	}
}

// lstmX3PAChunk is the steps of a chunk of rnn_x3_pa's projection (RNN_X3_PA_TC): a counter each.
const lstmX3PAChunk = 4

// lstmX3Resident, when set (TestCUDALSTMX3Parts), is told at each launch of lstm_x3 how many clusters its grid
// has and how many of them the GPU runs at once: a cluster's blocks must share one GPC, so that fewer clusters
// than multiprocessors/cluster may fit, and a grid of more runs in waves, each taking the whole sequence.
var lstmX3Resident func(p lstmPlan, clusters, resident int)

// lstmNaiveCUDA is the CPU's eager cell loop (lstmNaive), op for op.
func lstmNaiveCUDA(l cudaLaunch) {
	nb, nt, nh := lstmDims(l.Case)
	g := lstmInputCUDA(l)
	st, mask := l.seqNaiveState(l.In[4], nb, nt, 2*nh)
	gates := l.tmpF32(nb * 4 * nh)
	for t := range nt {
		mask(t)
		l.gemm(devGEMM{a: st.t, lda: 2 * nh, w: tensorOf(l.In[2]), ldw: nh, out: gates, ldo: 4 * nh, m: nb, n: 4 * nh, k: nh, batch: 1})
		l.seqKernel("lstm_cell_"+seqDType(l.DType), nb*nh, gates.ptr, g.ptr, st.t.ptr, l.Out[0], t, nb, nt, nh)
	}
}

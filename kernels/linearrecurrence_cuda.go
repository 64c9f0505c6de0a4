//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/linearrecurrence.ptx cuda/linearrecurrence.cu

import (
	"fmt"

	"gorgonia.org/cu"
)

func init() {
	registerCUDA(LinearRecurrenceFamily, "linearrecurrence", linRecFusedCUDA, linRecNaiveCUDA)
}

// chainPlan is how a chained scan (cuda/chainscan.cuh) tiles a case: each thread v state components (one access
// of v elements) × l steps, a block q × s threads: q·v components × s·l steps a tile.
type chainPlan struct{ v, l, q, s int }

// linRecMaxComponents is LINREC_MAX_COMPONENTS: the most s·q·v one block scans.
const linRecMaxComponents = 2048

// linRecPlanFor picks the plan of a case; the tests swap it.
var linRecPlanFor = linRecChoosePlan

// linRecChoosePlan gives each thread 16-byte accesses when the channels allow (else 8 or 4 bytes) over 4 steps
// (8 with narrower accesses): its steps' decays and local states stay in registers (77–121 a thread, two or
// three 256-thread blocks a multiprocessor, 100–150 KiB of loads in flight). A tile is 128 bytes of channels
// wide (whole cache lines) and 128 steps long (256 with narrow accesses), so a tile's carry reaches the next
// tile in time after ≥ 12 MB of traffic at (8, ·, 1536): more than the ~2 µs one hop of the chain takes.
func linRecChoosePlan(c Case) chainPlan {
	nd, size := c.Dims[2], c.DType.Size()
	v := 16 / size
	switch {
	case nd%v == 0:
	case nd%4 == 0 && v > 4:
		v = 4
	case nd%2 == 0:
		v = 2
	default:
		v = 1
	}
	l := 4
	if v*size < 16 {
		l = 8
	}
	q := min(ceilPow2(ceilDiv(nd, v)), max(1, 128/(v*size)))
	return chainPlan{v: v, l: l, q: q, s: 256 / q}
}

// check reports whether p can run a chained scan over nd channels (complex: pairs).
func (p chainPlan) check(nd int, cplx bool) error {
	if nd%p.v != 0 || cplx && (p.v%2 != 0 || nd%2 != 0) || p.q*p.s > 256 || p.q*p.s*p.v > linRecMaxComponents {
		return fmt.Errorf("plan %+v for %d channels (complex %v)", p, nd, cplx)
	}
	return nil
}

// chainScratch allocates a chained scan's scratch for tiles tiles of w components: the published states and,
// zeroed, the ticket counter followed by the flags.
func (l cudaLaunch) chainScratch(tiles, w int) (states, counter, flags cu.DevicePtr) {
	st := l.Alloc(int64(tiles)*int64(w)*4, false)
	ctr := l.Alloc(8+int64(tiles)*4, true)
	return st, ctr, ctr + cuPtr(8)
}

func linRecFusedCUDA(l cudaLaunch) {
	p := linRecPlanFor(l.Case)
	nb, nt, nd := l.Dims[0], l.Dims[1], l.Dims[2]
	kind := "real"
	if l.Variant == "complex" {
		kind = "cplx"
	}
	if err := p.check(nd, kind == "cplx"); err != nil {
		l.Fail(fmt.Errorf("linear recurrence: %w", err))
		return
	}
	groups := int64(nb) * int64(ceilDiv(nd, p.q*p.v))
	tiles := groups * int64(ceilDiv(nt, p.s*p.l))
	if tiles >= 1<<31 {
		l.Fail(fmt.Errorf("linear recurrence: %d tiles", tiles))
		return
	}
	states, counter, flags := l.chainScratch(int(tiles), p.q*p.v)
	name := fmt.Sprintf("linrec_%s_%s_v%d_l%d", map[DType]string{FP32: "f32", BF16: "bf16"}[l.DType], kind, p.v, p.l)
	l.Kernel(name, int(tiles), p.q*p.s, l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], nb, nt, nd, p.q,
		states, flags, counter)
}

// linRecNaiveCUDA is the CPU's eager loop (linRecNaive): u = b ⊙ x, then one launch per step.
func linRecNaiveCUDA(l cudaLaunch) {
	nb, nt, nd := l.Dims[0], l.Dims[1], l.Dims[2]
	cplx := l.Variant == "complex"
	n := nb * nt * nd
	u := l.tmpF32(n)
	const block = 256
	l.Kernel("linrec_naive_bx", min(ceilDiv(n, block), l.SMs()*2048/block), block, u.ptr, l.In[1], l.In[2], l.DType, n, b2i(cplx))
	l.linRecNaiveSteps(l.In[0], nt*nd, nd, u, l.In[3], l.tmpF32(nb*nd), cplx)
}

// linRecNaiveSteps records the per-step launches of a naive chain into the output (linRecNaiveSteps on the
// CPU): a_t at element b·aBatch + t·aStep of a, u fp32 (batch, t, d), state fp32 (batch, d).
func (l cudaLaunch) linRecNaiveSteps(a *cudaBuffer, aBatch, aStep int, u devTensor, resets *cudaBuffer, state devTensor, cplx bool) {
	nb, nt, nd := l.Dims[0], l.Dims[1], l.Dims[2]
	n := nb * nd
	if cplx {
		n /= 2
	}
	const block = 256
	grid := min(ceilDiv(n, block), l.SMs()*2048/block)
	for t := range nt {
		l.KernelIn("linearrecurrence", "linrec_naive_step", grid, block, a, a.DType(), aBatch, aStep, u.ptr, resets,
			state.ptr, l.Out[0], l.Out[0].DType(), nb, nt, nd, t, b2i(cplx))
	}
}

// b2i is 1 for true, 0 for false: a kernel's flag parameter.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/rtu.ptx cuda/rtu.cu

import "fmt"

func init() { registerCUDA(RTUFamily, "rtu", rtuFusedCUDA, rtuNaiveCUDA) }

// The fused kernel's limits (cuda/rtu.cu): RTU_TILE_FLOATS, RTU_MAX_STEPS, and 256 threads of one unit each.
const (
	rtuTileFloats = 10240
	rtuMaxSteps   = 256
	rtuMaxUnits   = 256
)

// rtuPlan is how the fused kernel tiles a case: s segments of l steps for each of the d/2 units.
type rtuPlan struct{ s, l int }

// rtuPlanFor picks the plan of a case; the tests swap it.
var rtuPlanFor = rtuChoosePlan

// rtuChoosePlan uses up to 256 threads a block (s = 256 / units segments) and the longest tile whose x and z fit
// in shared memory: 128 steps at dim 64, rank 16.
func rtuChoosePlan(c Case) rtuPlan {
	units := c.Dims[2] / 2
	s := max(1, 256/max(units, 1))
	steps := min(rtuMaxSteps, rtuTileFloats/(c.Dims[2]+c.Dims[3]))
	return rtuPlan{s: s, l: max(1, steps/s)}
}

func rtuFusedCUDA(l cudaLaunch) {
	p := rtuPlanFor(l.Case)
	nb, nt, nd, nr := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	tt := p.s * p.l
	if nd%2 != 0 || nd/2 > rtuMaxUnits || nd/2*p.s > 256 || tt > rtuMaxSteps || tt*(nd+nr) > rtuTileFloats {
		l.Fail(fmt.Errorf("rtu: plan %+v for dim %d, rank %d", p, nd, nr))
		return
	}
	tiles := int64(nb) * int64(ceilDiv(nt, tt))
	if tiles >= 1<<31 {
		l.Fail(fmt.Errorf("rtu: %d tiles", tiles))
		return
	}
	states, counter, flags := l.chainScratch(int(tiles), nd)
	name := map[DType]string{FP32: "rtu_f32", BF16: "rtu_bf16"}[l.DType]
	l.Kernel(name, int(tiles), nd/2*p.s, l.In[0], l.In[1], l.In[2], l.In[3], l.In[4], l.Out[0], nb, nt, nd, nr, p.s, p.l,
		states, flags, counter)
}

// rtuNaiveCUDA is the CPU's chain (rtuNaive): z = x U, u = z V, then one launch per step.
func rtuNaiveCUDA(l cudaLaunch) {
	nb, nt, nd, nr := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	rows := nb * nt
	z := l.matmul(tensorOf(l.In[0]), tensorOf(l.In[1]), rows, nd, nr)
	u := l.matmul(z, tensorOf(l.In[2]), rows, nr, nd)
	l.linRecNaiveSteps(l.In[3], 0, 0, u, l.In[4], l.tmpF32(nb*nd), true)
}

// matmul returns a·w as a new fp32 intermediate: a is rows × k, w is k × n, both row-major.
func (l cudaLaunch) matmul(a, w devTensor, rows, k, n int) devTensor {
	out := l.tmpF32(rows * n)
	const block = 256
	l.KernelIn("rtu", "rtu_naive_matmul", min(ceilDiv(rows*n, block), l.SMs()*2048/block), block, out.ptr, a.ptr, a.dt,
		w.ptr, w.dt, rows, k, n)
	return out
}

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/conv1d.ptx cuda/conv1d.cu

import "fmt"

func init() { registerCUDA(Conv1DFamily, "conv1d", conv1dFusedCUDA, conv1dNaiveCUDA) }

// conv1dPlan is how the fused kernel (cuda/conv1d.cu) tiles a case: each thread v channels (one access of
// v elements) × l steps, a block q × r threads.
type conv1dPlan struct{ v, l, q, r int }

// conv1dPlanFor picks the plan of a case; the tests swap it.
var conv1dPlanFor = conv1dChoosePlan

// conv1dChoosePlan gives each thread 16-byte accesses when the channels allow (else one element) over 8 steps
// in fp32, 4 in bf16 (all loaded at once: 90–105 and 80–104 registers, two 256-thread blocks a multiprocessor
// with 32–64 KiB of loads in flight), and 256-thread blocks of up to 64 channel accesses wide.
func conv1dChoosePlan(c Case) conv1dPlan {
	v := 16 / c.DType.Size()
	l := 8
	switch {
	case c.Dims[2]%v != 0:
		v = 1
	case c.DType == BF16:
		l = 4
	}
	q := min(ceilPow2(ceilDiv(c.Dims[2], v)), 64)
	return conv1dPlan{v: v, l: l, q: q, r: min(256/q, conv1dMaxSteps/l)}
}

// conv1dMaxSteps and conv1dMaxThreads are CONV1D_MAX_STEPS and CONV1D_MAX_THREADS: the most steps (r·l) and
// threads (q·r) one block covers.
const (
	conv1dMaxSteps   = 1024
	conv1dMaxThreads = 256
)

func (p conv1dPlan) kernel(c Case, resets bool) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[c.DType]
	r := "n"
	if resets {
		r = "r"
	}
	return fmt.Sprintf("conv1d_%s_v%d_k%d_l%d_%s", d, p.v, c.Dims[3], p.l, r)
}

func conv1dFusedCUDA(l cudaLaunch) {
	p := conv1dPlanFor(l.Case)
	nb, nt, nc, k := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	if k < 2 || k > 4 || p.r*p.l > conv1dMaxSteps || p.q*p.r > conv1dMaxThreads || nc%p.v != 0 {
		l.Fail(fmt.Errorf("conv1d: k = %d, plan %+v for %d channels", k, p, nc))
		return
	}
	tiles := int64(nb) * int64(ceilDiv(nt, p.r*p.l)) * int64(ceilDiv(nc, p.q*p.v))
	if tiles >= 1<<31 {
		l.Fail(fmt.Errorf("conv1d: %d tiles", tiles))
		return
	}
	x, w, bias, resets, y := l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0]
	l.Kernel(p.kernel(l.Case, resets.Len() > 0), int(tiles), p.q*p.r, x, w, bias, resets, y, nb, nt, nc, p.q)
}

// conv1dNaiveCUDA is the CPU's chain (conv1dNaive): age, bias broadcast, k masked shifted multiply-adds, cast.
func conv1dNaiveCUDA(l cudaLaunch) {
	nb, nt, nc, k := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	rows := nb * nt
	var age devTensor // a zero pointer: no resets
	if resets := l.In[3]; resets.Len() > 0 {
		age = l.tmpF32(rows)
		l.Kernel("conv1d_naive_age", nb, 256, resets, age.ptr, nb, nt)
	}
	acc := l.un(opCopy, devPerCol(tensorOf(l.In[2])), rows, nc)
	const block = 256
	grid := min(ceilDiv(rows*nc, block), l.SMs()*2048/block)
	for s := range k {
		l.Kernel("conv1d_naive_shift", grid, block, acc.t.ptr, l.In[0], l.In[1], l.DType, age.ptr, nb, nt, nc, k, s)
	}
	l.unary(opCopy, denseOf(l.Out[0], nc), acc, rows, nc)
}

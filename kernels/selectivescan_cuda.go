//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/selectivescan.ptx cuda/selectivescan.cu

import "fmt"

func init() { registerCUDA(SelectiveScanFamily, "selectivescan", scanFusedCUDA, scanNaiveCUDA) }

// scanBlock is the fused kernel's block size (SCAN_BLOCK in cuda/selectivescan.cu).
const scanBlock = 128

// scanLanesFor picks how many threads share a channel's 16 states in the fused kernel (1, 2 or 4); the tests
// swap it.
var scanLanesFor = scanChooseLanes

// scanChooseLanes gives each channel as few threads as keep the GPU busy: the fewest lanes with at least three
// blocks a multiprocessor (12 warps), else 4. One lane holds 16 states and issues 16 exponentials a step with
// no dependence between them; more lanes a channel only add warps (and a shuffle per step) where there are too
// few channels: at (256, 1024, 128) that is 2 lanes (512 blocks on 132 multiprocessors), at (8, 4096, 1536) 4.
func scanChooseLanes(c Case, sms int) int {
	nb, _, nd := scanDims(c)
	for _, lanes := range []int{1, 2} {
		if nb*ceilDiv(nd, scanBlock/lanes) >= 3*sms {
			return lanes
		}
	}
	return 4
}

func scanFusedCUDA(l cudaLaunch) {
	nb, nt, nd := scanDims(l.Case)
	lanes := scanLanesFor(l.Case, l.SMs())
	name := fmt.Sprintf("scan_fused_%s_l%d", seqDType(l.DType), lanes)
	l.Kernel(name, nb*ceilDiv(nd, scanBlock/lanes), scanBlock, l.In[0], l.In[1], l.In[2], l.In[3], l.In[4], l.In[5],
		l.In[6], l.Out[0], nb, nt, nd)
}

// scanNaiveCUDA is the CPU's chain (scanNaive), op for op: own kernels for softplus, the expansion and each
// step's einsum, eager.cu's for the rest.
func scanNaiveCUDA(l cudaLaunch) {
	nb, nt, nd := scanDims(l.Case)
	bt, dn, dt := nb*nt, nd*scanN, seqDType(l.DType)
	x, resets := l.In[0], l.In[6]
	delta := l.tmpF32(bt * nd)
	l.seqKernel("scan_softplus_"+dt, bt*nd, l.In[1], delta.ptr, bt*nd)
	a := l.un(opExp, denseOf(l.In[2], dn), 1, dn)
	a = l.bin(opMul, a, devScalar(-1), 1, dn)
	dA, dBx := l.tmpF32(bt*dn), l.tmpF32(bt*dn)
	l.seqKernel("scan_expand_"+dt, bt*dn, delta.ptr, x, a.t.ptr, l.In[3], dA.ptr, dBx.ptr, bt, nd)
	h, mask := l.seqNaiveState(resets, nb, nt, dn)
	ys := l.tmpF32(bt * nd)
	for t := range nt {
		step := func(v devTensor) devView { return devView{t: v, off: t * dn, rowStride: nt * dn, rowDiv: 1, colDiv: 1} }
		mask(t)
		l.binary(opMul, h, h, step(dA), nb, dn)
		l.binary(opAdd, h, h, step(dBx), nb, dn)
		l.seqKernel("scan_contract_"+dt, nb*nd, h.t.ptr, l.In[4], ys.ptr, t, nb, nt, nd)
	}
	xd := l.bin(opMul, l.upcast(denseOf(x, nd), bt, nd), devPerCol(tensorOf(l.In[5])), bt, nd)
	l.binary(opAdd, denseOf(l.Out[0], nd), devDense(ys, nd), xd, bt, nd)
}

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/swiglu.ptx cuda/swiglu.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/swiglu_sm90.ptx cuda/swiglu.cu

func init() { registerCUDA(SwiGLUFamily, "swiglu", swigluFusedCUDA, swigluNaiveCUDA) }

// swigluFusedCUDA runs swiglu_{f32,bf16}_{v,s} (cuda/swiglu.cu) over the rows·cols outputs as one flat array:
// 256-thread blocks, each its own 4·256 16-byte packs of out (8·256 single elements when the columns do not
// allow 16-byte accesses).
func swigluFusedCUDA(l cudaLaunch) {
	const block = 256
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[l.DType]
	e, nv, v := 16/l.DType.Size(), 4, "v"
	if l.Cols%e != 0 {
		e, nv, v = 1, 8, "s"
	}
	packs := l.Rows * l.Cols / e
	l.KernelIn(rowMapModule(l), "swiglu_"+d+"_"+v, max(ceilDiv(packs, nv*block), 1), block, l.In[0], l.Out[0], l.Rows, l.Cols)
}

// swigluNaiveCUDA is F.silu(gate) * up on the two halves (strided views), the CPU's chain (swigluNaive).
func swigluNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(denseOf(l.In[0], 2*cols), rows, 2*cols)
	up := x
	up.off = cols
	s := l.un(opSiLU, x, rows, cols) // x's rows are 2·cols long: the first cols columns are the gate half
	l.binary(opMul, denseOf(l.Out[0], cols), s, up, rows, cols)
}

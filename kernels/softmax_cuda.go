//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/softmax.ptx cuda/softmax.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/softmax_sm90.ptx cuda/softmax.cu

func init() { registerCUDA(SoftmaxFamily, "softmax", softmaxFusedCUDA, softmaxNaiveCUDA) }

// softmaxFusedCUDA runs one kernel of cuda/softmax.cu: the row read once, (max, Σ e^(x−max)) reduced in one
// round, the output computed from registers.
func softmaxFusedCUDA(l cudaLaunch) {
	p := softmaxPlanFor(l.Case, l.CC(), l.SMs())
	launchRow(l, softmaxRows, p, l.In[0], l.Out[0], l.Rows, l.Cols)
}

// softmaxNaiveCUDA: max → x − max → exp → sum → divide, the CPU's chain (softmaxNaive).
func softmaxNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	e := l.un(opExp, l.bin(opSub, x, devPerRow(m), rows, cols), rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	l.binary(opDiv, denseOf(l.Out[0], cols), e, devPerRow(s), rows, cols)
}

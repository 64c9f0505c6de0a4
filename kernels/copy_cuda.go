//go:build cuda

package kernels

func init() { registerCUDA(CopyFamily, "", nil, copyNaiveCUDA) }

// copyNaiveCUDA is y.copy_(x.float()): through an fp32 intermediate (a clone for fp32), as on the CPU.
func copyNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	t := l.un(opCopy, denseOf(l.In[0], cols), rows, cols)
	l.unary(opCopy, denseOf(l.Out[0], cols), t, rows, cols)
}

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/layernorm.ptx cuda/layernorm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/layernorm_sm90.ptx cuda/layernorm.cu

func init() { registerCUDA(LayerNormFamily, "layernorm", layerNormFusedCUDA, layerNormNaiveCUDA) }

// layerNormFusedCUDA runs one kernel of cuda/layernorm.cu: the row read once, its shifted sums reduced in one
// round, normalized from registers.
func layerNormFusedCUDA(l cudaLaunch) {
	p := layerNormPlanFor(l.Case, l.CC(), l.SMs())
	launchRow(l, layerNormRows, p, l.In[0], l.In[1], l.In[2], l.Out[0], l.Rows, l.Cols, layerNormEps)
}

// layerNormNaiveCUDA: mean → x − μ → (x − μ)² → mean → rsqrt(· + ε) → ·rstd → ·w → +b, the CPU's chain
// (layerNormNaive).
func layerNormNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	w := l.upcast(denseOf(l.In[1], cols), 1, cols)
	b := l.upcast(denseOf(l.In[2], cols), 1, cols)
	mu := l.red(opMean, x, rows, cols, cols)
	xc := l.bin(opSub, x, devPerRow(mu), rows, cols)
	sq := l.bin(opMul, xc, xc, rows, cols)
	v := l.red(opMean, sq, rows, cols, cols)
	rstd := l.un(opRsqrt, l.bin(opAdd, devDense(v, 1), devScalar(layerNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, xc, devPerRow(rstd.t), rows, cols)
	xw := l.bin(opMul, xn, devPerCol(w.t), rows, cols)
	l.binary(opAdd, denseOf(l.Out[0], cols), xw, devPerCol(b.t), rows, cols)
}

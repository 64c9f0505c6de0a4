//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/layernorm.ptx cuda/layernorm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/layernorm_sm90.ptx cuda/layernorm.cu

func init() { registerCUDA(LayerNormFamily, "layernorm", layerNormFusedCUDA, layerNormNaiveCUDA) }

// layerNormFusedCUDA runs one kernel of cuda/layernorm.cu: the row read once, its shifted sums reduced in one
// round, normalized from registers.
func layerNormFusedCUDA(l *cudaLaunch) {
	p := layerNormPlanFor(l.Case, l.cc(), l.sms())
	launchRow(l, layerNormRows, p, l.in[0], l.in[1], l.in[2], l.out[0], l.Rows, l.Cols, layerNormEps)
}

// layerNormNaiveCUDA: mean → x − μ → (x − μ)² → mean → rsqrt(· + ε) → ·rstd → ·w → +b, the CPU's chain
// (layerNormNaive).
func layerNormNaiveCUDA(l *cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(l.in[0].dense(cols), rows, cols)
	w := l.upcast(l.in[1].dense(cols), 1, cols)
	b := l.upcast(l.in[2].dense(cols), 1, cols)
	mu := l.red(opMean, x, rows, cols, cols)
	xc := l.bin(opSub, x, devPerRow(mu), rows, cols)
	sq := l.bin(opMul, xc, xc, rows, cols)
	v := l.red(opMean, sq, rows, cols, cols)
	rstd := l.un(opRsqrt, l.bin(opAdd, devDense(v, 1), devScalar(layerNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, xc, devPerRow(rstd.t), rows, cols)
	xw := l.bin(opMul, xn, devPerCol(w.t), rows, cols)
	l.binary(opAdd, l.out[0].dense(cols), xw, devPerCol(b.t), rows, cols)
}

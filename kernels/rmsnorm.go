package kernels

import "math"

// rmsNormEps is RMSNorm's ε.
const rmsNormEps = 1e-6

// RMSNormFamily is y = x / sqrt(mean(x²) + ε) · w over each row of x [rows, cols], w [cols].
var RMSNormFamily = &Family{
	Name: "RMSNorm",
	Inputs: []Operand{
		{Name: "x", Len: matrixLen, Gen: normal(0, 1)},
		{Name: "w", Len: colsLen, Gen: normal(1, 0.1)},
	},
	Outputs:   []Operand{{Name: "y", Len: matrixLen}},
	Reference: rmsNormRef,
}

func init() { registerCPU(RMSNormFamily, rmsNormFused, rmsNormNaive) }

func rmsNormRef(c Case, in [][]float64) [][]float64 {
	x, w := in[0], in[1]
	y := make([]float64, len(x))
	for r := range c.Rows {
		row := x[r*c.Cols : (r+1)*c.Cols]
		var ss float64
		for _, v := range row {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(c.Cols)+rmsNormEps)
		for j, v := range row {
			y[r*c.Cols+j] = v * inv * w[j]
		}
	}
	return [][]float64{y}
}

// rmsNormFused reads each row twice from cache: the sum of squares, then y.
func rmsNormFused(l cpuLaunch) {
	x, w, y, cols := actOf(l.In[0]), actOf(l.In[1]), actOf(l.Out[0]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx, tw, ty [tile]float32
		for r := r0; r < r1; r++ {
			base := r * cols
			var ss float32
			for c0 := 0; c0 < cols; c0 += tile {
				ss += sumSq32(x.load(base+c0, min(tile, cols-c0), &tx))
			}
			inv := float32(1 / math.Sqrt(float64(ss/float32(cols))+rmsNormEps))
			for c0 := 0; c0 < cols; c0 += tile {
				n := min(tile, cols-c0)
				xs, ws, ys := x.load(base+c0, n, &tx), w.load(c0, n, &tw), y.dst(base+c0, n, &ty)
				for i, v := range xs {
					ys[i] = v * inv * ws[i]
				}
				y.store(base+c0, ys)
			}
		}
	})
}

// rmsNormNaive: x² → mean per row → rsqrt(· + ε) → x·r → ·w.
func rmsNormNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	w := l.upcast(dense(actOf(l.In[1]), cols), 1, cols)
	sq := l.bin(opMul, x, x, rows, cols)
	ms := l.red(opMean, sq, rows, cols, cols)
	inv := l.un(opRsqrt, l.bin(opAdd, dense(act{f32: ms}, 1), scalar(rmsNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, x, perRow(inv.t.f32), rows, cols)
	l.binary(opMul, dense(actOf(l.Out[0]), cols), xn, perCol(w.t), rows, cols)
}

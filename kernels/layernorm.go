package kernels

import "math"

// layerNormEps is LayerNorm's ε.
const layerNormEps = 1e-5

// LayerNormFamily is y = (x − μ) / sqrt(σ² + ε) · w + b over each row of x [rows, cols]; w, b [cols].
var LayerNormFamily = &Family{
	Name: "LayerNorm",
	Inputs: []Operand{
		{Name: "x", Len: matrixLen, Gen: normal(0.5, 1)},
		{Name: "w", Len: colsLen, Gen: normal(1, 0.1)},
		{Name: "b", Len: colsLen, Gen: normal(0, 0.1)},
	},
	Outputs:   []Operand{{Name: "y", Len: matrixLen}},
	Reference: layerNormRef,
}

func init() { registerCPU(LayerNormFamily, layerNormFused, layerNormNaive) }

func layerNormRef(c Case, in [][]float64) [][]float64 {
	x, w, b := in[0], in[1], in[2]
	y := make([]float64, len(x))
	for r := range c.Rows {
		row := x[r*c.Cols : (r+1)*c.Cols]
		var mu, v float64
		for _, e := range row {
			mu += e
		}
		mu /= float64(c.Cols)
		for _, e := range row {
			v += (e - mu) * (e - mu)
		}
		rstd := 1 / math.Sqrt(v/float64(c.Cols)+layerNormEps)
		for j, e := range row {
			y[r*c.Cols+j] = (e-mu)*rstd*w[j] + b[j]
		}
	}
	return [][]float64{y}
}

// layerNormFused gets mean and variance in one read of the row, merging each tile's own mean and squared
// deviations (Chan et al.), which stays accurate when the mean is large; then it writes y.
func layerNormFused(l cpuLaunch) {
	x, w, b, y, cols := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[2]), actOf(l.Out[0]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx, tw, tb, ty [tile]float32
		for r := r0; r < r1; r++ {
			base := r * cols
			var mean, m2, count float32
			for c0 := 0; c0 < cols; c0 += tile {
				xs := x.load(base+c0, min(tile, cols-c0), &tx)
				n := float32(len(xs))
				tm := sum32(xs) / n
				var tq float32
				for _, v := range xs {
					tq += (v - tm) * (v - tm)
				}
				total := count + n
				delta := tm - mean
				mean += delta * n / total
				m2 += tq + delta*delta*count*n/total
				count = total
			}
			rstd := float32(1 / math.Sqrt(float64(m2/count)+layerNormEps))
			for c0 := 0; c0 < cols; c0 += tile {
				n := min(tile, cols-c0)
				xs, ws, bs, ys := x.load(base+c0, n, &tx), w.load(c0, n, &tw), b.load(c0, n, &tb), y.dst(base+c0, n, &ty)
				for i, v := range xs {
					ys[i] = (v-mean)*rstd*ws[i] + bs[i]
				}
				y.store(base+c0, ys)
			}
		}
	})
}

// layerNormNaive: mean → x − μ → (x − μ)² → mean → rsqrt(· + ε) → ·rstd → ·w → +b.
func layerNormNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	w := l.upcast(dense(actOf(l.In[1]), cols), 1, cols)
	b := l.upcast(dense(actOf(l.In[2]), cols), 1, cols)
	mu := l.red(opMean, x, rows, cols, cols)
	xc := l.bin(opSub, x, perRow(mu), rows, cols)
	sq := l.bin(opMul, xc, xc, rows, cols)
	v := l.red(opMean, sq, rows, cols, cols)
	rstd := l.un(opRsqrt, l.bin(opAdd, dense(act{f32: v}, 1), scalar(layerNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, xc, perRow(rstd.t.f32), rows, cols)
	xw := l.bin(opMul, xn, perCol(w.t), rows, cols)
	l.binary(opAdd, dense(actOf(l.Out[0]), cols), xw, perCol(b.t), rows, cols)
}

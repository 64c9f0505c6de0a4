package kernels

import "math"

// SoftmaxFamily is the softmax of each row of x [rows, cols], computed with the row maximum subtracted.
var SoftmaxFamily = &Family{
	Name:      "Softmax",
	Inputs:    []Operand{{Name: "x", Len: matrixLen, Gen: normal(0, 2)}},
	Outputs:   []Operand{{Name: "y", Len: matrixLen}},
	Reference: softmaxRef,
}

func init() { registerCPU(SoftmaxFamily, softmaxFused, softmaxNaive) }

func softmaxRef(c Case, in [][]float64) [][]float64 {
	x := in[0]
	y := make([]float64, len(x))
	for r := range c.Rows {
		row, out := x[r*c.Cols:(r+1)*c.Cols], y[r*c.Cols:(r+1)*c.Cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		var s float64
		for j, v := range row {
			out[j] = math.Exp(v - m)
			s += out[j]
		}
		for j := range out {
			out[j] /= s
		}
	}
	return [][]float64{y}
}

// onlineMaxSum folds one tile into a running (max, sum of e^(x−max)): the tile's own max, the running sum
// rescaled once per tile, so one read of the row gives both (online softmax).
func onlineMaxSum(m, s float32, xs []float32) (float32, float32) {
	tm := max(m, max32(xs))
	s *= exp32(m - tm)
	var a [8]float32
	for i, v := range xs {
		a[i&7] += exp32(v - tm)
	}
	return tm, s + ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// softmaxFused writes each row's softmax with softmaxRow.
func softmaxFused(l cpuLaunch) {
	x, y, cols := actOf(l.In[0]), actOf(l.Out[0]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx, ty [tile]float32
		for r := r0; r < r1; r++ {
			softmaxRow(x, y, r*cols, cols, -1, &tx, &ty)
		}
	})
}

// softmaxRow writes the softmax of the row x[base : base+cols] into the same place of y, minus 1 at column
// label when label ≥ 0 (cross-entropy's gradient), and returns the row maximum and log Σ e^(x−max).
//
// Each exponential is computed once where it can be kept: for an fp32 y, a max pass, then a pass that writes
// e^(x−max) into y while summing, then a pass that scales y (the row stays in cache between passes, so memory
// sees one read of x and one write of y). A bf16 y cannot keep fp32 exponentials, so there one pass gets max
// and sum together (online softmax) and the writing pass computes the exponentials again.
func softmaxRow(x, y act, base, cols, label int, tx, ty *[tile]float32) (m, logS float32) {
	m = float32(math.Inf(-1))
	var s float32
	if y.b16 == nil {
		for c0 := 0; c0 < cols; c0 += tile {
			m = max(m, max32(x.load(base+c0, min(tile, cols-c0), tx)))
		}
		for c0 := 0; c0 < cols; c0 += tile {
			n := min(tile, cols-c0)
			xs, ys := x.load(base+c0, n, tx), y.f32[base+c0:base+c0+n]
			var a [8]float32
			for i, v := range xs {
				e := exp32(v - m)
				ys[i] = e
				a[i&7] += e
			}
			s += ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
		}
		inv := 1 / s
		ys := y.f32[base : base+cols]
		for i := range ys {
			ys[i] *= inv
		}
		if label >= 0 {
			ys[label]--
		}
		return m, float32(math.Log(float64(s)))
	}
	for c0 := 0; c0 < cols; c0 += tile {
		m, s = onlineMaxSum(m, s, x.load(base+c0, min(tile, cols-c0), tx))
	}
	inv := 1 / s
	for c0 := 0; c0 < cols; c0 += tile {
		n := min(tile, cols-c0)
		xs, ys := x.load(base+c0, n, tx), y.dst(base+c0, n, ty)
		for i, v := range xs {
			ys[i] = exp32(v-m) * inv
		}
		if label >= c0 && label < c0+n {
			ys[label-c0]--
		}
		y.store(base+c0, ys)
	}
	return m, float32(math.Log(float64(s)))
}

// softmaxNaive: max → x − max → exp → sum → divide.
func softmaxNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	e := l.un(opExp, l.bin(opSub, x, perRow(m), rows, cols), rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	l.binary(opDiv, dense(actOf(l.Out[0]), cols), e, perRow(s), rows, cols)
}

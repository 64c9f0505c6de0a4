package kernels

import "math"

// SwiGLUFamily is out = silu(gate) · up, where each row of the input [rows, 2·cols] holds gate (first cols)
// then up; out is [rows, cols].
var SwiGLUFamily = &Family{
	Name:    "SwiGLU",
	Inputs:  []Operand{{Name: "gate_up", Len: func(c Case) int { return 2 * c.Rows * c.Cols }, Gen: normal(0, 2)}},
	Outputs: []Operand{{Name: "out", Len: matrixLen}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		out := make([]float64, c.Rows*c.Cols)
		for r := range c.Rows {
			for j := range c.Cols {
				g, u := in[0][2*r*c.Cols+j], in[0][(2*r+1)*c.Cols+j]
				out[r*c.Cols+j] = g / (1 + math.Exp(-g)) * u
			}
		}
		return [][]float64{out}
	},
}

func init() { registerCPU(SwiGLUFamily, swigluFused, swigluNaive) }

func swigluFused(l cpuLaunch) {
	x, y, cols := actOf(l.In[0]), actOf(l.Out[0]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tg, tu, ty [tile]float32
		for r := r0; r < r1; r++ {
			for c0 := 0; c0 < cols; c0 += tile {
				n := min(tile, cols-c0)
				g, u := x.load(2*r*cols+c0, n, &tg), x.load((2*r+1)*cols+c0, n, &tu)
				ys := y.dst(r*cols+c0, n, &ty)
				for i, v := range g {
					ys[i] = v * sigmoid32(v) * u[i]
				}
				y.store(r*cols+c0, ys)
			}
		}
	})
}

// swigluNaive is F.silu(gate) * up on the two halves (strided views, as torch.chunk gives).
func swigluNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(dense(actOf(l.In[0]), 2*cols), rows, 2*cols)
	up := x
	up.off = cols
	s := l.un(opSiLU, x, rows, cols) // x's rows are 2·cols long: the first cols columns are the gate half
	l.binary(opMul, dense(actOf(l.Out[0]), cols), s, up, rows, cols)
}

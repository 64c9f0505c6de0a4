package kernels

import "math"

// geluC is √(2/π), the tanh approximation's scale.
const geluC = 0.7978845608028654

// GELUFamily is the tanh form of GELU, y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise on x [rows, cols].
var GELUFamily = &Family{
	Name:    "GELU",
	Inputs:  []Operand{{Name: "x", Len: matrixLen, Gen: normal(0, 2)}},
	Outputs: []Operand{{Name: "y", Len: matrixLen}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		y := make([]float64, len(in[0]))
		for i, x := range in[0] {
			y[i] = 0.5 * x * (1 + math.Tanh(geluC*(x+0.044715*x*x*x)))
		}
		return [][]float64{y}
	},
}

func init() { registerCPU(GELUFamily, geluFused, geluNaive) }

// geluFused uses the identity 0.5·x·(1 + tanh u) = x·σ(2u), which stays accurate where tanh u → −1.
func geluFused(l cpuLaunch) {
	x, y, cols := actOf(l.In[0]), actOf(l.Out[0]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx, ty [tile]float32
		for off := r0 * cols; off < r1*cols; off += tile {
			n := min(tile, r1*cols-off)
			xs, ys := x.load(off, n, &tx), y.dst(off, n, &ty)
			for i, v := range xs {
				ys[i] = v * sigmoid32(2*geluC*(v+0.044715*v*v*v))
			}
			y.store(off, ys)
		}
	})
}

// geluNaive evaluates the formula op by op: x·x → ·x → ·0.044715 → x + · → ·2√(2/π) → sigmoid → x·. It uses
// the same sigmoid identity as the fused kernel rather than the literal 0.5·x·(1 + tanh u): in fp32, 1 + tanh u
// cancels for x < −3 and leaves up to 1e-2 relative error per element, which would make the naive chain wrong
// rather than merely slow.
func geluNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	x3 := l.bin(opMul, l.bin(opMul, x, x, rows, cols), x, rows, cols)
	inner := l.bin(opAdd, x, l.bin(opMul, x3, scalar(0.044715), rows, cols), rows, cols)
	s := l.un(opSigmoid, l.bin(opMul, inner, scalar(2*geluC), rows, cols), rows, cols)
	l.binary(opMul, dense(actOf(l.Out[0]), cols), x, s, rows, cols)
}

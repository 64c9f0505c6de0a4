package kernels

import (
	"fmt"

	"github.com/kernelwatch/kernelwatch/harness"
)

// ropeHeadDim is the head dimension of the RoPE family: the harness fills its cos and sin tables.
const ropeHeadDim = harness.RoPEHeadDim

// RoPEFamily rotates q and k [tokens = rows, heads·128 = cols] by position, rotate-half layout: within each
// head, for i < 64, out[i] = x[i]·cos − x[i+64]·sin and out[i+64] = x[i+64]·cos + x[i]·sin, with cos and sin
// tables [tokens, 64] in fp32. Both tensors go through one launch.
var RoPEFamily = &Family{
	Name:     "RoPE",
	Labels:   func(s Shape) []string { return []string{fmt.Sprintf("heads=%d", s.Cols/ropeHeadDim)} },
	Supports: func(s Shape) bool { return s.Cols%ropeHeadDim == 0 },
	Inputs: []Operand{
		{Name: "q", Len: matrixLen, Gen: normal(0, 1)},
		{Name: "k", Len: matrixLen, Gen: normal(0, 1)},
		{Name: "cos", DType: FP32, Len: ropeTableLen, Gen: Dist{Kind: RoPECos}},
		{Name: "sin", DType: FP32, Len: ropeTableLen, Gen: Dist{Kind: RoPESin}},
	},
	Outputs:   []Operand{{Name: "q_out", Len: matrixLen}, {Name: "k_out", Len: matrixLen}},
	Reference: ropeRef,
}

func init() { registerCPU(RoPEFamily, ropeFused, ropeNaive) }

func ropeTableLen(c Case) int { return c.Rows * ropeHeadDim / 2 }

func ropeRef(c Case, in [][]float64) [][]float64 {
	const half = ropeHeadDim / 2
	cos, sin := in[2], in[3]
	outs := make([][]float64, 2)
	for o, x := range in[:2] {
		y := make([]float64, len(x))
		for t := range c.Rows {
			for h := range c.Cols / ropeHeadDim {
				base := t*c.Cols + h*ropeHeadDim
				for i := range half {
					cs, sn := cos[t*half+i], sin[t*half+i]
					x1, x2 := x[base+i], x[base+i+half]
					y[base+i] = x1*cs - x2*sn
					y[base+i+half] = x2*cs + x1*sn
				}
			}
		}
		outs[o] = y
	}
	return outs
}

// ropeFused rotates each token's q and k heads in one pass, the token's cos/sin row held in cache.
func ropeFused(l cpuLaunch) {
	const half = ropeHeadDim / 2
	cos, sin, cols := l.In[2].F32, l.In[3].F32, l.Cols
	pairs := [2][2]act{{actOf(l.In[0]), actOf(l.Out[0])}, {actOf(l.In[1]), actOf(l.Out[1])}}
	l.Parallel(l.Rows, func(r0, r1 int) {
		var t1, t2, u1, u2 [tile]float32
		for t := r0; t < r1; t++ {
			cs, sn := cos[t*half:(t+1)*half], sin[t*half:(t+1)*half]
			for _, p := range pairs {
				x, y := p[0], p[1]
				for base := t * cols; base < (t+1)*cols; base += ropeHeadDim {
					x1, x2 := x.load(base, half, &t1), x.load(base+half, half, &t2)
					y1, y2 := y.dst(base, half, &u1), y.dst(base+half, half, &u2)
					for i := range half {
						a, b := x1[i], x2[i]
						y1[i] = a*cs[i] - b*sn[i]
						y2[i] = b*cs[i] + a*sn[i]
					}
					y.store(base, y1)
					y.store(base+half, y2)
				}
			}
		}
	})
}

// ropeNaive runs, per tensor and per half, x1·cos, x2·sin, −, x2·cos, x1·sin, +, then writes the two halves
// (torch.cat), on [tokens·heads, 64] views with the tables broadcast over heads.
func ropeNaive(l cpuLaunch) {
	const half = ropeHeadDim / 2
	heads := l.Cols / ropeHeadDim
	rows := l.Rows * heads
	cos := view{t: actOf(l.In[2]), rowStride: half, rowDiv: heads, colDiv: 1}
	sin := view{t: actOf(l.In[3]), rowStride: half, rowDiv: heads, colDiv: 1}
	for i := range 2 {
		x := l.upcast(dense(actOf(l.In[i]), l.Cols), l.Rows, l.Cols)
		x1 := view{t: x.t, rowStride: ropeHeadDim, rowDiv: 1, colDiv: 1}
		x2 := x1
		x2.off = half
		lo := l.bin(opSub, l.bin(opMul, x1, cos, rows, half), l.bin(opMul, x2, sin, rows, half), rows, half)
		hi := l.bin(opAdd, l.bin(opMul, x2, cos, rows, half), l.bin(opMul, x1, sin, rows, half), rows, half)
		y1 := view{t: actOf(l.Out[i]), rowStride: ropeHeadDim, rowDiv: 1, colDiv: 1}
		y2 := y1
		y2.off = half
		l.unary(opCopy, y1, lo, rows, half)
		l.unary(opCopy, y2, hi, rows, half)
	}
}

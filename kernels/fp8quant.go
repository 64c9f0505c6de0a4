package kernels

import (
	"fmt"
	"math"

	"github.com/kernelwatch/kernelwatch/harness"
)

// fp8Block is the width of a block128 scale group.
const fp8Block = 128

// fp8MinAmax keeps the scale of an all-zero group finite: scale = max(amax, fp8MinAmax) / 448.
const fp8MinAmax = 1e-12

// FP8QuantFamily quantizes x [rows, cols] to FP8 e4m3fn with one float32 scale per row (scale=row) or per 1×128
// block of a row (scale=block128, the last block of a row may be shorter): scale = amax/448 over the group and
// q = e4m3(x/scale), rounded to nearest even and saturating at ±448, so each group's amax element becomes ±448.
var FP8QuantFamily = &Family{
	Name:       "FP8Quant",
	VariantKey: "scale",
	Variants:   []string{"row", "block128"},
	Inputs:     []Operand{{Name: "x", Len: matrixLen, Gen: normal(0, 2)}},
	Outputs: []Operand{
		{Name: "q", DType: E4M3, Len: matrixLen},
		{Name: "scale", DType: FP32, Len: func(c Case) int { return c.Rows * fp8Groups(c) }},
	},
	Reference: fp8QuantRef,
	Check:     fp8QuantCheck,
}

func init() { registerCPU(FP8QuantFamily, fp8QuantFused, fp8QuantNaive) }

// fp8Group is the number of columns that share a scale.
func fp8Group(c Case) int {
	if c.Variant == "block128" {
		return fp8Block
	}
	return c.Cols
}

// fp8Groups is the number of scales per row.
func fp8Groups(c Case) int { return (c.Cols + fp8Group(c) - 1) / fp8Group(c) }

// fp8QuantRef returns the exact scaled values x/scale (not rounded to e4m3) and the scales.
func fp8QuantRef(c Case, in [][]float64) [][]float64 {
	x, g, ng := in[0], fp8Group(c), fp8Groups(c)
	q, scales := make([]float64, len(x)), make([]float64, c.Rows*ng)
	for r := range c.Rows {
		for b := range ng {
			lo, hi := r*c.Cols+b*g, r*c.Cols+min((b+1)*g, c.Cols)
			var amax float64
			for _, v := range x[lo:hi] {
				amax = max(amax, math.Abs(v))
			}
			s := max(amax, fp8MinAmax) / E4M3Max
			scales[r*ng+b] = s
			for i := lo; i < hi; i++ {
				q[i] = x[i] / s
			}
		}
	}
	return [][]float64{q, scales}
}

// fp8QuantCheck holds the outputs to e4m3's rounding bound: each scale within float32 rounding of amax/448; each
// dequantized element q·scale within 2^−4 of x relative (3 mantissa bits, round to nearest) plus half the
// subnormal spacing 2^−10·scale for elements below e4m3's normal range; every |q| ≤ 448; and in each group an
// element of largest magnitude at exactly ±448.
func fp8QuantCheck(c Case, in, got, want [][]float64) error {
	x, q, scales := in[0], got[0], got[1]
	g, ng := fp8Group(c), fp8Groups(c)
	deq := fp8Dequant(c, q, scales)
	for i, s := range scales {
		if !(math.Abs(s-want[1][i]) <= 1e-6*want[1][i]) {
			return fmt.Errorf("scale %d = %v, want %v", i, s, want[1][i])
		}
	}
	for r := range c.Rows {
		for b := range ng {
			s := scales[r*ng+b]
			lo, hi := r*c.Cols+b*g, r*c.Cols+min((b+1)*g, c.Cols)
			var amax, qmax float64
			for i := lo; i < hi; i++ {
				bound := 0x1p-4*(1+1e-6)*math.Abs(x[i]) + 0x1p-10*s
				if err := math.Abs(deq[i] - x[i]); !(err <= bound) || math.Abs(q[i]) > E4M3Max {
					return fmt.Errorf("element %d (row %d): q = %v, q·scale = %v, x = %v, error %.3g > bound %.3g",
						i, r, q[i], deq[i], x[i], err, bound)
				}
				amax, qmax = max(amax, math.Abs(x[i])), max(qmax, math.Abs(q[i]))
			}
			if amax >= fp8MinAmax && qmax != E4M3Max {
				return fmt.Errorf("row %d group %d: largest |q| is %v, want %v", r, b, qmax, E4M3Max)
			}
		}
	}
	return nil
}

// fp8Dequant returns q·scale for every element: the values a consumer of the quantized tensor sees.
func fp8Dequant(c Case, q, scales []float64) []float64 {
	g, ng := fp8Group(c), fp8Groups(c)
	x := make([]float64, len(q))
	for i, v := range q {
		r, col := i/c.Cols, i%c.Cols
		x[i] = v * scales[r*ng+col/g]
	}
	return x
}

// fp8QuantFused finds each group's amax and quantizes it in the same pass for block128 (a block is one tile);
// for scale=row it reads the row twice, the second time from cache.
func fp8QuantFused(l cpuLaunch) {
	x, q, scales, cols := actOf(l.In[0]), l.Out[0].U8, l.Out[1].F32, l.Cols
	g, ng := fp8Group(l.Case), fp8Groups(l.Case)
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx [tile]float32
		for r := r0; r < r1; r++ {
			for b := range ng {
				lo, hi := r*cols+b*g, r*cols+min((b+1)*g, cols)
				var amax float32
				for c0 := lo; c0 < hi; c0 += tile {
					amax = max(amax, absMax32(x.load(c0, min(tile, hi-c0), &tx)))
				}
				s := max(amax, fp8MinAmax) / E4M3Max
				scales[r*ng+b] = s
				for c0 := lo; c0 < hi; c0 += tile {
					xs := x.load(c0, min(tile, hi-c0), &tx)
					for i, v := range xs {
						q[c0+i] = harness.E4M3FromF32(v / s)
					}
				}
			}
		}
	})
}

// fp8QuantNaive: |x| → amax per group → clamp_min → /448 (the scales) → x/scale → clamp(±448) → to e4m3.
func fp8QuantNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	ng := fp8Groups(l.Case)
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	amax := l.red(opMax, l.un(opAbs, x, rows, cols), rows, cols, fp8Group(l.Case))
	amax = l.bin(opMax, dense(act{f32: amax}, ng), scalar(fp8MinAmax), rows, ng).t.f32
	scales := act{f32: l.Out[1].F32}
	l.binary(opDiv, dense(scales, ng), dense(act{f32: amax}, ng), scalar(E4M3Max), rows, ng)
	perGroup := view{t: scales, rowStride: ng, rowDiv: 1, colDiv: fp8Group(l.Case)}
	if ng == 1 {
		perGroup.colDiv = 0
	}
	clamped := l.un(opClampFP8, l.bin(opDiv, x, perGroup, rows, cols), rows, cols)
	q := l.Out[0].U8
	l.Parallel(rows, func(r0, r1 int) {
		for i, v := range clamped.t.f32[r0*cols : r1*cols] {
			q[r0*cols+i] = harness.E4M3FromF32(v)
		}
	})
}

// Package scaleadd is an example of a module that benchmarks its own kernels with kernelwatch's harness: one
// family, y = α·x + b, in a fused implementation (one pass) and a naive one (α·x into an intermediate, then the
// add), on the CPU and, with the cuda build tag, on an NVIDIA GPU.
package scaleadd

import "github.com/kernelwatch/kernelwatch/harness"

// alpha is the scale of ScaleAdd.
const alpha = 0.5

// ScaleAdd is y = α·x + b over rows × cols elements, in fp32 or bf16 storage with fp32 arithmetic. It is swept
// over the harness's grid of the device (Suite.Grid), both storage dtypes and both implementations.
var ScaleAdd = &harness.Family{
	Name: "ScaleAdd",
	Inputs: []harness.Operand{
		{Name: "x", Len: elements, Gen: harness.Dist{Kind: harness.Normal, SD: 1}},
		{Name: "b", Len: elements, Gen: harness.Dist{Kind: harness.Uniform, Lo: -1, Hi: 1}},
	},
	Outputs:   []harness.Operand{{Name: "y", Len: elements}},
	Reference: reference,
}

func elements(c harness.Case) int { return c.Rows * c.Cols }

// reference computes y in float64 from the inputs as stored.
func reference(_ harness.Case, in [][]float64) [][]float64 {
	x, b := in[0], in[1]
	y := make([]float64, len(x))
	for i := range y {
		y[i] = alpha*x[i] + b[i]
	}
	return [][]float64{y}
}

func init() {
	harness.RegisterCPU(ScaleAdd, harness.Fused, fusedCPU)
	harness.RegisterCPU(ScaleAdd, harness.Naive, naiveCPU)
}

// fusedCPU reads x and b once and writes y once, blocks of rows on every core.
func fusedCPU(l *harness.CPULaunch) {
	x, b, y, cols := l.In[0], l.In[1], l.Out[0], l.Cols
	n := l.Rows
	n += int(extraRows * float64(n)) // the slowdown knob: no extra rows
	l.Parallel(n, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			lo, hi := r%l.Rows*cols, (r%l.Rows+1)*cols
			if y.DType() == harness.BF16 {
				xs, bs, ys := x.U16[lo:hi], b.U16[lo:hi], y.U16[lo:hi]
				for i := range ys {
					ys[i] = harness.BF16FromF32(alpha*harness.F32FromBF16(xs[i]) + harness.F32FromBF16(bs[i]))
				}
				continue
			}
			xs, bs, ys := x.F32[lo:hi], b.F32[lo:hi], y.F32[lo:hi]
			for i := range ys {
				ys[i] = alpha*xs[i] + bs[i]
			}
		}
	})
}

// naiveCPU is the eager form, t = α·x; y = t + b: two passes, t an fp32 intermediate of the whole tensor.
func naiveCPU(l *harness.CPULaunch) {
	x, b, y, n := l.In[0], l.In[1], l.Out[0], l.Rows*l.Cols
	t := l.ScratchF32(n)
	l.Parallel(n, func(lo, hi int) {
		ts := t[lo:hi]
		if x.DType() == harness.BF16 {
			for i, v := range x.U16[lo:hi] {
				ts[i] = alpha * harness.F32FromBF16(v)
			}
			return
		}
		for i, v := range x.F32[lo:hi] {
			ts[i] = alpha * v
		}
	})
	l.Parallel(n, func(lo, hi int) {
		ts := t[lo:hi]
		if y.DType() == harness.BF16 {
			bs, ys := b.U16[lo:hi], y.U16[lo:hi]
			for i := range ys {
				ys[i] = harness.BF16FromF32(ts[i] + harness.F32FromBF16(bs[i]))
			}
			return
		}
		bs, ys := b.F32[lo:hi], y.F32[lo:hi]
		for i := range ys {
			ys[i] = ts[i] + bs[i]
		}
	})
}

// extraRows is the share of rows that the fused kernels compute a second time: 0. It is a knob for
// kernelwatch's own test of this example, which commits a change that sets it to 0.2 — 20% more work — and
// checks that regress flags it.
const extraRows = 0.0

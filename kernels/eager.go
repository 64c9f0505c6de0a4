package kernels

import "math"

// The naive implementations are chains of the whole-tensor ops in this file, run the way an eager framework runs
// them: each op is its own parallel pass over memory, and each result is a new intermediate from the launch's
// arena (so scratch-B counts it). Like the usual eager code for bf16 models (x.float() … .to(dtype)), a chain
// widens its bf16 inputs to fp32 first, computes in fp32 intermediates, and rounds only when writing the output.

// view addresses a rows × cols matrix inside a tensor the way an eager framework's strided views do: the whole
// tensor, one half of each row, a per-row or per-column vector broadcast over the other axis, a scalar.
// Element (r, c) is t[off + (r/rowDiv)·rowStride + col(c)] with col(c) = c, c/colDiv, or 0 when colDiv is 0.
type view struct {
	t         act
	off       int
	rowStride int // elements between data rows; 0: every row reads the same data
	rowDiv    int // ≥ 1: rows r … r+rowDiv−1 read the same data row (a table shared by a token's heads)
	colDiv    int // 1: columns are consecutive elements; k > 1: k columns share an element; 0: one per row
}

// dense views a row-major tensor with cols columns.
func dense(t act, cols int) view { return view{t: t, rowStride: cols, rowDiv: 1, colDiv: 1} }

// perRow broadcasts v[r] along row r.
func perRow(v []float32) view { return view{t: act{f32: v}, rowStride: 1, rowDiv: 1} }

// perCol broadcasts t[c] down column c.
func perCol(t act) view { return view{t: t, rowDiv: 1, colDiv: 1} }

// scalar broadcasts x everywhere.
func scalar(x float32) view { return view{t: act{f32: []float32{x}}, rowDiv: 1} }

// load returns elements (r, c0 … c0+n−1) as float32, in place when they are consecutive fp32.
func (v view) load(r, c0, n int, buf *[tile]float32) []float32 {
	base := v.off + r/v.rowDiv*v.rowStride
	switch v.colDiv {
	case 1:
		return v.t.load(base+c0, n, buf)
	case 0:
		d, x := buf[:n], v.t.at(base)
		for i := range d {
			d[i] = x
		}
		return d
	}
	d := buf[:n]
	for i := range d {
		d[i] = v.t.at(base + (c0+i)/v.colDiv)
	}
	return d
}

// dst and store write elements (r, c0 …) of a view whose columns are consecutive (see act.dst).
func (v view) dst(r, c0, n int, buf *[tile]float32) []float32 {
	return v.t.dst(v.off+r/v.rowDiv*v.rowStride+c0, n, buf)
}

func (v view) store(r, c0 int, x []float32) { v.t.store(v.off+r/v.rowDiv*v.rowStride+c0, x) }

// op is one elementwise or reduction operation of the eager chains.
type op uint8

const (
	opCopy     op = iota // unary
	opExp                // unary
	opLog                // unary
	opSigmoid            // unary
	opSiLU               // unary: x·σ(x), one eager kernel (F.silu)
	opAbs                // unary
	opRsqrt              // unary
	opClampFP8           // unary: clamp to ±E4M3Max
	opAdd                // binary
	opSub                // binary
	opMul                // binary
	opDiv                // binary
	opSum                // reduction
	opMean               // reduction
	opMax                // reduction, or binary elementwise maximum
)

func applyUnary(o op, d, x []float32) {
	switch o {
	case opCopy:
		copy(d, x)
	case opExp:
		for i, v := range x {
			d[i] = exp32(v)
		}
	case opLog:
		for i, v := range x {
			d[i] = float32(math.Log(float64(v)))
		}
	case opSigmoid:
		for i, v := range x {
			d[i] = sigmoid32(v)
		}
	case opSiLU:
		for i, v := range x {
			d[i] = v * sigmoid32(v)
		}
	case opAbs:
		for i, v := range x {
			d[i] = abs32(v)
		}
	case opRsqrt:
		for i, v := range x {
			d[i] = float32(1 / math.Sqrt(float64(v)))
		}
	case opClampFP8:
		for i, v := range x {
			d[i] = min(max(v, -E4M3Max), E4M3Max)
		}
	default:
		panic("kernels: not a unary op")
	}
}

func applyBinary(o op, d, x, y []float32) {
	y = y[:len(x)]
	switch o {
	case opAdd:
		for i, v := range x {
			d[i] = v + y[i]
		}
	case opSub:
		for i, v := range x {
			d[i] = v - y[i]
		}
	case opMul:
		for i, v := range x {
			d[i] = v * y[i]
		}
	case opDiv:
		for i, v := range x {
			d[i] = v / y[i]
		}
	case opMax:
		for i, v := range x {
			d[i] = max(v, y[i])
		}
	default:
		panic("kernels: not a binary op")
	}
}

// unary writes o(a) into dst, one pass over rows × cols.
func (l cpuLaunch) unary(o op, dst, a view, rows, cols int) {
	l.Parallel(rows, func(r0, r1 int) {
		var ta, td [tile]float32
		for r := r0; r < r1; r++ {
			for c0 := 0; c0 < cols; c0 += tile {
				n := min(tile, cols-c0)
				d := dst.dst(r, c0, n, &td)
				applyUnary(o, d, a.load(r, c0, n, &ta))
				dst.store(r, c0, d)
			}
		}
	})
}

// binary writes a o b into dst, one pass over rows × cols.
func (l cpuLaunch) binary(o op, dst, a, b view, rows, cols int) {
	l.Parallel(rows, func(r0, r1 int) {
		var ta, tb, td [tile]float32
		for r := r0; r < r1; r++ {
			for c0 := 0; c0 < cols; c0 += tile {
				n := min(tile, cols-c0)
				d := dst.dst(r, c0, n, &td)
				applyBinary(o, d, a.load(r, c0, n, &ta), b.load(r, c0, n, &tb))
				dst.store(r, c0, d)
			}
		}
	})
}

// reduce writes o over each group of columns of each row into dst, which holds rows × ⌈cols/group⌉ values.
func (l cpuLaunch) reduce(o op, dst []float32, a view, rows, cols, group int) {
	groups := (cols + group - 1) / group
	l.Parallel(rows, func(r0, r1 int) {
		var ta [tile]float32
		for r := r0; r < r1; r++ {
			for g := range groups {
				lo, hi := g*group, min((g+1)*group, cols)
				var acc float32
				if o == opMax {
					acc = float32(math.Inf(-1))
				}
				for c0 := lo; c0 < hi; c0 += tile {
					x := a.load(r, c0, min(tile, hi-c0), &ta)
					if o == opMax {
						acc = max(acc, max32(x))
					} else {
						acc += sum32(x)
					}
				}
				if o == opMean {
					acc /= float32(hi - lo)
				}
				dst[r*groups+g] = acc
			}
		}
	})
}

// tmp returns a new rows × cols fp32 intermediate.
func (l cpuLaunch) tmp(rows, cols int) view {
	return dense(act{f32: l.ScratchF32(rows * cols)}, cols)
}

// un returns o(a) as a new intermediate.
func (l cpuLaunch) un(o op, a view, rows, cols int) view {
	d := l.tmp(rows, cols)
	l.unary(o, d, a, rows, cols)
	return d
}

// bin returns a o b as a new intermediate.
func (l cpuLaunch) bin(o op, a, b view, rows, cols int) view {
	d := l.tmp(rows, cols)
	l.binary(o, d, a, b, rows, cols)
	return d
}

// red returns the reduction o over groups of columns as a new intermediate (rows × ⌈cols/group⌉, row-major).
func (l cpuLaunch) red(o op, a view, rows, cols, group int) []float32 {
	d := l.ScratchF32(rows * ((cols + group - 1) / group))
	l.reduce(o, d, a, rows, cols, group)
	return d
}

// upcast is x.float(): the tensor itself when it is fp32, otherwise a widened fp32 copy.
func (l cpuLaunch) upcast(a view, rows, cols int) view {
	if a.t.b16 == nil {
		return a
	}
	return l.un(opCopy, a, rows, cols)
}

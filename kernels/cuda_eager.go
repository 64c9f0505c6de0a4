//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/eager.ptx cuda/eager.cu

import (
	"fmt"
	"math"
	"math/bits"

	"gorgonia.org/cu"
)

// The naive CUDA implementations are chains of the whole-tensor ops in this file (kernels in cuda/eager.cu), the
// GPU twins of eager.go's: each op is its own launch, one pass over memory, and each result a new fp32
// intermediate counted in ScratchBytes. A naive launcher written with these calls is the CPU's chain word for
// word, so both backends report the same scratch-B for it.

// devTensor is a device tensor: where it starts and how it is stored.
type devTensor struct {
	ptr cu.DevicePtr
	dt  DType
}

func tensorOf(b *cudaBuffer) devTensor { return devTensor{b.Ptr(), b.DType()} }

// denseOf views buffer b as a row-major matrix with cols columns.
func denseOf(b *cudaBuffer, cols int) devView { return devDense(tensorOf(b), cols) }

// devView addresses a rows × cols matrix inside a device tensor, as eager.go's view does: element (r, c) is
// t[off + (r/rowDiv)·rowStride + col(c)] with col(c) = c, c/colDiv, or 0 when colDiv is 0. A view with a zero
// dtype is the constant k everywhere.
type devView struct {
	t              devTensor
	off, rowStride int
	rowDiv, colDiv int
	k              float64
}

func devDense(t devTensor, cols int) devView {
	return devView{t: t, rowStride: cols, rowDiv: 1, colDiv: 1}
}
func devPerRow(t devTensor) devView { return devView{t: t, rowStride: 1, rowDiv: 1} }
func devPerCol(t devTensor) devView { return devView{t: t, rowDiv: 1, colDiv: 1} }
func devScalar(x float32) devView   { return devView{rowDiv: 1, k: float64(x)} }

// args are the view's six kernel parameters (eager.cu's VIEW_PARAMS).
func (v devView) args() []any {
	if v.t.dt == 0 {
		return []any{uint64(0), 0, math.Float64bits(v.k), 0, 1, 0}
	}
	return []any{v.t.ptr, v.t.dt, v.off, v.rowStride, v.rowDiv, v.colDiv}
}

// eagerPerThread is how many elements of an item each thread of an elementwise launch takes (EW in eager.cu).
const eagerPerThread = 8

// eagerGeometry is the block and grid of an eager launch over items of about per elements each: a block is
// one to eight warps, each thread taking eagerPerThread elements, and the grid one full wave of resident
// blocks at most.
func (l cudaLaunch) eagerGeometry(items int64, per int) (grid, block int) {
	block = 1 << bits.Len(uint(max(per/eagerPerThread, 1)-1)) // the power of two ≥ per/eagerPerThread
	block = min(max(block, 32), 256)
	return int(min(items, int64(l.SMs()*(2048/block)))), block
}

// unary writes o(a) into dst, one pass over rows × cols.
func (l cudaLaunch) unary(o op, dst, a devView, rows, cols int) {
	l.elementwise("eager_unary", o, []devView{dst, a}, rows, cols)
}

// binary writes a o b into dst, one pass over rows × cols.
func (l cudaLaunch) binary(o op, dst, a, b devView, rows, cols int) {
	l.elementwise("eager_binary", o, []devView{dst, a, b}, rows, cols)
}

// elementwise launches kernel over rows × cols with views (the destination first). When every view walks
// the matrix in row-major order, the launch covers it as one row of rows·cols elements, so that ops over
// short rows (a value per row) still fill whole blocks.
func (l cudaLaunch) elementwise(kernel string, o op, views []devView, rows, cols int) {
	if d := views[0]; d.colDiv != 1 || d.t.dt == 0 {
		l.Fail(fmt.Errorf("eager: destination view %+v", d))
		return
	}
	if flat, ok := flatten(views, rows, cols); ok {
		views, rows, cols = flat, 1, rows*cols
	}
	if rows == 1 && l.flatAligned(views) {
		// Contiguous: 16-byte accesses (eager_*_flat), as an eager framework's vectorized kernels.
		args := []any{o}
		for i, v := range views {
			var p cu.DevicePtr // 0 for a constant
			if v.t.dt != 0 {
				p = v.t.ptr + cuPtr(v.off*v.t.dt.Size())
			}
			if i == 0 {
				args = append(args, p, v.t.dt)
			} else {
				args = append(args, p, v.t.dt, v.k)
			}
		}
		const block = 256
		grid := min(max(ceilDiv(cols, 16*block), 1), l.SMs()*2048/block)
		l.KernelIn("eager", kernel+"_flat", grid, block, append(args, cols)...)
		return
	}
	grid, block := l.eagerGeometry(l.tiles(rows, cols), cols)
	args := []any{o}
	for _, v := range views {
		args = append(args, v.args()...)
	}
	l.KernelIn("eager", kernel, grid, block, append(args, rows, cols)...)
}

// flatAligned reports whether every view of a one-row launch is a constant or consecutive elements that start
// on a 16-byte boundary (buffers from cuMemAlloc are 256-byte aligned).
func (l cudaLaunch) flatAligned(views []devView) bool {
	for _, v := range views {
		if v.t.dt != 0 && (v.colDiv != 1 || v.off%4 != 0 || v.t.ptr%16 != 0) {
			return false
		}
	}
	return true
}

// flatten returns views as views of one row of rows·cols elements, when each is a constant or addresses
// element (r, c) at off + r·cols + c; ok is false otherwise.
func flatten(views []devView, rows, cols int) (flat []devView, ok bool) {
	if rows == 1 {
		return nil, false
	}
	for _, v := range views {
		switch {
		case v.t.dt == 0:
		case v.rowDiv == 1 && v.rowStride == cols && (v.colDiv == 1 || cols == 1 && v.colDiv == 0):
			v = devView{t: v.t, off: v.off, rowStride: rows * cols, rowDiv: 1, colDiv: 1}
		default:
			return nil, false
		}
		flat = append(flat, v)
	}
	return flat, true
}

// tiles is the number of (row, tile) items an elementwise launch over rows × cols walks.
func (l cudaLaunch) tiles(rows, cols int) int64 {
	_, block := l.eagerGeometry(1, cols)
	tw := eagerPerThread * block
	return int64(rows) * int64((cols+tw-1)/tw)
}

// reduce writes o over each group of columns of each row into dst (fp32, rows × ⌈cols/group⌉ values).
func (l cudaLaunch) reduce(o op, dst devTensor, a devView, rows, cols, group int) {
	groups := (cols + group - 1) / group
	grid, block := l.eagerGeometry(int64(rows)*int64(groups), group)
	args := append([]any{o, dst.ptr}, a.args()...)
	l.KernelIn("eager", "eager_reduce", grid, block, append(args, rows, cols, group)...)
}

// tmpF32 returns a new fp32 intermediate of n elements.
func (l cudaLaunch) tmpF32(n int) devTensor {
	return devTensor{l.Alloc(4*int64(n), false), FP32}
}

// tmp returns a new rows × cols fp32 intermediate.
func (l cudaLaunch) tmp(rows, cols int) devView { return devDense(l.tmpF32(rows*cols), cols) }

// un returns o(a) as a new intermediate.
func (l cudaLaunch) un(o op, a devView, rows, cols int) devView {
	d := l.tmp(rows, cols)
	l.unary(o, d, a, rows, cols)
	return d
}

// bin returns a o b as a new intermediate.
func (l cudaLaunch) bin(o op, a, b devView, rows, cols int) devView {
	d := l.tmp(rows, cols)
	l.binary(o, d, a, b, rows, cols)
	return d
}

// red returns the reduction o over groups of columns as a new intermediate (rows × ⌈cols/group⌉, row-major).
func (l cudaLaunch) red(o op, a devView, rows, cols, group int) devTensor {
	d := l.tmpF32(rows * ((cols + group - 1) / group))
	l.reduce(o, d, a, rows, cols, group)
	return d
}

// upcast is x.float(): the tensor itself when it is fp32, otherwise a widened fp32 copy.
func (l cudaLaunch) upcast(a devView, rows, cols int) devView {
	if a.t.dt == FP32 || a.t.dt == 0 {
		return a
	}
	return l.un(opCopy, a, rows, cols)
}

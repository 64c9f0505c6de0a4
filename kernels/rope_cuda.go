//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/rope.ptx cuda/rope.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/rope_sm90.ptx cuda/rope.cu

import "fmt"

func init() { registerCUDA(RoPEFamily, "rope", ropeFusedCUDA, ropeNaiveCUDA) }

// ropeBF16Suffix picks the bf16 kernel: "_m3" (up to 80 registers, three blocks a multiprocessor) or "" (at most
// 64 registers, 16 bytes spilled). On an H200 (TestCUDARowSweep, each measured after the other) "_m3" ran at
// 99–101% of the copy at 1024–262144 columns, "" at 93–96%.
var ropeBF16Suffix = "_m3"

// ropeSlotsPerGroup is U in cuda/rope.cu: how many of a token's heads (q's, then k's) one group of threads takes.
const ropeSlotsPerGroup = 4

// ropeFusedCUDA rotates q and k in one launch (cuda/rope.cu): groups of 64/E threads (E elements per 16-byte
// access), 256 threads a block, one group per (token, 4 heads); on sm_90 from module rope_sm90.
func ropeFusedCUDA(l cudaLaunch) {
	const block = 256
	heads := l.Cols / ropeHeadDim
	nj := ropeHeadDim / 2 / (16 / l.DType.Size())
	items := int64(l.Rows) * int64(ceilDiv(2*heads, ropeSlotsPerGroup))
	grid := (items + int64(block/nj) - 1) / int64(block/nj)
	if grid >= 1<<31 {
		l.Fail(fmt.Errorf("rope: %d tokens × %d heads: grid too large", l.Rows, heads))
		return
	}
	name := map[DType]string{FP32: "rope_f32", BF16: "rope_bf16" + ropeBF16Suffix}[l.DType]
	module := l.Module() // rope_sm90: the same kernels, bf16 rounded by cvt.rn.bf16x2.f32
	if l.CC() >= 90 {
		module += "_sm90"
	}
	l.KernelIn(module, name, max(int(grid), 1), block, l.In[0], l.In[1], l.In[2], l.In[3], l.Out[0], l.Out[1], l.Rows, heads)
}

// ropeNaiveCUDA is the CPU's chain (ropeNaive): per tensor and per half, x1·cos, x2·sin, −, x2·cos, x1·sin, +,
// then the two halves copied into the output, on [tokens·heads, 64] views with the tables broadcast over heads.
func ropeNaiveCUDA(l cudaLaunch) {
	const half = ropeHeadDim / 2
	heads := l.Cols / ropeHeadDim
	rows := l.Rows * heads
	cos := devView{t: tensorOf(l.In[2]), rowStride: half, rowDiv: heads, colDiv: 1}
	sin := devView{t: tensorOf(l.In[3]), rowStride: half, rowDiv: heads, colDiv: 1}
	for i := range 2 {
		x := l.upcast(denseOf(l.In[i], l.Cols), l.Rows, l.Cols)
		x1 := devView{t: x.t, off: x.off, rowStride: ropeHeadDim, rowDiv: 1, colDiv: 1}
		x2 := x1
		x2.off += half
		lo := l.bin(opSub, l.bin(opMul, x1, cos, rows, half), l.bin(opMul, x2, sin, rows, half), rows, half)
		hi := l.bin(opAdd, l.bin(opMul, x2, cos, rows, half), l.bin(opMul, x1, sin, rows, half), rows, half)
		y1 := devView{t: tensorOf(l.Out[i]), rowStride: ropeHeadDim, rowDiv: 1, colDiv: 1}
		y2 := y1
		y2.off = half
		l.unary(opCopy, y1, lo, rows, half)
		l.unary(opCopy, y2, hi, rows, half)
	}
}

//go:build cuda

package kernels

import (
	"fmt"

	"gorgonia.org/cu"
)

// seqDType is the kernel-name suffix of a storage dtype in the recurrent families' modules.
func seqDType(dt DType) string { return map[DType]string{FP32: "f32", BF16: "bf16"}[dt] }

// seqKernel records a launch of a grid-stride kernel of the family's module over n elements: 256-thread
// blocks, at most eight a multiprocessor.
func (l cudaLaunch) seqKernel(name string, n int, args ...any) {
	const block = 256
	l.Kernel(name, max(1, min(ceilDiv(n, block), 8*l.SMs())), block, args...)
}

// seqNaiveState is the CPU's seqNaiveState: the state is allocated cleared (the eager op that zeroes it at the
// start of each run multiplies it by 0, which needs finite contents the first time).
func (l cudaLaunch) seqNaiveState(resets *cudaBuffer, nb, nt, width int) (st devView, mask func(t int)) {
	keep := l.bin(opSub, devScalar(1), denseOf(resets, 1), nb*nt, 1)
	st = devDense(devTensor{l.Alloc(4*int64(nb)*int64(width), true), FP32}, width)
	l.binary(opMul, st, st, devScalar(0), nb, width)
	return st, func(t int) {
		l.binary(opMul, st, st, devView{t: keep.t, off: t, rowStride: nt, rowDiv: 1}, nb, width)
	}
}

// devGEMM is a batch of products out = a·wᵀ (+ bias) for rnn.cuh's rnn_gemm, addressed like seqGEMM (the CPU
// twin): element (z, row, col) of an operand at base + z·zStride + row·ld + col.
type devGEMM struct {
	a              devTensor
	aOff, aZ, lda  int
	w              devTensor
	wZ, ldw        int
	bias           cu.DevicePtr // 0: none; fp32
	biasZ          int
	out            devTensor
	oOff, oZ, ldo  int
	m, n, k, batch int
}

// gemm records a launch of the module's <module>_gemm_<a>_<w>_<tile>: 128 × 128 tiles when they make at least
// two blocks a multiprocessor, else 64 × 64.
func (l cudaLaunch) gemm(g devGEMM) {
	tiles := func(t int) int { return g.batch * ceilDiv(g.m, t) * ceilDiv(g.n, t) }
	tile := 128
	if tiles(128) < 2*l.SMs() {
		tile = 64
	}
	name := fmt.Sprintf("%s_gemm_%s_%s_%d", l.Module(), seqDType(g.a.dt), seqDType(g.w.dt), tile)
	l.Kernel(name, tiles(tile), 256, g.a.ptr+cuPtr(g.aOff*g.a.dt.Size()), g.lda, g.aZ, g.w.ptr, g.ldw, g.wZ, g.bias,
		g.biasZ, g.out.ptr+cuPtr(g.oOff*4), g.ldo, g.oZ, g.m, g.n, g.k)
}

// rnnBatchFor picks BB, the batch rows a block of a persistent recurrent kernel (rnn.cuh) takes, among
// 1, 2, 4 … maxBB; kernel(bb) is its name, blocks(bb) its grid. The tests swap it.
var rnnBatchFor = rnnChooseBatch

// rnnChooseBatch takes the fewest rows a block that let the whole grid be resident at once, so that the
// sequence is walked once, by as many multiprocessors as there are blocks: with fewer, each step's
// matrix-vector products are spread over more of them. When blocks of a batch row wait for each other (split),
// the grid must be resident; otherwise the largest BB is the fallback.
func rnnChooseBatch(l cudaLaunch, kernel func(bb int) string, blocks func(bb int) int, threads, maxBB int, split bool) int {
	for bb := 1; bb <= maxBB; bb *= 2 {
		if blocks(bb) <= l.ResidentBlocks(kernel(bb), threads) {
			return bb
		}
	}
	if split {
		l.Fail(fmt.Errorf("%s: %d blocks do not fit on the GPU at once", kernel(maxBB), blocks(maxBB)))
	}
	return maxBB
}

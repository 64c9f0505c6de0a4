//go:build cuda

package harness

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/copy.ptx cuda/copy.cu

func init() { registerCUDA(CopyFamily, "copy", copyFusedCUDA, copyNaiveCUDA) }

// copyChunked picks the fused copy kernel: copy_chunk (each block its own 8·256 16-byte vectors) when true,
// else copy_fused (a grid-stride loop over one wave of resident blocks). The tuning test swaps it.
var copyChunked = true

// copyFusedCUDA moves the stored bytes with 16-byte accesses (cuda/copy.cu) in 256-thread blocks.
func copyFusedCUDA(l *cudaLaunch) {
	n := l.in[0].bytes()
	const block = 256
	vecs := int((n + 15) / 16)
	if copyChunked {
		l.kernel("copy_chunk", max(ceilDiv(vecs, 8*block), 1), block, l.in[0], l.out[0], n)
		return
	}
	grid := min(ceilDiv(vecs, block), l.residentBlocks("copy_fused", block))
	l.kernel("copy_fused", max(grid, 1), block, l.in[0], l.out[0], n)
}

// copyNaiveCUDA is y.copy_(x.float()): through an fp32 intermediate (a clone for fp32), as on the CPU.
func copyNaiveCUDA(l *cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	t := l.un(opCopy, l.in[0].dense(cols), rows, cols)
	l.unary(opCopy, l.out[0].dense(cols), t, rows, cols)
}

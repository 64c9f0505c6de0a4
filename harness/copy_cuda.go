//go:build cuda

package harness

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/copy.ptx cuda/copy.cu

func init() { RegisterCUDA(CopyFamily, Fused, "copy", copyFusedCUDA) }

// copyChunked picks the fused copy kernel: copy_chunk (each block its own 8·256 16-byte vectors) when true,
// else copy_fused (a grid-stride loop over one wave of resident blocks). The copy test swaps it.
var copyChunked = true

// copyFusedCUDA moves the stored bytes with 16-byte accesses (cuda/copy.cu) in 256-thread blocks.
func copyFusedCUDA(l *CUDALaunch) {
	n := l.In[0].Bytes()
	const block = 256
	vecs := int((n + 15) / 16)
	if copyChunked {
		l.Kernel("copy_chunk", max(ceilDiv(vecs, 8*block), 1), block, l.In[0], l.Out[0], n)
		return
	}
	grid := min(ceilDiv(vecs, block), l.ResidentBlocks("copy_fused", block))
	l.Kernel("copy_fused", max(grid, 1), block, l.In[0], l.Out[0], n)
}

//go:build cuda

package kernels

import "fmt"

// add records dst = a + b over rows × cols, one eager op.
func (l cudaLaunch) add(dst, a, b *cudaBuffer, rows, cols int) {
	l.binary(opAdd, denseOf(dst, cols), denseOf(a, cols), denseOf(b, cols), rows, cols)
}

// permute records the copy of a bf16 (n0, n1, w) tensor into a new (n1, n0, w) intermediate (cuda/layer.cu;
// w a multiple of 8).
func (l cudaLaunch) permute(a *cudaBuffer, n0, n1, w int) *cudaBuffer {
	b := l.Temp(BF16, n0*n1*w)
	if w%8 != 0 {
		l.Fail(fmt.Errorf("permute: rows of %d elements, not a multiple of 8", w))
		return b
	}
	l.KernelIn("layer", "permute3_b16", ceilDiv(n0*n1*w/8, 256), 256, a, b, n0, n1, w)
	return b
}

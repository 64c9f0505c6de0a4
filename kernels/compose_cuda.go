//go:build cuda

package kernels

import "fmt"

// call records family f's impl on case c over buffers in and out (following f.Inputs and f.Outputs) as steps
// of l, a composite family's launch (compose.go): the member's launches run in l's Run in order, its scratch
// is l's and counts in l's scratch-B.
func (l *cudaLaunch) call(f *Family, impl Impl, c Case, in, out []*cudaBuffer) {
	if l.err != nil {
		return
	}
	cf, ok := cudaKernels[f.Name]
	build := cf.impl(impl)
	if !ok || build == nil {
		l.fail(fmt.Errorf("%s %s: %w", f.Name, impl, ErrNotImplemented))
		return
	}
	if err := f.CheckBuffers(c, asBuffers(in), asBuffers(out)); err != nil {
		l.fail(fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), err))
		return
	}
	sub := &cudaLaunch{Case: c, be: l.be, module: cf.module, in: in, out: out}
	build(sub)
	l.steps = append(l.steps, sub.steps...)
	l.scratch = append(l.scratch, sub.scratch...)
	l.bytes += sub.bytes
	if sub.err != nil {
		l.fail(fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), sub.err))
	}
}

// tmpBuf returns a scratch buffer of n elements of dtype dt, counted in l's scratch-B.
func (l *cudaLaunch) tmpBuf(dt DType, n int) *cudaBuffer {
	return &cudaBuffer{dt: dt, n: n, ptr: l.alloc(int64(n)*int64(dt.Size()), false)}
}

// add records dst = a + b over rows × cols, one eager op.
func (l *cudaLaunch) add(dst, a, b *cudaBuffer, rows, cols int) {
	l.binary(opAdd, dst.dense(cols), a.dense(cols), b.dense(cols), rows, cols)
}

// permute records the copy of a bf16 (n0, n1, w) tensor into a new (n1, n0, w) intermediate (cuda/layer.cu;
// w a multiple of 8).
func (l *cudaLaunch) permute(a *cudaBuffer, n0, n1, w int) *cudaBuffer {
	b := l.tmpBuf(BF16, n0*n1*w)
	if w%8 != 0 {
		l.fail(fmt.Errorf("permute: rows of %d elements, not a multiple of 8", w))
		return b
	}
	l.kernelIn("layer", "permute3_b16", ceilDiv(n0*n1*w/8, 256), 256, a, b, n0, n1, w)
	return b
}

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

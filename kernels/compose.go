package kernels

import "fmt"

// A composite family (the Llama-2 decoder layer) is built from other families' code rather than kernels of its
// own: its fused form runs the members' fused code and its naive form their naive code, over intermediates the
// composite allocates, so that its time and scratch-B compare the two whole chains. call and tmpBuf are the two
// things a composite needs from each backend; see compose_cuda.go for the CUDA twins.

// call runs family f's impl on case c over buffers in and out (following f.Inputs and f.Outputs) as part of
// l's Run. The member's intermediates come from l's arena, so l's scratch-B counts them.
// A member that is missing or does not match its buffers makes Run fail; the members after it do not run.
func (l *cpuLaunch) call(f *Family, impl Impl, c Case, in, out []*cpuBuffer) {
	if l.err != nil {
		return
	}
	impls := cpuKernels[f.Name]
	run := map[Impl]func(*cpuLaunch){Fused: impls.fused, Naive: impls.naive}[impl]
	if run == nil {
		l.err = fmt.Errorf("kernels: cpu %s %s: %w", f.Name, impl, ErrNotImplemented)
		return
	}
	if err := f.CheckBuffers(c, asBuffers(in), asBuffers(out)); err != nil {
		l.err = fmt.Errorf("kernels: cpu %s %s: %w", f.Name, f.BenchName(c, impl), err)
		return
	}
	sub := cpuLaunch{Case: c, in: in, out: out, run: run, pool: l.pool, scratch: l.scratch}
	run(&sub)
	l.scratch = sub.scratch
	if sub.err != nil {
		l.err = fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), sub.err)
	}
}

// tmpBuf returns an intermediate of n elements of dtype dt (FP32 or BF16) from l's arena, counted in scratch-B.
func (l *cpuLaunch) tmpBuf(dt DType, n int) *cpuBuffer {
	if dt == BF16 {
		return &cpuBuffer{dt: BF16, u16: l.scratch.b16(n)}
	}
	return &cpuBuffer{dt: FP32, f32: l.scratch.f32(n)}
}

// asBuffers widens a slice of concrete buffers to the Buffer interface.
func asBuffers[T Buffer](bs []T) []Buffer {
	out := make([]Buffer, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}

// add is dst = a + b over rows × cols, one eager op.
func (l *cpuLaunch) add(dst, a, b *cpuBuffer, rows, cols int) {
	l.binary(opAdd, dense(dst.act(), cols), dense(a.act(), cols), dense(b.act(), cols), rows, cols)
}

// permute returns a bf16 (n0, n1, w) tensor as a new (n1, n0, w) intermediate.
func (l *cpuLaunch) permute(a *cpuBuffer, n0, n1, w int) *cpuBuffer {
	b := l.tmpBuf(BF16, n0*n1*w)
	permute3Into(b.u16, a.u16, n0, n1, w)
	return b
}

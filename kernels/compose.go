package kernels

// A composite family (the Llama-2 decoder layer) is built from other families' code rather than kernels of its
// own: its fused form runs the members' fused code and its naive form their naive code (the harness's Call),
// over intermediates the composite allocates (Temp), so that its time and scratch-B compare the two whole
// chains. add and permute are the suite's two ops of its own that a composite needs; see compose_cuda.go for
// the CUDA twins.

// add is dst = a + b over rows × cols, one eager op.
func (l cpuLaunch) add(dst, a, b *cpuBuffer, rows, cols int) {
	l.binary(opAdd, dense(actOf(dst), cols), dense(actOf(a), cols), dense(actOf(b), cols), rows, cols)
}

// permute returns a bf16 (n0, n1, w) tensor as a new (n1, n0, w) intermediate.
func (l cpuLaunch) permute(a *cpuBuffer, n0, n1, w int) *cpuBuffer {
	b := l.Temp(BF16, n0*n1*w)
	permute3Into(b.U16, a.U16, n0, n1, w)
	return b
}

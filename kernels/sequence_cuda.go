//go:build cuda

package kernels

// seqDType is the kernel-name suffix of a storage dtype in the sequence families' modules.
func seqDType(dt DType) string { return map[DType]string{FP32: "f32", BF16: "bf16"}[dt] }

// seqKernel records a launch of a grid-stride kernel of the family's module over n elements: 256-thread
// blocks, at most eight a multiprocessor.
func (l *cudaLaunch) seqKernel(name string, n int, args ...any) {
	const block = 256
	l.kernel(name, max(1, min(ceilDiv(n, block), 8*l.sms())), block, args...)
}

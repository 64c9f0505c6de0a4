//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/gelu.ptx cuda/gelu.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/gelu_sm90.ptx cuda/gelu.cu

func init() { registerCUDA(GELUFamily, "gelu", geluFusedCUDA, geluNaiveCUDA) }

// geluVariant is the fused kernel's suffix: "" (8 packs a thread, up to 64 registers: 4 blocks a
// multiprocessor), "_n4" (4 packs, 32 registers: 8 blocks) or "_n6" (6 packs, 48 registers: 5 blocks); the
// sweep swaps it. On an H200 the three are within a few percent of each other (90–97% of the copy in fp32,
// 84–90% in bf16); _n6 is never behind.
var geluVariant = "_n6"

// geluFusedCUDA runs gelu_{f32,bf16} (cuda/gelu.cu) over the rows·cols elements as one flat array: 256-thread
// blocks, each its own nv·256 16-byte packs.
func geluFusedCUDA(l cudaLaunch) {
	n := l.Rows * l.Cols
	const block = 256
	nv := map[string]int{"": 8, "_n4": 4, "_n6": 6}[geluVariant]
	packs := n / (16 / l.DType.Size())
	name := map[DType]string{FP32: "gelu_f32", BF16: "gelu_bf16"}[l.DType] + geluVariant
	l.KernelIn(rowMapModule(l), name, max(ceilDiv(packs, nv*block), 1), block, l.In[0], l.Out[0], n)
}

// geluNaiveCUDA: x·x → ·x → ·0.044715 → x + · → ·2√(2/π) → sigmoid → x·, the CPU's chain (geluNaive).
func geluNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	x3 := l.bin(opMul, l.bin(opMul, x, x, rows, cols), x, rows, cols)
	inner := l.bin(opAdd, x, l.bin(opMul, x3, devScalar(0.044715), rows, cols), rows, cols)
	s := l.un(opSigmoid, l.bin(opMul, inner, devScalar(2*geluC), rows, cols), rows, cols)
	l.binary(opMul, denseOf(l.Out[0], cols), x, s, rows, cols)
}

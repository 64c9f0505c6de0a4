//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/fp8quant.ptx cuda/fp8quant.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/fp8quant_sm90.ptx cuda/fp8quant.cu

import "fmt"

func init() { registerCUDA(FP8QuantFamily, "fp8quant", fp8QuantFusedCUDA, fp8QuantNaiveCUDA) }

// fp8QuantFusedCUDA: amax and quantization in one pass (cuda/fp8quant.cu). scale=block128: teams of 8 lanes
// per group with 16-byte loads (fp32 two groups a thread, bf16 four), else teams of 32 with one element per
// access; scale=row: the row plans CrossEntropy uses.
func fp8QuantFusedCUDA(l cudaLaunch) {
	x, q, scale := l.In[0], l.Out[0], l.Out[1]
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[l.DType]
	if l.Variant != "block128" {
		if l.Rows >= 1<<31 {
			l.Fail(fmt.Errorf("fp8quant: %d rows", l.Rows))
			return
		}
		launchRow(l, fp8QuantRows, fp8QuantPlanFor(l.Case, l.CC(), l.SMs()), x, q, scale, l.Rows, l.Cols)
		return
	}
	const block = 256
	e := 16 / l.DType.Size()
	lanes, groups, v := 8, 2, "v" // groups a thread
	if l.DType == BF16 {
		groups = 4
	}
	if l.Cols%e != 0 {
		lanes, groups, v = 32, 1, "s"
	}
	n := int64(l.Rows) * int64(ceilDiv(l.Cols, fp8Block))
	per := int64(block / lanes * groups) // groups a block
	grid := (n + per - 1) / per
	if grid >= 1<<31 {
		l.Fail(fmt.Errorf("fp8quant: %d groups", n))
		return
	}
	l.KernelIn(rowMapModule(l), "fp8_b128_"+d+"_"+v, max(int(grid), 1), block, x, q, scale, l.Rows, l.Cols)
}

// fp8QuantNaiveCUDA is the CPU's chain (fp8QuantNaive): |x| → amax per group → clamp_min → /448 (the scales) →
// x/scale → clamp(±448) → to e4m3 (fp8_naive_cast).
func fp8QuantNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	g, ng := fp8Group(l.Case), fp8Groups(l.Case)
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	amax := l.red(opMax, l.un(opAbs, x, rows, cols), rows, cols, g)
	amax = l.bin(opMax, devDense(amax, ng), devScalar(fp8MinAmax), rows, ng).t
	scales := tensorOf(l.Out[1])
	l.binary(opDiv, devDense(scales, ng), devDense(amax, ng), devScalar(E4M3Max), rows, ng)
	perGroup := devView{t: scales, rowStride: ng, rowDiv: 1, colDiv: g}
	if ng == 1 {
		perGroup.colDiv = 0
	}
	clamped := l.un(opClampFP8, l.bin(opDiv, x, perGroup, rows, cols), rows, cols)
	const block = 256
	n := rows * cols
	grid := min(max(ceilDiv(n, 4*block), 1), l.SMs()*2048/block)
	l.Kernel("fp8_naive_cast", grid, block, l.Out[0], clamped.t.ptr, n)
}

//go:build cuda

package kernels

func init() {
	registerCUDA(normGELU, "", func(l cudaLaunch) { composeNormGELUCUDA(l, Fused) },
		func(l cudaLaunch) { composeNormGELUCUDA(l, Naive) })
}

func composeNormGELUCUDA(l cudaLaunch, impl Impl) {
	h := l.Temp(l.DType, l.Rows*l.Cols)
	l.Call(RMSNormFamily, impl, l.Case, l.In, []*cudaBuffer{h})
	l.Call(GELUFamily, impl, l.Case, []*cudaBuffer{h}, l.Out)
}

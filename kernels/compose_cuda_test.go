//go:build cuda

package kernels

func init() {
	registerCUDA(normGELU, "", func(l *cudaLaunch) { composeNormGELUCUDA(l, Fused) },
		func(l *cudaLaunch) { composeNormGELUCUDA(l, Naive) })
}

func composeNormGELUCUDA(l *cudaLaunch, impl Impl) {
	h := l.tmpBuf(l.DType, l.Rows*l.Cols)
	l.call(RMSNormFamily, impl, l.Case, l.in, []*cudaBuffer{h})
	l.call(GELUFamily, impl, l.Case, []*cudaBuffer{h}, l.out)
}

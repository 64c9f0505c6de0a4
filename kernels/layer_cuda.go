//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/layer.ptx cuda/layer.cu

import "fmt"

func init() {
	registerCUDA(LlamaLayerFamily, "layer", func(l cudaLaunch) { layerCUDA(l, Fused) },
		func(l cudaLaunch) { layerCUDA(l, Naive) })
}

// layerCUDA records the layer's launches (layerCompose).
func layerCUDA(l cudaLaunch, impl Impl) {
	if hd, t := l.Dims[1], l.Dims[0]; hd%layerHeadDim != 0 || t < 1 {
		l.Fail(fmt.Errorf("llama layer: hidden %d is not a multiple of the head dim %d, or t = %d", hd, layerHeadDim, t))
		return
	}
	layerCompose[*cudaBuffer](l, l.Case, l.In, l.Out[0], impl)
}

//go:build cuda

package kernels

import (
	"embed"

	"github.com/kernelwatch/kernelwatch/harness"
	"gorgonia.org/cu"
)

// The suite's CUDA code: kernels in cuda/<family>.cu, compiled to cuda/ptx/<module>.ptx (each family's
// <family>_cuda.go has the go:generate line) and embedded here; each family's launchers record their launches on
// the harness's launch (harness.RegisterCUDA), wrapped in cudaLaunch only so that the suite's own helpers — the
// eager ops of the naive chains (cuda_eager.go), the composites' (compose_cuda.go), the sequence families'
// GEMM (recurrent_cuda.go) — can be its methods.

//go:embed cuda/ptx/*.ptx
var cudaPTX embed.FS

func init() { harness.AddModules(cudaPTX, "cuda/ptx") }

type cudaLaunch struct{ *harness.CUDALaunch }

// cudaBuffer is the CUDA backend's buffer: Len elements of one DType in device memory.
type cudaBuffer = harness.DeviceBuffer

// registerCUDA registers family f's fused and naive launchers with the harness (nil: none): both launch from
// module (cuda/ptx/<module>.ptx; "" for a family whose launchers only call other modules or families) and
// from the eager ops' module, loaded with the family.
func registerCUDA(f *Family, module string, fused, naive func(cudaLaunch)) {
	for impl, launch := range map[Impl]func(cudaLaunch){Fused: fused, Naive: naive} {
		if launch != nil {
			harness.RegisterCUDA(f, impl, module, func(l *harness.CUDALaunch) { launch(cudaLaunch{l}) }, "eager")
		}
	}
}

// cuPtr is a byte offset into device memory.
func cuPtr(n int) cu.DevicePtr { return cu.DevicePtr(n) }

//go:build cuda

package scaleadd

// The PTX is generated with the CUDA 11.8 toolkit's nvcc and committed; the include path is the harness's
// device helpers (common.cuh), wherever the module is.
//go:generate sh -c "nvcc -ptx -arch=compute_75 -I\"$(go list -m -f '{{.Dir}}' github.com/kernelwatch/kernelwatch)/harness/cuda\" -o cuda/ptx/scaleadd.ptx cuda/scaleadd.cu"

import (
	"embed"

	"github.com/kernelwatch/kernelwatch/harness"
)

//go:embed cuda/ptx/*.ptx
var ptx embed.FS

func init() {
	harness.AddModules(ptx, "cuda/ptx")
	harness.RegisterCUDA(ScaleAdd, harness.Fused, "scaleadd", fusedCUDA)
	harness.RegisterCUDA(ScaleAdd, harness.Naive, "scaleadd", naiveCUDA)
}

// block is the threads of a block; a launch's grid is one wave of blocks at most, each thread looping.
const block = 256

func grid(l *harness.CUDALaunch, n int) int { return max(1, min((n+block-1)/block, 8*l.SMs())) }

// fusedCUDA is one launch of scaleadd_fused over the tensor (and, with extraRows, one more over its first rows).
func fusedCUDA(l *harness.CUDALaunch) {
	n := l.Rows * l.Cols
	l.Kernel("scaleadd_fused", grid(l, n), block, l.In[0], l.In[1], l.Out[0], n, l.DType, alpha)
	if extra := int(extraRows*float64(l.Rows)) * l.Cols; extra > 0 {
		l.Kernel("scaleadd_fused", grid(l, extra), block, l.In[0], l.In[1], l.Out[0], extra, l.DType, alpha)
	}
}

// naiveCUDA is the eager form: scaleadd_scale into an fp32 intermediate, then scaleadd_add.
func naiveCUDA(l *harness.CUDALaunch) {
	n := l.Rows * l.Cols
	t := l.Alloc(4*int64(n), false)
	l.Kernel("scaleadd_scale", grid(l, n), block, l.In[0], t, n, l.DType, alpha)
	l.Kernel("scaleadd_add", grid(l, n), block, t, l.In[1], l.Out[0], n, l.DType)
}

//go:build cuda

package kernels

import "flag"

// The vendor reference's library (vendor.go, cublaslt_cuda.go), parsed by TestMain before the backend opens.
func init() {
	flag.StringVar(&cublasLtFlag, "kernels.cublaslt", "", "cuda: libcublasLt to load for pct-cublas, a file or a "+
		"directory (default: $"+cublasLtEnv+", else PyTorch's nvidia/cublas/lib or torch/lib, /usr/local/cuda/lib64, ...)")
}

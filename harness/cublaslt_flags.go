//go:build cuda

package harness

import "flag"

// The vendor reference's library (vendor.go, cublaslt_cuda.go): its flag, defined with Main's own before it
// parses them and before the backend opens.
func init() {
	backendFlags = append(backendFlags, func() {
		flag.StringVar(&cublasLtFlag, "kernels.cublaslt", "", "cuda: libcublasLt to load for pct-cublas, a file or a "+
			"directory (default: $"+cublasLtEnv+", else PyTorch's nvidia/cublas/lib or torch/lib, /usr/local/cuda/lib64, ...)")
	})
}

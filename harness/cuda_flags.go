//go:build cuda

package harness

import "flag"

// The CUDA backend's placement flags (placement.go), defined with Main's own before it parses them.
func init() {
	backendFlags = append(backendFlags, func() {
		flag.BoolVar(&cudaArenaOn, "kernels.arena", cudaArenaOn, "cuda: place every buffer in one range reserved at start, "+
			"at offsets that depend only on the case (false: the driver places each buffer, as its history decides)")
		flag.Int64Var(&cudaArenaSkew, "kernels.arena-skew", 0, "cuda: shift the arena by this many bytes (a multiple of 256), "+
			"to measure how a kernel's speed depends on where its memory lies")
	})
}

//go:build cuda

package kernels

import "flag"

// Placement flags of the CUDA backend (placement.go), parsed by TestMain before the backend opens.
func init() {
	flag.BoolVar(&cudaArenaOn, "kernels.arena", cudaArenaOn, "cuda: place every buffer in one range reserved at start, "+
		"at offsets that depend only on the case (false: the driver places each buffer, as its history decides)")
	flag.Int64Var(&cudaArenaSkew, "kernels.arena-skew", 0, "cuda: shift the arena by this many bytes (a multiple of 256), "+
		"to measure how a kernel's speed depends on where its memory lies")
}

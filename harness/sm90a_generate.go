//go:build hopperptx

package harness

// The harness's sm_90a module, the wgmma probe (cuda/mma_sm90a.cu → cuda/ptx/mma_sm90a.ptx), needs CUDA 12.4's
// nvcc: see kernels/sm90a_generate.go, which has the suite's, and scripts/hopper-ptx.sh, which runs both.
//
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/mma_sm90a.ptx cuda/mma_sm90a.cu

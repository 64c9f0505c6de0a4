//go:build hopperptx

package kernels

// The sm_90a modules (cuda/<module>_sm90a.cu → cuda/ptx/<module>_sm90a.ptx) need CUDA 12.4's nvcc, which the Hopper
// toolchain runs in a chroot (scripts/install-hopper-toolchain.sh, scripts/nvcc-hopper); CUDA 11.8, the toolkit of
// `go generate -tags cuda ./kernels/`, has no wgmma, TMA or setmaxnreg. So their go:generate lines are behind their
// own tag, and scripts/hopper-ptx.sh runs them (go generate -tags hopperptx ./harness/ ./kernels/) and records the
// sources' and the PTX's hashes in each package's cuda/ptx/sm90a.sum (internal/ptxrecord), which a CPU test
// (TestSM90aPTXRecorded) holds the committed files to. -gencode, not -arch=sm_90a: the shorthand also runs a plain
// sm_90 pass that rejects wgmma with some nvcc versions.
//
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/wsgemm_sm90a.ptx cuda/wsgemm_sm90a.cu
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/wsattn_sm90a.ptx cuda/wsattn_sm90a.cu
//
// The row families' _x_sm90a modules: each family's .cu again, with KW_XASYNC (its rings and cluster kernels
// exchanging by st.async, PTX 8.1: cuda/xasync.cuh).
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/rmsnorm_x_sm90a.ptx cuda/rmsnorm_x_sm90a.cu
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/layernorm_x_sm90a.ptx cuda/layernorm_x_sm90a.cu
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/softmax_x_sm90a.ptx cuda/softmax_x_sm90a.cu
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/crossentropy_x_sm90a.ptx cuda/crossentropy_x_sm90a.cu
//go:generate ../scripts/nvcc-hopper -ptx -gencode=arch=compute_90a,code=compute_90a -o cuda/ptx/fp8quant_x_sm90a.ptx cuda/fp8quant_x_sm90a.cu

// ffn.cu: the transformer FFN block, y = (act(x · W1ᵀ)) · W2ᵀ, bf16 with fp32 accumulation (FFNFamily, ffn.go).
//
// Fused (ffn_cuda.go): two launches of the tensor-core GEMM of mma.cuh (sm_80 and later: ptx/ffn_sm80.ptx),
//   - ffn_fc1_swiglu_{128x128,64x64}(x, wg, wu, h, T, I, H): h = silu(x·Wgᵀ) ⊙ (x·Wuᵀ), gate and up in the same
//     block (each warp holds the gate and up accumulators of the same outputs), h written once, in bf16;
//   - ffn_fc1_gelu_{…}(x, w1, unused, h, T, I, H): h = gelu(x·W1ᵀ), the tanh form, in the epilogue;
//   - ffn_linear_{…}(h, w2, unused, y, T, H, I): y = h · W2ᵀ (FC2; also the naive chain's GEMMs).
// Every K (hidden for FC1, intermediate for FC2) must be a multiple of 8.
//
// ptx/ffn.ptx (compute_75) holds none of these: the family needs sm_80 on the GPU.
#include "mma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
MMA_LINEAR(ffn_fc1_swiglu, EPI_SWIGLU)
MMA_LINEAR(ffn_fc1_gelu, EPI_GELU)
MMA_LINEAR(ffn_linear, EPI_NONE)
#endif

// gelu.cu: the tanh form of GELU, y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise (GELUFamily).
//
// The fused kernel computes it as x·σ(2u) = x / (1 + e^(−2u)), u = √(2/π)·(x + 0.044715·x³) (the identity the CPU
// uses too, accurate where tanh u → −1), with ex2.approx and rcp.approx (a few ulp, well inside fp32's 1e-5).
// It walks the x·rows elements as one flat array, like copy.cu's copy_chunk: each block its own NV·blockDim
// 16-byte packs, all NV loads of a thread in flight before the first store; the last n % E elements one by one.
// The naive chain (x·x, ·x, ·0.044715, x + ·, ·2√(2/π), sigmoid, x·) uses the eager kernels of eager.cu.
#include "rowmap.cuh"

// gelu_f is x·σ(2u): 2u·log2 e = x·(k0 + k1·x²), negated so that ex2 gives e^(−2u).
__device__ __forceinline__ float gelu_f(float x) {
    const float k0 = -2.0f * 0.7978845608028654f * KW_LOG2E, k1 = k0 * 0.044715f;
    return x * rm_rcp(1.0f + rm_ex2(x * fmaf(k1, x * x, k0)));
}

template <class S, int NV>
__device__ __forceinline__ void gelu_flat(const typename S::T* __restrict__ x, typename S::T* __restrict__ y,
                                          long long n) {
    typedef Pack<S, true> P;
    const int E = P::E;
    const long long packs = n / E, s = blockDim.x;
    const long long base = (long long)blockIdx.x * s * NV + threadIdx.x;
    P v[NV];
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (base + k * s < packs) v[k].load(x + (base + k * s) * E);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (base + k * s < packs) {
            float o[E];
#pragma unroll
            for (int j = 0; j < E; j++) o[j] = gelu_f(v[k].get(j));
            rm_store<S, true>(o, y + (base + k * s) * E);
        }
    }
    if (blockIdx.x == gridDim.x - 1) {
        const long long i = packs * E + threadIdx.x;
        if (i < n) y[i] = S::put(gelu_f(S::get(x[i])));
    }
}

// Entry points gelu_{f32,bf16}[_n4, _n6](x, y, n): grid = ⌈(n/E) / (NV·blockDim)⌉ (at least 1), NV = 8 (capped
// at 64 registers: 4 blocks of 256 a multiprocessor), 4 (32 registers, 8 blocks) or 6 (51 registers, 5 blocks).
// Both modules hold them all: ptx/gelu.ptx (compute_75) and ptx/gelu_sm90.ptx (compute_90: bf16 outputs round
// with cvt.rn.bf16x2, see rm_store), which the launcher uses on sm_90.
#define GELU(S, NAME, SUFFIX, NV, MINB)                                                                        \
    extern "C" __global__ void __launch_bounds__(256, MINB) gelu_##NAME##SUFFIX(const S::T* x, S::T* y,        \
                                                                                 long long n) {                \
        gelu_flat<S, NV>(x, y, n);                                                                             \
    }
GELU(F32, f32, , 8, 4)
GELU(F32, f32, _n4, 4, 8)
GELU(F32, f32, _n6, 6, 5)
GELU(BF16, bf16, , 8, 4)
GELU(BF16, bf16, _n4, 4, 8)
GELU(BF16, bf16, _n6, 6, 5)

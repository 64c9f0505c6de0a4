// rope.cu: rotary position embedding of q and k [tokens, heads·128] in one launch, rotate-half layout (RoPEFamily):
// within each head, for i < 64, out[i] = x[i]·cos[t,i] − x[i+64]·sin[t,i] and out[i+64] = x[i+64]·cos[t,i] +
// x[i]·sin[t,i], with the fp32 tables cos, sin [tokens, 64].
//
// rope_{f32,bf16}: the "slots" of a token are its q heads then its k heads (2·heads of them). A group of
// NJ = 64/E threads (E elements per 16-byte access) takes U slots of one token: thread j of the group holds
// elements jE … jE+E−1 of each half of each of its heads, so it loads its E cosines and sines once (16-byte
// loads, from L1/L2: every head of the token shares them) and then 2·U 16-byte vectors of q/k, all in flight
// together (128 bytes a thread), rotates them in fp32 and writes them back with 16-byte stores. The grid covers
// tokens × ⌈2·heads/U⌉ groups, one item per group; each group's threads read whole 128- or 256-byte halves of
// heads (coalesced). The naive chain (x1·cos, x2·sin, −, x2·cos, x1·sin, +, two copies into the halves) uses
// the generic eager kernels of eager.cu.
//
// This file is compiled twice: -arch=compute_75 to ptx/rope.ptx and -arch=compute_90 to ptx/rope_sm90.ptx, where
// bf16 results are rounded two at a time by cvt.rn.bf16x2.f32 (round to nearest even like f32_to_bf16; only a
// NaN's payload may differ); the launcher takes the sm_90 module on compute capability 9.0 and later.
#include "common.cuh"

// rope_put sets the E elements of o from f.
template <class P>
__device__ __forceinline__ void rope_put(P& o, const float* f) {
#pragma unroll
    for (int j = 0; j < P::E; j++) o.set(j, f[j]);
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <>
__device__ __forceinline__ void rope_put(Pack<BF16, true>& o, const float* f) {
    unsigned w[4];
#pragma unroll
    for (int k = 0; k < 4; k++) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[k]) : "f"(f[2 * k + 1]), "f"(f[2 * k]));
    o.raw = make_uint4(w[0], w[1], w[2], w[3]);
}
#endif

#define ROPE_HALF 64
#define ROPE_HEAD 128

template <class S, int U>
__device__ __forceinline__ void rope(const typename S::T* __restrict__ q, const typename S::T* __restrict__ k,
                                     const float* __restrict__ cs, const float* __restrict__ sn,
                                     typename S::T* __restrict__ qo, typename S::T* __restrict__ ko, long long tokens,
                                     long long heads) {
    typedef Pack<S, true> P;
    const int E = P::E, NJ = ROPE_HALF / E;
    const int j = threadIdx.x % NJ;
    const long long slots = 2 * heads, chunks = (slots + U - 1) / U;
    const long long item = (long long)blockIdx.x * (blockDim.x / NJ) + threadIdx.x / NJ;
    if (item >= tokens * chunks) return;
    const long long t = item / chunks;
    const long long s0 = (item - t * chunks) * U;
    // This thread's E cosines and sines: E/4 float4 each.
    float c[E], s[E];
    const float4* cv = reinterpret_cast<const float4*>(cs + t * ROPE_HALF + j * E);
    const float4* sv = reinterpret_cast<const float4*>(sn + t * ROPE_HALF + j * E);
#pragma unroll
    for (int i = 0; i < E / 4; i++) {
        const float4 a = __ldg(cv + i), b = __ldg(sv + i);
        c[4 * i] = a.x, c[4 * i + 1] = a.y, c[4 * i + 2] = a.z, c[4 * i + 3] = a.w;
        s[4 * i] = b.x, s[4 * i + 1] = b.y, s[4 * i + 2] = b.z, s[4 * i + 3] = b.w;
    }
    P lo[U], hi[U];
    const long long base = t * heads * ROPE_HEAD + j * E;  // element offset of this thread's head 0 in q or k
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long sl = s0 + u;
        if (sl < slots) {
            const typename S::T* x = (sl < heads ? q : k) + base + (sl < heads ? sl : sl - heads) * ROPE_HEAD;
            lo[u].load(x);
            hi[u].load(x + ROPE_HALF);
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long sl = s0 + u;
        if (sl < slots) {
            float fa[E], fb[E];
#pragma unroll
            for (int e = 0; e < E; e++) {
                const float x1 = lo[u].get(e), x2 = hi[u].get(e);
                fa[e] = x1 * c[e] - x2 * s[e];
                fb[e] = x2 * c[e] + x1 * s[e];
            }
            P a = P(), b = P();
            rope_put(a, fa);
            rope_put(b, fb);
            typename S::T* y = (sl < heads ? qo : ko) + base + (sl < heads ? sl : sl - heads) * ROPE_HEAD;
            a.store(y);
            b.store(y + ROPE_HALF);
        }
    }
}

// Entry points rope_{f32,bf16}: U = 4 slots a group (8 loads of 16 bytes in flight a thread); blocks of 256, at
// most 64 registers (4 blocks a multiprocessor). rope_bf16_m3: the same with up to 80 registers (3 blocks), so
// that the bf16 kernel's 16 table values need no spill.
#define ROPE(S, NAME, MINB)                                                                                        \
    extern "C" __global__ void __launch_bounds__(256, MINB)                                                        \
        rope_##NAME(const S::T* q, const S::T* k, const float* cs, const float* sn, S::T* qo, S::T* ko,           \
                    long long tokens, long long heads) {                                                           \
        rope<S, 4>(q, k, cs, sn, qo, ko, tokens, heads);                                                           \
    }
ROPE(F32, f32, 4)
ROPE(BF16, bf16, 4)
ROPE(BF16, bf16_m3, 3)

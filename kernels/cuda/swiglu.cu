// swiglu.cu: out = silu(gate) · up, where each row of the input [rows, 2·cols] holds gate (its first cols
// elements) then up; out is [rows, cols] (SwiGLUFamily).
//
// Elementwise over out, taken as one flat array of rows·cols/E packs (16-byte packs when cols % E == 0, else
// single elements): each block its own NV·blockDim packs, a thread's 2·NV loads (gate and up) all in flight
// before its first store. silu(g)·u = g·u / (1 + e^(−g)), with ex2.approx and rcp.approx. The naive chain
// (F.silu on the gate half, times the up half: strided views) uses the eager kernels of eager.cu.
#include "rowmap.cuh"

__device__ __forceinline__ float swiglu_f(float g, float u) { return g * u * rm_rcp(1.0f + rm_ex2(-g * KW_LOG2E)); }

// I is the index type: unsigned (faster division) when rows·cols/E < 2^32, else unsigned long long.
template <class S, bool V, int NV, class I>
__device__ __forceinline__ void swiglu_rows(const typename S::T* __restrict__ x, typename S::T* __restrict__ y,
                                            I total, I vpr) {
    typedef Pack<S, V> P;
    const int E = P::E;
    const I s = blockDim.x;
    const I base = (I)blockIdx.x * s * NV + threadIdx.x;
    P g[NV], u[NV];
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const I i = base + k * s;
        if (i < total) {
            const I r = i / vpr;
            const long long gi = ((long long)r * vpr + i) * E;  // (2r·vpr + (i − r·vpr))·E
            g[k].load(x + gi);
            u[k].load(x + gi + (long long)vpr * E);
        }
    }
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const I i = base + k * s;
        if (i < total) {
            float o[E];
#pragma unroll
            for (int j = 0; j < E; j++) o[j] = swiglu_f(g[k].get(j), u[k].get(j));
            rm_store<S, V>(o, y + (long long)i * E);
        }
    }
}

template <class S, bool V, int NV>
__device__ __forceinline__ void swiglu(const typename S::T* __restrict__ x, typename S::T* __restrict__ y,
                                       long long rows, long long cols) {
    const long long vpr = cols / Pack<S, V>::E, total = rows * vpr;
    if (total <= 0xfff00000LL)  // headroom: base + k·blockDim stays below 2^32
        swiglu_rows<S, V, NV, unsigned>(x, y, (unsigned)total, (unsigned)vpr);
    else
        swiglu_rows<S, V, NV, unsigned long long>(x, y, (unsigned long long)total, (unsigned long long)vpr);
}

// Entry points swiglu_{f32,bf16}_{v,s}(x, y, rows, cols): grid = ⌈(rows·cols/E) / (NV·blockDim)⌉ (at least 1),
// NV = 4 (v) or 8 (s). Both modules hold them: ptx/swiglu.ptx (compute_75) and ptx/swiglu_sm90.ptx (compute_90:
// bf16 outputs round with cvt.rn.bf16x2, see rm_store), which the launcher uses on sm_90.
#define SWIGLU(S, NAME, V, VN, NV)                                                                             \
    extern "C" __global__ void __launch_bounds__(256) swiglu_##NAME##_##VN(const S::T* x, S::T* y, long long rows, \
                                                                           long long cols) {                   \
        swiglu<S, V, NV>(x, y, rows, cols);                                                                    \
    }
SWIGLU(F32, f32, true, v, 4)
SWIGLU(F32, f32, false, s, 8)
SWIGLU(BF16, bf16, true, v, 4)
SWIGLU(BF16, bf16, false, s, 8)

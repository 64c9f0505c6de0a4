// common.cuh: device helpers shared by the harness's .cu files and the kernel families' (kernels/cuda, and any
// package's that puts this folder on nvcc's include path) — storage conversions that match the Go backends bit
// for bit, 16-byte packs, and warp and block reductions.
//
// Every .cu file is compiled on its own into one PTX module (see cuda.go):
//
//	nvcc -ptx -arch=compute_75 -o cuda/ptx/<family>.ptx cuda/<family>.cu
//
// Kernel parameters: the Go side (gorgonia.org/cu's Function.Launch) passes every parameter as 8 bytes, so a
// kernel declares only pointers, long long / unsigned long long and double parameters.
#pragma once

// Storage dtype codes: the values of the Go DType (dtype.go). 0 marks an immediate constant in eager views.
#define KW_CONST 0
#define KW_FP32 1
#define KW_BF16 2
#define KW_E4M3 3
#define KW_INT32 4

// bf16_to_f32 widens a bfloat16 bit pattern exactly (F32FromBF16).
__device__ __forceinline__ float bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

// f32_to_bf16 rounds to nearest, ties to even; NaN stays NaN, quiet, sign kept (BF16FromF32, bit for bit).
__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
    unsigned b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x0040u);
    return (unsigned short)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

// Storage formats of activations: the element type in memory and its conversions to and from fp32
// arithmetic. VEC is how many elements one 16-byte access holds.
struct F32 {
    typedef float T;
    enum { VEC = 4 };
    static __device__ __forceinline__ float get(T v) { return v; }
    static __device__ __forceinline__ T put(float f) { return f; }
};
struct BF16 {
    typedef unsigned short T;
    enum { VEC = 8 };
    static __device__ __forceinline__ float get(T v) { return bf16_to_f32(v); }
    static __device__ __forceinline__ T put(float f) { return f32_to_bf16(f); }
};

// Pack<S, V> is what one thread moves with one memory access: a 16-byte vector of S::VEC elements when V,
// else one element. get and set convert element j (a compile-time constant once loops are unrolled).
template <class S, bool V>
struct Pack;

template <class S>
struct Pack<S, false> {
    enum { E = 1 };
    typename S::T raw;
    __device__ __forceinline__ void load(const typename S::T* p) { raw = *p; }
    __device__ __forceinline__ void store(typename S::T* p) const { *p = raw; }
    __device__ __forceinline__ float get(int) const { return S::get(raw); }
    __device__ __forceinline__ void set(int, float f) { raw = S::put(f); }
};

template <>
struct Pack<F32, true> {
    enum { E = 4 };
    float4 raw;
    __device__ __forceinline__ void load(const float* p) { raw = *reinterpret_cast<const float4*>(p); }
    __device__ __forceinline__ void store(float* p) const { *reinterpret_cast<float4*>(p) = raw; }
    __device__ __forceinline__ float get(int j) const {
        return j == 0 ? raw.x : j == 1 ? raw.y : j == 2 ? raw.z : raw.w;
    }
    __device__ __forceinline__ void set(int j, float f) {
        if (j == 0) raw.x = f;
        else if (j == 1) raw.y = f;
        else if (j == 2) raw.z = f;
        else raw.w = f;
    }
};

template <>
struct Pack<BF16, true> {
    enum { E = 8 };
    uint4 raw;  // element 2k is the low half of word k (little-endian), 2k+1 the high half
    __device__ __forceinline__ void load(const unsigned short* p) { raw = *reinterpret_cast<const uint4*>(p); }
    __device__ __forceinline__ void store(unsigned short* p) const { *reinterpret_cast<uint4*>(p) = raw; }
    __device__ __forceinline__ unsigned word(int k) const {
        return k == 0 ? raw.x : k == 1 ? raw.y : k == 2 ? raw.z : raw.w;
    }
    __device__ __forceinline__ float get(int j) const {
        unsigned w = word(j >> 1);
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    }
    __device__ __forceinline__ void set(int j, float f) {
        unsigned h = f32_to_bf16(f);
        unsigned w = word(j >> 1);
        w = (j & 1) ? ((w & 0x0000ffffu) | (h << 16)) : ((w & 0xffff0000u) | h);
        switch (j >> 1) {
            case 0: raw.x = w; break;
            case 1: raw.y = w; break;
            case 2: raw.z = w; break;
            default: raw.w = w; break;
        }
    }
};

// warp_sum is the sum over the warp, in every lane (a fixed butterfly: deterministic).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// block_sum returns the block's sum in every thread. blockDim.x must be a multiple of 32; red holds 32 floats.
// Every warp reduces the per-warp sums in the same order, so the result is deterministic; the leading barrier
// makes back-to-back calls on the same red safe.
__device__ __forceinline__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    return warp_sum(lane < warps ? red[lane] : 0.0f);
}

__device__ __forceinline__ float block_max(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    return warp_max(lane < warps ? red[lane] : -__int_as_float(0x7f800000));
}

// KW_SLOWDOWN_BEGIN() and KW_SLOWDOWN_END() are where the kwslowdown variant (slowdown_cuda_test.go) slows a
// kernel by tens of cycles — finer than any extra launch, which is what a launch-bound decode kernel needs.
// Entry points put BEGIN first and END last. Compiled normally they are nothing; in a module compiled with
// -DKW_SLOWDOWN (cuda/ptx/<family>_slow.ptx) BEGIN reads kw_spin_cycles (its memory latency hidden behind the
// kernel's own loads: the barriers of the body keep the load before them) and at END thread 0 of each block
// spins that many clock cycles, which the block's end waits for.
#ifdef KW_SLOWDOWN
// kw_spin_cycles is 0 unless set at run time (cuModuleGetGlobal), or compiled in with -DKW_SPIN_CYCLES=N: the
// unrelated-change test (scripts/unrelated-change.sh) builds a variant whose only difference is one family's
// module compiled that way.
#ifndef KW_SPIN_CYCLES
#define KW_SPIN_CYCLES 0
#endif
__device__ long long kw_spin_cycles = KW_SPIN_CYCLES;
#define KW_SLOWDOWN_BEGIN() const long long kw_spin_n = kw_spin_cycles
#define KW_SLOWDOWN_END()                                                   \
    do {                                                                    \
        if (threadIdx.x == 0 && kw_spin_n > 0) {                            \
            const long long t0 = clock64();                                 \
            while (clock64() - t0 < kw_spin_n) {                            \
            }                                                               \
        }                                                                   \
    } while (0)
#else
#define KW_SLOWDOWN_BEGIN() \
    do {                \
    } while (0)
#define KW_SLOWDOWN_END() \
    do {              \
    } while (0)
#endif

// globaltimer reads the GPU's nanosecond clock.
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// A team is the `team` blocks that share one row: each adds its partial sum, and each gets the total, summed in
// part order (deterministic). It is a barrier between those blocks, so they must all be resident at once: the
// launcher sizes the grid from the occupancy and makes it a multiple of team. partials holds rows × team floats;
// count and gen one word per row, zero before the first launch (a sense-reversing barrier: the last block to
// arrive resets count and advances gen, so no reset between launches is needed). team_arrive and team_wait are
// called by thread 0 alone; between them the block may do other work (load its next row). A block that waits
// more than 2 s traps rather than hang the GPU.

// team_arrive publishes this block's partial sum s of row and returns the generation to wait past.
__device__ __forceinline__ unsigned team_arrive(float s, long long row, int part, int team, float* partials,
                                                unsigned* count, unsigned* gen) {
    const unsigned g0 = *(volatile unsigned*)(gen + row);
    partials[row * team + part] = s;
    __threadfence();
    if (atomicAdd(count + row, 1u) == (unsigned)team - 1) {
        count[row] = 0;
        __threadfence();
        atomicAdd(gen + row, 1u);
    }
    return g0;
}

// team_wait waits until every block of row's team has arrived and returns the team's total.
__device__ __forceinline__ float team_wait(unsigned g0, long long row, int team, const float* partials,
                                           const unsigned* gen) {
    const volatile unsigned* g = gen + row;
    if (*g == g0) {
        const unsigned long long t0 = globaltimer();
        while (*g == g0) {
            if (globaltimer() - t0 > 2000000000ull) __trap();
        }
    }
    __threadfence();
    float t = 0.0f;
    for (int i = 0; i < team; i++) t += __ldcg(partials + row * team + i);
    return t;
}

// team_sum is team_arrive and team_wait back to back, returning the total to every thread of the block.
__device__ float team_sum(float s, long long row, int part, int team, float* partials, unsigned* count,
                          unsigned* gen) {
    __shared__ float total;
    if (threadIdx.x == 0) total = team_wait(team_arrive(s, row, part, team, partials, count, gen), row, team, partials, gen);
    __syncthreads();
    return total;
}

// sequence.cuh: what the sequence families' kernels share (conv1d.cu, linearrecurrence.cu, rtu.cu; the Go side
// is sequence.go). Tensors are (batch, seq, width) row-major, a step's channels contiguous; resets are an int32
// (batch, seq) mask, 1 where an episode starts.
#pragma once
#include "common.cuh"

// RawOf<B>::T is a register type of B bytes, the width of one vector access.
template <int B>
struct RawOf;
template <>
struct RawOf<16> {
    typedef uint4 T;
};
template <>
struct RawOf<8> {
    typedef uint2 T;
};
template <>
struct RawOf<4> {
    typedef unsigned T;
};
template <>
struct RawOf<2> {
    typedef unsigned short T;
};

// Vec<S, V> is V consecutive elements of storage S moved with one access of V·sizeof(S::T) bytes (2 to 16; the
// address must be aligned to it), held as stored and converted element by element.
template <class S, int V>
struct Vec {
    typedef typename S::T T;
    typedef typename RawOf<V * sizeof(T)>::T Raw;
    union {
        Raw raw;
        T e[V];
    } u;
    __device__ __forceinline__ void load(const T* p) { u.raw = *reinterpret_cast<const Raw*>(p); }
    __device__ __forceinline__ void store(T* p) const { *reinterpret_cast<Raw*>(p) = u.raw; }
    __device__ __forceinline__ void zero() {
#pragma unroll
        for (int j = 0; j < V; j++) u.e[j] = S::put(0.0f);
    }
    __device__ __forceinline__ float get(int j) const { return S::get(u.e[j]); }
    __device__ __forceinline__ void set(int j, float f) { u.e[j] = S::put(f); }
};

// wait_flag spins until *flag reaches want (a block's predecessor has published), trapping after 2 s rather
// than hanging the GPU; thread 0 alone calls it.
__device__ __forceinline__ void wait_flag(const unsigned* flag, unsigned want) {
    const volatile unsigned* f = flag;
    if (*f >= want) return;
    const unsigned long long t0 = globaltimer();
    while (*f < want) {
        if (globaltimer() - t0 > 2000000000ull) __trap();
        __nanosleep(32);  // leave the issue slots to the warps that will publish
    }
}

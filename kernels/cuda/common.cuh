// common.cuh: the harness's device helpers (harness/cuda/common.cuh), under the name the suite's .cu files
// include them by.
#pragma once
#include "../../harness/cuda/common.cuh"

// st_v4 writes four words at global address p in one st.global.v4.b32 (sm_32_intrinsics' __stwb without its memory
// clobber): nvcc 11.8 splits a uint4 built word by word into four 4-byte stores, each a quarter of every sector a
// warp's store touches. st_v4_ordered keeps the clobber, for a store that the thread's later plain stores to the same
// bytes must follow (the cross-entropy's label column).
__device__ __forceinline__ void st_v4(void* p, unsigned a, unsigned b, unsigned c, unsigned d) {
    asm("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d));
}
__device__ __forceinline__ void st_v4_ordered(void* p, unsigned a, unsigned b, unsigned c, unsigned d) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// hopper.cuh: the sm_90a building blocks the wgmma modules share (wsgemm_sm90a.cu, wsattn_sm90a.cu): shared
// addresses, the mbarrier operations both use alike, the accumulator fence and bf16 packing. Included inside the
// modules' `__CUDA_ARCH__ == 900 && __CUDA_ARCH_FEAT_SM90_ALL` section; part of their recorded sources
// (ptx/sm90a.sum hashes local headers too).
#pragma once

__device__ __forceinline__ unsigned hp_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void hp_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void hp_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void hp_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// hp_fence keeps the compiler from moving reads or writes of the registers (accumulators, packed operands) across the point where it stands
// (wgmma reads and writes them asynchronously, between wgmma.fence and wgmma.wait_group).
template <int R>
__device__ __forceinline__ void hp_fence(float (&d)[R]) {
#pragma unroll
    for (int e = 0; e < R; e++) asm volatile("" : "+f"(d[e])::"memory");
}
template <int R>
__device__ __forceinline__ void hp_fence(unsigned (&d)[R]) {
#pragma unroll
    for (int e = 0; e < R; e++) asm volatile("" : "+r"(d[e])::"memory");
}

// hp_pack is (lo, hi) rounded to bf16, nearest even, lo in the low half (cvt.rn.bf16x2.f32 takes hi first).
__device__ __forceinline__ unsigned hp_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// HP_D4(i) is the asm operands of four accumulators d[i … i+3], read and written.
#define HP_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])

// mma_sm90a.cu: the Hopper tensor-core yardstick (wgmma_cuda.go, the CUDA backend's MeasureWGMMA), the wgmma
// twin of mma.cu. Compiled by the Hopper toolchain (CUDA 12.4, scripts/nvcc-hopper) for compute_90a to
// ptx/mma_sm90a.ptx, which the backend loads only on compute capability exactly 9.0: wgmma is an sm_90a
// feature, not forward compatible.
//
// wgmma_probe(out, iters): each block is WGMMA_PROBE_WARPGROUPS warpgroups of 128 threads; every warpgroup runs
// iters rounds of WGMMA_PROBE_BATCH dense wgmma.mma_async.m64n256k16.f32.bf16.bf16 into one set of fp32
// accumulators (128 registers a thread), A (64 × 16) and B (256 × 16) from shared memory, filled once; no other
// memory traffic but one store per thread at the end, which keeps the compiler from dropping the loop. One
// commit group a round, at most one group in flight behind the one being issued (wait_group 1), as a GEMM main
// loop keeps the tensor cores fed. FLOPs: gridDim · WGMMA_PROBE_WARPGROUPS · iters · WGMMA_PROBE_BATCH ·
// 2·64·256·16.
//
// Shared-memory operands, K-major without swizzle: 8 × 8 bf16 core matrices of 128 contiguous bytes, the two of
// a k16 row group 128 bytes apart (leading byte offset), row groups 256 bytes apart (stride byte offset). The
// values are small and varied, not zeros: the tensor cores' power, and with it their clock, depends on them.
//
// Self-contained (no common.cuh): the PTX is recorded against the hash of its sources (ptx/sm90a.sum), and a
// change to a shared header would otherwise ask for the Hopper toolchain to regenerate a probe it does not
// affect.

#define WGMMA_PROBE_WARPGROUPS 2
#define WGMMA_PROBE_BATCH 8

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// probe_bf16 is f's upper 16 bits: bf16 by truncation, enough for probe data.
__device__ __forceinline__ unsigned short probe_bf16(float f) { return (unsigned short)(__float_as_uint(f) >> 16); }

// wgmma_desc is the shared-memory matrix descriptor of an operand at shared address addr, no swizzle: bits
// 0–13 the address, 16–29 the leading byte offset, 32–45 the stride byte offset, each in 16-byte units.
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
           ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32);
}

// wgmma_m64n256k16 is d += A · B for the warpgroup: A 64 × 16 and B 256 × 16 (K-major) from shared memory, d
// this thread's 128 fp32 accumulators of the 64 × 256 tile.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1));  // scale-d true: d += A·B
}

extern "C" __global__ void __launch_bounds__(128 * WGMMA_PROBE_WARPGROUPS, 1)
    wgmma_probe(float* out, long long iters) {
    __shared__ __align__(128) unsigned short sa[64 * 16];
    __shared__ __align__(128) unsigned short sb[256 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) sa[i] = probe_bf16(0.25f + (i & 63) / 256.0f);
    for (int i = threadIdx.x; i < 256 * 16; i += blockDim.x) sb[i] = probe_bf16(0.125f + (i % 61) / 512.0f);
    // Ordinary stores that the tensor cores (the async proxy) read next: the proxy fence, then the barrier.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();

    float d[128];
#pragma unroll
    for (int e = 0; e < 128; e++) d[e] = 0.0f;
    const unsigned long long da = wgmma_desc((unsigned)__cvta_generic_to_shared(sa), 128, 256), db = wgmma_desc((unsigned)__cvta_generic_to_shared(sb), 128, 256);
    for (long long it = 0; it < iters; it++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < WGMMA_PROBE_BATCH; j++) wgmma_m64n256k16(d, da, db);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < 128; e++) s += d[e];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif

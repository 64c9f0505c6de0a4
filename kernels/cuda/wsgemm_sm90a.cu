// wsgemm_sm90a.cu: a skeleton of a Hopper GEMM, y[M, N] = x[M, K] · w[N, K]ᵀ in bf16 with fp32 accumulation
// (GEMMFamily's layout), warp-specialized: written offline, compiled and register-checked (ptxas -arch=sm_90a
// -v) but not yet run on a GPU, and not wired to a launcher — the module has a name of its own so that the
// GEMM family does not load it (cuda.go, Load).
//
// One block computes a BM × BN = 128 × 128 tile with three warpgroups:
//   - warpgroup 0, the producer: one thread streams the k-tiles of x and w (BK = 64 bf16 = 128 bytes a row)
//     into a STAGES-deep ring of shared memory with the bulk tensor copy engine (cp.async.bulk.tensor.2d,
//     tensor maps by value as __grid_constant__ parameters, 128-byte swizzle, zero fill past M, N and K),
//     each stage completing on its "full" mbarrier by transaction count; it waits on the stage's "empty"
//     mbarrier before refilling it.
//   - warpgroups 1 and 2, the consumers: rows 0–63 and 64–127 of the tile; each waits on a stage's full
//     barrier, runs BK/16 wgmma.m64n128k16 on it from shared memory (descriptors with the same 128-byte
//     swizzle), waits for them, and each of its warps arrives on the stage's empty barrier.
// setmaxnreg moves registers from the producer (40) to the consumers (232), with __launch_bounds__(384, 1)
// giving the cap it needs at entry. The epilogue stores the accumulators to y directly, masked at M and N.
//
// Host side, still to write: tensor maps from cuTensorMapEncodeTiled (driver API of CUDA 12; the cgo build's
// 11.8 cuda.h lacks it, so through the driver library's symbol at run time) for x (K × M, box 64 × 128) and w
// (K × N, box 64 × 128), bf16, CU_TENSOR_MAP_SWIZZLE_128B; cuFuncSetAttribute for the dynamic shared memory
// (STAGES · 32 KiB + barriers); grid ⌈M/128⌉ × ⌈N/128⌉ blocks of 384 threads. K must be a multiple of 8 (the
// tensor map's 16-byte row stride).
//
// Self-contained (no common.cuh), as mma_sm90a.cu and for the same reason: its PTX is recorded against its
// sources' hash (ptx/sm90a.sum).

#define WS_BM 128
#define WS_BN 128
#define WS_BK 64
#define WS_STAGES 4
#define WS_TILE_BYTES (WS_BM * WS_BK * 2)              // one operand's k-tile: 16 KiB
#define WS_STAGE_BYTES (2 * WS_TILE_BYTES)             // x and w: 32 KiB
#define WS_SMEM_BYTES (WS_STAGES * WS_STAGE_BYTES + 1024)  // + the barriers, + alignment slack

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include <cuda.h>  // CUtensorMap

__device__ __forceinline__ unsigned ws_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void ws_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void ws_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ws_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// ws_mbar_wait spins until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void ws_mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WS_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WS_WAIT;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// ws_tma_load copies the box at (c0, c1) (innermost first: k, then the row) of tensor map tm into shared dst,
// completing on barrier bar.
__device__ __forceinline__ void ws_tma_load(unsigned dst, const CUtensorMap* tm, int c0, int c1, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            dst),
        "l"(tm), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

// ws_desc is the wgmma descriptor of a K-major operand tile at shared address addr laid out by the copy
// engine's 128-byte swizzle: rows of 128 bytes, 8-row core-matrix groups 1024 bytes apart (stride byte
// offset), layout type 1 (128-byte swizzle) in bits 62–63; the leading byte offset is unused by this layout.
__device__ __forceinline__ unsigned long long ws_desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

// ws_wgmma is d += A · Bᵀ for the warpgroup, m64n128k16: A 64 × 16 and B 128 × 16 (both K-major) from shared
// memory, d this thread's 64 fp32 accumulators.
__device__ __forceinline__ void ws_wgmma(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(1));
}

// ws_fence_operands keeps the compiler from moving reads or writes of the accumulators across the point where
// it stands (wgmma reads and writes them asynchronously, between wgmma.fence and wgmma.wait_group).
__device__ __forceinline__ void ws_fence_operands(float (&d)[64]) {
#pragma unroll
    for (int e = 0; e < 64; e++) asm volatile("" : "+f"(d[e])::"memory");
}

// ws_bf16 rounds f to bf16, nearest even (NaN not special-cased: accumulators of finite inputs).
__device__ __forceinline__ unsigned short ws_bf16(float f) {
    const unsigned u = __float_as_uint(f);
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

extern "C" __global__ void __launch_bounds__(384, 1)
    wsgemm_bf16(const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmw,
                unsigned short* __restrict__ y, long long M, long long N, long long K) {
    extern __shared__ __align__(1024) unsigned char ws_smem_raw[];
    // Stages at a 1024-byte boundary (the 128-byte swizzle's period), the barriers after them.
    unsigned char* smem = (unsigned char*)(((unsigned long long)ws_smem_raw + 1023) & ~1023ull);
    unsigned long long* bars = (unsigned long long*)(smem + WS_STAGES * WS_STAGE_BYTES);
    const unsigned sbase = ws_smem(smem), full = ws_smem(bars), empty = full + 8 * WS_STAGES;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const long long m0 = (long long)blockIdx.x * WS_BM, n0 = (long long)blockIdx.y * WS_BN;
    const int ktiles = (int)((K + WS_BK - 1) / WS_BK);

    if (threadIdx.x == 0) {
        for (int s = 0; s < WS_STAGES; s++) {
            ws_mbar_init(full + 8 * s, 1);   // the producer's arrive.expect_tx; the bytes complete it
            ws_mbar_init(empty + 8 * s, 8);  // one arrive per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            for (int kt = 0; kt < ktiles; kt++) {
                const int s = kt % WS_STAGES;
                if (kt >= WS_STAGES) ws_mbar_wait(empty + 8 * s, ((kt / WS_STAGES) - 1) & 1);
                const unsigned dst = sbase + s * WS_STAGE_BYTES;
                ws_mbar_expect_tx(full + 8 * s, WS_STAGE_BYTES);
                ws_tma_load(dst, &tmx, kt * WS_BK, (int)m0, full + 8 * s);
                ws_tma_load(dst + WS_TILE_BYTES, &tmw, kt * WS_BK, (int)n0, full + 8 * s);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int half = wg - 1;  // rows 64·half … 64·half + 63 of the tile
        float d[64];
#pragma unroll
        for (int e = 0; e < 64; e++) d[e] = 0.0f;
        for (int kt = 0; kt < ktiles; kt++) {
            const int s = kt % WS_STAGES;
            ws_mbar_wait(full + 8 * s, (kt / WS_STAGES) & 1);
            const unsigned a = sbase + s * WS_STAGE_BYTES + half * 64 * 128, b = sbase + s * WS_STAGE_BYTES + WS_TILE_BYTES;
            ws_fence_operands(d);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < WS_BK / 16; kk++) ws_wgmma(d, ws_desc(a + 32 * kk), ws_desc(b + 32 * kk));
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            ws_fence_operands(d);
            if (tid % 32 == 0) ws_mbar_arrive(empty + 8 * s);  // this warp has read the stage
        }
        // Accumulator layout of m64nNk16: warp w of the warpgroup holds rows 16w + lane/4 (+8); register
        // 4i + j is column 8i + 2·(lane%4) + (j & 1), row + 8 for j ≥ 2.
        const int warp = tid / 32, lane = tid % 32;
        const long long r0 = m0 + half * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int i = 0; i < WS_BN / 8; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const long long r = r0 + (j >> 1) * 8, c = n0 + 8 * i + 2 * (lane % 4) + (j & 1);
                if (r < M && c < N) y[r * N + c] = ws_bf16(d[4 * i + j]);
            }
    }
}
#endif

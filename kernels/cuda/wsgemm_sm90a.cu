// wsgemm_sm90a.cu: the GEMM family's Hopper kernels, y[M, N] = x[M, K] · w[N, K]ᵀ in bf16 with fp32
// accumulation (GEMMFamily's layout), on wgmma and the bulk tensor copy engine (TMA), warp-specialized and
// persistent. Compiled by the Hopper toolchain (CUDA 12.4, scripts/nvcc-hopper) for compute_90a; the backend
// loads the module only on compute capability exactly 9.0, and the GEMM family's launcher (gemm_cuda.go,
// gemmFusedCUDA → wsgemm_cuda.go, wsGEMM) launches it there while the pending switch allows (wsgemm.go:
// gemmUsesWGMMA; the kernel is wsChoosePlan's).
//
// Kernel wsgemm_bf16_<BM>x<BN>_c<C><share>: a block of 384 threads computes BM × BN = 128 × BN output tiles
// (BN: 256, 232, 192 or 128), one after another (a persistent grid of at most one block a multiprocessor):
//   - warpgroup 0, the producer: one thread streams the k-tiles of x and w (BK = 64 bf16 = 128 bytes a row)
//     into a STAGES-deep ring of shared memory (as many stages as fit) with cp.async.bulk.tensor.2d (tensor
//     maps by value as __grid_constant__ parameters, 128-byte swizzle, zero fill past M, N and K); each stage
//     completes on its "full" mbarrier by transaction count. Before refilling a stage it waits on the stage's
//     "empty" mbarrier. It runs ahead into the next tile while the consumers store this one.
//   - warpgroups 1 and 2, the consumers: rows 0–63 and 64–127 of the tile, each m64 × BN of fp32 accumulators
//     in registers (BN/2 a thread); for each stage they run BK/16 wgmma.m64nBNk16 from shared memory, commit,
//     and release the previous stage once its group has completed (wgmma.wait_group 1), so the tensor cores
//     always have the next group queued. The epilogue rounds to bf16 and stores from registers, 4-byte pairs,
//     masked at M and N (and element by element where N is odd).
// setmaxnreg moves registers from the producer (40) to the consumers (232); __launch_bounds__(384, 1) gives
// the cap it needs at entry.
//
// Clusters (C = 2): a pair of blocks works on two neighbouring tiles that share one operand — "b": tiles
// (m, n) and (m+1, n) share w's k-tile, "a": tiles (m, n) and (m, n+1) share x's. Each block loads half of
// the shared operand and multicasts it to both (cp.async.bulk.tensor ….multicast::cluster), so the pair reads
// it from L2 once. A stage is then refilled only when the consumers of both blocks have released it: each
// consumer warpgroup arrives on the stage's empty barrier in both blocks (mapa, shared::cluster).
//
// Tile order: tile t of the persistent loop (t = block or cluster, + the grid's size each round) is taken in
// groups of `group` tile rows (of pairs along M for share "b"), column by column within a group, so that the
// tiles a wave runs at once read the same rows of x and columns of w from L2.
//
// Shared memory: STAGES × (BM + BN) × BK × 2 bytes of operands at a 1024-byte boundary (the swizzle's period),
// + 1024 bytes of alignment slack; the barriers are static. The launcher's wsgemmSmem is the same sum.
//
// Kernel wsgemm_gelu_bf16_128x<BN>_c1 (single blocks only): the same GEMM with the FFN's tanh GELU applied to
// the fp32 accumulators before they are rounded to bf16 (ws_gelu, mma.cuh's mma_gelu operation for operation):
// the FFN's FC1 on cc 9.0 while its pending switch allows (wsffn.go: ffnUsesWGMMA). Kernel
// wsgemm_swiglu_bf16_128x<BN>_c1 (BN 256, 192, 128): SwiGLU's FC1 as one GEMM, the B tile W_gate's rows
// n0 … n0 + BN/2 and W_up's same rows from two tensor maps, each thread holding the gate and the up
// accumulator of the same units (WS_ACT_SWIGLU), writing silu(gate)·up (mma_silu), BN/2 columns a tile.
// Neither has run on a GPU yet.
//
// No common.cuh (the compute_75 modules' header): only hopper.cuh, the building blocks it shares with the other
// wgmma module; its PTX is recorded against the hash of its sources, headers included (ptx/sm90a.sum).

#define WS_BM 128
#define WS_BK 64

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include <cuda.h>  // CUtensorMap

#include "hopper.cuh"

// ws_mbar_arrive_cluster arrives on the barrier at shared address bar of block `rank` of the cluster (this
// block's own rank included). The default semantics (release at CTA scope), as for every barrier here: what a
// consumer's arrive orders is its warpgroup's wgmma reads of the stage, which wait_group has completed, and
// .release.cluster would put a MEMBAR.ALL.GPU before every arrive (half the rate, measured on an H100).
__device__ __forceinline__ void ws_mbar_arrive_cluster(unsigned bar, unsigned rank) {
    asm volatile(
        "{\n"
        ".reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
        "}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
// ws_mbar_wait spins until the barrier's phase of parity `parity` has completed (default semantics, acquire
// at CTA scope: .acquire.cluster would invalidate L1 after every wait).
__device__ __forceinline__ void ws_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// ws_cluster_sync: every thread of the cluster's blocks (barrier.cluster, release/acquire).
__device__ __forceinline__ void ws_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned ws_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
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
// ws_tma_multicast is ws_tma_load into the same shared offset of every block of the cluster in mask, each
// completing on its own barrier at bar's offset.
__device__ __forceinline__ void ws_tma_multicast(unsigned dst, const CUtensorMap* tm, int c0, int c1, unsigned bar,
                                                 unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(tm), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}

// ws_desc is the wgmma descriptor of a K-major operand tile at shared address addr laid out by the copy
// engine's 128-byte swizzle: rows of 128 bytes, 8-row core-matrix groups 1024 bytes apart (stride byte
// offset), layout type 1 (128-byte swizzle) in bits 62–63; the leading byte offset is unused by this layout.
// Stepping k by 16 within the 128-byte row adds 32 bytes to the address (the swizzle is applied to the
// address bits the hardware computes, the tile being 1024-byte aligned).
__device__ __forceinline__ unsigned long long ws_desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

// ws_mma is d += A · Bᵀ for the warpgroup, m64nNk16 with N = 2 · len(d): A 64 × 16 and B N × 16 (both K-major)
// from shared memory, d this thread's fp32 accumulators. One overload per tile width.
__device__ __forceinline__ void ws_mma(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60),
          HP_D4(64), HP_D4(68), HP_D4(72), HP_D4(76), HP_D4(80), HP_D4(84), HP_D4(88), HP_D4(92),
          HP_D4(96), HP_D4(100), HP_D4(104), HP_D4(108), HP_D4(112), HP_D4(116), HP_D4(120), HP_D4(124)
        : "l"(da), "l"(db), "r"(1));
}
__device__ __forceinline__ void ws_mma(float (&d)[116], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %118, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n232k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115"
        "}, %116, %117, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60),
          HP_D4(64), HP_D4(68), HP_D4(72), HP_D4(76), HP_D4(80), HP_D4(84), HP_D4(88), HP_D4(92),
          HP_D4(96), HP_D4(100), HP_D4(104), HP_D4(108), HP_D4(112)
        : "l"(da), "l"(db), "r"(1));
}
__device__ __forceinline__ void ws_mma(float (&d)[96], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60),
          HP_D4(64), HP_D4(68), HP_D4(72), HP_D4(76), HP_D4(80), HP_D4(84), HP_D4(88), HP_D4(92)
        : "l"(da), "l"(db), "r"(1));
}
__device__ __forceinline__ void ws_mma(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void ws_mma(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28)
        : "l"(da), "l"(db), "r"(1));
}

// ws_tma_store copies the 64 × 64 box at shared src (laid out by the 128-byte swizzle) to (c0, c1) (column,
// row) of tensor map tm, in this thread's current bulk group; the copy engine clips what lies past the tensor.
__device__ __forceinline__ void ws_tma_store(const CUtensorMap* tm, int c0, int c1, unsigned src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(tm), "r"(c0),
                 "r"(c1), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void ws_bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// ws_bulk_wait_read: at most N of this thread's bulk groups still reading their shared source.
template <int N>
__device__ __forceinline__ void ws_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// ws_wg_sync: the 128 threads of consumer warpgroup `half` (named barrier 1 + half; 0 is __syncthreads').
__device__ __forceinline__ void ws_wg_sync(int half) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + half) : "memory");
}


// WS_STAGES is how many stages of BN-wide tiles fit 227 KiB beside the alignment slack, the static kilobyte
// (the barriers, padded by the dynamic array's 1024-byte alignment) and EPI bytes of epilogue buffers, at most 8.
#define WS_STAGE_BYTES(BN) ((WS_BM + (BN)) * WS_BK * 2)
#define WS_STAGES(BN, EPI) \
    ((227 * 1024 - 2048 - (EPI)) / WS_STAGE_BYTES(BN) < 8 ? (227 * 1024 - 2048 - (EPI)) / WS_STAGE_BYTES(BN) : 8)
// The store epilogue's buffers: two 64 × 64 bf16 boxes (8 KiB) per consumer warpgroup, one filling while the
// copy engine reads the other.
#define WS_EPI_BOX 8192
#define WS_EPI_BYTES (4 * WS_EPI_BOX)

// Epilogues: what the fp32 accumulators become before they are rounded to bf16 (the FFN's FC1, ffn.go).
#define WS_ACT_NONE 0
#define WS_ACT_GELU 1  // the tanh form, x·σ(2u) with u = √(2/π)·(x + 0.044715·x³): mma.cuh's mma_gelu
// silu(gate) · up: the B tile is W_gate's rows n0 … n0 + BN/2 then W_up's same rows (two tensor maps), and the
// tile is BN/2 output columns wide. In the m64nNk16 accumulator layout (below) register 4i + j of a thread is
// column 8i + 2·(lane%4) + (j & 1), so register e + BN/4 is column + BN/2 of the same row: with BN/2 a multiple
// of 8, a thread holds the gate (e < BN/4) and the up value (e + BN/4) of the same unit.
#define WS_ACT_SWIGLU 2

// ws_gelu is mma.cuh's mma_gelu (the mma.sync FFN's epilogue), operation for operation.
__device__ __forceinline__ float ws_gelu(float x) {
    const float k0 = -2.0f * 0.7978845608028654f, k1 = k0 * 0.044715f;
    return x / (1.0f + __expf(x * fmaf(k1, x * x, k0)));
}
// ws_silu is mma.cuh's mma_silu.
__device__ __forceinline__ float ws_silu(float x) { return x / (1.0f + __expf(-x)); }

// ws_ring is where a block's shared-memory ring stands: the stages' base, the full and empty barriers, and the
// running k-tile count it (stage it % STAGES, phase it / STAGES).
struct ws_ring {
    unsigned sbase, full, empty;
    int it;
};

// ws_mainloop accumulates one tile's k-tiles into d (TN/2 fp32 a thread: m64 × TN for consumer warpgroup
// half), from the ring's stages as the producer fills them, releasing each stage (in every block of the
// cluster) once the wgmma group that read it has completed.
template <int TN, int STAGES, int STAGE_BYTES, int C>
__device__ __forceinline__ void ws_mainloop(float (&d)[TN / 2], ws_ring& ring, int half, int tid, int ktiles) {
    constexpr int A_BYTES = WS_BM * WS_BK * 2;
#pragma unroll
    for (int e = 0; e < TN / 2; e++) d[e] = 0.0f;
    for (int kt = 0; kt < ktiles; kt++, ring.it++) {
        const int s = ring.it % STAGES;
        ws_mbar_wait(ring.full + 8 * s, (ring.it / STAGES) & 1);
        const unsigned a = ring.sbase + s * STAGE_BYTES + half * 64 * 128, b = ring.sbase + s * STAGE_BYTES + A_BYTES;
        hp_fence(d);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < WS_BK / 16; kk++) ws_mma(d, ws_desc(a + 32 * kk), ws_desc(b + 32 * kk));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        // The previous stage's group has completed: release that stage (in every block of the cluster).
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        hp_fence(d);
        if (kt > 0 && tid == 0) {
            const int ps = (ring.it + STAGES - 1) % STAGES;
            if (C == 1)
                hp_mbar_arrive(ring.empty + 8 * ps);
            else
                for (unsigned r = 0; r < C; r++) ws_mbar_arrive_cluster(ring.empty + 8 * ps, r);
        }
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    hp_fence(d);
    if (ktiles > 0 && tid == 0) {
        const int ps = (ring.it + STAGES - 1) % STAGES;
        if (C == 1)
            hp_mbar_arrive(ring.empty + 8 * ps);
        else
            for (unsigned r = 0; r < C; r++) ws_mbar_arrive_cluster(ring.empty + 8 * ps, r);
    }
}

// ws_activate applies the epilogue's activation to the accumulators of a TN-wide tile in place; for swiglu the
// first TN/4 registers become silu(gate)·up, the output.
template <int ACT, int R>
__device__ __forceinline__ void ws_activate(float (&d)[R]) {
    if (ACT == WS_ACT_GELU) {
#pragma unroll
        for (int e = 0; e < R; e++) d[e] = ws_gelu(d[e]);
    }
    if (ACT == WS_ACT_SWIGLU) {
#pragma unroll
        for (int e = 0; e < R / 2; e++) d[e] = ws_silu(d[e]) * d[e + R / 2];
    }
}

// ws_store_regs writes the first RO accumulators of a thread (rows m0 + 64·half … + 63, columns n0 … n0 +
// 2·RO − 1 of y) from registers, 4-byte pairs, masked at M and N (element by element where N is odd).
// Accumulator layout of m64nNk16: warp w of the warpgroup holds rows 16w + lane/4 (+8); register 4i + j is
// column 8i + 2·(lane%4) + (j & 1), row + 8 for j ≥ 2.
template <int RO, int R>
__device__ __forceinline__ void ws_store_regs(const float (&d)[R], unsigned short* __restrict__ y, long long M,
                                              long long N, long long m0, long long n0, int half, int tid) {
    constexpr int ON = 2 * RO;
    const int warp = tid / 32, lane = tid % 32;
    const long long r0 = m0 + half * 64 + warp * 16 + lane / 4, c0 = n0 + 2 * (lane % 4);
    if (m0 + WS_BM <= M && n0 + ON <= N && N % 2 == 0) {
        unsigned short* p = y + r0 * N + c0;
#pragma unroll
        for (int i = 0; i < RO / 4; i++) {
            *(unsigned*)(p + 8 * i) = hp_pack(d[4 * i], d[4 * i + 1]);
            *(unsigned*)(p + 8 * N + 8 * i) = hp_pack(d[4 * i + 2], d[4 * i + 3]);
        }
    } else {
#pragma unroll
        for (int i = 0; i < RO / 4; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const long long r = r0 + 8 * h, c = c0 + 8 * i;
                if (r >= M || c >= N) continue;
                const unsigned v = hp_pack(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
                if (c + 1 < N && N % 2 == 0) {
                    *(unsigned*)(y + r * N + c) = v;
                } else {
                    y[r * N + c] = (unsigned short)v;
                    if (c + 1 < N) y[r * N + c + 1] = (unsigned short)(v >> 16);
                }
            }
    }
}

// ws_store_tma writes the first RO accumulators of a thread (as ws_store_regs) through shared memory: for
// each 64-column chunk the warpgroup rounds its 64 × 64 values to bf16 into one of its two 8 KiB boxes (ebuf,
// ebuf + 8 KiB; *ec counts its chunks, choosing the box), laid out by the 128-byte swizzle so that a warp's
// 8 rows × 16 bytes land in 8 distinct bank groups, and its first thread hands the box to the copy engine
// (tmy: y, boxes of 64 × 64, clipped at M and N), which stores it while the warpgroup goes on — to the next
// chunk, and then to the next tile's main loop. Before a box is refilled its store from two chunks ago must
// have read it (bulk wait_group.read 1).
template <int RO, int R>
__device__ __forceinline__ void ws_store_tma(const float (&d)[R], const CUtensorMap* tmy, unsigned ebuf,
                                             long long m0, long long n0, int half, int tid, int& ec) {
    static_assert(RO % 32 == 0, "whole 64-column chunks");
    const int warp = tid / 32, lane = tid % 32, q = lane % 4, rr = lane / 4;
#pragma unroll
    for (int c = 0; c < RO / 32; c++) {
        const unsigned buf = ebuf + (ec & 1) * WS_EPI_BOX;
        if (tid == 0) ws_bulk_wait_read<1>();
        ws_wg_sync(half);
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int row = warp * 16 + 8 * h + rr;  // row % 8 == rr
                const unsigned addr = buf + row * 128 + ((i ^ rr) << 4) + 4 * q;
                const int e = 4 * (8 * c + i) + 2 * h;
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(hp_pack(d[e], d[e + 1])) : "memory");
            }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        ws_wg_sync(half);
        if (tid == 0) {
            ws_tma_store(tmy, (int)(n0 + 64 * c), (int)(m0 + 64 * half), buf);
            ws_bulk_commit();
        }
        ec++;
    }
}

// ws_kpart is one part of a tile of the split last wave computed in `parts` parts along K: each part leaves its
// fp32 accumulators in its slot of the workspace (slot0 + part · 256 · R floats: float4 e of consumer thread
// c at 4 · (256 · e + c), so that a warp's stores are contiguous), and the part that arrives last on the tile's
// counter sums the slots in part order — the same sum whichever part is last — and stores the tile. The last
// part also sets the counter back to zero, as the launcher's cleared workspace left it.
struct ws_kpart {
    float* slot0;
    int* count;
    int part, parts;
};

// ws_kreduce leaves this part's accumulators in its slot and reports whether it was the tile's last part; the
// last one returns with d the sum of every part's accumulators.
template <int R>
__device__ __forceinline__ bool ws_kreduce(float (&d)[R], const ws_kpart& kp, int half, int tid) {
    __shared__ int ws_last;
    const int c = half * 128 + tid;
    float4* slots = (float4*)kp.slot0;
    float4* own = slots + (long long)kp.part * 64 * R;  // 256 · R floats a slot
#pragma unroll
    for (int e = 0; e < R / 4; e++) __stcg(own + 256 * e + c, make_float4(d[4 * e], d[4 * e + 1], d[4 * e + 2], d[4 * e + 3]));
    __threadfence();
    asm volatile("bar.sync 3, 256;\n" ::: "memory");  // both consumer warpgroups' stores are fenced
    if (c == 0) {
        const int last = atomicAdd(kp.count, 1) == kp.parts - 1;
        if (last) atomicExch(kp.count, 0);
        ws_last = last;
    }
    asm volatile("bar.sync 3, 256;\n" ::: "memory");
    if (!ws_last) return false;
    __threadfence();
    // The sum in part order, this part's own slot read back like the others' (so the sum is the same whichever
    // part is last): a pass a part, its loads independent of one another, so that they are in flight together
    // (not one L2 round trip per float4 behind the previous add).
#pragma unroll
    for (int e = 0; e < R / 4; e++) {
        const float4 v = __ldcg(slots + 256 * e + c);
        d[4 * e] = v.x, d[4 * e + 1] = v.y, d[4 * e + 2] = v.z, d[4 * e + 3] = v.w;
    }
    for (int p = 1; p < kp.parts; p++) {
        const float4* sp = slots + (long long)p * 64 * R;
#pragma unroll
        for (int e = 0; e < R / 4; e++) {
            const float4 v = __ldcg(sp + 256 * e + c);
            d[4 * e] += v.x, d[4 * e + 1] += v.y, d[4 * e + 2] += v.z, d[4 * e + 3] += v.w;
        }
    }
    return true;
}

// ws_tile computes one TN-wide tile (TN = BN, or a narrow tile of the last wave) — or, with kp, one part of it
// along K — for consumer warpgroup half and stores it: through shared memory and the copy engine when tstore,
// else from registers.
template <int TN, int STAGES, int STAGE_BYTES, int C, int ACT, bool ST>
__device__ __forceinline__ void ws_tile(ws_ring& ring, int half, int tid, int ktiles, const CUtensorMap* tmy,
                                        unsigned short* __restrict__ y, long long M, long long N, long long m0,
                                        long long n0, bool tstore, unsigned ebuf, int& ec, const ws_kpart* kp) {
    constexpr int R = TN / 2;
    constexpr int RO = ACT == WS_ACT_SWIGLU ? R / 2 : R;
    float d[R];
    ws_mainloop<TN, STAGES, STAGE_BYTES, C>(d, ring, half, tid, ktiles);
    if constexpr (ST) {
        if (kp != nullptr && !ws_kreduce(d, *kp, half, tid)) return;
    }
    ws_activate<ACT>(d);
    if constexpr (ST && RO % 32 == 0) {
        if (tstore) {
            ws_store_tma<RO>(d, tmy, ebuf, m0, n0, half, tid, ec);
            return;
        }
    }
    ws_store_regs<RO>(d, y, M, N, m0, n0, half, tid);
}

// wsgemm is the kernel body: BN the tile width, C the cluster size (1 or 2), SHARE_B whether a pair shares w
// (pair along M) rather than x (pair along N), ACT the epilogue (WS_ACT_*), ST the store kernels' extras (the
// _st entry points): the store epilogue through shared memory (when tstore; tmy is y's map) and the last
// wave's split: its `tail` tiles (the last ones in tile order) run as `split` units each, so that the last
// wave has split × tail smaller units instead of tail tiles and finishes sooner when tail is a small part of
// the grid. Along N (ksplit 0; not swiglu) a unit is a tile BN/split wide, whose w boxes come from tm3 (w's
// map with boxes of BN/split rows); along K (ksplit 1) it is the whole tile over a split-th of the k-tiles,
// summed through the fp32 workspace ws (tail · split slots of 128 · BN floats) and the counters cnt (tail,
// zero before the launch and after it: ws_kpart). tm3 is W_up's map for WS_ACT_SWIGLU (tmw then W_gate's).
template <int BN, int C, bool SHARE_B, int ACT = WS_ACT_NONE, bool ST = false>
__device__ __forceinline__ void wsgemm(const CUtensorMap* tmx, const CUtensorMap* tmw, const CUtensorMap* tm3,
                                       const CUtensorMap* tmy, unsigned short* __restrict__ y, long long M,
                                       long long N, long long K, long long group, long long tail, long long split,
                                       bool tstore, bool ksplit, float* ws, int* cnt) {
    constexpr int EPI = ST ? WS_EPI_BYTES : 0;
    constexpr int STAGES = WS_STAGES(BN, EPI);
    constexpr int A_BYTES = WS_BM * WS_BK * 2;   // 16 KiB
    constexpr int B_BYTES = BN * WS_BK * 2;      // BN · 128
    constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr bool SWIGLU = ACT == WS_ACT_SWIGLU;
    constexpr int ON = SWIGLU ? BN / 2 : BN;     // output columns of a tile
    static_assert(!SWIGLU || (C == 1 && (BN / 2) % 8 == 0), "swiglu: single blocks, gate and up on swizzle groups");
    // The shared operand's part that each block of a pair loads: a whole number of 8-row swizzle groups.
    static_assert(C == 1 || (SHARE_B ? (BN / 2) % 8 == 0 : (WS_BM / 2) % 8 == 0), "split on a swizzle group");
    static_assert(B_BYTES % 1024 == 0, "B tile on the swizzle period");
    static_assert(!ST || C == 1, "store kernels: single blocks");

    extern __shared__ __align__(1024) unsigned char ws_smem_raw[];
    __shared__ __align__(8) unsigned long long ws_bars[2 * STAGES];
    unsigned char* smem = (unsigned char*)(((unsigned long long)ws_smem_raw + 1023) & ~1023ull);
    ws_ring ring{hp_smem(smem), hp_smem(ws_bars), hp_smem(ws_bars) + 8 * STAGES, 0};
    const unsigned ebase = ring.sbase + STAGES * STAGE_BYTES;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = C > 1 ? ws_cluster_rank() : 0;
    const int tiles_m = (int)((M + WS_BM - 1) / WS_BM), tiles_n = (int)((N + ON - 1) / ON);
    // The grid of work units: tiles, or pairs of tiles along M (share "b") or N (share "a").
    const int units_m = (C > 1 && SHARE_B) ? (tiles_m + 1) / 2 : tiles_m;
    const int units_n = (C > 1 && !SHARE_B) ? (tiles_n + 1) / 2 : tiles_n;
    // The split last wave (ST): units nfull … are `split` units of each of the last `tail` tiles, narrow tiles
    // (not swiglu) or parts along K.
    const bool split_on = ST && tail > 0 && split > 1 && (ksplit || !SWIGLU);
    const bool kmode = split_on && ksplit;
    const int nsplit = split_on ? (int)split : 1, ntail = split_on ? (int)tail : 0;
    const int nfull = units_m * units_n - ntail, units = nfull + ntail * nsplit, nw = kmode ? ON : ON / nsplit;
    const int first = blockIdx.x / C, stride = gridDim.x / C;
    const int ktiles = (int)((K + WS_BK - 1) / WS_BK);
    const int grp = (int)group;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            hp_mbar_init(ring.full + 8 * s, 1);       // the producer's arrive.expect_tx; the bytes complete it
            hp_mbar_init(ring.empty + 8 * s, 2 * C);  // one arrive per consumer warpgroup of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (C > 1)
        ws_cluster_sync();  // the peer's barriers are initialized before any multicast or remote arrive
    else
        __syncthreads();

    // unit u → the tile's first row and column, and for a unit of the split last wave (narrow true) its tail
    // tile (tix) and part (sub): a narrow tile's place in the tile, or its part of the k-tiles.
    auto tile_of = [&](int u, long long& m0, long long& n0, bool& narrow, int& tix, int& sub) {
        sub = 0;
        tix = 0;
        narrow = u >= nfull;
        if (narrow) {
            sub = (u - nfull) % nsplit;
            tix = (u - nfull) / nsplit;
            u = nfull + tix;
        }
        const int per = grp * units_n, g = u / per, fm = g * grp, gm = min(units_m - fm, grp), r = u - g * per;
        int tm = fm + r % gm, tn = r / gm;
        if (C > 1) {
            if (SHARE_B)
                tm = 2 * tm + (int)rank;
            else
                tn = 2 * tn + (int)rank;
        }
        m0 = (long long)tm * WS_BM;
        n0 = (long long)tn * ON + (kmode ? 0 : (long long)sub * nw);
    };
    // The k-tiles of unit part sub: all, or its split-th for a part along K.
    auto krange = [&](bool narrow, int sub, int& kb, int& ke) {
        kb = 0;
        ke = ktiles;
        if (kmode && narrow) {
            kb = (int)((long long)sub * ktiles / nsplit);
            ke = (int)((long long)(sub + 1) * ktiles / nsplit);
        }
    };

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            const unsigned short mask = (unsigned short)((1u << C) - 1);
            int it = 0;
            for (int u = first; u < units; u += stride) {
                long long m0, n0;
                bool narrow;
                int tix, sub, kb, ke;
                tile_of(u, m0, n0, narrow, tix, sub);
                krange(narrow, sub, kb, ke);
                if (kmode) narrow = false;  // a part along K loads the whole tile's boxes
                for (int kt = kb; kt < ke; kt++, it++) {
                    const int s = it % STAGES;
                    ws_mbar_wait(ring.empty + 8 * s, ((it / STAGES) & 1) ^ 1);
                    const unsigned a = ring.sbase + s * STAGE_BYTES, b = a + A_BYTES, bar = ring.full + 8 * s;
                    if (SWIGLU) {
                        // W_gate's rows n0 … n0+BN/2, then W_up's same rows.
                        hp_mbar_expect_tx(bar, STAGE_BYTES);
                        ws_tma_load(a, tmx, kt * WS_BK, (int)m0, bar);
                        ws_tma_load(b, tmw, kt * WS_BK, (int)n0, bar);
                        ws_tma_load(b + B_BYTES / 2, tm3, kt * WS_BK, (int)n0, bar);
                    } else if (narrow) {
                        hp_mbar_expect_tx(bar, A_BYTES + nw * WS_BK * 2);
                        ws_tma_load(a, tmx, kt * WS_BK, (int)m0, bar);
                        ws_tma_load(b, tm3, kt * WS_BK, (int)n0, bar);
                    } else if (C == 1) {
                        hp_mbar_expect_tx(bar, STAGE_BYTES);
                        ws_tma_load(a, tmx, kt * WS_BK, (int)m0, bar);
                        ws_tma_load(b, tmw, kt * WS_BK, (int)n0, bar);
                    } else if (SHARE_B) {
                        // This block's half of w's rows n0 … n0+BN (the pair's n0 is the same), to both blocks.
                        hp_mbar_expect_tx(bar, STAGE_BYTES);
                        ws_tma_load(a, tmx, kt * WS_BK, (int)m0, bar);
                        ws_tma_multicast(b + rank * (B_BYTES / 2), tmw, kt * WS_BK, (int)n0 + (int)rank * (BN / 2), bar, mask);
                    } else {
                        hp_mbar_expect_tx(bar, STAGE_BYTES);
                        ws_tma_multicast(a + rank * (A_BYTES / 2), tmx, kt * WS_BK, (int)m0 + (int)rank * (WS_BM / 2), bar, mask);
                        ws_tma_load(b, tmw, kt * WS_BK, (int)n0, bar);
                    }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int half = wg - 1;  // rows 64·half … 64·half + 63 of the tile
        const unsigned ebuf = ebase + half * 2 * WS_EPI_BOX;
        int ec = 0;  // this warpgroup's store chunks so far (ws_store_tma)
        for (int u = first; u < units; u += stride) {
            long long m0, n0;
            bool narrow;
            int tix, sub, kb, ke;
            tile_of(u, m0, n0, narrow, tix, sub);
            krange(narrow, sub, kb, ke);
            if (ST && kmode && narrow) {
                const ws_kpart kp{ws + (long long)tix * nsplit * WS_BM * BN, cnt + tix, sub, nsplit};
                ws_tile<BN, STAGES, STAGE_BYTES, C, ACT, ST>(ring, half, tid, ke - kb, tmy, y, M, N, m0, n0, tstore, ebuf, ec, &kp);
                continue;
            }
            if constexpr (ST && !SWIGLU && ON > 64 && ON % 64 == 0) {
                if (narrow) {
                    // The narrow widths the launcher splits into: 128 (of a wider tile) or 64.
                    if (ON > 128 && nw == 128)
                        ws_tile<(ON > 128 ? 128 : 64), STAGES, STAGE_BYTES, C, ACT, ST>(ring, half, tid, ktiles, tmy, y, M, N, m0, n0, tstore, ebuf, ec, nullptr);
                    else
                        ws_tile<64, STAGES, STAGE_BYTES, C, ACT, ST>(ring, half, tid, ktiles, tmy, y, M, N, m0, n0, tstore, ebuf, ec, nullptr);
                    continue;
                }
            }
            ws_tile<BN, STAGES, STAGE_BYTES, C, ACT, ST>(ring, half, tid, ktiles, tmy, y, M, N, m0, n0, tstore, ebuf, ec, nullptr);
        }
        if (ST && tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");  // no store left reading
    }
    if (C > 1) {
        __syncwarp();       // the producer's leader rejoins its warp: barrier.cluster is .aligned
        ws_cluster_sync();  // no block leaves while its peer may still multicast into it or arrive on it
    }
}

// The kernels: parameters x's and w's tensor maps (by value, 128 bytes each; x: K × M, box 64 × 128 — 64 × 64
// when a pair shares x; w: K × N, box 64 × BN — 64 × BN/2 when a pair shares w), y, M, N, K and the raster
// group (tile rows a group).
#define WS_KERNEL(BN, C, SH, SHARE_B)                                                                            \
    extern "C" __global__ void __launch_bounds__(384, 1) wsgemm_bf16_128x##BN##_c##C##SH(                      \
        const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmw,                      \
        unsigned short* __restrict__ y, long long M, long long N, long long K, long long group) {              \
        wsgemm<BN, C, SHARE_B>(&tmx, &tmw, nullptr, nullptr, y, M, N, K, group, 0, 1, false, false, nullptr, nullptr);                 \
    }

WS_KERNEL(256, 1, , false)
WS_KERNEL(256, 2, b, true)
WS_KERNEL(256, 2, a, false)
WS_KERNEL(232, 1, , false)
WS_KERNEL(232, 2, a, false)
WS_KERNEL(192, 1, , false)
WS_KERNEL(192, 2, b, true)
WS_KERNEL(128, 1, , false)

// The FFN's FC1 with its activation in the epilogue (ffn_cuda.go, while wgmmaFFNOn): the parameters of
// WS_KERNEL, single blocks (the chooser takes no cluster).
#define WS_KERNEL_GELU(BN)                                                                                     \
    extern "C" __global__ void __launch_bounds__(384, 1) wsgemm_gelu_bf16_128x##BN##_c1(                      \
        const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmw,                      \
        unsigned short* __restrict__ y, long long M, long long N, long long K, long long group) {              \
        wsgemm<BN, 1, false, WS_ACT_GELU>(&tmx, &tmw, nullptr, nullptr, y, M, N, K, group, 0, 1, false, false, nullptr, nullptr);      \
    }

WS_KERNEL_GELU(256)
WS_KERNEL_GELU(232)
WS_KERNEL_GELU(192)
WS_KERNEL_GELU(128)

// SwiGLU's FC1: x's, W_gate's and W_up's tensor maps (the weights' boxes BN/2 × 64), h, M, N (the intermediate
// size: h's columns), K, group. Tile widths whose halves are whole swizzle groups: not 232.
#define WS_KERNEL_SWIGLU(BN)                                                                                   \
    extern "C" __global__ void __launch_bounds__(384, 1) wsgemm_swiglu_bf16_128x##BN##_c1(                    \
        const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmg,                      \
        const __grid_constant__ CUtensorMap tmu, unsigned short* __restrict__ y, long long M, long long N,     \
        long long K, long long group) {                                                                         \
        wsgemm<BN, 1, false, WS_ACT_SWIGLU>(&tmx, &tmg, &tmu, nullptr, y, M, N, K, group, 0, 1, false, false, nullptr, nullptr);       \
    }

WS_KERNEL_SWIGLU(256)
WS_KERNEL_SWIGLU(192)
WS_KERNEL_SWIGLU(128)
// The store kernels (_st): the epilogue through shared memory and the copy engine, and the split last wave.
// Parameters: x's map, w's (W_gate's for swiglu), a third (W_up's for swiglu; else w's with boxes of
// BN/split rows, for the narrow tiles), y's (boxes of 64 × 64, 128-byte swizzle; unread when tstore is 0), y,
// M, N, K, group, tail (tiles split, the last in tile order; 0: none), split, tstore (1: store through shared
// memory; 0: from registers, where y's rows are not 16-byte multiples), ksplit (1: the split is along K), and
// for it the workspace and the tail's counters.
#define WS_KERNEL_ST(ACTNAME, ACT, BN)                                                                         \
    extern "C" __global__ void __launch_bounds__(384, 1) wsgemm_##ACTNAME##bf16_128x##BN##_c1_st(             \
        const __grid_constant__ CUtensorMap tmx, const __grid_constant__ CUtensorMap tmw,                      \
        const __grid_constant__ CUtensorMap tm3, const __grid_constant__ CUtensorMap tmy,                      \
        unsigned short* __restrict__ y, long long M, long long N, long long K, long long group, long long tail, \
        long long split, long long tstore, long long ksplit, float* ws, int* cnt) {                            \
        wsgemm<BN, 1, false, ACT, true>(&tmx, &tmw, &tm3, &tmy, y, M, N, K, group, tail, split, tstore != 0,   \
                                        ksplit != 0, ws, cnt);                                                 \
    }

WS_KERNEL_ST(, WS_ACT_NONE, 256)
WS_KERNEL_ST(, WS_ACT_NONE, 192)
WS_KERNEL_ST(, WS_ACT_NONE, 128)
WS_KERNEL_ST(gelu_, WS_ACT_GELU, 256)
WS_KERNEL_ST(gelu_, WS_ACT_GELU, 192)
WS_KERNEL_ST(gelu_, WS_ACT_GELU, 128)
WS_KERNEL_ST(swiglu_, WS_ACT_SWIGLU, 256)
WS_KERNEL_ST(swiglu_, WS_ACT_SWIGLU, 128)
#endif

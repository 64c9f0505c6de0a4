// rmsnorm.cu: y = x / sqrt(mean(x²) + eps) · w over each row of x [rows, cols], w [cols] (RMSNormFamily).
//
// The fused kernels read each element of x once from memory and write each element of y once: a row (or a
// block's share of it) stays in registers between the sum of squares and the scaling. fp32 arithmetic, fp32
// or bf16 storage, 16-byte accesses when the columns allow (V), NV accesses per thread (at most 128 bytes).
//
//   rmsnorm_warp_*:    one warp for R rows (all their loads in flight together), 8 warps a block, for rows of
//                      at most 32·NV·E elements.
//   rmsnorm_team_*:    `team` blocks per row, each holding blockDim·NV·E elements of it in registers; their
//                      partial sums meet through global memory (team_sum). team = 1 is one block per row
//                      (grid = rows); for team > 1 the grid is persistent (all blocks resident) and each block
//                      walks the (row, part) items.
//   rmsnorm_cluster_*: sm_90 only: a thread-block cluster per row, partial sums through distributed shared
//                      memory.
//   rmsnorm_dsmem_*:   sm_90 only: row_dsmem (rowdsmem.cuh), a cluster of 2–16 blocks holding the row in
//                      distributed shared memory.
//   rmsnorm_ring_*:    sm_90 only: row_ring (rowring.cuh), persistent clusters of 1–16 blocks, each block's next
//                      rows loading into a ring in shared memory while a row is reduced and stored.
//   rmsnorm_blocka_*:  sm_90 only: rowmap.cuh's one block a row over RMSNormOp, w loaded packs ahead of the stores.
// This file is compiled twice: -arch=compute_75 to ptx/rmsnorm.ptx (everything but the sm_90 kernels) and
// -arch=compute_90 to ptx/rmsnorm_sm90.ptx (those alone: the cluster, dsmem, ring, res, grid and blocka kernels).
//
// rmsnorm_cuda.go picks the kernel and block size per case; the naive chain (square, row mean, +eps, rsqrt,
// ·rsqrt, ·w) uses the generic eager kernels of eager.cu.
#include "common.cuh"
#include "xasync.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#include "rowgrid.cuh"
#include "rowring.cuh"
#endif

// rms_put stores pack v · inv · w at p in one access. Built element by element, a bf16 pack's uint4 is otherwise
// split by the compiler into four 4-byte stores (seen in the compute_75 PTX, which RMSNorm runs on every GPU),
// each writing a quarter of every sector the warp touches: bf16 32768×4096 on an H200 went from 90.6% to 93.8%
// of the copy with one store.
template <class S, bool V>
__device__ __forceinline__ void rms_put(const Pack<S, V>& v, const Pack<S, V>& w, float inv, typename S::T* p) {
    Pack<S, V> o = Pack<S, V>();
#pragma unroll
    for (int j = 0; j < Pack<S, V>::E; j++) o.set(j, v.get(j) * inv * w.get(j));
    o.store(p);
}
template <>
__device__ __forceinline__ void rms_put<BF16, true>(const Pack<BF16, true>& v, const Pack<BF16, true>& w, float inv,
                                                   unsigned short* p) {
    unsigned r[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        r[k] = (unsigned)f32_to_bf16(v.get(2 * k) * inv * w.get(2 * k)) |
               ((unsigned)f32_to_bf16(v.get(2 * k + 1) * inv * w.get(2 * k + 1)) << 16);
    asm volatile("st.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

template <class S, bool V, int NV, int R>
__device__ __forceinline__ void rmsnorm_warp(const typename S::T* __restrict__ x, const typename S::T* __restrict__ w,
                                             typename S::T* __restrict__ y, long long rows, long long cols, float eps) {
    typedef Pack<S, V> P;
    const int E = P::E, lane = threadIdx.x & 31;
    const long long row0 = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
    if (row0 >= rows) return;  // the whole warp leaves together
    P v[R][NV];
#pragma unroll
    for (int q = 0; q < R; q++) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const long long c = (long long)(k * 32 + lane) * E;
            if (row0 + q < rows && c < cols) v[q][k].load(x + (row0 + q) * cols + c);
        }
    }
#pragma unroll
    for (int q = 0; q < R; q++) {
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const long long c = (long long)(k * 32 + lane) * E;
            if (row0 + q < rows && c < cols) {
#pragma unroll
                for (int j = 0; j < E; j++) {
                    const float f = v[q][k].get(j);
                    ss = fmaf(f, f, ss);
                }
            }
        }
        ss = warp_sum(ss);
        const float inv = rsqrtf(ss / (float)cols + eps);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const long long c = (long long)(k * 32 + lane) * E;
            if (row0 + q < rows && c < cols) {
                P wv;
                wv.load(w + c);
                rms_put<S, V>(v[q][k], wv, inv, y + (row0 + q) * cols + c);
            }
        }
    }
}

template <class S, bool V, int NV>
__device__ __forceinline__ void rmsnorm_team(const typename S::T* __restrict__ x, const typename S::T* __restrict__ w,
                                             typename S::T* __restrict__ y, long long rows, long long cols, float eps,
                                             int team, float* partials, unsigned* count, unsigned* gen) {
    typedef Pack<S, V> P;
    __shared__ float red[32];
    const int E = P::E;
    const int step = blockDim.x * E;  // elements between a thread's accesses
    const long long chunk = (long long)step * NV;
    const unsigned items = (unsigned)(rows * team);  // < 2^32: the launcher checks
    for (unsigned item = blockIdx.x; item < items; item += gridDim.x) {
        const unsigned row = item / (unsigned)team;
        const int part = (int)(item - row * (unsigned)team);
        // This thread's first element in the row, and how many elements of the row from there on exist.
        const long long c = part * chunk + (long long)threadIdx.x * E;
        const long long left = cols - c;
        const int n = left <= 0 ? 0 : left >= chunk ? (int)chunk : (int)left;  // k·step < n ⇔ access k exists
        const typename S::T* xp = x + (long long)row * cols + c;
        P v[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) v[k].load(xp + k * step);
        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k * step < n) {
#pragma unroll
                for (int j = 0; j < E; j++) {
                    const float f = v[k].get(j);
                    ss = fmaf(f, f, ss);
                }
            }
        }
        ss = block_sum(ss, red);
        if (team > 1) ss = team_sum(ss, row, part, team, partials, count, gen);
        const float inv = rsqrtf(ss / (float)cols + eps);
        const typename S::T* wp = w + c;
        typename S::T* yp = y + (long long)row * cols + c;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k * step < n) {
                P wv;
                wv.load(wp + k * step);
                rms_put<S, V>(v[k], wv, inv, yp + k * step);
            }
        }
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// rmsnorm_cluster (sm_90, module rmsnorm_sm90): one thread-block cluster of CS blocks per row, each block holding
// blockDim·NV·E elements of it in registers. The blocks add their partial sums through distributed shared
// memory between two hardware cluster barriers, so a row longer than one multiprocessor's registers is still
// read once, with no global atomics and no persistent grid. (In rmsnorm_x_sm90a, KW_XASYNC: by st.async instead,
// xasync.cuh.) grid = rows·CS; the cluster's blocks are
// consecutive, its rank the block's part of the row.
template <class S, int NV, int CS>
__device__ __forceinline__ void rmsnorm_cluster(const typename S::T* __restrict__ x,
                                                const typename S::T* __restrict__ w, typename S::T* __restrict__ y,
                                                long long cols, float eps) {
    typedef Pack<S, true> P;
    __shared__ float red[32];
#ifdef KW_XASYNC
    __shared__ __align__(8) float parts[CS];
    __shared__ __align__(8) unsigned long long xbar;
    xa_init(&xbar, 1);
#else
    __shared__ float mine;
#endif
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = P::E;
    const int step = blockDim.x * E;
    const long long chunk = (long long)step * NV;
    const long long row = blockIdx.x / CS;
    const long long c = (long long)cluster.block_rank() * chunk + (long long)threadIdx.x * E;
    const long long left = cols - c;
    const int n = left <= 0 ? 0 : left >= chunk ? (int)chunk : (int)left;
    const typename S::T* xp = x + row * cols + c;
    P v[NV];
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (k * step < n) v[k].load(xp + k * step);
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k * step < n) {
#pragma unroll
            for (int j = 0; j < E; j++) {
                const float f = v[k].get(j);
                ss = fmaf(f, f, ss);
            }
        }
    }
    ss = block_sum(ss, red);
#ifdef KW_XASYNC
    xa_started();
    if (threadIdx.x == 0) xa_send<1>(&ss, &parts[cluster.block_rank()], &xbar, CS);
    xa_wait(&xbar, 0);
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) total += parts[i];
#else
    if (threadIdx.x == 0) mine = ss;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part published
    float total = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) total += *cluster.map_shared_rank(&mine, i);
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' parts
#endif
    const float inv = rsqrtf(total / (float)cols + eps);
    const typename S::T* wp = w + c;
    typename S::T* yp = y + row * cols + c;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k * step < n) {
            P wv;
            wv.load(wp + k * step);
            rms_put<S, true>(v[k], wv, inv, yp + k * step);
        }
    }
#ifndef KW_XASYNC
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
#endif
}

#define RMSNORM_CLUSTER(S, NAME, NV, CS)                                                                          \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024, 1)                              \
        rmsnorm_cluster_##NAME##_v##NV##_c##CS(const S::T* x, const S::T* w, S::T* y, long long rows,            \
                                               long long cols, double eps) {                                      \
        rmsnorm_cluster<S, NV, CS>(x, w, y, cols, (float)eps);                                                    \
    }
RMSNORM_CLUSTER(F32, f32, 8, 2)
RMSNORM_CLUSTER(F32, f32, 8, 4)
RMSNORM_CLUSTER(F32, f32, 8, 8)
RMSNORM_CLUSTER(BF16, bf16, 8, 2)
RMSNORM_CLUSTER(BF16, bf16, 8, 4)
RMSNORM_CLUSTER(BF16, bf16, 8, 8)

#include "rmsnorm_op.cuh"
#include "rowres.cuh"

#define RMSNORM_PARAMS(S) const S::T *x, const S::T *w, S::T *y, long long rows, long long cols, double eps
#define RMSNORM_DSMEM_OP(S)         \
    RowMapDSMEM<RMSNormOp<S> > op; \
    op.op.w = w;                    \
    op.op.eps = (float)eps;         \
    op.x = x;                       \
    op.y = y;                       \
    op.cols = cols;
ROW_DSMEM_ENTRIES(rmsnorm, RMSNORM_PARAMS, RMSNORM_DSMEM_OP)
ROW_RING_ENTRIES(rmsnorm, RMSNORM_PARAMS, RMSNORM_DSMEM_OP)  // row_ring (rowring.cuh), the same Op
ROW_GRID_ENTRIES(rmsnorm, RMSNORM_PARAMS, RMSNORM_DSMEM_OP)  // row_grid (rowgrid.cuh), the same Op
ROW_RING2_ENTRIES(rmsnorm, RMSNORM_PARAMS, RMSNORM_DSMEM_OP)  // two rows a pass
#define RMSNORM_RES_OP(S) \
    RMSNormOp<S> op;      \
    op.w = w;             \
    op.eps = (float)eps;
ROW_RES_ENTRIES(rmsnorm, RMSNORM_PARAMS, RMSNORM_RES_OP)  // row_res (rowres.cuh): persistent teams

// rmsnorm_blocka_<dtype>_v8t<T>a<LEAD> (rowmap.cuh's ROW_BLOCKA_ENTRY): row_block_lead over RMSNormOp, one block of
// T threads a row, 8 packs a thread, each pack's w loaded LEAD packs ahead of its store, bounded by T threads
// (rowplan.go's rowLead: bf16 4096 and 16384 columns, fp32 4096, where it beat the team of one on an H100 and an H200).
ROW_BLOCKA_ENTRY(rmsnorm, BF16, bf16, 64, 2, RMSNORM_PARAMS, RMSNORM_RES_OP)
ROW_BLOCKA_ENTRY(rmsnorm, BF16, bf16, 256, 3, RMSNORM_PARAMS, RMSNORM_RES_OP)
ROW_BLOCKA_ENTRY(rmsnorm, F32, f32, 128, 8, RMSNORM_PARAMS, RMSNORM_RES_OP)


#else  // the compute_75 module: every other kernel

// Entry points: rmsnorm_warp_{f32,bf16}_{v,s}{NV}r{R} and rmsnorm_team_{f32,bf16}_{v,s}{NV} (v: 16-byte
// accesses, s: one element per access). Each thread holds at most 128 bytes of a row: 32 registers, so the
// kernels fit in 64 registers and a multiprocessor runs 1024 threads with 128 KiB of loads in flight.
#define RMSNORM_WARP(S, NAME, V, VN, NV, R)                                                                      \
    extern "C" __global__ void __launch_bounds__(256) rmsnorm_warp_##NAME##_##VN##NV##r##R(                      \
        const S::T* x, const S::T* w, S::T* y, long long rows, long long cols, double eps) {                     \
        KW_SLOWDOWN_BEGIN();                                                                                     \
        rmsnorm_warp<S, V, NV, R>(x, w, y, rows, cols, (float)eps);                                              \
        KW_SLOWDOWN_END();                                                                                       \
    }
#define RMSNORM_TEAM(S, NAME, V, VN, NV)                                                                         \
    extern "C" __global__ void __launch_bounds__(1024, 1) rmsnorm_team_##NAME##_##VN##NV(                        \
        const S::T* x, const S::T* w, S::T* y, long long rows, long long cols, double eps, long long team,       \
        float* partials, unsigned* count, unsigned* gen) {                                                       \
        KW_SLOWDOWN_BEGIN();                                                                                     \
        rmsnorm_team<S, V, NV>(x, w, y, rows, cols, (float)eps, (int)team, partials, count, gen);               \
        KW_SLOWDOWN_END();                                                                                       \
    }
#define RMSNORM_DTYPE(S, NAME)                                                                                   \
    RMSNORM_WARP(S, NAME, true, v, 1, 8)                                                                         \
    RMSNORM_WARP(S, NAME, true, v, 2, 4)                                                                         \
    RMSNORM_WARP(S, NAME, true, v, 4, 2)                                                                         \
    RMSNORM_WARP(S, NAME, true, v, 8, 1)                                                                         \
    RMSNORM_WARP(S, NAME, false, s, 1, 1)                                                                        \
    RMSNORM_WARP(S, NAME, false, s, 2, 1)                                                                        \
    RMSNORM_WARP(S, NAME, false, s, 4, 1)                                                                        \
    RMSNORM_WARP(S, NAME, false, s, 8, 1)                                                                        \
    RMSNORM_TEAM(S, NAME, true, v, 2)                                                                            \
    RMSNORM_TEAM(S, NAME, true, v, 4)                                                                            \
    RMSNORM_TEAM(S, NAME, true, v, 8)                                                                            \
    RMSNORM_TEAM(S, NAME, false, s, 4)                                                                           \
    RMSNORM_TEAM(S, NAME, false, s, 8)                                                                           \
    RMSNORM_TEAM(S, NAME, false, s, 16)

RMSNORM_DTYPE(F32, f32)
RMSNORM_DTYPE(BF16, bf16)

#endif

// rowres.cuh: row_res, a persistent row kernel written once over a rowmap.cuh Op (sm_90, the _sm90 modules of
// rmsnorm.cu and layernorm.cu, whose column data it can keep, and of softmax.cu).
//
// Blocks of G teams of T threads, as many blocks as the GPU runs at once (capped by the rows): team j of block b
// takes rows b·G + j, then every gridDim·G-th row after it, each thread holding NV 16-byte packs of the row in
// registers (packs tl, tl + T, …), so the row is read once and written once. The team's partial statistics meet
// in shared memory behind one named barrier a row (barrier 1 + j, T threads; double-buffered by row parity, so
// that no second barrier is needed before the next row writes them). What it changes against one block a row:
// no block launches a row, and the row's column data (RMSNorm's w, LayerNorm's w and b: the Op's Col) need not
// be read again for every row. MODE says where the column data waits:
//
//   MODE 0  nowhere: read from global memory (L2) for every row, as the one-row kernels do
//   MODE 1  in shared memory: staged once a block by team 0, NV·T·sizeof(Col) bytes of dynamic shared memory
//           (the packs of a row narrower than the team's NV·T need none, but PF 2's rows follow all of them),
//           word i of pack k of thread tl at (k·W + i)·T + tl (W 16-byte words a Col), so that a warp's reads
//           of one word are consecutive
//   MODE 2  in registers, loaded once
//
// PF says where the team's next row is loaded, and when:
//
//   PF 0  into the same registers, after this row's outputs are stored
//   PF 1  into a second set of NV packs in registers, before this row's outputs are stored, so that the loads of
//         the next row are in flight during the stores
//   PF 2  into shared memory, by cp.async, as soon as this row's packs have been read from there into registers:
//         the next row's loads are in flight during this row's reduction, exchange and stores, with no second
//         set of registers (a bf16 row of 128 KiB takes a multiprocessor's registers once, not twice). Each
//         thread copies its own packs (NV·T packs a team after the column data of MODE 1, thread tl's pack k at
//         k·T + tl) and reads back only those, as row_ring's threads do (rowring.cuh): a thread's commit group is
//         its full bit, and no barrier is needed
//
// Teams of one block may take different numbers of rows (the barrier of each counts its own threads only). Rows
// are reduced in a fixed order (warp butterfly, then the team's warps in order): deterministic. The Op's local
// may rewrite the packs (Softmax does), as in row_block.
#pragma once
#include "rowmap.cuh"
#include "rowring.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <class Op, int NV, int T, int G, int MODE, int PF>
__device__ __forceinline__ void row_res(const Op& op, const typename Op::T* __restrict__ x,
                                        typename Op::T* __restrict__ y, long long rows, long long cols) {
    typedef Pack<typename Op::S, true> P;
    typedef typename Op::template Col<P> C;
    enum { E = P::E, W = sizeof(C) / 16, WARPS = T / 32 };
    static_assert(T % 32 == 0 && G >= 1 && G <= 15 && MODE >= 0 && MODE <= 2 && PF >= 0 && PF <= 2,
                  "row_res: teams of whole warps");
    extern __shared__ uint4 res_cols[];  // MODE 1, then PF 2's rows
    __shared__ RowStat red[2][G][WARPS];
    const int team = threadIdx.x / T, tl = threadIdx.x % T, warp = tl >> 5, lane = tl & 31;
    const long long packs = cols / E;
    const int kv = tl < packs ? (int)min((long long)NV, (packs - tl + T - 1) / T) : 0;
    C cr[MODE == 2 ? NV : 1];
    if (MODE == 1) {
        if (team == 0) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (k < kv) {
                    const C c = op.template column<P>((long long)(k * T + tl) * E);
                    const uint4* s = reinterpret_cast<const uint4*>(&c);
#pragma unroll
                    for (int i = 0; i < W; i++) res_cols[(k * W + i) * T + tl] = s[i];
                }
            }
        }
        __syncthreads();
    }
    if (MODE == 2) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k < kv) cr[MODE == 2 ? k : 0] = op.template column<P>((long long)(k * T + tl) * E);
    }
    const long long stride = (long long)gridDim.x * G;
    long long row = (long long)blockIdx.x * G + team;
    P v[NV], vn[PF == 1 ? NV : 1];
    P* nx = reinterpret_cast<P*>(res_cols + (MODE == 1 ? NV * W * T : 0)) + team * NV * T;  // PF 2
    if (row < rows) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                if (PF == 2) dsmem_cp16(nx + k * T + tl, x + row * cols + (long long)(k * T + tl) * E);
                else v[k].load(x + row * cols + (long long)(k * T + tl) * E);
            }
        }
    }
    if (PF == 2) ring_commit();
    int par = 0;
    for (; row < rows; row += stride) {
        if (PF == 2) {
            ring_wait(0);  // this thread's packs of the row have landed
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) v[k] = nx[k * T + tl];
            if (row + stride < rows) {
#pragma unroll
                for (int k = 0; k < NV; k++)
                    if (k < kv) dsmem_cp16(nx + k * T + tl, x + (row + stride) * cols + (long long)(k * T + tl) * E);
            }
            ring_commit();
        }
        typename Op::Ctx ctx = op.context(x + row * cols);
        RowStat s = warp_merge(op, op.template local<P, NV>(v, kv, ctx));
        if (WARPS > 1) {
            if (lane == 0) red[par][team][warp] = s;
            asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "r"(T) : "memory");
            s = red[par][team][0];
#pragma unroll
            for (int i = 1; i < WARPS; i++) s = op.merge(s, red[par][team][i]);
        }
        const typename Op::Fin f = op.finish(s, cols, ctx);
        const long long next = row + stride;
        if (PF == 1 && next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) vn[PF == 1 ? k : 0].load(x + next * cols + (long long)(k * T + tl) * E);
        }
        typename Op::T* yr = y + row * cols;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                const long long c = (long long)(k * T + tl) * E;
                C cv;
                if (MODE == 0) cv = op.template column<P>(c);
                if (MODE == 1) {
                    uint4* d = reinterpret_cast<uint4*>(&cv);
#pragma unroll
                    for (int i = 0; i < W; i++) d[i] = res_cols[(k * W + i) * T + tl];
                }
                if (MODE == 2) cv = cr[MODE == 2 ? k : 0];
                float o[E];
                op.apply(v[k], cv, f, o);
                rm_store<typename Op::S, true>(o, yr + c);
            }
        }
        if (PF != 2 && next < rows) {
            if (PF == 1) {
#pragma unroll
                for (int k = 0; k < NV; k++) v[k] = vn[PF == 1 ? k : 0];
            } else {
#pragma unroll
                for (int k = 0; k < NV; k++)
                    if (k < kv) v[k].load(x + next * cols + (long long)(k * T + tl) * E);
            }
        }
        par ^= 1;
    }
    if (PF == 2) asm volatile("cp.async.wait_all;" ::: "memory");
}

// row_res_cluster is row_res for rows a block cannot hold: a row over a thread-block cluster of CS blocks (the
// launch's cluster dimension, 2 … 16), one team of T threads a block, as many clusters as the GPU runs at once.
// Block k of a cluster holds packs [k·T·NV, (k + 1)·T·NV) of each of its cluster's rows (rows c, c + clusters, …
// for cluster c) and, MODE 1, stages that slice of the column data in dynamic shared memory once (each thread its
// own packs, read back by it alone). The blocks' statistics meet through distributed shared memory and are merged
// in rank order in every block (the same result, bit for bit):
//
//   XA 0  behind one cluster barrier a row, each block's part double-buffered by row parity (a block writes
//         part[par] again two rows on, after every block has arrived at the barrier between, so after every
//         block has read it). The barrier's release compiles to MEMBAR.ALL.GPU, which waits for every load in
//         flight, the next row's among them. The standalone programs only (it lost, kernels/rowres.go).
//   XA 1  by st.async (xasync.cuh; the _x_sm90a modules, KW_XASYNC): thread 0 writes the block's part into slot
//         [par][rank] of every block, completing on that block's mbarrier [par]; a block sends row r + 2's part
//         into a slot only after it has received every block's part of row r + 1, which each block sends after
//         the block barrier that follows its reads of row r's slots, so a slot and its mbarrier's phase are free
//         when written. No fence and no cluster barrier a row: nothing waits for the loads ahead.
//
// PF says where and when a block's slice of the next row is loaded: after this row's stores (0), into a second set
// of registers before them (1), into shared memory as soon as this row's slice has been read from there (2), or
// into a second set of registers as soon as this row's local statistic is taken, before the exchange (3: the
// modules' kernels, ROW_RESC_ENTRY). So with XA 1 and PF 3 a block's loads of the next row are in flight while
// this row is merged, exchanged and stored, and each element is read once and written once.
template <class Op, int NV, int T, int MODE, int PF, int CS, int XA = 0>
__device__ __forceinline__ void row_res_cluster(const Op& op, const typename Op::T* __restrict__ x,
                                                typename Op::T* __restrict__ y, long long rows, long long cols) {
    typedef Pack<typename Op::S, true> P;
    typedef typename Op::template Col<P> C;
    enum { E = P::E, W = sizeof(C) / 16, WARPS = T / 32 };
    static_assert(T % 32 == 0 && T >= 64 && MODE >= 0 && MODE <= 1 && CS >= 2 && CS <= 16 && PF >= 0 && PF <= 3,
                  "row_res_cluster");
#ifndef KW_XASYNC
    static_assert(XA == 0, "row_res_cluster: XA 1 needs KW_XASYNC (CUDA 12.4)");
#else
    __shared__ __align__(16) RowStat xparts[2][CS];
    __shared__ __align__(8) unsigned long long xbar[2];
    if (XA) xa_init(xbar, 2);
#endif
    extern __shared__ uint4 res_cols[];  // MODE 1, then PF 2's next row (as row_res: rowres.cuh)
    __shared__ RowStat red[2][WARPS];
    __shared__ RowStat part[2];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int tl = threadIdx.x, warp = tl >> 5, lane = tl & 31;
    const long long base = (long long)cluster.block_rank() * T * NV;  // this block's first pack of a row
    const long long packs = cols / E - base;
    const int kv = tl < packs ? (int)min((long long)NV, (packs - tl + T - 1) / T) : 0;
    const long long c0 = (base + tl) * E;  // this thread's first column
    if (MODE == 1) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                const C c = op.template column<P>(c0 + (long long)k * T * E);
                const uint4* s = reinterpret_cast<const uint4*>(&c);
#pragma unroll
                for (int i = 0; i < W; i++) res_cols[(k * W + i) * T + tl] = s[i];
            }
        }
    }
    const long long stride = gridDim.x / CS;
    long long row = blockIdx.x / CS;
    P v[NV], vn[PF == 1 || PF == 3 ? NV : 1];
    P* nx = reinterpret_cast<P*>(res_cols + (MODE == 1 ? NV * W * T : 0));  // PF 2
    if (row < rows) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                if (PF == 2) dsmem_cp16(nx + k * T + tl, x + row * cols + c0 + (long long)k * T * E);
                else v[k].load(x + row * cols + c0 + (long long)k * T * E);
            }
        }
    }
    if (PF == 2) ring_commit();
#ifdef KW_XASYNC
    if (XA) xa_started();
    unsigned xph = 0;  // the phases of xbar[0] and xbar[1] (bits 0 and 1)
#endif
    int par = 0;
    for (; row < rows; row += stride) {
        if (PF == 2) {
            ring_wait(0);
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) v[k] = nx[k * T + tl];
            if (row + stride < rows) {
#pragma unroll
                for (int k = 0; k < NV; k++)
                    if (k < kv) dsmem_cp16(nx + k * T + tl, x + (row + stride) * cols + c0 + (long long)k * T * E);
            }
            ring_commit();
        }
        typename Op::Ctx ctx = op.context(x + row * cols);
        RowStat s = warp_merge(op, op.template local<P, NV>(v, kv, ctx));
        const long long next = row + stride;
        if (PF == 3 && next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) vn[PF == 3 ? k : 0].load(x + next * cols + c0 + (long long)k * T * E);
        }
        if (lane == 0) red[par][warp] = s;
        __syncthreads();  // also: the column data staged (first row)
        s = red[par][0];
#pragma unroll
        for (int i = 1; i < WARPS; i++) s = op.merge(s, red[par][i]);
        if (XA) {
#ifdef KW_XASYNC
            if (tl == 0) {
                const float w2[2] = {s.a, s.b};
                xa_send<2>(w2, &xparts[par][cluster.block_rank()].a, &xbar[par], CS);
            }
            xa_wait(&xbar[par], (xph >> par) & 1u);
            xph ^= 1u << par;
            s = xparts[par][0];
#pragma unroll
            for (int i = 1; i < CS; i++) s = op.merge(s, xparts[par][i]);
#endif
        } else {
            if (tl == 0) part[par] = s;
            asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
            s = *cluster.map_shared_rank(&part[par], 0);
#pragma unroll
            for (int i = 1; i < CS; i++) s = op.merge(s, *cluster.map_shared_rank(&part[par], i));
        }
        const typename Op::Fin f = op.finish(s, cols, ctx);
        if (PF == 1 && next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) vn[PF == 1 ? k : 0].load(x + next * cols + c0 + (long long)k * T * E);
        }
        typename Op::T* yr = y + row * cols;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                const long long c = c0 + (long long)k * T * E;
                C cv;
                if (MODE == 0) cv = op.template column<P>(c);
                if (MODE == 1) {
                    uint4* d = reinterpret_cast<uint4*>(&cv);
#pragma unroll
                    for (int i = 0; i < W; i++) d[i] = res_cols[(k * W + i) * T + tl];
                }
                float o[E];
                op.apply(v[k], cv, f, o);
                rm_store<typename Op::S, true>(o, yr + c);
            }
        }
        if (PF != 2 && next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (PF == 1 || PF == 3) v[k] = vn[PF == 1 || PF == 3 ? k : 0];
                else if (k < kv) v[k].load(x + next * cols + c0 + (long long)k * T * E);
            }
        }
        par ^= 1;
    }
    // No block leaves while another may still read its part (every block of a cluster takes the same rows); with
    // XA a block has received every block's last part before it leaves, and nothing reads a remote block.
    if (!XA) asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}

// ROW_RES_ENTRIES declares the family's entry points <prefix>_res_{f32,bf16}_v<NV>t<T>g<G>m<MODE>[p|s]
// (rowFamily.kernel in rowplan.go; p: PF 1, s: PF 2) over PARAMS(S) (x, y, rows and cols among them) and OP(S),
// which declares the Op as `op`: the families with column data. ROW_RES_PLAIN_ENTRIES declares those of them that
// keep no column data (MODE 0), for the families without any (Softmax). The configurations are the ones timed
// (rowplan.go, rowResBuilt and rowResPlain).
#define ROW_RES_ENTRY(PREFIX, S, NAME, NV, T, G, M, PF, PN, PARAMS, OP)                                     \
    extern "C" __global__ void __launch_bounds__(T * G) PREFIX##_res_##NAME##_v##NV##t##T##g##G##m##M##PN(    \
        PARAMS(S)) {                                                                                        \
        OP(S)                                                                                               \
        row_res<decltype(op), NV, T, G, M, PF>(op, x, y, rows, cols);                                       \
    }
#define ROW_RES_PLAIN_DTYPE(PREFIX, S, NAME, PARAMS, OP)                         \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 1024, 1, 0, 2, s, PARAMS, OP)              \
    ROW_RES_ENTRY(PREFIX, S, NAME, 16, 512, 1, 0, 2, s, PARAMS, OP)
#define ROW_RES_DTYPE(PREFIX, S, NAME, PARAMS, OP)                               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 1024, 1, 0, 0, , PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 1024, 1, 1, 0, , PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 512, 1, 1, 0, , PARAMS, OP)                \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 512, 1, 2, 0, , PARAMS, OP)                \
    ROW_RES_ENTRY(PREFIX, S, NAME, 4, 512, 1, 1, 1, p, PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 256, 1, 1, 1, p, PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 4, 128, 2, 2, 1, p, PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 64, 8, 1, 1, p, PARAMS, OP)                \
    ROW_RES_ENTRY(PREFIX, S, NAME, 2, 256, 2, 1, 0, , PARAMS, OP)                \
    ROW_RES_PLAIN_DTYPE(PREFIX, S, NAME, PARAMS, OP)                             \
    ROW_RES_ENTRY(PREFIX, S, NAME, 8, 512, 1, 0, 2, s, PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 4, 512, 1, 1, 2, s, PARAMS, OP)               \
    ROW_RES_ENTRY(PREFIX, S, NAME, 4, 128, 4, 1, 2, s, PARAMS, OP)
// ROW_RESC_ENTRY declares <prefix>_resc_<dtype>_v8t512c<CS>m<MODE> (rowFamily.kernel), row_res_cluster with the
// st.async exchange (XA 1) and the next row in registers ahead of it (PF 3): blocks of 512 threads, 8 packs a
// thread, one a multiprocessor (its 100–110 registers a thread), clusters of 2, 4, 8 and 16 (non-portable: the
// launch allows it) for rows of 128 KiB to 1 MiB; MODE 1 stages the column data (RMSNorm, LayerNorm; MODE 0, no
// column data kept, lost for Softmax and the cross-entropy and is not built). In the _x_sm90a modules the row_res
// entry macros declare these instead (rowplan.go, rowXARes).
#define ROW_RESC_ENTRY(PREFIX, S, NAME, CS, M, PARAMS, OP)                                                   \
    extern "C" __global__ void __launch_bounds__(512, 1) PREFIX##_resc_##NAME##_v8t512c##CS##m##M(PARAMS(S)) { \
        OP(S)                                                                                                \
        row_res_cluster<decltype(op), 8, 512, M, 3, CS, 1>(op, x, y, rows, cols);                           \
    }
#define ROW_RESC_DTYPE(PREFIX, S, NAME, M, PARAMS, OP) \
    ROW_RESC_ENTRY(PREFIX, S, NAME, 2, M, PARAMS, OP)  \
    ROW_RESC_ENTRY(PREFIX, S, NAME, 4, M, PARAMS, OP)  \
    ROW_RESC_ENTRY(PREFIX, S, NAME, 8, M, PARAMS, OP)  \
    ROW_RESC_ENTRY(PREFIX, S, NAME, 16, M, PARAMS, OP)
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_RES_ENTRIES(PREFIX, PARAMS, OP)                 \
    ROW_RESC_DTYPE(PREFIX, F32, f32, 1, PARAMS, OP)         \
    ROW_RESC_DTYPE(PREFIX, BF16, bf16, 1, PARAMS, OP)
#else
#define ROW_RES_ENTRIES(PREFIX, PARAMS, OP)              \
    ROW_RES_DTYPE(PREFIX, F32, f32, PARAMS, OP)          \
    ROW_RES_DTYPE(PREFIX, BF16, bf16, PARAMS, OP)
#endif
#ifdef KW_XASYNC  // Softmax's row_res_cluster lost (rowplan.go's rowXARes): none
#define ROW_RES_PLAIN_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_RES_PLAIN_ENTRIES(PREFIX, PARAMS, OP)        \
    ROW_RES_PLAIN_DTYPE(PREFIX, F32, f32, PARAMS, OP)    \
    ROW_RES_PLAIN_DTYPE(PREFIX, BF16, bf16, PARAMS, OP)
#endif
#endif

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
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_RES_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_RES_ENTRIES(PREFIX, PARAMS, OP)              \
    ROW_RES_DTYPE(PREFIX, F32, f32, PARAMS, OP)          \
    ROW_RES_DTYPE(PREFIX, BF16, bf16, PARAMS, OP)
#endif
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_RES_PLAIN_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_RES_PLAIN_ENTRIES(PREFIX, PARAMS, OP)        \
    ROW_RES_PLAIN_DTYPE(PREFIX, F32, f32, PARAMS, OP)    \
    ROW_RES_PLAIN_DTYPE(PREFIX, BF16, bf16, PARAMS, OP)
#endif
#endif

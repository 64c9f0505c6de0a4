// layernorm.cu: y = (x − μ) / sqrt(σ² + ε) · w + b over each row of x [rows, cols]; w, b [cols] (LayerNormFamily).
//
// The fused kernels are rowmap.cuh's over LayerNormOp: each row is read once from memory into registers, reduced
// to its shifted sums Σ(x − K) and Σ(x − K)² in one round (K is the row's first element: shifting by a value of
// the row keeps the one-round variance accurate when the mean is large against the spread), then normalized
// from registers and written once. fp32 arithmetic, fp32 or bf16 storage.
//
//   layernorm_warp_*:    one warp for R rows (rows of at most 32·NV·E elements)
//   layernorm_team_*:    a team of L lanes per row (rows of at most L·NV·E elements)
//   layernorm_block_*:   one block per row
//   layernorm_loop_*:    one block per row of any width, reading it twice
//   layernorm_cluster_*: sm_90 only (module layernorm_sm90): a thread-block cluster per row (again in
//                        layernorm_x_sm90a, built with KW_XASYNC: the exchange by st.async, xasync.cuh)
//   layernorm_cstream_*: sm_90 only: a cluster per row, each block streaming its share twice
//   layernorm_dsmem_*:   sm_90 only: row_dsmem (rowdsmem.cuh), a cluster holding the row in shared memory
//   layernorm_ring_*:    sm_90 only: row_ring (rowring.cuh), persistent clusters reading rows ahead into a ring
//   layernorm_blocka_*:  sm_90 only: one block per row, the column data loaded packs ahead of the stores
//
// layernorm_cuda.go picks the kernel per case (rowmap_cuda.go); the naive chain (row mean, x − μ, square, row mean,
// + ε, rsqrt, ·rstd, ·w, + b) uses the eager kernels of eager.cu.
#include "layernorm_op.cuh"
#include "rowres.cuh"
#include "rowgrid.cuh"
#include "rowring.cuh"

#define LN_OP(S) \
    LayerNormOp<S> op;   \
    op.w = w;            \
    op.b = b;            \
    op.eps = (float)eps;
#define LN_PARAMS(S) \
    const S::T *x, const S::T *w, const S::T *b, S::T *y, long long rows, long long cols, double eps

// Every kernel but the sm_90 ones (clusters, dsmem, ring, the wide blocks) is in both modules: ptx/layernorm.ptx
// (compute_75) and ptx/layernorm_sm90.ptx (compute_90, where bf16 outputs round with cvt.rn.bf16x2, see rm_store),
// which the launcher uses on sm_90.
#define LN_WARP(S, NAME, V, VN, NV, R)                                                                         \
    extern "C" __global__ void __launch_bounds__(256) layernorm_warp_##NAME##_##VN##NV##r##R(LN_PARAMS(S)) {   \
        LN_OP(S)                                                                                               \
        row_warp<LayerNormOp<S>, V, NV, R>(op, x, y, rows, cols);                                              \
    }
#define LN_BLOCK(S, NAME, V, VN, NV)                                                                           \
    extern "C" __global__ void __launch_bounds__(1024, 1) layernorm_block_##NAME##_##VN##NV(LN_PARAMS(S)) {    \
        LN_OP(S)                                                                                               \
        row_block<LayerNormOp<S>, V, NV>(op, x, y, cols);                                                      \
    }
#define LN_LOOP(S, NAME, V, VN)                                                                                \
    extern "C" __global__ void __launch_bounds__(1024) layernorm_loop_##NAME##_##VN(LN_PARAMS(S)) {            \
        LN_OP(S)                                                                                               \
        row_loop<LayerNormOp<S>, V, 4>(op, x, y, cols);                                                        \
    }
#define LN_LANES(S, NAME, NV, L)                                                                               \
    extern "C" __global__ void __launch_bounds__(256) layernorm_team_##NAME##_v##NV##l##L(LN_PARAMS(S)) {      \
        LN_OP(S)                                                                                               \
        row_lanes<LayerNormOp<S>, true, NV, L>(op, x, y, rows, cols);                                          \
    }
#define LN_DTYPE(S, NAME)                \
    LN_LANES(S, NAME, 8, 2)              \
    LN_LANES(S, NAME, 8, 4)              \
    LN_LANES(S, NAME, 8, 8)              \
    LN_LANES(S, NAME, 8, 16)             \
    LN_WARP(S, NAME, true, v, 1, 8)      \
    LN_WARP(S, NAME, true, v, 2, 4)      \
    LN_WARP(S, NAME, true, v, 4, 2)      \
    LN_WARP(S, NAME, true, v, 8, 1)      \
    LN_WARP(S, NAME, false, s, 1, 1)     \
    LN_WARP(S, NAME, false, s, 2, 1)     \
    LN_WARP(S, NAME, false, s, 4, 1)     \
    LN_WARP(S, NAME, false, s, 8, 1)     \
    LN_BLOCK(S, NAME, true, v, 2)        \
    LN_BLOCK(S, NAME, true, v, 4)        \
    LN_BLOCK(S, NAME, true, v, 8)        \
    LN_BLOCK(S, NAME, false, s, 8)       \
    LN_BLOCK(S, NAME, false, s, 16)      \
    LN_LOOP(S, NAME, true, v)            \
    LN_LOOP(S, NAME, false, s)

#ifndef KW_XASYNC  // layernorm_x_sm90a: the cluster kernels alone (LN_SM90)
LN_DTYPE(F32, f32)
LN_DTYPE(BF16, bf16)
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// sm_90 only: a cluster per row, holding it in registers (cluster) or streaming it twice (cstream, 4 packs in
// flight a thread).
#define LN_CLUSTER(S, NAME, NV, CS)                                                                            \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024, 1)                           \
        layernorm_cluster_##NAME##_v##NV##_c##CS(LN_PARAMS(S)) {                                               \
        LN_OP(S)                                                                                               \
        row_cluster<LayerNormOp<S>, NV, CS>(op, x, y, cols);                                                   \
    }
#define LN_CSTREAM(S, NAME, CS)                                                                                \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024)                              \
        layernorm_cstream_##NAME##_c##CS(LN_PARAMS(S)) {                                                       \
        LN_OP(S)                                                                                               \
        row_cstream<LayerNormOp<S>, CS, 4>(op, x, y, cols);                                                    \
    }
#ifdef KW_XASYNC  // the _x_sm90a module: the cluster kernels alone
#define LN_SM90(S, NAME) LN_CLUSTER(S, NAME, 8, 2) LN_CLUSTER(S, NAME, 8, 4) LN_CLUSTER(S, NAME, 8, 8)
#else
#define LN_SM90(S, NAME)          \
    LN_CLUSTER(S, NAME, 8, 2)     \
    LN_CLUSTER(S, NAME, 8, 4)     \
    LN_CLUSTER(S, NAME, 8, 8)     \
    LN_CSTREAM(S, NAME, 2)        \
    LN_CSTREAM(S, NAME, 4)        \
    LN_CSTREAM(S, NAME, 8)
#endif
LN_SM90(F32, f32)
LN_SM90(BF16, bf16)

// row_dsmem (rowdsmem.cuh): a cluster of 2–16 blocks holding the row in distributed shared memory.
#define LN_DSMEM_OP(S)                \
    RowMapDSMEM<LayerNormOp<S> > op; \
    op.op.w = w;                      \
    op.op.b = b;                      \
    op.op.eps = (float)eps;           \
    op.x = x;                         \
    op.y = y;                         \
    op.cols = cols;
ROW_DSMEM_ENTRIES(layernorm, LN_PARAMS, LN_DSMEM_OP)
ROW_RING_ENTRIES(layernorm, LN_PARAMS, LN_DSMEM_OP)  // row_ring (rowring.cuh), the same Op
ROW_GRID_ENTRIES(layernorm, LN_PARAMS, LN_DSMEM_OP)  // row_grid (rowgrid.cuh), the same Op
ROW_RING2_ENTRIES(layernorm, LN_PARAMS, LN_DSMEM_OP)  // two rows a pass
ROW_RES_ENTRIES(layernorm, LN_PARAMS, LN_OP)  // row_res (rowres.cuh): persistent teams

// layernorm_blocka_<dtype>_v8t<T>a<LEAD> (rowmap.cuh's ROW_BLOCKA_ENTRY): one block of T threads a row, 8 packs a
// thread, each pack's w and b loaded LEAD packs ahead of its store (row_block_lead), bounded by T threads rather than
// 1024. Built for the block sizes of the rows where they were timed (rowplan.go's rowLead): bf16 4096 and 16384
// columns, fp32 4096.
ROW_BLOCKA_ENTRY(layernorm, BF16, bf16, 64, 4, LN_PARAMS, LN_OP)
ROW_BLOCKA_ENTRY(layernorm, BF16, bf16, 256, 3, LN_PARAMS, LN_OP)
ROW_BLOCKA_ENTRY(layernorm, F32, f32, 128, 8, LN_PARAMS, LN_OP)
#endif

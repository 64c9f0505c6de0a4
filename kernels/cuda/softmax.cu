// softmax.cu: the softmax of each row of x [rows, cols], with the row maximum subtracted (SoftmaxFamily).
//
// The fused kernels are rowmap.cuh's over SoftmaxOp: each row is read once from memory into registers and reduced
// in one round to (m, s), its maximum and Σ e^(x−m): each thread takes its own maximum and sum, and the pairs
// merge by rescaling the sum of the smaller maximum (online softmax). fp32 packs keep each e^(x−m_t) in place,
// so the output is one multiply a element; bf16 packs cannot, and the output pass computes e^(x−m)/s again.
// e^t is ex2.approx(t·log2 e) on t = x − m, which is exact in fp32, so rows around ±30000 lose nothing. The
// streaming kernels (loop, cstream) compute each exponential twice in either dtype.
//
//   softmax_warp_*:    one warp for R rows (rows of at most 32·NV·E elements)
//   softmax_team_*:    a team of L lanes per row (rows of at most L·NV·E elements)
//   softmax_block_*:   one block per row (softmax_block_f32_v32, sm_90 only: 32 packs a thread, ≤ 128 threads)
//   softmax_loop_*:    one block per row of any width, reading it twice
//   softmax_cluster_*: sm_90 only (module softmax_sm90): a thread-block cluster per row (again in
//                      softmax_x_sm90a, built with KW_XASYNC: the exchange by st.async, xasync.cuh)
//   softmax_cstream_*: sm_90 only: a cluster per row, each block streaming its share twice
//   softmax_dsmem_*:   sm_90 only: row_dsmem (rowdsmem.cuh), a cluster holding the row in shared memory
//   softmax_ring_*:    sm_90 only: row_ring (rowring.cuh), persistent clusters reading rows ahead into a ring
//   softmax_res_*:     sm_90 only: row_res (rowres.cuh), persistent teams, each loading its next row into shared
//                      memory while it reduces and stores a row in its registers
//
// softmax_cuda.go picks the kernel per case (rowmap_cuda.go); the naive chain (row max, x − max, exp, row sum,
// divide) uses the eager kernels of eager.cu.
#include "softmax_op.cuh"
#include "rowres.cuh"
#include "rowgrid.cuh"
#include "rowring.cuh"

#define SM_PARAMS(S) const S::T *x, S::T *y, long long rows, long long cols

// Every kernel but the sm_90 ones (clusters, dsmem, ring, the wide blocks) is in both modules: ptx/softmax.ptx
// (compute_75) and ptx/softmax_sm90.ptx (compute_90, where bf16 outputs round with cvt.rn.bf16x2, see rm_store),
// which the launcher uses on sm_90.
#define SM_WARP(S, NAME, V, VN, NV, R)                                                                         \
    extern "C" __global__ void __launch_bounds__(256, 4) softmax_warp_##NAME##_##VN##NV##r##R(SM_PARAMS(S)) {     \
        row_warp<SoftmaxOp<S>, V, NV, R>(SoftmaxOp<S>(), x, y, rows, cols);                                    \
    }
#define SM_BLOCK(S, NAME, V, VN, NV)                                                                           \
    extern "C" __global__ void __launch_bounds__(1024, 1) softmax_block_##NAME##_##VN##NV(SM_PARAMS(S)) {      \
        row_block<SoftmaxOp<S>, V, NV>(SoftmaxOp<S>(), x, y, cols);                                            \
    }
// Wide blocks (sm_90 only, below; fp32 alone, where they beat the 1024-thread kernels' blocks on an H200): 32 packs a
// thread in blocks of at most TH threads, at least MB of them a multiprocessor, so that 128 of a thread's 168
// registers hold row data and a block merge waits on fewer warps.
#define SM_BLOCKW(S, NAME, NV, TH, MB)                                                                         \
    extern "C" __global__ void __launch_bounds__(TH, MB) softmax_block_##NAME##_v##NV(SM_PARAMS(S)) {           \
        row_block<SoftmaxOp<S>, true, NV>(SoftmaxOp<S>(), x, y, cols);                                         \
    }
#define SM_LOOP(S, NAME, V, VN)                                                                                \
    extern "C" __global__ void __launch_bounds__(1024) softmax_loop_##NAME##_##VN(SM_PARAMS(S)) {              \
        row_loop<SoftmaxOp<S>, V, 4>(SoftmaxOp<S>(), x, y, cols);                                              \
    }
#define SM_LANES(S, NAME, NV, L)                                                                               \
    extern "C" __global__ void __launch_bounds__(256) softmax_team_##NAME##_v##NV##l##L(SM_PARAMS(S)) {        \
        row_lanes<SoftmaxOp<S>, true, NV, L>(SoftmaxOp<S>(), x, y, rows, cols);                                \
    }
#define SM_DTYPE(S, NAME)                \
    SM_LANES(S, NAME, 8, 2)              \
    SM_LANES(S, NAME, 8, 4)              \
    SM_LANES(S, NAME, 8, 8)              \
    SM_LANES(S, NAME, 8, 16)             \
    SM_WARP(S, NAME, true, v, 1, 8)      \
    SM_WARP(S, NAME, true, v, 2, 4)      \
    SM_WARP(S, NAME, true, v, 4, 2)      \
    SM_WARP(S, NAME, true, v, 8, 1)      \
    SM_WARP(S, NAME, false, s, 1, 1)     \
    SM_WARP(S, NAME, false, s, 2, 1)     \
    SM_WARP(S, NAME, false, s, 4, 1)     \
    SM_WARP(S, NAME, false, s, 8, 1)     \
    SM_BLOCK(S, NAME, true, v, 2)        \
    SM_BLOCK(S, NAME, true, v, 4)        \
    SM_BLOCK(S, NAME, true, v, 8)        \
    SM_BLOCK(S, NAME, false, s, 8)       \
    SM_BLOCK(S, NAME, false, s, 16)      \
    SM_LOOP(S, NAME, true, v)            \
    SM_LOOP(S, NAME, false, s)

#ifndef KW_XASYNC  // softmax_x_sm90a: the cluster kernels alone
SM_DTYPE(F32, f32)
SM_DTYPE(BF16, bf16)
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// sm_90 only: a cluster per row, holding it in registers (cluster) or streaming it twice (cstream, 4 packs in
// flight a thread).
#define SM_CLUSTER(S, NAME, NV, CS)                                                                            \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024, 1)                           \
        softmax_cluster_##NAME##_v##NV##_c##CS(SM_PARAMS(S)) {                                                 \
        row_cluster<SoftmaxOp<S>, NV, CS>(SoftmaxOp<S>(), x, y, cols);                                         \
    }
#define SM_CSTREAM(S, NAME, CS)                                                                                \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024)                              \
        softmax_cstream_##NAME##_c##CS(SM_PARAMS(S)) {                                                         \
        row_cstream<SoftmaxOp<S>, CS, 4>(SoftmaxOp<S>(), x, y, cols);                                          \
    }
#ifdef KW_XASYNC  // the _x_sm90a module: the cluster kernels alone
#define SM_SM90(S, NAME) SM_CLUSTER(S, NAME, 8, 2) SM_CLUSTER(S, NAME, 8, 4) SM_CLUSTER(S, NAME, 8, 8)
#else
#define SM_SM90(S, NAME)          \
    SM_CLUSTER(S, NAME, 8, 2)     \
    SM_CLUSTER(S, NAME, 8, 4)     \
    SM_CLUSTER(S, NAME, 8, 8)     \
    SM_CSTREAM(S, NAME, 2)        \
    SM_CSTREAM(S, NAME, 4)        \
    SM_CSTREAM(S, NAME, 8)
#endif
SM_SM90(F32, f32)
SM_SM90(BF16, bf16)
#ifndef KW_XASYNC
SM_BLOCKW(F32, f32, 32, 128, 3)
#endif

// row_dsmem (rowdsmem.cuh): a cluster of 2–16 blocks holding the row in distributed shared memory.
#define SM_DSMEM_OP(S)              \
    RowMapDSMEM<SoftmaxOp<S> > op; \
    op.x = x;                       \
    op.y = y;                       \
    op.cols = cols;
ROW_DSMEM_ENTRIES(softmax, SM_PARAMS, SM_DSMEM_OP)
ROW_RING_ENTRIES(softmax, SM_PARAMS, SM_DSMEM_OP)  // row_ring (rowring.cuh), the same Op
ROW_GRID_ENTRIES(softmax, SM_PARAMS, SM_DSMEM_OP)  // row_grid (rowgrid.cuh), the same Op

// row_res (rowres.cuh): persistent teams, the next row in shared memory (no column data to keep).
#define SM_RES_OP(S) SoftmaxOp<S> op;
ROW_RES_PLAIN_ENTRIES(softmax, SM_PARAMS, SM_RES_OP)
#endif

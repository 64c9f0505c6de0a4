// rowdsmem.cuh: row_dsmem, the row kernel of every row family (rmsnorm.cu, layernorm.cu, softmax.cu,
// crossentropy.cu, fp8quant.cu) for rows no block holds in registers, written once over the family's Op (sm_90,
// the families' _sm90 modules). A thread-block cluster of CS = 2 … 16 blocks (the launch's cluster dimension;
// above 8 a non-portable size, see cuda_cluster.go) takes one row, grid = rows·CS, the cluster's blocks
// consecutive. Each block:
//
//   1. copies its slice of the row — packs [rank·per, (rank+1)·per) — into its dynamic shared memory, each
//      thread the packs tid, tid + blockDim, …, with cp.async (16-byte packs: no registers held while in flight);
//   2. reduces its packs from shared memory (U at a time) to a RowStat, then the block's (block_merge);
//   3. publishes that in shared memory; after a cluster barrier every block reads the CS partial statistics
//      through distributed shared memory and merges them in rank order (the same result in every block,
//      deterministic), then arrives at a second barrier, which it waits on only at its end, so that no block's
//      statistic is released while another may still read it;
//   4. maps its packs from shared memory to the outputs.
//
// So each element is read once from memory and written once, whatever the row's length up to 16 slices, and the
// registers a thread holds are a handful: a multiprocessor runs as many blocks as its shared memory takes.
// A thread reads back only the packs it copied itself (cp.async.wait_all makes them visible to it), so no block
// barrier separates the copy from the reduction.
//
// An Op is the family's per-element work:
//
//   typedef S (F32 or BF16), T (S::T); struct Ctx (per row and thread); struct Fin (after the reduction)
//   Ctx context(long long row)                               — e.g. the cross-entropy's label
//   bool reads(const Ctx&)                                    — false: the row is not read (an ignored label)
//   RowStat zero(), merge(RowStat, RowStat)                   — as rowmap.cuh's Op
//   RowStat scan<P, NV>(const P (&v)[NV], kv, const Ctx&)     — over packs v[0 … kv−1]
//   Fin finish(RowStat, cols, const Ctx&)
//   Col<P>, column<P>(col)                                    — what the outputs need of a column (rowmap.cuh)
//   put<P>(const P& x, row, col, const Col<P>&, const Fin&, const Ctx&) — writes the outputs of the input pack at col
//   row_out(row, const Fin&, const Ctx&)                      — the row's own outputs (a loss, a scale), once
//
// RowMapDSMEM adapts a rowmap.cuh Op (LayerNorm, Softmax, RMSNorm), whose outputs are one pack per input pack.
#pragma once
#include "rowmap.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// dsmem_cp16 starts a 16-byte copy from global memory to shared memory (cp.async.cg: cached in L2 only).
__device__ __forceinline__ void dsmem_cp16(void* smem, const void* gmem) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}

// DsmemLoad<P, V>::load copies pack i of the row at xr into slot p (V: cp.async; else one element, as loaded).
template <class P, bool V>
struct DsmemLoad {
    template <class T>
    static __device__ __forceinline__ void load(P* p, const T* xr) { dsmem_cp16(p, xr); }
    static __device__ __forceinline__ void wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
};
template <class P>
struct DsmemLoad<P, false> {
    template <class T>
    static __device__ __forceinline__ void load(P* p, const T* xr) { p->load(xr); }
    static __device__ __forceinline__ void wait() {}
};

// row_dsmem: see the top of the file. V: 16-byte packs (cols % E == 0), else one element a pack; U: packs a
// thread reduces at a time (the entry points take 4 packs, or 8 single elements: with 4, ptxas spills 8 bytes of
// the single-element kernels). Dynamic shared memory: ⌈packs / CS⌉ packs (rowDSMEMBytes in rowplan.go).
template <class Op, bool V, int U>
__device__ __forceinline__ void row_dsmem(const Op& op, const typename Op::T* __restrict__ x, long long cols) {
    typedef Pack<typename Op::S, V> P;
    extern __shared__ uint4 kw_dsmem[];
    __shared__ RowStat red[32];
    __shared__ RowStat mine;
    P* slice = reinterpret_cast<P*>(kw_dsmem);
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int cs = (int)cluster.num_blocks();
    const long long rank = cluster.block_rank();
    const long long row = blockIdx.x / cs;
    const long long packs = cols / P::E, per = (packs + cs - 1) / cs, lo = rank * per;
    const long long n = max(min(per, packs - lo), 0ll);  // this block's packs
    const long long step = blockDim.x;
    const typename Op::T* xr = x + row * cols;
    const typename Op::Ctx ctx = op.context(row);
    const bool rd = op.reads(ctx);  // the same in every block of the cluster
    RowStat s = op.zero();
    if (rd) {
        for (long long i = threadIdx.x; i < n; i += step) DsmemLoad<P, V>::load(slice + i, xr + (lo + i) * P::E);
        DsmemLoad<P, V>::wait();
        for (long long i0 = threadIdx.x; i0 < n; i0 += U * step) {
            P v[U];
            const int kv = (int)min((long long)U, (n - i0 + step - 1) / step);
#pragma unroll
            for (int k = 0; k < U; k++)
                if (k < kv) v[k] = slice[i0 + k * step];
            s = op.merge(s, op.template scan<P, U>(v, kv, ctx));
        }
    }
    s = block_merge(op, s, red);
    if (threadIdx.x == 0) mine = s;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every statistic published
    RowStat t = *cluster.map_shared_rank(&mine, 0);
    for (int i = 1; i < cs; i++) t = op.merge(t, *cluster.map_shared_rank(&mine, i));
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' statistics
    const typename Op::Fin f = op.finish(t, cols, ctx);
    // With column data (RMSNorm's w, LayerNorm's w and b), U packs at a time, their columns loaded before any of
    // their stores: a load the source places after a store waits for it (the compiler cannot tell that w and y do
    // not alias), a memory round trip a pack (on an H200: RMSNorm bf16 1024×262144 68% → 76% of the copy, LayerNorm
    // fp32 4096×65536 69% → 76%). Without, one pack at a time, which measured faster for those Ops.
    if (sizeof(typename Op::template Col<P>) <= 1) {
        for (long long i = threadIdx.x; i < n; i += step)
            op.put(slice[i], row, (lo + i) * P::E, typename Op::template Col<P>(), f, ctx);
    } else {
    for (long long i0 = threadIdx.x; i0 < n; i0 += U * step) {
        const int kv = (int)min((long long)U, (n - i0 + step - 1) / step);
        typename Op::template Col<P> col[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            if (k < kv) col[k] = op.template column<P>((lo + i0 + k * step) * P::E);
#pragma unroll
        for (int k = 0; k < U; k++)
            if (k < kv) op.put(slice[i0 + k * step], row, (lo + i0 + k * step) * P::E, col[k], f, ctx);
    }
    }
    if (rank == 0 && threadIdx.x == 0) op.row_out(row, f, ctx);
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
}

// RowMapDSMEM runs a rowmap.cuh Op (its scan, merge, finish, column and apply_raw) as a row_dsmem Op over input
// x and output y of the same layout.
template <class M>
struct RowMapDSMEM {
    typedef typename M::S S;
    typedef typename M::T T;
    typedef typename M::Ctx Ctx;
    typedef typename M::Fin Fin;
    M op;
    const T* __restrict__ x;
    T* __restrict__ y;
    long long cols;

    __device__ __forceinline__ Ctx context(long long row) const { return op.context(x + row * cols); }
    __device__ __forceinline__ bool reads(const Ctx&) const { return true; }
    __device__ __forceinline__ RowStat zero() const { return op.zero(); }
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const { return op.merge(p, q); }
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx& c) const {
        return op.template scan<P, NV>(v, kv, c);
    }
    __device__ __forceinline__ Fin finish(RowStat t, long long n, const Ctx& c) const { return op.finish(t, n, c); }
    template <class P>
    struct Col : M::template Col<P> {};
    template <class P>
    __device__ __forceinline__ Col<P> column(long long c) const {
        Col<P> k;
        static_cast<typename M::template Col<P>&>(k) = op.template column<P>(c);
        return k;
    }
    template <class P>
    __device__ __forceinline__ void put(const P& v, long long row, long long c, const Col<P>& k, const Fin& f,
                                       const Ctx&) const {
        float o[P::E];
        op.apply_raw(v, k, f, o);
        rm_store<S, (P::E > 1)>(o, y + row * cols + c);
    }
    __device__ __forceinline__ void row_out(long long, const Fin&, const Ctx&) const {}
};

// ROW_DSMEM_ENTRIES declares the family's entry points <prefix>_dsmem_{f32,bf16}_{v,s} (rowFamily.kernel in
// rowplan.go): PARAMS(S) is the family's kernel parameter list (x and cols among them), OP(S) the statements
// that declare its row_dsmem Op `op` from them. No __cluster_dims__: the cluster's size is the launch's.
#define ROW_DSMEM_ENTRY(PREFIX, S, NAME, V, VN, PARAMS, OP)                                                    \
    extern "C" __global__ void __launch_bounds__(1024) PREFIX##_dsmem_##NAME##_##VN(PARAMS(S)) {               \
        OP(S)                                                                                                  \
        row_dsmem<decltype(op), V, (V ? 4 : 8)>(op, x, cols);                                                   \
    }
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_DSMEM_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_DSMEM_ENTRIES(PREFIX, PARAMS, OP)                \
    ROW_DSMEM_ENTRY(PREFIX, F32, f32, true, v, PARAMS, OP)   \
    ROW_DSMEM_ENTRY(PREFIX, F32, f32, false, s, PARAMS, OP)  \
    ROW_DSMEM_ENTRY(PREFIX, BF16, bf16, true, v, PARAMS, OP) \
    ROW_DSMEM_ENTRY(PREFIX, BF16, bf16, false, s, PARAMS, OP)
#endif

#endif

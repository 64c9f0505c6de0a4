// rowgrid.cuh: row_grid, a row kernel whose blocks own columns instead of rows, for the rows a multiprocessor
// cannot hold (sm_90; written over the row_dsmem Op, rowdsmem.cuh; rmsnorm.cu, layernorm.cu, softmax.cu and
// crossentropy.cu declare its entries, rowgrid.go says why fp8quant.cu does not).
//
// Grid: every block of the launch resident at once (a cooperative launch), in G groups of P blocks. Group g takes
// rows g, g + G, …; block k of a group owns the same slice of every row it takes, packs [k·per, (k+1)·per), and
// loads that slice's column data (RMSNorm's w, LayerNorm's w and b) into registers once: no column byte is read
// again for a row. A row's statistic is the merge of its P blocks' partial statistics, which meet in global
// memory, so a group is not bound to a GPC (a cluster is) and a row may take as many blocks as the GPU runs.
//
// The exchange is not waited on where it is made. Each block streams its slices through a ring of D rows in
// dynamic shared memory (cp.async, each thread its own packs, as row_ring's ring: a thread's commit groups are its
// full bits, no barrier guards a slot), one block barrier a step (row_grid's comment says what a step does): a
// block publishes its partial of a row in the step that reduces it and merges the row's P partials L steps later,
// from loads it issued K steps before that, so neither the stores nor the loads of the exchange are waited on,
// and the rows between wait in the ring while the loads of the next ones are in flight. Measured (column-grid.cu
// in scripts/experiments): a step costs about a microsecond beside its bytes, so a block's slice of a row must be
// about 32 KiB for the stream to keep pace with the copy.
//
// The partials: slot [row][k] holds block k's statistic of the row as two 64-bit words, (a, tag) and (b, tag),
// each written and read as one single-copy-atomic access (st/ld.relaxed.gpu), so a reader that sees this
// launch's tag in both words has this launch's statistic and needs no fence. The tag is the launch's number + 1:
// ctl[0] counts finished launches (the last block to leave, counted in ctl[1], advances it), so slots written by
// earlier launches never match and the scratch needs no clearing between launches, whatever plan used it before.
// Every block merges a row's P partials in the same order (each lane its slots in rank order, then the warp's
// butterfly), so every block applies the same statistic, bit for bit: deterministic.
#pragma once
#include "rowring.cuh"  // ring_commit, ring_wait (and rowdsmem.cuh)

#include <type_traits>
#include <utility>

// GridSlot: one block's partial statistic of one row, tagged (above).
struct GridSlot {
    unsigned long long a, b;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ unsigned long long grid_word(float v, unsigned tag) {
    return (unsigned long long)__float_as_uint(v) | ((unsigned long long)tag << 32);
}

__device__ __forceinline__ void grid_publish(GridSlot* s, RowStat v, unsigned tag) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(grid_word(v.a, tag)),
                 "l"(grid_word(v.b, tag))
                 : "memory");
}

// grid_load starts the load of slot s (its two words, one atomic access each); grid_check says whether both carry
// tag, and gives the statistic in v. The load's latency is paid where grid_check first looks.
__device__ __forceinline__ void grid_load(const GridSlot* s, GridSlot& w) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.a), "=l"(w.b) : "l"(s) : "memory");
}
__device__ __forceinline__ bool grid_check(const GridSlot& w, unsigned tag, RowStat& v) {
    v.a = __uint_as_float((unsigned)w.a);
    v.b = __uint_as_float((unsigned)w.b);
    return (unsigned)(w.a >> 32) == tag && (unsigned)(w.b >> 32) == tag;
}

// grid_steps runs step(j + u, u) for u = 0 … K − 1 while j + u < end, u a constant in each.
template <class F, int... U>
__device__ __forceinline__ void grid_steps(F& step, long long j, long long end, std::integer_sequence<int, U...>) {
    ((j + U < end ? step(j + U, std::integral_constant<int, U>()) : void()), ...);
}

// row_grid: see the top of the file. NP: packs of a row's slice a thread holds at most (per ≤ blockDim·NP, or the
// kernel traps); NS: slots a lane of warp 0 merges (P ≤ 32·NS); K: steps ahead that warp 0 loads a row's slots
// (even); groups: G (gridDim.x a multiple of it); lag: L, K + 1 ≤ L ≤ 27; the ring holds D = dynamic shared
// memory / (blockDim·NP packs) rows, D ≥ L + 3 (else it traps). slots: rows·P GridSlots; ctl: two counters (four
// with ROW_GRID_STATS, the experiments' count of late slots and switch), zero at first.
//
// Step j: (before the block barrier) reduce row j; (after it) the last warp publishes row j's partial, warp 0
// merges row j − L's partials into fin[j mod 2] and loads row j − L + K's, and every thread maps row j − L − 1
// (whose fin the barrier made visible) and issues the row that takes its slot. So warp 0's merge is not waited on
// by the barrier it precedes, and the ring holds rows j − L − 1 … j and D − L − 2 rows of loads ahead.
template <class Op, int NP, int NS, int K>
__device__ __forceinline__ void row_grid(const Op& op, const typename Op::T* __restrict__ x, long long rows,
                                         long long cols, int groups, int lag, GridSlot* __restrict__ slots,
                                         unsigned* __restrict__ ctl) {
    typedef Pack<typename Op::S, true> P;
    typedef typename Op::template Col<P> C;
    enum { E = P::E };
    static_assert(K >= 2 && K % 2 == 0 && NS >= 1, "row_grid: K even");
    extern __shared__ uint4 kw_dsmem[];
    P* ring = reinterpret_cast<P*>(kw_dsmem);
    __shared__ RowStat red[2][32];
    __shared__ typename Op::Fin fin[2];
    __shared__ typename Op::Ctx cxs[32];  // the contexts of rows j − L − 1 … j + 2, by row mod 32
    __shared__ unsigned tagS;
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    const int tid = threadIdx.x, T = blockDim.x, lane = tid & 31, warp = tid >> 5, warps = T >> 5;
    const int np = gridDim.x / groups, g = blockIdx.x / np, rank = blockIdx.x - g * np;
    const long long nrows = g < rows ? (rows - g + groups - 1) / groups : 0;  // this group's rows
    const long long packs = cols / E, per = (packs + np - 1) / np, lo = rank * per;
    const int n = (int)max(min(per, packs - lo), 0ll);  // this block's packs of a row
    const int S = T * NP;                               // packs a ring slot
    const int D = (int)(dyn / ((unsigned)S * sizeof(P)));
    const int L = lag;
    if (per > S || L < K + 1 || L > 27 || D < L + 3 || np > 32 * NS) __trap();
    const int kv = tid < n ? min(NP, (n - tid + T - 1) / T) : 0;
    C col[NP];
#pragma unroll
    for (int q = 0; q < NP; q++)
        if (q < kv) col[q] = op.template column<P>((lo + tid + q * T) * E);
    auto rowof = [&](long long j) { return g + min(j, nrows - 1) * groups; };
    const long long rstep = (long long)groups * cols;  // elements from a row of the group to its next
    // issue: this thread's packs of the group's next row into its slot, one commit group (empty past the rows).
    long long ni = 0;
    int si = 0;
    const typename Op::T* xi = x + (long long)g * cols + (lo + tid) * E;
    auto issue = [&]() {
        if (ni < nrows) {
            P* slot = ring + si * S + tid;
#pragma unroll
            for (int q = 0; q < NP; q++)
                if (q < kv) dsmem_cp16(slot + q * T, xi + (long long)q * T * E);
        }
        ring_commit();
        ni++;
        xi += rstep;
        si = si + 1 == D ? 0 : si + 1;
    };
    // Thread 0 loads the context of row j + 2 + K in step j and stores it into cxs in step j + K (cr[j mod K]): its
    // latency, like the slots', is that of a load queued behind the ring's copies.
    typename Op::Ctx cr[K];
    if (nrows > 0) {
        for (int j = 0; j < D; j++) issue();
        if (tid == 0) {
            cxs[0] = op.context(rowof(0));
            cxs[1] = op.context(rowof(1));
#pragma unroll
            for (int u = 0; u < K; u++) cr[u] = op.context(rowof(2 + u));
        }
    }
    if (tid == 0) {
        unsigned t;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(t) : "l"(ctl) : "memory");
        tagS = t + 1;
    }
    // Warp 0 loads row m's slots K steps before it merges them (pw[m mod K], NS slots a lane), so that their round
    // trip to L2 — a load queued behind the ring's copies — overlaps K steps; a slot not yet written then is
    // loaded again until it is.
    GridSlot pw[K][NS] = {};  // (tag 0: never a launch's)
    auto poll = [&](long long m, GridSlot(&w)[NS]) {
        const GridSlot* sp = slots + rowof(m) * np;
#pragma unroll
        for (int k = 0; k < NS; k++)
            if (lane + 32 * k < np) grid_load(sp + lane + 32 * k, w[k]);
    };
    __syncthreads();
    const unsigned tag = tagS;
#ifdef ROW_GRID_STATS
    const bool ablate = ctl[3] & 1;  // the experiments time the steps without the exchange
#else
    const bool ablate = false;
#endif
    int sr = 0, sa = 0;                              // the ring slots of rows j and j − L − 1
    GridSlot* pub = slots + (long long)g * np + rank;  // row j's slot of this block
    const long long pstep = (long long)groups * np;
    auto step = [&](long long j, auto uc) {
        constexpr int u = decltype(uc)::value, par = u & 1;  // j mod K, j mod 2
        if (j < nrows) {
            ring_wait(j < L + 1 ? D - 1 - (int)j : D - L - 2);  // row j has landed (this thread's packs of it)
            const typename Op::Ctx cx = cxs[(int)(j & 31)];
            RowStat s = op.zero();
            if (kv > 0 && op.reads(cx)) {
                P v[NP];
#pragma unroll
                for (int q = 0; q < NP; q++)
                    if (q < kv) v[q] = ring[sr * S + tid + q * T];
                s = op.template scan<P, NP>(v, kv, cx);
            }
            s = warp_merge(op, s);
            if (lane == 0) red[par][warp] = s;
            if (tid == 0 && j + 2 < nrows) {
                cxs[(int)((j + 2) & 31)] = cr[u];
                cr[u] = op.context(rowof(j + 2 + K));
            }
            sr = sr + 1 == D ? 0 : sr + 1;
        }
        __syncthreads();
        if (j < nrows && warp == warps - 1) {  // publish row j's partial
            const RowStat s = warp_merge(op, lane < warps ? red[par][lane] : op.zero());
            if (lane == 0 && !ablate) grid_publish(pub, s, tag);
            pub += pstep;
        }
        const long long m = j - L;  // merged now, mapped in the next step
        if (warp == 0) {
            if (m >= 0 && m < nrows) {  // each lane its slots in rank order, then the butterfly
                RowStat t = op.zero(), v[NS];
                for (;;) {
                    bool ok = true;
#pragma unroll
                    for (int k = 0; k < NS; k++)
                        if (lane + 32 * k < np) ok &= grid_check(pw[u][k], tag, v[k]);
                    if (ablate || __all_sync(0xffffffffu, ok)) break;
#ifdef ROW_GRID_STATS
                    if (lane == 0) atomicAdd(ctl + 2, 1u);  // the experiments count the slots not there in time
#endif
                    poll(m, pw[u]);
                }
#pragma unroll
                for (int k = 0; k < NS; k++)
                    if (lane + 32 * k < np) t = op.merge(t, v[k]);
                t = warp_merge(op, t);
                if (lane == 0) fin[par] = op.finish(t, cols, cxs[(int)(m & 31)]);
            }
            if (m + K >= 0 && m + K < nrows && !ablate) poll(m + K, pw[u]);  // merged in step j + K
        }
        const long long a = m - 1;  // mapped now
        if (a >= 0 && a < nrows) {
            const long long r = g + a * groups;
            const typename Op::Fin f = fin[par ^ 1];
            const typename Op::Ctx cx = cxs[(int)(a & 31)];
#pragma unroll
            for (int q = 0; q < NP; q++)
                if (q < kv) op.put(ring[sa * S + tid + q * T], r, (lo + tid + q * T) * E, col[q], f, cx);
            if (rank == 0 && tid == 0) op.row_out(r, f, cx);
            sa = sa + 1 == D ? 0 : sa + 1;
            issue();
        }
    };
    for (long long j = 0; j < nrows + L + 1; j += K)
        grid_steps(step, j, nrows + L + 1, std::make_integer_sequence<int, K>());
    asm volatile("cp.async.wait_all;" ::: "memory");
    if (tid == 0) {  // the last block to leave advances the launch count (the next launch's tag)
        unsigned d;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(d) : "l"(ctl + 1) : "memory");
        if (d == gridDim.x - 1) {
            asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" ::"l"(ctl + 1) : "memory");
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(ctl) : "memory");
        }
    }
}

// ROW_GRID_ENTRIES declares the family's entry points <prefix>_grid_{f32,bf16}_v (rowFamily.kernel in rowplan.go,
// 16-byte packs only) over the same PARAMS(S) and OP(S) as ROW_DSMEM_ENTRIES, with the grid's own parameters last:
// groups, lag, the slots and the two counters (rowgrid.go allocates them). Blocks of 512 threads with 4 packs a
// thread of a row's slice (32 KiB, fp32 or bf16), one a multiprocessor (at most 128 registers), the slots loaded
// two steps ahead, warp 0 merging up to 64 blocks' partials in fp32 and 32 in bf16 (NS = 1: a bf16 row of 32 KiB
// slices takes 16 blocks at 262144 columns, and the 8 registers a thread NS = 2 costs kept LayerNorm's bf16 kernel,
// whose w and b take 32, spilling).
#define ROW_GRID_ENTRY(PREFIX, S, NAME, NS, PARAMS, OP)                                                             \
    extern "C" __global__ void __launch_bounds__(512, 1)                                                          \
        PREFIX##_grid_##NAME##_v(PARAMS(S), long long groups, long long lag, GridSlot* slots, unsigned* ctl) {    \
        OP(S)                                                                                                      \
        row_grid<decltype(op), 4, NS, 2>(op, x, rows, cols, (int)groups, (int)lag, slots, ctl);                   \
    }
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_GRID_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_GRID_ENTRIES(PREFIX, PARAMS, OP)             \
    ROW_GRID_ENTRY(PREFIX, F32, f32, 2, PARAMS, OP)      \
    ROW_GRID_ENTRY(PREFIX, BF16, bf16, 1, PARAMS, OP)
#endif

#endif

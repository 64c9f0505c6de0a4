// rowring.cuh: row_ring, a persistent and pipelined row kernel of every row family (rmsnorm.cu, layernorm.cu,
// softmax.cu, crossentropy.cu, fp8quant.cu), written once over the row_dsmem Op (rowdsmem.cuh; RowMapDSMEM adapts
// the rowmap.cuh Ops). sm_90, the families' _sm90 modules.
//
// Grid: as many clusters of CS = 1 … 16 blocks (the launch's cluster dimension; CS = 1 is a plain launch) as the
// GPU runs at once, capped by the rows (rowplan_cuda.go asks cuOccupancyMaxActiveClusters). Cluster c takes rows
// c, c + nclusters, …; each of its blocks owns the same slice of every row, packs [rank·per, (rank+1)·per).
//
// Each block keeps a ring of chunks in its dynamic shared memory: a chunk is K packs of each of the block's
// threads (T·K packs), a row's slice is cpr = ⌈per / (T·K)⌉ chunks, and the ring holds nc ≥ cpr of them (nc from
// the launch's dynamic shared memory size, %dynamic_smem_size). Chunks are numbered over the cluster's rows in
// order, chunk g in ring slot g mod nc. At the start every thread issues its packs of chunks 0 … nc−1; then, for
// each row: wait for its chunks and reduce them (chunk by chunk, as each arrives), merge the block's statistic,
// exchange it across the cluster, and map the chunks to the outputs — and as soon as a chunk is mapped, its slot
// takes chunk g + nc, the next row's (or the one after). So the loads of the next rows are in flight while a row
// is reduced, exchanged and stored, and the memory pipe does not idle between a block's loads and its stores.
//
// Full/empty tracking: every thread copies, reads back and frees only its own packs of each chunk (positions
// tid + q·T of the slot), so the ring needs no cross-thread signal at all: a thread's cp.async groups (one
// commit group a chunk, empty past the last row) are its full bits — cp.async.wait_group n with n = the chunks
// issued after the one wanted — and a slot is empty for a thread once that thread has mapped it. No mbarrier,
// no producer warp, no block barrier inside the ring: each thread is its own producer, and its loads of later
// chunks are already in flight when it waits, which is what a producer warp would buy (PTX 7.8: no bulk copies).
// Single-element packs (odd widths) are copied through registers, as row_dsmem does (bf16 elements are too small
// for cp.async): correct, not pipelined.
//
// The cluster exchange: each block's thread 0 writes its partial RowStat into slot [row parity][rank] of every
// block's shared memory (distributed shared memory stores), then every thread arrives at and waits on the
// cluster barrier, and every block merges the CS partials in rank order (the same result in every block, bit for
// bit; deterministic). A block writes the slots of parity p again two rows later, after the next row's barrier,
// which no block passes before every block has read this row's slots: double-buffered by parity, one cluster
// barrier a row. A first barrier, arrived at after the first loads are issued and waited on before the first
// exchange, makes sure every block of the cluster has started before its shared memory is written.
//
// Each element is read once from memory and written once. The cross-entropy's ignored rows are read too (their
// labels are not looked at when their loads are issued, rows ahead); their outputs are row_dsmem's.
//
// Two rows a pass (row_ring2, RMSNorm and LayerNorm, 16-byte packs): a cluster takes row pairs instead, each block
// holding its slice of both rows in the ring (chunk k of the first row, then chunk k of the second), their two
// statistics meeting in one block merge and one cluster barrier, and each chunk's column data (w, and b) loaded
// once for both rows' stores: half the L2 column traffic and half the barriers a row, for slices half as long at
// the same ring (so clusters twice as large). A cluster's last pass may have one row (odd row counts).
#pragma once
#include "rowdsmem.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ void ring_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// ring_wait waits until at most n of this thread's cp.async groups are pending (the count is an immediate: one
// case a count, up to 31, more than a ring of chunks of at least 8 KiB in 227 KiB has; past it, 31: waiting for
// more than needed is still correct).
#define RING_WAIT_CASE(N) \
    case N: asm volatile("cp.async.wait_group " #N ";" ::: "memory"); break;
__device__ __forceinline__ void ring_wait(long long n) {
    switch (n < 0 ? 0 : n > 31 ? 31 : (int)n) {
        RING_WAIT_CASE(0) RING_WAIT_CASE(1) RING_WAIT_CASE(2) RING_WAIT_CASE(3) RING_WAIT_CASE(4)
        RING_WAIT_CASE(5) RING_WAIT_CASE(6) RING_WAIT_CASE(7) RING_WAIT_CASE(8) RING_WAIT_CASE(9)
        RING_WAIT_CASE(10) RING_WAIT_CASE(11) RING_WAIT_CASE(12) RING_WAIT_CASE(13) RING_WAIT_CASE(14)
        RING_WAIT_CASE(15) RING_WAIT_CASE(16) RING_WAIT_CASE(17) RING_WAIT_CASE(18) RING_WAIT_CASE(19)
        RING_WAIT_CASE(20) RING_WAIT_CASE(21) RING_WAIT_CASE(22) RING_WAIT_CASE(23) RING_WAIT_CASE(24)
        RING_WAIT_CASE(25) RING_WAIT_CASE(26) RING_WAIT_CASE(27) RING_WAIT_CASE(28) RING_WAIT_CASE(29)
        RING_WAIT_CASE(30)
        default: asm volatile("cp.async.wait_group 31;" ::: "memory"); break;
    }
}

// ring_step is slot sl + d of a ring of nc slots (0 ≤ sl < nc, 0 ≤ d ≤ nc).
__device__ __forceinline__ int ring_step(int sl, int d, int nc) { return sl + d >= nc ? sl + d - nc : sl + d; }

// block_merge_pass is block_merge of the pass's first row's statistic s (returned), and with R = 2 of the second
// row's s1 too, in the same pair of block barriers; red holds 32·R statistics.
template <class Op, int R>
__device__ __forceinline__ RowStat block_merge_pass(const Op& op, RowStat s, RowStat& s1, RowStat* red) {
    if (R == 1) return block_merge(op, s, red);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    s = warp_merge(op, s);
    s1 = warp_merge(op, s1);
    __syncthreads();
    if (lane == 0) red[2 * warp] = s, red[2 * warp + 1] = s1;
    __syncthreads();
    s1 = warp_merge(op, lane < warps ? red[2 * lane + 1] : op.zero());
    return warp_merge(op, lane < warps ? red[2 * lane] : op.zero());
}

// row_ring_pass: see the top of the file; R rows a pass (1 or 2). With R = 2 a cluster takes the row pairs
// (2p, 2p + 1) of p = c, c + nclusters, … (the last pair of an odd row count has one row), each block keeps its
// slice of both rows in the ring — chunk k of the pair's first row, then chunk k of its second, so the ring holds
// 2·cpr chunks or more — reduces them to two statistics that go through one block merge and one cluster barrier
// together (part[parity][2·rank + r]), and in the store phase loads each chunk's column data once for both rows:
// half the L2 column traffic and half the barriers a row. The second row's statements are the first's, under
// R > 1 (with R = 1 the code is row_ring's as it was before R, instruction for instruction). The caller declares
// red (32·R statistics) and part (2 × 16·R), so that the R = 1 kernels' shared variables keep their names.
template <class Op, bool V, int K, int R, bool EARLY>
__device__ __forceinline__ void row_ring_pass(const Op& op, const typename Op::T* __restrict__ x, long long rows,
                                              long long cols, RowStat* red, RowStat (*part)[16 * R]) {
    typedef Pack<typename Op::S, V> P;
    extern __shared__ uint4 kw_dsmem[];
    P* ring = reinterpret_cast<P*>(kw_dsmem);
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int cs = (int)cluster.num_blocks(), rank = (int)cluster.block_rank(), tid = threadIdx.x, T = blockDim.x;
    const long long ncl = gridDim.x / cs, first = blockIdx.x / cs;
    const long long passes = R == 1 ? rows : (rows + R - 1) / R;  // passes of R rows (the last may have fewer)
    const long long nrows = first < passes ? (passes - first + ncl - 1) / ncl : 0;  // passes of this cluster
    if (nrows == 0) return;  // the whole cluster leaves together
    const long long packs = cols / P::E, per = (packs + cs - 1) / cs, lo = rank * per;
    // Within a slice everything fits an int: a slice fits the ring, at most 227 KiB.
    const int C = T * K;                                    // packs a chunk
    const int n = (int)max(min(per, packs - lo), 0ll);      // this block's packs of a row
    const int cpr = (int)((per + C - 1) / C);               // chunks a row
    const int nc = (int)(dyn / ((unsigned)C * sizeof(P)));  // chunks in the ring
    if (nc < R * cpr) __trap();                             // the ring must hold a pass's slices
    // The next chunk to issue: pass ij of the cluster's, chunk ik of its row ir, ring slot is. issue starts this
    // thread's copies of it and commits them as one group (empty past the last row, so that every chunk is
    // followed by exactly nc − 1 groups by the time it is waited for).
    long long ij = 0;
    int ik = 0, is = 0, ir = 0;
    auto issue = [&]() {
        if (ij < nrows && (R == 1 || (first + ij * ncl) * R + ir < rows)) {
            const typename Op::T* xr =
                x + (R == 1 ? first + ij * ncl : (first + ij * ncl) * R + ir) * cols + lo * P::E;
            P* slot = ring + is * C + tid;
            const int i0 = ik * C + tid;
#pragma unroll
            for (int q = 0; q < K; q++)
                if (i0 + q * T < n) DsmemLoad<P, V>::load(slot + q * T, xr + (long long)(i0 + q * T) * P::E);
        }
        ring_commit();
        if (R == 1 || ++ir == R) {
            if (R > 1) ir = 0;
            if (++ik == cpr) ik = 0, ij++;
        }
        if (++is == nc) is = 0;
    };
    for (int g = 0; g < nc; g++) issue();
    if (cs > 1) asm volatile("barrier.cluster.arrive;" ::: "memory");  // this block has started
    int rs = 0;  // the ring slot of the pass's first chunk
    // The contexts of the pass's rows (a second row past the last takes the last's).
    typename Op::Ctx ctx = op.context(R == 1 ? first : first * R), ctx1 = ctx;
    if (R > 1) ctx1 = op.context(min(first * R + 1, rows - 1));
    for (long long j = 0; j < nrows; j++) {
        const long long row = R == 1 ? first + j * ncl : (first + j * ncl) * R;  // the pass's first row
        const bool two = R > 1 && row + 1 < rows;                                  // and whether it has two
        const bool rd = op.reads(ctx);  // the same in every block of the cluster
        const bool rd1 = two && op.reads(ctx1);
        RowStat s = op.zero(), s1 = op.zero();
        for (int k = 0, sl = rs; k < cpr; k++, sl = R == 1 ? (sl + 1 == nc ? 0 : sl + 1) : ring_step(sl, R, nc)) {
            ring_wait(nc - 1 - k * R);  // chunk k of the row has landed (this thread's packs of it)
            const int i0 = k * C + tid;
            const int kv = i0 < n ? min(K, (n - i0 + T - 1) / T) : 0;
            if (rd && kv > 0) {  // as row_dsmem, scan sees at least one pack
                P v[K];
#pragma unroll
                for (int q = 0; q < K; q++)
                    if (q < kv) v[q] = ring[sl * C + tid + q * T];
                s = op.merge(s, op.template scan<P, K>(v, kv, ctx));
            }
            if (R > 1) {
                ring_wait(nc - 2 - k * R);  // chunk k of the second row
                if (rd1 && kv > 0) {
                    const int sl1 = ring_step(sl, 1, nc);
                    P v[K];
#pragma unroll
                    for (int q = 0; q < K; q++)
                        if (q < kv) v[q] = ring[sl1 * C + tid + q * T];
                    s1 = op.merge(s1, op.template scan<P, K>(v, kv, ctx1));
                }
            }
        }
        typename Op::template Col<P> col[K];  // the column data of a chunk's packs (see below)
        if (EARLY) {  // the first chunk's, which need no statistic: their L2 latency overlaps the exchange
            const int i0 = tid;
            const int kv = i0 < n ? min(K, (n - i0 + T - 1) / T) : 0;
#pragma unroll
            for (int q = 0; q < K; q++)
                if (q < kv) col[q] = op.template column<P>((lo + i0 + q * T) * P::E);
        }
        s = block_merge_pass<Op, R>(op, s, s1, red);
        RowStat t = s, t1 = s1;
        if (cs > 1) {
            const int par = (int)(j & 1);
            if (j == 0) asm volatile("barrier.cluster.wait;" ::: "memory");  // every block has started
            if (tid == 0)
                for (int i = 0; i < cs; i++) {
                    RowStat* d = cluster.map_shared_rank(&part[par][R == 1 ? rank : rank * R], i);
                    *d = s;
                    if (R > 1) d[1] = s1;
                }
            asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part written
            t = part[par][0];
            if (R > 1) t1 = part[par][1];
            for (int i = 1; i < cs; i++) {
                t = op.merge(t, part[par][R == 1 ? i : i * R]);
                if (R > 1) t1 = op.merge(t1, part[par][i * R + 1]);
            }
        }
        const typename Op::Fin f = op.finish(t, cols, ctx);
        const typename Op::Fin f1 = R > 1 ? op.finish(t1, cols, ctx1) : f;
        const typename Op::Ctx now = ctx, now1 = ctx1;
        if (j + 1 < nrows) {  // the next pass's, loaded while this one is stored
            ctx = op.context(R == 1 ? row + ncl : row + ncl * R);
            if (R > 1) ctx1 = op.context(min(row + ncl * R + 1, rows - 1));
        }
        for (int k = 0, sl = rs; k < cpr; k++, sl = R == 1 ? (sl + 1 == nc ? 0 : sl + 1) : ring_step(sl, R, nc)) {
            const int i0 = k * C + tid;
            const int kv = i0 < n ? min(K, (n - i0 + T - 1) / T) : 0;
            // Columns loaded before any of the chunk's stores (see row_dsmem), once for the pass's rows; none for
            // Ops without column data. (Loading them a chunk ahead, two packs a thread a chunk, was slower on an
            // H100: LayerNorm fp32 1024×262144 75.6% of the copy against 87.0%.)
            if (!EARLY || k > 0)
#pragma unroll
                for (int q = 0; q < K; q++)
                    if (q < kv) col[q] = op.template column<P>((lo + i0 + q * T) * P::E);
#pragma unroll
            for (int q = 0; q < K; q++)
                if (q < kv) op.put(ring[sl * C + tid + q * T], row, (lo + i0 + q * T) * P::E, col[q], f, now);
            issue();  // this thread's packs of slot sl are stored: it takes the chunk nc after this one
            if (R > 1) {
                const int sl1 = ring_step(sl, 1, nc);
                if (two)
#pragma unroll
                    for (int q = 0; q < K; q++)
                        if (q < kv)
                            op.put(ring[sl1 * C + tid + q * T], row + 1, (lo + i0 + q * T) * P::E, col[q], f1, now1);
                issue();
            }
        }
        rs += R == 1 ? cpr : R * cpr;
        if (rs >= nc) rs -= nc;
        if (rank == 0 && tid == 0) {
            op.row_out(row, f, now);
            if (two) op.row_out(row + 1, f1, now1);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// row_ring: one row a pass (row_ring_pass with R = 1). V: 16-byte packs (cols % E == 0), else one element a pack;
// K: packs a thread holds of each chunk (also the packs it reduces and maps at a time). Dynamic shared memory:
// nc chunks of blockDim·K packs, nc ≥ cpr (rowRingBytes in rowplan.go; a launch with less traps).
template <class Op, bool V, int K>
__device__ __forceinline__ void row_ring(const Op& op, const typename Op::T* __restrict__ x, long long rows,
                                         long long cols) {
    __shared__ RowStat red[32];
    __shared__ RowStat part[2][16];
    row_ring_pass<Op, V, K, 1, false>(op, x, rows, cols, red, part);
}

// row_ring2: two rows a pass (row_ring_pass with R = 2), 16-byte packs; the ring holds nc ≥ 2·cpr chunks.
// EARLY: each pass's first chunk's column data is loaded before the block merge and the cluster barrier (it does
// not depend on the statistics), so that one L2 round trip a pass overlaps them; held in registers across them.
template <class Op, int K, bool EARLY>
__device__ __forceinline__ void row_ring2(const Op& op, const typename Op::T* __restrict__ x, long long rows,
                                          long long cols) {
    __shared__ RowStat red[32 * 2];
    __shared__ RowStat part[2][16 * 2];
    row_ring_pass<Op, true, K, 2, EARLY>(op, x, rows, cols, red, part);
}

// ROW_RING_ENTRIES declares the family's entry points <prefix>_ring_{f32,bf16}_{v,s} (rowFamily.kernel in
// rowplan.go) over the same PARAMS(S) and OP(S) as ROW_DSMEM_ENTRIES (rows among the parameters). K: 4 packs a
// chunk a thread, 8 single elements. At most 256 threads, three blocks a multiprocessor (at most 80 registers:
// see rowplan.go). No __cluster_dims__: the cluster's size is the launch's.
#define ROW_RING_ENTRY(PREFIX, S, NAME, V, VN, K, PARAMS, OP)                                                 \
    extern "C" __global__ void __launch_bounds__(256, 3) PREFIX##_ring_##NAME##_##VN(PARAMS(S)) {              \
        OP(S)                                                                                                  \
        row_ring<decltype(op), V, K>(op, x, rows, cols);                                                       \
    }
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_RING_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_RING_ENTRIES(PREFIX, PARAMS, OP)                       \
    ROW_RING_ENTRY(PREFIX, F32, f32, true, v, 4, PARAMS, OP)       \
    ROW_RING_ENTRY(PREFIX, F32, f32, false, s, 8, PARAMS, OP)      \
    ROW_RING_ENTRY(PREFIX, BF16, bf16, true, v, 4, PARAMS, OP)     \
    ROW_RING_ENTRY(PREFIX, BF16, bf16, false, s, 8, PARAMS, OP)
#endif

// ROW_RING2_ENTRIES declares <prefix>_ring2_{f32,bf16}_v (row_ring2: two rows a pass, 16-byte packs only; the
// single-element kernels stay one row a pass) and <prefix>_ring2e_{f32,bf16}_v (the same, the first chunk's
// column data loaded early: EARLY), over the same PARAMS(S) and OP(S), K = 4, the same bounds.
#define ROW_RING2_ENTRY(PREFIX, S, NAME, K, E, EN, PARAMS, OP)                                                 \
    extern "C" __global__ void __launch_bounds__(256, 3) PREFIX##_ring2##EN##_##NAME##_v(PARAMS(S)) {          \
        OP(S)                                                                                                  \
        row_ring2<decltype(op), K, E>(op, x, rows, cols);                                                      \
    }
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_RING2_ENTRIES(PREFIX, PARAMS, OP)
#else
#define ROW_RING2_ENTRIES(PREFIX, PARAMS, OP)                     \
    ROW_RING2_ENTRY(PREFIX, F32, f32, 4, false, , PARAMS, OP)     \
    ROW_RING2_ENTRY(PREFIX, BF16, bf16, 4, false, , PARAMS, OP)   \
    ROW_RING2_ENTRY(PREFIX, F32, f32, 4, true, e, PARAMS, OP)     \
    ROW_RING2_ENTRY(PREFIX, BF16, bf16, 4, true, e, PARAMS, OP)
#endif

#endif

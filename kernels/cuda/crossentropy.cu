// crossentropy.cu: fused cross-entropy over logits x [rows, cols = vocab] with int32 labels [rows]
// (CrossEntropyFamily): loss[r] = logsumexp(x[r]) − x[r, label] and dlogits[r] = softmax(x[r]) − onehot(label),
// a zero loss and a zero dlogits row for label = −100 (ignore_index; any label outside [0, cols) is treated the
// same way). fp32 arithmetic, fp32 or bf16 storage.
//
// The fused kernels read each logit once from memory and write each gradient once: a row (or a block's share of
// it) stays in registers between the reduction and the write, as in rmsnorm.cu, whose plans these follow. The
// reduction is online softmax: each thread reduces its elements to a pair (m = max, s = Σ e^(x−m)), and pairs
// merge as (max(m1, m2), s1·e^(m1−M) + s2·e^(m2−M)) through warp shuffles, shared memory and (clusters)
// distributed shared memory — one reduction per row for both the maximum and the sum. The merge is commutative
// bit for bit (no contraction), so every lane of a butterfly ends with the same pair. e^x is ex2.approx of
// (x − m)·log2 e (2 ulp); the loss's log is the accurate logf. Ignored rows skip the read.
//
//   xent_team_*:    a team of L = 1 … 32 lanes per row, 256/L rows a block, for rows of at most 32·NV·E
//                   elements (NV·E per lane: the reduction's shuffles shared by as many elements as possible).
//   xent_block_*:   one block per row, each thread NV accesses of the row (rows up to 1024·NV·E elements).
//   xent_cluster_*: sm_90 only: a thread-block cluster of CS blocks per row, pairs merged through distributed
//                   shared memory.
//   xent_cstream_*: sm_90 only, 16-byte accesses: a cluster of CS blocks per row, each streaming its slice
//                   twice (the second read mostly from L2), for rows too long for a cluster's registers.
//   xent_dsmem_*:   sm_90 only: row_dsmem (rowdsmem.cuh), a cluster of 2–16 blocks holding the row in
//                   distributed shared memory.
//   xent_ring_*:    sm_90 only: row_ring (rowring.cuh), persistent clusters of 1–16 blocks, each block's next
//                   rows loading into a ring in shared memory while a row is reduced and stored.
//   xent_stream_*:  any row: one block per row, two passes over the row (the second re-reads it), for rows too
//                   long for the plans above (or columns that rule out 16-byte accesses and exceed 1024·16).
//
// This file is compiled twice: -arch=compute_75 to ptx/crossentropy.ptx (every kernel but the clusters) and
// -arch=compute_90 to ptx/crossentropy_sm90.ptx (every kernel, the clusters included), where bf16 results are
// rounded two at a time by cvt.rn.bf16x2.f32 (round to nearest even like f32_to_bf16; only a NaN's payload may
// differ); the launcher takes every fused kernel from the sm_90 module on compute capability 9.0 and later.
//
// The gradient at the label (softmax − 1) is written by the thread that holds that column, after its 16-byte
// stores, from the label's logit loaded on its own (the same value): no per-element comparison. That thread also
// writes the row's loss.
//
// The naive chain's steps that are not generic eager ops (nll_loss's gather, the one-hot subtraction with the
// ignore mask) are the one-thread-per-row kernels xent_naive_loss and xent_naive_onehot.
#include "xent.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// xent_cstream (module crossentropy_sm90): a cluster of CS blocks per row, each streaming its slice of the row
// twice — once for its pair, which the cluster merges through distributed shared memory, once to write — with U
// accesses a thread in flight. The registers hold no row, so several blocks share a multiprocessor, and the
// second read of a slice mostly hits L2 (the cluster reads it again a few microseconds later).
template <class S, int U, int CS>
__device__ __forceinline__ void xent_cstream(const typename S::T* __restrict__ x, const int* __restrict__ labels,
                                             float* __restrict__ loss, typename S::T* __restrict__ dl,
                                             long long cols) {
    typedef Pack<S, true> P;
    __shared__ float rm[32], rs[32];
    __shared__ float mine[2];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = P::E;
    const long long row = blockIdx.x / CS;
    const long long rank = cluster.block_rank();
    const long long per = ((cols / E) + CS - 1) / CS * E;  // columns a slice
    const long long lo = rank * per, hi = min(cols, lo + per);
    const long long step = (long long)blockDim.x * E;
    const long long label = labels[row];
    const typename S::T* xr = x + row * cols;
    typename S::T* dr = dl + row * cols;
    if (!xent_live(label, cols)) {  // the whole cluster: no barrier, no shared memory used
        const P z = P();
        for (long long c = lo + (long long)threadIdx.x * E; c < hi; c += step) z.store(dr + c);
        if (rank == 0 && threadIdx.x == 0) loss[row] = 0.0f;
        return;
    }
    float m, s;
    xent_stream_ms<S, true, U>(xr, lo, hi, step, m, s);
    block_ms(m, s, rm, rs);
    if (threadIdx.x == 0) mine[0] = m, mine[1] = s;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part published
    float M = XENT_NEG_INF, sum = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) {
        const float* p = cluster.map_shared_rank(mine, i);
        ms_merge(M, sum, p[0], p[1]);
    }
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' parts
    const float inv = 1.0f / sum;
    bool own = false;
    for (long long c0 = lo + (long long)threadIdx.x * E; c0 < hi; c0 += U * step) {
        P v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * step < hi) v[u].load(xr + c0 + u * step);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long c = c0 + u * step;
            if (c < hi) {
                float f[E];
#pragma unroll
                for (int j = 0; j < E; j++) f[j] = ex2((v[u].get(j) - M) * XENT_L2E) * inv;
                P o = P();
                put_pack(o, f);
                o.store(dr + c);
                own |= label >= c && label < c + E;
            }
        }
    }
    if (own) fix_label<S>(dr, loss + row, label, S::get(xr[label]), M, sum, inv);
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
}

#define XENT_CSTREAM(S, NAME, CS)                                                                                   \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024)                                  \
        xent_cstream_##NAME##_c##CS(const S::T* x, const int* labels, float* loss, S::T* dl, long long rows,      \
                                    long long cols) {                                                              \
        xent_cstream<S, 8, CS>(x, labels, loss, dl, cols);                                                         \
    }
#ifndef KW_XASYNC  // crossentropy_x_sm90a: the cluster kernels alone
XENT_CSTREAM(F32, f32, 2)
XENT_CSTREAM(F32, f32, 4)
XENT_CSTREAM(F32, f32, 8)
XENT_CSTREAM(BF16, bf16, 2)
XENT_CSTREAM(BF16, bf16, 4)
XENT_CSTREAM(BF16, bf16, 8)
#endif

#define XENT_CLUSTER(S, NAME, NV, CS)                                                                                \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024, 1)                                 \
        xent_cluster_##NAME##_v##NV##_c##CS(const S::T* x, const int* labels, float* loss, S::T* dl,                 \
                                            long long rows, long long cols) {                                        \
        xent_cluster<S, NV, CS>(x, labels, loss, dl, cols);                                                          \
    }
XENT_CLUSTER(F32, f32, 8, 2)
XENT_CLUSTER(F32, f32, 8, 4)
XENT_CLUSTER(F32, f32, 8, 8)
XENT_CLUSTER(BF16, bf16, 8, 2)
XENT_CLUSTER(BF16, bf16, 8, 4)
XENT_CLUSTER(BF16, bf16, 8, 8)
#ifdef KW_XASYNC
// xent_cluster_f32_v16_c16 (crossentropy_x_sm90a alone): fp32 rows of 1 MiB in a cluster of 16 blocks of 256
// threads, 16 packs a thread (up to 128 registers: two blocks a multiprocessor), where 512 threads of 8 packs took
// 64 registers and twice the threads to merge each row's pairs (NVIDIA H200, 1024 × 262144, cold pct of the copy:
// 92.3–92.4% against 88.8–89.6%; scripts/experiments/xent-merge.cu). 16 is a non-portable cluster size, which no
// __cluster_dims__ may name: the launch gives it (rowplan.go, rowXACluster16).
extern "C" __global__ void __launch_bounds__(256, 2) xent_cluster_f32_v16_c16(const float* x, const int* labels,
                                                                             float* loss, float* dl, long long rows,
                                                                             long long cols) {
    xent_cluster<F32, 16, 16>(x, labels, loss, dl, cols);
}
#endif

// XentDSMEM is the cross-entropy as a row_dsmem Op (rowdsmem.cuh): the row's (max, Σ e^(x−max)) pair, merged
// as the other kernels merge it, then the softmax written from shared memory, the label's column fixed up by the
// thread that writes it (as fix_label), and the loss by the cluster's first thread. An ignored row is not read:
// zeros and a zero loss. Entry points xent_dsmem_*.
#include "rowgrid.cuh"
#include "rowring.cuh"
template <class S_>
struct XentDSMEM {
    typedef S_ S;
    typedef typename S::T T;
    const T* __restrict__ x;
    const int* __restrict__ labels;
    float* __restrict__ loss;
    T* __restrict__ dl;
    long long cols;

    struct Ctx {
        long long label;
        bool live;
    };
    struct Fin {
        RmSoft e;  // the row maximum m, 1 / Σ and rm_soft's constant
        float sum;
    };
    __device__ __forceinline__ Ctx context(long long row) const {
        Ctx c;
        c.label = labels[row];
        c.live = xent_live(c.label, cols);
        return c;
    }
    __device__ __forceinline__ bool reads(const Ctx& c) const { return c.live; }
    __device__ __forceinline__ RowStat zero() const { return RowStat{XENT_NEG_INF, 0.0f}; }
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const {
        ms_merge(p.a, p.b, q.a, q.b);
        return p;
    }
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx&) const {
        return rm_pack_softstat<P, NV>(v, kv);
    }
    __device__ __forceinline__ Fin finish(RowStat t, long long, const Ctx&) const {
        Fin f;
        f.e = rm_soft_fin<Pack<S, true> >(t.a, t.b);
        f.sum = t.b;
        return f;
    }
    template <class P>
    struct Col {};  // nothing per column
    template <class P>
    __device__ __forceinline__ Col<P> column(long long) const {
        return Col<P>();
    }
    template <class P>
    __device__ __forceinline__ void put(const P& v, long long row, long long c, const Col<P>&, const Fin& f, const Ctx& k) const {
        T* dr = dl + row * cols;
        P o = P();
        if (k.live) {
            float g[P::E];
#pragma unroll
            for (int j = 0; j < P::E; j++) g[j] = rm_soft<P>(v.get(j), f.e);
            put_pack(o, g);
        }
        o.store(dr + c);
        if (k.live && k.label >= c && k.label < c + P::E)
            dr[k.label] = S::put(rm_soft<P>(v.get((int)(k.label - c)), f.e) - 1.0f);
    }
    __device__ __forceinline__ void row_out(long long row, const Fin& f, const Ctx& k) const {
        loss[row] = k.live ? xent_loss<S>(x + row * cols, k.label, f.e.m, f.sum) : 0.0f;
    }
};

#define XENT_PARAMS(S) const S::T *x, const int *labels, float *loss, S::T *dl, long long rows, long long cols
#define XENT_DSMEM_OP(S) \
    XentDSMEM<S> op;     \
    op.x = x;            \
    op.labels = labels;  \
    op.loss = loss;      \
    op.dl = dl;          \
    op.cols = cols;
ROW_DSMEM_ENTRIES(xent, XENT_PARAMS, XENT_DSMEM_OP)
ROW_RING_ENTRIES(xent, XENT_PARAMS, XENT_DSMEM_OP)  // row_ring (rowring.cuh), the same Op
ROW_GRID_ENTRIES(xent, XENT_PARAMS, XENT_DSMEM_OP)  // row_grid (rowgrid.cuh), the same Op
#endif  // clusters

// Every other kernel, in both modules.

// xent_team: a team of L lanes (aligned within the warp) per row, 256/L rows a block; lane t of a team holds
// accesses t, t + L, … (NV of them) of its row. Teams past the last row still take part in the shuffles.
template <class S, bool V, int NV, int L>
__device__ __forceinline__ void xent_team(const typename S::T* __restrict__ x, const int* __restrict__ labels,
                                          float* __restrict__ loss, typename S::T* __restrict__ dl, long long rows,
                                          long long cols) {
    typedef XentShare<S, V, NV> Sh;
    const int E = Sh::P::E;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // this thread's index in the grid
    if (((first & ~31ll) / L) >= rows) return;  // the whole warp leaves together
    const long long row = first / L;
    const int step = L * E;
    const long long c = (long long)(threadIdx.x & (L - 1)) * E;
    const int n = share_len(cols, c, (long long)step * NV);
    const bool valid = row < rows;
    const long long label = valid ? labels[row] : XENT_IGNORE;
    const bool live = valid && xent_live(label, cols);
    const bool own = live && owns_label(label, c, n, step, E);
    typename S::T* dr = dl + row * cols;
    Sh sh;
    float xl = 0.0f;
    if (live) {
        sh.load(x + row * cols + c, step, n);
        if (own) xl = S::get(x[row * cols + label]);
    }
    float m = XENT_NEG_INF, s = 0.0f;
    if (live) sh.local(step, n, m, s);
    const float mloc = m;
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
    if (live) {
        const float inv = 1.0f / s;
        sh.store(dr + c, step, n, mloc, m, inv);
        if (own) fix_label<S>(dr, loss + row, label, xl, m, s, inv);
    } else if (valid) {
        Sh::zero(dr + c, step, n);
        if (c == 0) loss[row] = 0.0f;
    }
}

template <class S, bool V, int NV>
__device__ __forceinline__ void xent_block(const typename S::T* __restrict__ x, const int* __restrict__ labels,
                                           float* __restrict__ loss, typename S::T* __restrict__ dl,
                                           long long cols) {
    typedef XentShare<S, V, NV> Sh;
    __shared__ float rm[32], rs[32];
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long row = blockIdx.x;
    const long long c = (long long)threadIdx.x * E;
    const int n = share_len(cols, c, (long long)step * NV);
    const long long label = labels[row];
    const typename S::T* xr = x + row * cols;
    typename S::T* dr = dl + row * cols;
    if (!xent_live(label, cols)) {  // the whole block
        Sh::zero(dr + c, step, n);
        if (threadIdx.x == 0) loss[row] = 0.0f;
        return;
    }
    const bool own = owns_label(label, c, n, step, E);
    Sh sh;
    sh.load(xr + c, step, n);
    float xl = 0.0f;
    if (own) xl = S::get(xr[label]);
    float m, s;
    sh.local(step, n, m, s);
    const float mloc = m;
    block_ms(m, s, rm, rs);
    const float inv = 1.0f / s;
    sh.store(dr + c, step, n, mloc, m, inv);
    if (own) fix_label<S>(dr, loss + row, label, xl, m, s, inv);
}

// xent_stream: one block per row of any length; pass 1 folds U accesses a thread at a time into its pair, pass 2
// reads the row again and writes the gradient.
template <class S, bool V, int U>
__device__ __forceinline__ void xent_stream(const typename S::T* __restrict__ x, const int* __restrict__ labels,
                                            float* __restrict__ loss, typename S::T* __restrict__ dl,
                                            long long cols) {
    typedef Pack<S, V> P;
    __shared__ float rm[32], rs[32];
    const int E = P::E;
    const long long step = (long long)blockDim.x * E;
    const long long row = blockIdx.x;
    const long long label = labels[row];
    const typename S::T* xr = x + row * cols;
    typename S::T* dr = dl + row * cols;
    if (!xent_live(label, cols)) {
        const P z = P();
        for (long long c = (long long)threadIdx.x * E; c < cols; c += step) z.store(dr + c);
        if (threadIdx.x == 0) loss[row] = 0.0f;
        return;
    }
    float m, s;
    xent_stream_ms<S, V, U>(xr, 0, cols, step, m, s);
    block_ms(m, s, rm, rs);
    const float inv = 1.0f / s;
    for (long long c0 = (long long)threadIdx.x * E; c0 < cols; c0 += U * step) {
        P v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * step < cols) v[u].load(xr + c0 + u * step);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long c = c0 + u * step;
            if (c < cols) {
                P o = P();
#pragma unroll
                for (int j = 0; j < E; j++) {
                    float p = ex2((v[u].get(j) - m) * XENT_L2E) * inv;
                    if (c + j == label) p -= 1.0f;
                    o.set(j, p);
                }
                o.store(dr + c);
            }
        }
    }
    if (threadIdx.x == 0) loss[row] = xent_loss<S>(xr, label, m, s);
}

// Entry points: xent_team_{f32,bf16}_{v,s}{NV}l{L}, xent_block_{f32,bf16}_{v,s}{NV}, xent_stream_{f32,bf16}_{v,s}.
// Each thread holds at most 128 bytes of a row (64 registers with 1024 threads a block).
#define XENT_TEAM(S, NAME, V, VN, NV, L)                                                                             \
    extern "C" __global__ void __launch_bounds__(256) xent_team_##NAME##_##VN##NV##l##L(                             \
        const S::T* x, const int* labels, float* loss, S::T* dl, long long rows, long long cols) {                   \
        xent_team<S, V, NV, L>(x, labels, loss, dl, rows, cols);                                                     \
    }
#define XENT_BLOCK(S, NAME, V, VN, NV)                                                                               \
    extern "C" __global__ void __launch_bounds__(1024, 1) xent_block_##NAME##_##VN##NV(                              \
        const S::T* x, const int* labels, float* loss, S::T* dl, long long rows, long long cols) {                   \
        xent_block<S, V, NV>(x, labels, loss, dl, cols);                                                             \
    }
#define XENT_STREAM(S, NAME, V, VN)                                                                                  \
    extern "C" __global__ void __launch_bounds__(1024) xent_stream_##NAME##_##VN(                                    \
        const S::T* x, const int* labels, float* loss, S::T* dl, long long rows, long long cols) {                   \
        xent_stream<S, V, 4>(x, labels, loss, dl, cols);                                                             \
    }
#define XENT_DTYPE(S, NAME)                                                                                          \
    XENT_TEAM(S, NAME, true, v, 8, 1)                                                                                \
    XENT_TEAM(S, NAME, true, v, 8, 2)                                                                                \
    XENT_TEAM(S, NAME, true, v, 8, 4)                                                                                \
    XENT_TEAM(S, NAME, true, v, 8, 8)                                                                                \
    XENT_TEAM(S, NAME, true, v, 8, 16)                                                                               \
    XENT_TEAM(S, NAME, true, v, 8, 32)                                                                               \
    XENT_TEAM(S, NAME, false, s, 16, 1)                                                                              \
    XENT_TEAM(S, NAME, false, s, 16, 2)                                                                              \
    XENT_TEAM(S, NAME, false, s, 16, 4)                                                                              \
    XENT_TEAM(S, NAME, false, s, 16, 8)                                                                              \
    XENT_TEAM(S, NAME, false, s, 16, 16)                                                                             \
    XENT_TEAM(S, NAME, false, s, 16, 32)                                                                             \
    XENT_BLOCK(S, NAME, true, v, 2)                                                                                  \
    XENT_BLOCK(S, NAME, true, v, 4)                                                                                  \
    XENT_BLOCK(S, NAME, true, v, 8)                                                                                  \
    XENT_BLOCK(S, NAME, false, s, 4)                                                                                 \
    XENT_BLOCK(S, NAME, false, s, 8)                                                                                 \
    XENT_BLOCK(S, NAME, false, s, 16)                                                                                \
    XENT_STREAM(S, NAME, true, v)                                                                                    \
    XENT_STREAM(S, NAME, false, s)

#ifndef KW_XASYNC
XENT_DTYPE(F32, f32)
XENT_DTYPE(BF16, bf16)
#endif

#ifndef KW_XASYNC
// The naive chain's two row kernels, one thread per row. xent_naive_loss: loss[r] = −logp[r, label], 0 for an
// ignored row (nll_loss). xent_naive_onehot: p[r, label] −= 1 and mask[r] = 1 for a kept row, mask[r] = 0 for
// an ignored one.
extern "C" __global__ void xent_naive_loss(float* loss, const float* logp, const int* labels, long long rows,
                                           long long cols) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const long long lb = labels[r];
    loss[r] = xent_live(lb, cols) ? -logp[r * cols + lb] : 0.0f;
}

extern "C" __global__ void xent_naive_onehot(float* p, float* mask, const int* labels, long long rows,
                                             long long cols) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const long long lb = labels[r];
    if (xent_live(lb, cols)) {
        p[r * cols + lb] -= 1.0f;
        mask[r] = 1.0f;
    } else {
        mask[r] = 0.0f;
    }
}
#endif

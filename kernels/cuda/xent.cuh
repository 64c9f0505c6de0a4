// xent.cuh: the cross-entropy kernels' shared pieces (crossentropy.cu): the (max, Σ e^(x−max)) pairs and their
// merges, a thread's share of a row in registers, the label's fix-up, and the cluster kernel xent_cluster (sm_90),
// kept in a header of their own so that the standalone experiments (scripts/experiments) can build on them.
#pragma once
#include "common.cuh"
#include "xasync.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

#define XENT_IGNORE (-100)
#define XENT_L2E 1.4426950408889634f
#define XENT_NEG_INF (-__int_as_float(0x7f800000))

// ex2 is 2^x, approximate (ex2.approx.ftz: relative error ~2^-22; 0 for −inf).
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ms_merge folds the pair (m2, s2) into (m, s). Symmetric bit for bit: no fused multiply-add.
__device__ __forceinline__ void ms_merge(float& m, float& s, float m2, float s2) {
    const float M = fmaxf(m, m2);
    const float a = m == M ? 1.0f : ex2(__fmul_rn(m - M, XENT_L2E));
    const float b = m2 == M ? 1.0f : ex2(__fmul_rn(m2 - M, XENT_L2E));
    s = __fadd_rn(__fmul_rn(s, a), __fmul_rn(s2, b));
    m = M;
}

__device__ __forceinline__ void warp_ms(float& m, float& s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        ms_merge(m, s, m2, s2);
    }
}

// block_ms merges the block's pairs; every thread gets the same result. rm, rs hold 32 floats each.
__device__ __forceinline__ void block_ms(float& m, float& s, float* rm, float* rs) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    warp_ms(m, s);
    __syncthreads();
    if (lane == 0) rm[warp] = m, rs[warp] = s;
    __syncthreads();
    m = lane < warps ? rm[lane] : XENT_NEG_INF;
    s = lane < warps ? rs[lane] : 0.0f;
    warp_ms(m, s);
}

__device__ __forceinline__ bool xent_live(long long label, long long cols) { return label >= 0 && label < cols; }

// put_pack sets the E elements of o from f.
template <class P>
__device__ __forceinline__ void put_pack(P& o, const float* f) {
#pragma unroll
    for (int j = 0; j < P::E; j++) o.set(j, f[j]);
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <>
__device__ __forceinline__ void put_pack(Pack<BF16, true>& o, const float* f) {
    unsigned w[4];
#pragma unroll
    for (int k = 0; k < 4; k++) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[k]) : "f"(f[2 * k + 1]), "f"(f[2 * k]));
    o.raw = make_uint4(w[0], w[1], w[2], w[3]);
}
#endif

// xent_store_pack writes pack o at p. A bf16 pack on sm_90 leaves in one 16-byte store written in PTX: nvcc 11.8
// split XentShare's C++ store of it into four of 4 bytes. The memory clobber keeps it ahead of fix_label's store
// to the label's column, which may fall in the same pack.
template <class S, bool V>
__device__ __forceinline__ void xent_store_pack(const Pack<S, V>& o, typename S::T* p) {
    o.store(p);
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void xent_store_pack(const Pack<BF16, true>& o, unsigned short* p) {
    st_v4_ordered(p, o.raw.x, o.raw.y, o.raw.z, o.raw.w);
}
#endif

// XentShare is one thread's share of a row in registers: NV accesses `step` elements apart, the first at the
// row's column c; access k exists when k·step < n.
template <class S, bool V, int NV>
struct XentShare {
    typedef Pack<S, V> P;
    // KEEP (fp32 storage): local() replaces each element by e^(x − m), m the share's own maximum, so that the
    // write after the reduction costs one multiplication an element instead of a second exponential. FMA (bf16
    // storage, the sm_90 module): each exponent is one fma, as in the row_dsmem Op (rm_pack_softstat, rm_soft):
    // e^(x − m) as 2^fma(x, log2 e, −fl(m·log2 e)) (the sum corrected once for the rounding of m·log2 e), the output
    // e^(x − M)/Σ as 2^fma(x, log2 e, −c), c = fl(M·log2 e + log2 Σ): its rounding, 2^-24·|c| in the exponent, is
    // a relative error below bf16's half unit 2^-9 wherever |M| < 2^15.
    enum { KEEP = sizeof(typename S::T) == 4 };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    enum { FMA = !KEEP };
#else
    enum { FMA = 0 };
#endif
    P v[NV];

    __device__ __forceinline__ void load(const typename S::T* xp, int step, int n) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) v[k].load(xp + k * step);
    }
    // local returns this share's pair (−inf, 0 when empty).
    __device__ __forceinline__ void local(int step, int n, float& m, float& s) {
        m = XENT_NEG_INF;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) {
#pragma unroll
                for (int j = 0; j < P::E; j++) m = fmaxf(m, v[k].get(j));
            }
        // FMA: nm = −fl(m·log2 e) misses m·log2 e by ml, so every exponential below is e^(x − m)·2^ml, the sum
        // too; one multiplication by 2^−ml at the end takes the bias out (at |m| ≈ 30000 it is 2e-4 of the loss).
        const float nm = -m * XENT_L2E, ml = m == XENT_NEG_INF ? 0.0f : fmaf(m, XENT_L2E, nm);
        float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) {
#pragma unroll
                for (int j = 0; j < P::E; j++) {
                    const float x = v[k].get(j);
                    const float e = ex2(FMA ? fmaf(x, XENT_L2E, nm) : (x - m) * XENT_L2E);
                    if (KEEP) v[k].set(j, e);
                    if (j & 1) s1 += e;
                    else s0 += e;
                }
            }
        s = FMA ? (s0 + s1) * ex2(-ml) : s0 + s1;
    }
    // store writes the softmax e^(x−M)·inv of the share (the label's column is fixed up by fix_label); mloc is
    // the m local() returned.
    __device__ __forceinline__ void store(typename S::T* dp, int step, int n, float mloc, float M, float inv) const {
        float sc = inv, c = 0.0f;
        if (KEEP) {
            sc = ex2((mloc - M) * XENT_L2E) * inv;
        } else if (FMA) {
            float l;  // log2 Σ = −log2(1/Σ)
            asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(inv));
            c = fmaf(M, XENT_L2E, -l);
        }
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) {
                float f[P::E];
#pragma unroll
                for (int j = 0; j < P::E; j++)
                    f[j] = KEEP  ? v[k].get(j) * sc
                           : FMA ? ex2(fmaf(v[k].get(j), XENT_L2E, -c))
                                 : ex2((v[k].get(j) - M) * XENT_L2E) * inv;
                P o = P();
                put_pack(o, f);
                xent_store_pack(o, dp + k * step);
            }
    }
    static __device__ __forceinline__ void zero(typename S::T* dp, int step, int n) {
        const P z = P();
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) z.store(dp + k * step);
    }
};

// share_len is how many elements of its row, from column c on, a share of `chunk` elements may touch.
__device__ __forceinline__ int share_len(long long cols, long long c, long long chunk) {
    const long long left = cols - c;
    return left <= 0 ? 0 : left >= chunk ? (int)chunk : (int)left;
}

// owns_label: whether the share at column c (accesses of E elements, step apart, within n) holds the label.
__device__ __forceinline__ bool owns_label(long long label, long long c, int n, int step, int E) {
    const long long d = label - c;
    return d >= 0 && d < n && (int)d % step < E;
}

// fix_label writes the label's gradient, softmax − 1, and the row's loss; called by the label's owner after its
// stores (same thread, so the fix lands after the plain softmax value).
template <class S>
__device__ __forceinline__ void fix_label(typename S::T* drow, float* loss, long long label, float xl, float M,
                                          float sum, float inv) {
    drow[label] = S::put(ex2((xl - M) * XENT_L2E) * inv - 1.0f);
    *loss = (M - xl) + logf(sum);
}

template <class S>
__device__ __forceinline__ float xent_loss(const typename S::T* xrow, long long label, float M, float sum) {
    return (M - S::get(xrow[label])) + logf(sum);
}

// xent_stream_ms is this thread's online pair (running max m, sum s of 2^((x − m)·log2 e)) over columns lo + E·thread,
// + step, … below hi of row xr, U accesses in flight: pass 1 of the streaming kernels, which keep no row.
template <class S, bool V, int U>
__device__ __forceinline__ void xent_stream_ms(const typename S::T* __restrict__ xr, long long lo, long long hi,
                                               long long step, float& m, float& s) {
    typedef Pack<S, V> P;
    const int E = P::E;
    m = XENT_NEG_INF, s = 0.0f;
    for (long long c0 = lo + (long long)threadIdx.x * E; c0 < hi; c0 += U * step) {
        P v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * step < hi) v[u].load(xr + c0 + u * step);
        float mc = XENT_NEG_INF;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * step < hi) {
#pragma unroll
                for (int j = 0; j < E; j++) mc = fmaxf(mc, v[u].get(j));
            }
        const float M = fmaxf(m, mc);
        float sc = 0.0f;
#pragma unroll
        for (int u = 0; u < U; u++)
            if (c0 + u * step < hi) {
#pragma unroll
                for (int j = 0; j < E; j++) sc += ex2((v[u].get(j) - M) * XENT_L2E);
            }
        s = (m == M ? s : s * ex2((m - M) * XENT_L2E)) + sc;
        m = M;
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// xent_cluster (module crossentropy_sm90): a cluster of CS consecutive blocks per row, block rank = part of the
// row; the blocks' pairs meet in distributed shared memory between two cluster barriers (in crossentropy_x_sm90a,
// KW_XASYNC: by st.async, xasync.cuh).
template <class S, int NV, int CS>
__device__ __forceinline__ void xent_cluster(const typename S::T* __restrict__ x, const int* __restrict__ labels,
                                             float* __restrict__ loss, typename S::T* __restrict__ dl,
                                             long long cols) {
    typedef XentShare<S, true, NV> Sh;
    __shared__ float rm[32], rs[32];
#ifdef KW_XASYNC
    __shared__ __align__(8) float parts[CS][2];
    __shared__ __align__(8) unsigned long long xbar;
#else
    __shared__ float mine[2];
#endif
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long chunk = (long long)step * NV;
    const long long row = blockIdx.x / CS;
    const int rank = (int)cluster.block_rank();
    const long long c = (long long)rank * chunk + (long long)threadIdx.x * E;
    const int n = share_len(cols, c, chunk);
    const long long label = labels[row];
    const typename S::T* xr = x + row * cols;
    typename S::T* dr = dl + row * cols;
    if (!xent_live(label, cols)) {  // the whole cluster: no barrier, no shared memory used
        Sh::zero(dr + c, step, n);
        if (rank == 0 && threadIdx.x == 0) loss[row] = 0.0f;
        return;
    }
#ifdef KW_XASYNC
    xa_init(&xbar, 1);  // after the return above, which the whole cluster takes or none of it
#endif
    const bool own = owns_label(label, c, n, step, E);
    Sh sh;
    sh.load(xr + c, step, n);
    float xl = 0.0f;
    if (own) xl = S::get(xr[label]);
    float m, s;
    sh.local(step, n, m, s);
    const float mloc = m;
    block_ms(m, s, rm, rs);
#ifdef KW_XASYNC
    xa_started();
    if (threadIdx.x == 0) {
        const float w[2] = {m, s};
        xa_send<2>(w, parts[rank], &xbar, CS);
    }
    xa_wait(&xbar, 0);
    float M = XENT_NEG_INF, sum = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) ms_merge(M, sum, parts[i][0], parts[i][1]);
    const float inv = 1.0f / sum;
    sh.store(dr + c, step, n, mloc, M, inv);
    if (own) fix_label<S>(dr, loss + row, label, xl, M, sum, inv);
#else
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
    sh.store(dr + c, step, n, mloc, M, inv);
    if (own) fix_label<S>(dr, loss + row, label, xl, M, sum, inv);
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
#endif
}
#endif

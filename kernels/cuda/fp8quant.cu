// fp8quant.cu: x [rows, cols] to FP8 e4m3fn with one fp32 scale per group (FP8QuantFamily): a group is a row
// (scale=row) or 128 consecutive columns of a row (scale=block128; a row's last group may be shorter).
// scale = max(amax, 1e-12)/448 over the group, q = e4m3(x·(1/scale)), rounded to nearest even and saturating
// at ±448 (f32_to_e4m3 below is dtype.go's E4M3FromF32 bit for bit). The product with the reciprocal is within
// an fp32 ulp or two of the CPU's x/scale: a group's amax element lands within 3 ulp of 448 and so on the code
// for exactly ±448, and every element within e4m3's rounding bound.
//
// The fused kernels read x once from memory (amax and quantization in the same pass, the group held in
// registers in between) and write each code and scale once; fp32 arithmetic, fp32 or bf16 storage, 16-byte loads
// when the columns allow (V), codes stored 4 (fp32) or 8 (bf16) at a time.
//
//   fp8_b128_*:       scale=block128: a team of L lanes per group (8 for 16-byte accesses: 16 elements a lane),
//                     amax by xor shuffles within the team; each thread takes G groups at once (128 bytes of
//                     loads in flight), one pass, no loop.
//   fp8_row_team_*, fp8_row_block_*, fp8_row_cluster_* (sm_90), fp8_row_cstream_* (sm_90), fp8_row_stream_*:
//                     scale=row, the plans of crossentropy.cu: a team of L lanes per short row, a block per
//                     row, a cluster per row with the amax through distributed shared memory (holding the row in
//                     registers, or streaming slices twice, the second read mostly from L2), and for any other
//                     row one block reading it twice; fp8_row_dsmem_* (sm_90): row_dsmem (rowdsmem.cuh), a
//                     cluster of 2–16 blocks holding the row in distributed shared memory; fp8_row_ring_* (sm_90):
//                     row_ring (rowring.cuh), persistent clusters of 1–16 blocks, each block's next rows loading
//                     into a ring in shared memory while a row is reduced and stored.
//
// This file is compiled twice: -arch=compute_75 to ptx/fp8quant.ptx (every kernel but the clusters, the codes from
// f32_to_e4m3) and -arch=compute_90 to ptx/fp8quant_sm90.ptx (every kernel, the codes two at a time from
// cvt.rn.satfinite.e4m3x2.f32: round to nearest even, ±448 beyond, as f32_to_e4m3; only a NaN's sign may
// differ); the launcher takes every fused kernel from the sm_90 module on compute capability 9.0 and later.
//
// The naive chain (|x|, group max, clamp_min, /448, x/scale, clamp ±448) uses the eager kernels of eager.cu, and
// fp8_naive_cast for the final .to(float8_e4m3fn) of its fp32 intermediate.
#include "common.cuh"
#include "xasync.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif
#ifndef __CUDA_ARCH__
#include <math.h>
#include <string.h>
#endif

#define FP8_MAX 448.0f
#define FP8_MIN_AMAX 1e-12f

// f32_to_e4m3 rounds f to e4m3fn, to nearest with ties to even, saturating: |f| ≥ 448 (infinities too) gives
// ±448, NaN the NaN code 0x7f with its sign (E4M3FromF32).
__host__ __device__ __forceinline__ unsigned f32_to_e4m3(float f) {
#ifdef __CUDA_ARCH__
    const unsigned b = __float_as_uint(f);
#else
    unsigned b;
    memcpy(&b, &f, 4);
#endif
    const unsigned sign = (b >> 24) & 0x80u;
    const unsigned a = b & 0x7fffffffu;
    // Normal range (2^-6 ≤ |f| < 448): keep 3 mantissa bits, round half to even on the other 20; a carry moves
    // into the exponent; rebias 127 → 7.
    const unsigned nrm = ((a + 0x7ffffu + ((a >> 20) & 1u)) >> 20) - (120u << 3);
    // Subnormal range (|f| < 2^-6): multiples of 2^-9, rounded to even by adding 2^23 to |f|·2^9 (exact below 8).
    float af;
#ifdef __CUDA_ARCH__
    af = __uint_as_float(a);
    const float t = __fmaf_rn(af, 512.0f, 8388608.0f);
    const unsigned sub = __float_as_uint(t) - 0x4b000000u;
#else
    memcpy(&af, &a, 4);
    const float t = fmaf(af, 512.0f, 8388608.0f);
    unsigned tb;
    memcpy(&tb, &t, 4);
    const unsigned sub = tb - 0x4b000000u;
#endif
    unsigned code = a < 0x3c800000u ? sub : nrm;
    code = a >= 0x43e00000u ? 0x7eu : code;
    code = a > 0x7f800000u ? 0x7fu : code;
    return sign | code;
}

#ifdef __CUDA_ARCH__

// e4m3x2 returns the codes of lo (low byte) and hi (high byte).
__device__ __forceinline__ unsigned e4m3x2(float lo, float hi) {
#if __CUDA_ARCH__ >= 900
    unsigned short t;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(t) : "f"(hi), "f"(lo));
    return t;
#else
    return f32_to_e4m3(lo) | f32_to_e4m3(hi) << 8;
#endif
}

// fp8_scale is a group's scale from its amax, as the CPU computes it (IEEE division).
__device__ __forceinline__ float fp8_scale(float amax) { return fmaxf(amax, FP8_MIN_AMAX) / FP8_MAX; }

// pack_amax is the largest magnitude in a pack (NaNs ignored, as fmaxf and the CPU's absMax32 do). On sm_90 a
// bf16 pack is reduced two at a time: the sign bits cleared, then max.bf16x2, then the two halves.
template <class P>
__device__ __forceinline__ float pack_amax(const P& v) {
    float a = fabsf(v.get(0));
#pragma unroll
    for (int j = 1; j < P::E; j++) a = fmaxf(a, fabsf(v.get(j)));
    return a;
}
#if __CUDA_ARCH__ >= 900
template <>
__device__ __forceinline__ float pack_amax(const Pack<BF16, true>& v) {
    unsigned a = v.raw.x & 0x7fff7fffu, b = v.raw.y & 0x7fff7fffu, c = v.raw.z & 0x7fff7fffu,
             d = v.raw.w & 0x7fff7fffu;
    asm("max.bf16x2 %0, %0, %1;" : "+r"(a) : "r"(b));
    asm("max.bf16x2 %0, %0, %1;" : "+r"(c) : "r"(d));
    asm("max.bf16x2 %0, %0, %1;" : "+r"(a) : "r"(c));
    return fmaxf(__uint_as_float(a << 16), __uint_as_float(a & 0xffff0000u));
}
#endif

// Fp8Share is one thread's share of a group in registers: NV accesses `step` elements apart; access k exists
// when k·step < n.
template <class S, bool V, int NV>
struct Fp8Share {
    typedef Pack<S, V> P;
    P v[NV];

    __device__ __forceinline__ void load(const typename S::T* xp, int step, int n) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) v[k].load(xp + k * step);
    }
    __device__ __forceinline__ float amax(int step, int n) const {
        float a = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) a = fmaxf(a, pack_amax(v[k]));
        return a;
    }
    // store writes the codes of x·r: E bytes an access (one 4- or 8-byte store).
    __device__ __forceinline__ void store(unsigned char* qp, int step, int n, float r) const {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k * step < n) {
                unsigned w[2] = {0u, 0u};
                if (P::E == 1) {
                    w[0] = f32_to_e4m3(v[k].get(0) * r);
                } else {
#pragma unroll
                    for (int j = 0; j < P::E; j += 2)
                        w[j >> 2] |= e4m3x2(v[k].get(j) * r, v[k].get(j + 1 < P::E ? j + 1 : j) * r) << (8 * (j & 3));
                }
                unsigned char* p = qp + k * step;
                if (P::E == 8)
                    *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
                else if (P::E == 4)
                    *reinterpret_cast<unsigned*>(p) = w[0];
                else
                    *p = (unsigned char)w[0];
            }
    }
};

__device__ __forceinline__ int share_len(long long cols, long long c, long long chunk) {
    const long long left = cols - c;
    return left <= 0 ? 0 : left >= chunk ? (int)chunk : (int)left;
}

#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// fp8_row_cluster (module fp8quant_sm90): a cluster of CS blocks per row; the blocks' amaxes meet in distributed
// shared memory between two cluster barriers (in fp8quant_x_sm90a, KW_XASYNC: by st.async, xasync.cuh).
template <class S, int NV, int CS>
__device__ __forceinline__ void fp8_row_cluster(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                                float* __restrict__ scale, long long cols) {
    typedef Fp8Share<S, true, NV> Sh;
    __shared__ float red[32];
#ifdef KW_XASYNC
    __shared__ __align__(8) float parts[CS];
    __shared__ __align__(8) unsigned long long xbar;
    xa_init(&xbar, 1);
#else
    __shared__ float mine;
#endif
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long chunk = (long long)step * NV;
    const long long row = blockIdx.x / CS;
    const int rank = (int)cluster.block_rank();
    const long long c = (long long)rank * chunk + (long long)threadIdx.x * E;
    const int n = share_len(cols, c, chunk);
    Sh sh;
    sh.load(x + row * cols + c, step, n);
    const float a = block_max(sh.amax(step, n), red);
#ifdef KW_XASYNC
    xa_started();
    if (threadIdx.x == 0) xa_send<1>(&a, &parts[rank], &xbar, CS);
    xa_wait(&xbar, 0);
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) amax = fmaxf(amax, parts[i]);
    const float s = fp8_scale(amax);
    sh.store(q + row * cols + c, step, n, 1.0f / s);
    if (rank == 0 && threadIdx.x == 0) scale[row] = s;
#else
    if (threadIdx.x == 0) mine = a;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part published
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) amax = fmaxf(amax, *cluster.map_shared_rank(&mine, i));
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' parts
    const float s = fp8_scale(amax);
    sh.store(q + row * cols + c, step, n, 1.0f / s);
    if (rank == 0 && threadIdx.x == 0) scale[row] = s;
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
#endif
}

// fp8_row_cstream (module fp8quant_sm90): a cluster of CS blocks per row, each streaming its slice twice (amax,
// then quantization; the second read mostly from L2), the amax merged through distributed shared memory.
template <class S, int U, int CS>
__device__ __forceinline__ void fp8_row_cstream(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                                float* __restrict__ scale, long long cols) {
    typedef Fp8Share<S, true, U> Sh;
    __shared__ float red[32];
    __shared__ float mine;
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = Sh::P::E;
    const long long row = blockIdx.x / CS;
    const long long rank = cluster.block_rank();
    const long long per = ((cols / E) + CS - 1) / CS * E;
    const long long lo = rank * per, hi = min(cols, lo + per);
    const int step = blockDim.x * E;
    const long long chunk = (long long)step * U;
    const typename S::T* xr = x + row * cols;
    float a = 0.0f;
    for (long long c = lo + (long long)threadIdx.x * E; c < hi; c += chunk) {
        Sh sh;
        const int n = share_len(hi, c, chunk);
        sh.load(xr + c, step, n);
        a = fmaxf(a, sh.amax(step, n));
    }
    a = block_max(a, red);
    if (threadIdx.x == 0) mine = a;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part published
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < CS; i++) amax = fmaxf(amax, *cluster.map_shared_rank(&mine, i));
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' parts
    const float s = fp8_scale(amax), r = 1.0f / s;
    for (long long c = lo + (long long)threadIdx.x * E; c < hi; c += chunk) {
        Sh sh;
        const int n = share_len(hi, c, chunk);
        sh.load(xr + c, step, n);
        sh.store(q + row * cols + c, step, n, r);
    }
    if (rank == 0 && threadIdx.x == 0) scale[row] = s;
    asm volatile("barrier.cluster.wait;" ::: "memory");  // keep `mine` until every block has read it
}

#define FP8_ROW_CSTREAM(S, NAME, CS)                                                                                \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024)                                  \
        fp8_row_cstream_##NAME##_c##CS(const S::T* x, unsigned char* q, float* scale, long long rows,             \
                                       long long cols) {                                                           \
        fp8_row_cstream<S, 8, CS>(x, q, scale, cols);                                                              \
    }
#ifndef KW_XASYNC  // fp8quant_x_sm90a: the cluster kernels alone
FP8_ROW_CSTREAM(F32, f32, 2)
FP8_ROW_CSTREAM(F32, f32, 4)
FP8_ROW_CSTREAM(F32, f32, 8)
FP8_ROW_CSTREAM(BF16, bf16, 2)
FP8_ROW_CSTREAM(BF16, bf16, 4)
FP8_ROW_CSTREAM(BF16, bf16, 8)
#endif

#define FP8_ROW_CLUSTER(S, NAME, NV, CS)                                                                             \
    extern "C" __global__ void __cluster_dims__(CS, 1, 1) __launch_bounds__(1024, 1)                                 \
        fp8_row_cluster_##NAME##_v##NV##_c##CS(const S::T* x, unsigned char* q, float* scale, long long rows,        \
                                               long long cols) {                                                     \
        fp8_row_cluster<S, NV, CS>(x, q, scale, cols);                                                               \
    }
FP8_ROW_CLUSTER(F32, f32, 8, 2)
FP8_ROW_CLUSTER(F32, f32, 8, 4)
FP8_ROW_CLUSTER(F32, f32, 8, 8)
FP8_ROW_CLUSTER(BF16, bf16, 8, 2)
FP8_ROW_CLUSTER(BF16, bf16, 8, 4)
FP8_ROW_CLUSTER(BF16, bf16, 8, 8)

// Fp8DSMEM is FP8 quantization with one scale a row as a row_dsmem Op (rowdsmem.cuh): the row's amax, then the
// codes of each pack from shared memory (Fp8Share's store), the scale by the cluster's first thread. Entry
// points fp8_row_dsmem_*.
#include "rowring.cuh"
template <class S_>
struct Fp8DSMEM {
    typedef S_ S;
    typedef typename S::T T;
    unsigned char* __restrict__ q;
    float* __restrict__ scale;
    long long cols;

    struct Ctx {};
    struct Fin {
        float s, r;
    };
    __device__ __forceinline__ Ctx context(long long) const { return Ctx(); }
    __device__ __forceinline__ bool reads(const Ctx&) const { return true; }
    __device__ __forceinline__ RowStat zero() const { return RowStat{0.0f, 0.0f}; }
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const { return RowStat{fmaxf(p.a, q.a), 0.0f}; }
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx&) const {
        float a = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k < kv) a = fmaxf(a, pack_amax(v[k]));
        return RowStat{a, 0.0f};
    }
    __device__ __forceinline__ Fin finish(RowStat t, long long, const Ctx&) const {
        Fin f;
        f.s = fp8_scale(t.a);
        f.r = 1.0f / f.s;
        return f;
    }
    template <class P>
    struct Col {};  // nothing per column
    template <class P>
    __device__ __forceinline__ Col<P> column(long long) const {
        return Col<P>();
    }
    template <class P>
    __device__ __forceinline__ void put(const P& v, long long row, long long c, const Col<P>&, const Fin& f, const Ctx&) const {
        Fp8Share<S, (P::E > 1), 1> sh;
        sh.v[0] = v;
        sh.store(q + row * cols + c, 1, 1, f.r);
    }
    __device__ __forceinline__ void row_out(long long row, const Fin& f, const Ctx&) const { scale[row] = f.s; }
};

#define FP8_ROW_PARAMS(S) const S::T *x, unsigned char *q, float *scale, long long rows, long long cols
#define FP8_ROW_DSMEM_OP(S) \
    Fp8DSMEM<S> op;         \
    op.q = q;               \
    op.scale = scale;       \
    op.cols = cols;
ROW_DSMEM_ENTRIES(fp8_row, FP8_ROW_PARAMS, FP8_ROW_DSMEM_OP)
ROW_RING_ENTRIES(fp8_row, FP8_ROW_PARAMS, FP8_ROW_DSMEM_OP)  // row_ring (rowring.cuh), the same Op
#endif  // clusters

#if defined(__CUDA_ARCH__) && !defined(KW_XASYNC)  // every other kernel, in both modules (not the x one)

// fp8_b128: teams of L lanes (aligned within the warp), each team G groups of 128 columns at once: group
// gi = (block's first team·G) + g·(teams a block) + team in block. Lane t of a team holds accesses t, t + L, …
// of its group (NV = 128/(L·E) of them), so a team reads each group 16·L bytes at a time, contiguous.
template <class S, bool V, int L, int G, bool GUARD>
__device__ __forceinline__ void fp8_b128_body(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                              float* __restrict__ scale, long long rows, long long cols,
                                              long long first, int teams) {
    typedef Pack<S, V> P;
    const int E = P::E, NV = 128 / (L * E);
    typedef Fp8Share<S, V, NV> Sh;
    const int tl = threadIdx.x & (L - 1);
    const long long ng = (cols + 127) >> 7, groups = rows * ng;
    Sh sh[G];
    long long base[G];
    int n[G];
#pragma unroll
    for (int g = 0; g < G; g++) {
        const long long gi = first + (long long)g * teams;
        n[g] = 0;
        base[g] = (gi << 7) + tl * E;
        if (!GUARD) {
            n[g] = 1 << 30;  // every access of a whole group exists: the checks fold away
        } else if (gi < groups) {
            const long long r = gi / ng, b = gi - r * ng;
            base[g] = r * cols + (b << 7) + tl * E;
            n[g] = (int)max(0ll, min(128ll, cols - (b << 7)) - tl * E);
        }
        sh[g].load(x + base[g], L * E, n[g]);
    }
#pragma unroll
    for (int g = 0; g < G; g++) {
        float a = sh[g].amax(L * E, n[g]);
#pragma unroll
        for (int o = L / 2; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
        const long long gi = first + (long long)g * teams;
        if (!GUARD || gi < groups) {
            const float s = fp8_scale(a);
            sh[g].store(q + base[g], L * E, n[g], 1.0f / s);
            if (tl == 0) scale[gi] = s;
        }
    }
}

// fp8_b128: teams of L lanes (aligned within the warp), each team G groups of 128 columns at once: group
// gi = (block's first team·G) + g·(teams a block) + team in block. Lane t of a team holds accesses t, t + L, …
// of its group (NV = 128/(L·E) of them), so a team reads each group 16·L bytes at a time, contiguous. A block
// whose groups are all whole and back to back (columns a multiple of 128) runs without bounds checks.
template <class S, bool V, int L, int G>
__device__ __forceinline__ void fp8_b128(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                         float* __restrict__ scale, long long rows, long long cols) {
    const int teams = blockDim.x / L;
    const long long groups = rows * ((cols + 127) >> 7);
    const long long first = (long long)blockIdx.x * teams * G + threadIdx.x / L;
    if ((cols & 127) == 0 && ((long long)blockIdx.x + 1) * teams * G <= groups)
        fp8_b128_body<S, V, L, G, false>(x, q, scale, rows, cols, first, teams);
    else
        fp8_b128_body<S, V, L, G, true>(x, q, scale, rows, cols, first, teams);
}

template <class S, bool V, int NV, int L>
__device__ __forceinline__ void fp8_row_team(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                             float* __restrict__ scale, long long rows, long long cols) {
    typedef Fp8Share<S, V, NV> Sh;
    const int E = Sh::P::E;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (((first & ~31ll) / L) >= rows) return;  // the whole warp leaves together
    const long long row = first / L;
    const int step = L * E;
    const long long c = (long long)(threadIdx.x & (L - 1)) * E;
    const int n = row < rows ? share_len(cols, c, (long long)step * NV) : 0;
    Sh sh;
    sh.load(x + row * cols + c, step, n);
    float a = sh.amax(step, n);
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
    if (row < rows) {
        const float s = fp8_scale(a);
        sh.store(q + row * cols + c, step, n, 1.0f / s);
        if (c == 0) scale[row] = s;
    }
}

template <class S, bool V, int NV>
__device__ __forceinline__ void fp8_row_block(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                              float* __restrict__ scale, long long cols) {
    typedef Fp8Share<S, V, NV> Sh;
    __shared__ float red[32];
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long row = blockIdx.x;
    const long long c = (long long)threadIdx.x * E;
    const int n = share_len(cols, c, (long long)step * NV);
    Sh sh;
    sh.load(x + row * cols + c, step, n);
    const float s = fp8_scale(block_max(sh.amax(step, n), red));
    sh.store(q + row * cols + c, step, n, 1.0f / s);
    if (threadIdx.x == 0) scale[row] = s;
}

// fp8_row_stream: one block per row of any length, reading it twice (amax, then quantization).
template <class S, bool V, int U>
__device__ __forceinline__ void fp8_row_stream(const typename S::T* __restrict__ x, unsigned char* __restrict__ q,
                                               float* __restrict__ scale, long long cols) {
    typedef Fp8Share<S, V, U> Sh;
    __shared__ float red[32];
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long row = blockIdx.x;
    const typename S::T* xr = x + row * cols;
    const long long chunk = (long long)step * U;
    float a = 0.0f;
    for (long long c = (long long)threadIdx.x * E; c < cols; c += chunk) {
        Sh sh;
        const int n = share_len(cols, c, chunk);
        sh.load(xr + c, step, n);
        a = fmaxf(a, sh.amax(step, n));
    }
    const float s = fp8_scale(block_max(a, red));
    const float r = 1.0f / s;
    for (long long c = (long long)threadIdx.x * E; c < cols; c += chunk) {
        Sh sh;
        const int n = share_len(cols, c, chunk);
        sh.load(xr + c, step, n);
        sh.store(q + row * cols + c, step, n, r);
    }
    if (threadIdx.x == 0) scale[row] = s;
}

// Entry points. fp8_b128_{f32,bf16}_{v,s}: v takes 16 elements a lane in teams of 8 (fp32: 2 groups a thread,
// bf16: 4), s one element per access in teams of 32 (4 a lane, 1 group). The row kernels are named as
// crossentropy.cu's.
#define FP8_B128(S, NAME, V, VN, L, G)                                                                               \
    extern "C" __global__ void __launch_bounds__(256, 4) fp8_b128_##NAME##_##VN(const S::T* x, unsigned char* q,        \
                                                                             float* scale, long long rows,           \
                                                                             long long cols) {                       \
        fp8_b128<S, V, L, G>(x, q, scale, rows, cols);                                                               \
    }
#define FP8_ROW_TEAM(S, NAME, V, VN, NV, L)                                                                          \
    extern "C" __global__ void __launch_bounds__(256) fp8_row_team_##NAME##_##VN##NV##l##L(                          \
        const S::T* x, unsigned char* q, float* scale, long long rows, long long cols) {                             \
        fp8_row_team<S, V, NV, L>(x, q, scale, rows, cols);                                                          \
    }
#define FP8_ROW_BLOCK(S, NAME, V, VN, NV)                                                                            \
    extern "C" __global__ void __launch_bounds__(1024, 1) fp8_row_block_##NAME##_##VN##NV(                           \
        const S::T* x, unsigned char* q, float* scale, long long rows, long long cols) {                             \
        fp8_row_block<S, V, NV>(x, q, scale, cols);                                                                  \
    }
#define FP8_ROW_STREAM(S, NAME, V, VN)                                                                               \
    extern "C" __global__ void __launch_bounds__(1024) fp8_row_stream_##NAME##_##VN(                                 \
        const S::T* x, unsigned char* q, float* scale, long long rows, long long cols) {                             \
        fp8_row_stream<S, V, 4>(x, q, scale, cols);                                                                  \
    }
#define FP8_DTYPE(S, NAME, G)                                                                                        \
    FP8_B128(S, NAME, true, v, 8, G)                                                                                 \
    FP8_B128(S, NAME, false, s, 32, 1)                                                                               \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 1)                                                                             \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 2)                                                                             \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 4)                                                                             \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 8)                                                                             \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 16)                                                                            \
    FP8_ROW_TEAM(S, NAME, true, v, 8, 32)                                                                            \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 1)                                                                           \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 2)                                                                           \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 4)                                                                           \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 8)                                                                           \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 16)                                                                          \
    FP8_ROW_TEAM(S, NAME, false, s, 16, 32)                                                                          \
    FP8_ROW_BLOCK(S, NAME, true, v, 2)                                                                               \
    FP8_ROW_BLOCK(S, NAME, true, v, 4)                                                                               \
    FP8_ROW_BLOCK(S, NAME, true, v, 8)                                                                               \
    FP8_ROW_BLOCK(S, NAME, false, s, 4)                                                                              \
    FP8_ROW_BLOCK(S, NAME, false, s, 8)                                                                              \
    FP8_ROW_BLOCK(S, NAME, false, s, 16)                                                                             \
    FP8_ROW_STREAM(S, NAME, true, v)                                                                                 \
    FP8_ROW_STREAM(S, NAME, false, s)

FP8_DTYPE(F32, f32, 2)
FP8_DTYPE(BF16, bf16, 4)

// fp8_naive_cast: q = e4m3(v) for n fp32 values (already clamped), 4 a thread with one 16-byte load and one
// 4-byte store, over a grid-stride loop; the last n % 4 one by one.
extern "C" __global__ void __launch_bounds__(256) fp8_naive_cast(unsigned char* q, const float* v, long long n) {
    const long long n4 = n >> 2, s = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += s) {
        const float4 f = reinterpret_cast<const float4*>(v)[i];
        reinterpret_cast<unsigned*>(q)[i] =
            f32_to_e4m3(f.x) | f32_to_e4m3(f.y) << 8 | f32_to_e4m3(f.z) << 16 | f32_to_e4m3(f.w) << 24;
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const long long i = 4 * n4 + threadIdx.x;
        q[i] = (unsigned char)f32_to_e4m3(v[i]);
    }
}

#endif

// rowmap.cuh: the fused row kernels of the reduce-then-map families (layernorm.cu, softmax.cu), written once over
// an Op that says what is reduced over a row and what is written from it, and the output conversions the
// elementwise families (gelu.cu, swiglu.cu) share with them.
//
// The row kernels follow rmsnorm.cu's plans — a warp for short rows, a block, a thread-block cluster on sm_90 —
// with each thread holding at most 128 bytes of its row in registers, so each input element is read once from
// memory and each output written once. Two more take rows no plan holds in registers, reading each row twice
// (the second time mostly from L2): row_loop (one block per row, any width) and, on sm_90, row_cstream (a
// cluster per row, each block streaming its share twice, so that a row's bytes stay in L2 between the passes).
//
// An Op reduces a row to a RowStat, a pair of floats, in one round:
//
//   typedef S (F32 or BF16), T (S::T); struct Ctx (per row and thread); struct Fin (per row and thread, after the
//   reduction); template <class P> struct Col (what the output needs of a column: LayerNorm's w and b)
//   Ctx context(const T* row)                           — e.g. LayerNorm's shift, the row's first element
//   RowStat zero()                                      — the identity of merge
//   RowStat local<P, NV>(P (&v)[NV], kv, Ctx&)          — over this thread's packs v[0 … kv−1], which it may
//                                                         rewrite for apply (softmax keeps e^(x−m) in fp32)
//   RowStat scan<P, NV>(const P (&v)[NV], kv, const Ctx&) — the same, leaving v alone (the streaming kernels)
//   RowStat merge(RowStat, RowStat)                     — associative, and commutative bit for bit, so that every
//                                                         lane of a butterfly ends with the same value
//   Fin finish(RowStat, cols, const Ctx&)
//   Col<P> column<P>(long long col)
//   apply(const P& v, const Col<P>&, const Fin&, float (&o)[E])     — the outputs of a pack that local saw
//   apply_raw(const P& x, const Col<P>&, const Fin&, float (&o)[E]) — the outputs of an input pack as loaded
//
// All reductions run in a fixed order (deterministic).
#pragma once
#include "common.cuh"
#include "xasync.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

struct RowStat {
    float a, b;
};

// rm_ex2 is 2^x with the hardware approximation (relative error about 2^-22); -inf gives 0.
__device__ __forceinline__ float rm_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// rm_rcp is 1/x with the hardware approximation (1 ulp); rm_rcp(inf) is 0.
__device__ __forceinline__ float rm_rcp(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

#define KW_LOG2E 1.4426950408889634f

// RmIsBF16 says whether packs P hold bf16 elements (2 bytes each).
template <class P>
struct RmIsBF16 {
    enum { value = sizeof(P) == 2 * P::E };
};

// rm_pack_max is the largest element of the first kv of packs v (−inf for none). bf16 packs take it in four
// chains: fmaxf is exact and ignores NaN in any order, so the chains change only the dependent latency, not the
// result. fp32 packs keep one chain (four chains ran about a point slower on an H200).
template <class P, int NV>
__device__ __forceinline__ float rm_pack_max(const P (&v)[NV], int kv) {
    enum { C = RmIsBF16<P>::value ? 4 : 1 };
    float m[C];
#pragma unroll
    for (int i = 0; i < C; i++) m[i] = -__int_as_float(0x7f800000);
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (k < kv)
#pragma unroll
            for (int j = 0; j < P::E; j++) m[j % C] = fmaxf(m[j % C], v[k].get(j));
#pragma unroll
    for (int i = 1; i < C; i++) m[0] = fmaxf(m[0], m[i]);
    return m[0];
}

// rm_pack_softstat is the softmax statistic of the first kv of packs v: {m, Σ e^(x − m)} over their elements, m
// their maximum. bf16 packs, which do twice fp32's arithmetic a byte, take each exponent as one
// fma(x, log2 e, −fl(m·log2 e)) and the sum in two chains (elements j even and odd) added at the end; fl(m·log2 e)
// misses m·log2 e by ml = fma(m, log2 e, −fl(m·log2 e)), which scales every exponential by 2^ml, so the sum is
// multiplied once by 2^−ml (without it a row with |m| ≈ 30000 has its sum, and a cross-entropy its loss, 2e-4 off).
// fp32 packs keep (x − m)·log2 e, exact for neighbouring x and m, and one chain.
template <class P, int NV>
__device__ __forceinline__ RowStat rm_pack_softstat(const P (&v)[NV], int kv) {
    enum { BF = RmIsBF16<P>::value, C = BF ? 2 : 1 };
    const float m = rm_pack_max<P, NV>(v, kv), nm = -m * KW_LOG2E;
    const float ml = !BF || m == -__int_as_float(0x7f800000) ? 0.0f : fmaf(m, KW_LOG2E, nm);
    float s[C];
#pragma unroll
    for (int i = 0; i < C; i++) s[i] = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (k < kv)
#pragma unroll
            for (int j = 0; j < P::E; j++) {
                const float x = v[k].get(j);
                s[j % C] += rm_ex2(BF ? fmaf(x, KW_LOG2E, nm) : (x - m) * KW_LOG2E);
            }
#pragma unroll
    for (int i = 1; i < C; i++) s[0] += s[i];
    return RowStat{m, BF ? s[0] * rm_ex2(-ml) : s[0]};
}

// RmSoft is a softmax's per-row constants for rm_soft: the row maximum m, 1 / Σ, and (bf16) c = m·log2 e + log2 Σ.
struct RmSoft {
    float m, inv, c;
};
template <class P>
__device__ __forceinline__ RmSoft rm_soft_fin(float m, float sum) {
    RmSoft f;
    f.m = m;
    f.inv = 1.0f / sum;
    f.c = 0.0f;
    if (RmIsBF16<P>::value) {
        float l;
        asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(sum));
        f.c = fmaf(m, KW_LOG2E, l);
    }
    return f;
}
// rm_soft is e^(x − m) / Σ: for bf16 elements one exponential of fma(x, log2 e, −c), no multiply (c's rounding
// costs about 2^-24·|c| relative, far below bf16's half unit 2^-9 wherever |c| < 2^15); for fp32
// e^((x − m)·log2 e) · (1 / Σ).
template <class P>
__device__ __forceinline__ float rm_soft(float x, const RmSoft& f) {
    return RmIsBF16<P>::value ? rm_ex2(fmaf(x, KW_LOG2E, -f.c)) : rm_ex2((x - f.m) * KW_LOG2E) * f.inv;
}

// rm_pack_expand replaces each element x of the first kv of packs v by e^(x − m) (rounded to the packs' storage)
// and returns {m, the sum of the unrounded exponentials}: a softmax's statistic of those packs, kept in place.
template <class P, int NV>
__device__ __forceinline__ RowStat rm_pack_expand(P (&v)[NV], int kv, float m) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k < kv) {
#pragma unroll
            for (int j = 0; j < P::E; j++) {
                const float e = rm_ex2((v[k].get(j) - m) * KW_LOG2E);
                v[k].set(j, e);
                s += e;
            }
        }
    }
    return RowStat{m, s};
}

// rm_bf16x2 rounds two floats to bf16 (lo in the low half), as f32_to_bf16 does. On sm_80 and later one
// cvt.rn.bf16x2.f32 does both; it differs from f32_to_bf16 only on NaN (canonical there, sign and payload kept
// here), so the callers use it only when no output of the pack is NaN (rm_store).
__device__ __forceinline__ unsigned rm_bf16x2_soft(float lo, float hi) {
    return (unsigned)f32_to_bf16(lo) | ((unsigned)f32_to_bf16(hi) << 16);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned rm_bf16x2_cvt(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

// rm_store writes E outputs as one pack of storage S (16 bytes when V) at p. bf16 on sm_80+: the hardware
// conversion, unless the pack's sum is NaN (a NaN output, or infinities), where the bit-exact software one runs.
// One: the bf16 pack leaves in one 16-byte store written in PTX. row_chunk_store (the block and cluster kernels)
// asks for it: nvcc 11.8 split their C++ store into four of 4 bytes, each a warp's partial writes to 16 sectors
// (LayerNorm bf16 on an H200: 32768×4096 92.4 → 94.8% of the copy, 1024×262144 66.5 → 71.5%). The other kernels
// keep the C++ store, which they vectorize and ptxas may place freely: ordered as an asm statement behind the
// asm loads of the next row, it cost row_res 2.4 points at LayerNorm bf16 8192×16384.
template <class S, bool V>
struct RmStore;

template <class S>
struct RmStore<S, false> {
    static __device__ __forceinline__ void store(const float (&o)[1], typename S::T* p) { *p = S::put(o[0]); }
    static __device__ __forceinline__ void store_one(const float (&o)[1], typename S::T* p) { store(o, p); }
};

template <>
struct RmStore<F32, true> {
    static __device__ __forceinline__ void store(const float (&o)[4], float* p) {
        *reinterpret_cast<float4*>(p) = make_float4(o[0], o[1], o[2], o[3]);
    }
    static __device__ __forceinline__ void store_one(const float (&o)[4], float* p) { store(o, p); }
};

template <>
struct RmStore<BF16, true> {
    static __device__ __forceinline__ void store(const float (&o)[8], unsigned short* p) {
        uint4 r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        const float s = ((o[0] + o[1]) + (o[2] + o[3])) + ((o[4] + o[5]) + (o[6] + o[7]));
        if (s == s) {
            r.x = rm_bf16x2_cvt(o[0], o[1]);
            r.y = rm_bf16x2_cvt(o[2], o[3]);
            r.z = rm_bf16x2_cvt(o[4], o[5]);
            r.w = rm_bf16x2_cvt(o[6], o[7]);
            *reinterpret_cast<uint4*>(p) = r;
            return;
        }
#endif
        r.x = rm_bf16x2_soft(o[0], o[1]);
        r.y = rm_bf16x2_soft(o[2], o[3]);
        r.z = rm_bf16x2_soft(o[4], o[5]);
        r.w = rm_bf16x2_soft(o[6], o[7]);
        *reinterpret_cast<uint4*>(p) = r;
    }
    static __device__ __forceinline__ void store_one(const float (&o)[8], unsigned short* p) {
        unsigned r0, r1, r2, r3;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        const float s = ((o[0] + o[1]) + (o[2] + o[3])) + ((o[4] + o[5]) + (o[6] + o[7]));
        if (s == s) {
            r0 = rm_bf16x2_cvt(o[0], o[1]);
            r1 = rm_bf16x2_cvt(o[2], o[3]);
            r2 = rm_bf16x2_cvt(o[4], o[5]);
            r3 = rm_bf16x2_cvt(o[6], o[7]);
        } else
#endif
        {
            r0 = rm_bf16x2_soft(o[0], o[1]);
            r1 = rm_bf16x2_soft(o[2], o[3]);
            r2 = rm_bf16x2_soft(o[4], o[5]);
            r3 = rm_bf16x2_soft(o[6], o[7]);
        }
        st_v4(p, r0, r1, r2, r3);
    }
};

template <class S, bool V, bool One = false>
__device__ __forceinline__ void rm_store(const float (&o)[Pack<S, V>::E], typename S::T* p) {
    if (One) {
        RmStore<S, V>::store_one(o, p);
    } else {
        RmStore<S, V>::store(o, p);
    }
}

template <class Op>
__device__ __forceinline__ RowStat warp_merge(const Op& op, RowStat s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        RowStat t;
        t.a = __shfl_xor_sync(0xffffffffu, s.a, o);
        t.b = __shfl_xor_sync(0xffffffffu, s.b, o);
        s = op.merge(s, t);
    }
    return s;
}

// block_merge returns the block's RowStat in every thread (as block_sum); red holds 32 of them.
template <class Op>
__device__ __forceinline__ RowStat block_merge(const Op& op, RowStat s, RowStat* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    s = warp_merge(op, s);
    __syncthreads();
    if (lane == 0) red[warp] = s;
    __syncthreads();
    return warp_merge(op, lane < warps ? red[lane] : op.zero());
}

// row_warp: one warp for R rows (all their loads in flight together), for rows of at most 32·NV·E elements;
// V: 16-byte packs (cols % E == 0), else one element per access. (Loading each column's Col once for the R rows
// instead, outputs column by column, measured slower for LayerNorm: the R rows' results held at once cost
// occupancy.)
template <class Op, bool V, int NV, int R>
__device__ __forceinline__ void row_warp(const Op& op, const typename Op::T* __restrict__ x,
                                         typename Op::T* __restrict__ y, long long rows, long long cols) {
    typedef Pack<typename Op::S, V> P;
    const int E = P::E, lane = threadIdx.x & 31;
    const long long row0 = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * R;
    if (row0 >= rows) return;  // the whole warp leaves together
    const long long packs = cols / E;
    const int kv = lane < packs ? (int)min((long long)NV, (packs - lane + 31) >> 5) : 0;  // packs of this lane
    P v[R][NV];
    typename Op::Ctx ctx[R];
#pragma unroll
    for (int q = 0; q < R; q++) {
        if (row0 + q < rows) {
            const typename Op::T* xr = x + (row0 + q) * cols;
            ctx[q] = op.context(xr);
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) v[q][k].load(xr + (long long)(k * 32 + lane) * E);
        }
    }
#pragma unroll
    for (int q = 0; q < R; q++) {
        if (row0 + q < rows) {  // the same in every lane
            const RowStat s = warp_merge(op, op.template local<P, NV>(v[q], kv, ctx[q]));
            const typename Op::Fin f = op.finish(s, cols, ctx[q]);
            typename Op::T* yr = y + (row0 + q) * cols;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (k < kv) {
                    const long long c = (long long)(k * 32 + lane) * E;
                    float o[E];
                    op.apply(v[q][k], op.template column<P>(c), f, o);
                    rm_store<typename Op::S, V>(o, yr + c);
                }
            }
        }
    }
}

// row_lanes: a team of L lanes (aligned within its warp) per row, blockDim/L rows a block, lane t of a team holding
// packs t, t + L, … (NV of them) of its row: for rows of at most L·NV packs, where one warp a row (row_warp) spends
// five rounds of shuffles and a warp's worth of per-row work on a few packs a lane (LayerNorm bf16 262144×256 on an
// H200 in one warp for 8 rows: 62–68% of the copy; the cross-entropy's teams of 4 lanes: 94%). A team past the last
// row stays for the shuffles and touches no memory.
template <class Op, bool V, int NV, int L>
__device__ __forceinline__ void row_lanes(const Op& op, const typename Op::T* __restrict__ x,
                                          typename Op::T* __restrict__ y, long long rows, long long cols) {
    typedef Pack<typename Op::S, V> P;
    const int E = P::E, tl = threadIdx.x & (L - 1);
    const long long row = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / L;
    const bool live = row < rows;
    const long long packs = cols / E;
    const int kv = live && tl < packs ? (int)min((long long)NV, (packs - tl + L - 1) / L) : 0;
    const typename Op::T* xr = x + (live ? row : 0) * cols;
    P v[NV];
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (k < kv) v[k].load(xr + (long long)(k * L + tl) * E);
    typename Op::Ctx ctx = op.context(xr);
    RowStat s = op.template local<P, NV>(v, kv, ctx);
#pragma unroll
    for (int o = L / 2; o > 0; o >>= 1) {
        RowStat t;
        t.a = __shfl_xor_sync(0xffffffffu, s.a, o);
        t.b = __shfl_xor_sync(0xffffffffu, s.b, o);
        s = op.merge(s, t);
    }
    const typename Op::Fin f = op.finish(s, cols, ctx);
    typename Op::T* yr = y + (live ? row : 0) * cols;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k < kv) {
            const long long c = (long long)(k * L + tl) * E;
            float o[E];
            op.apply(v[k], op.template column<P>(c), f, o);
            rm_store<typename Op::S, V>(o, yr + c);
        }
    }
}

// row_chunk_load loads this thread's packs of part `part` of a row (a part is blockDim·NV·E columns, a thread's
// packs blockDim·E apart) and returns how many of them exist; c is the column of the first.
template <class P, int NV, class T>
__device__ __forceinline__ int row_chunk_load(P (&v)[NV], const T* xr, long long cols, long long part, long long& c) {
    const int E = P::E, step = blockDim.x * E;
    const long long chunk = (long long)step * NV;
    c = part * chunk + (long long)threadIdx.x * E;
    const long long left = cols - c;
    const int kv = left <= 0 ? 0 : (int)min((long long)NV, (left + step - 1) / step);
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (k < kv) v[k].load(xr + c + (long long)k * step);
    return kv;
}

template <class Op, bool V, int NV>
__device__ __forceinline__ void row_chunk_store(const Op& op, const Pack<typename Op::S, V> (&v)[NV], int kv,
                                                typename Op::T* yr, long long c, const typename Op::Fin& f) {
    typedef Pack<typename Op::S, V> P;
    const int step = blockDim.x * P::E;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k < kv) {
            const long long ck = c + (long long)k * step;
            float o[P::E];
            op.apply(v[k], op.template column<P>(ck), f, o);
            rm_store<typename Op::S, V, true>(o, yr + ck);
        }
    }
}

// row_chunk_store_lead is row_chunk_store with each pack's column data loaded LEAD packs ahead of its store, into
// col, whose first min(LEAD, NV) packs the caller loaded (row_block, before the row's statistic).
template <class Op, bool V, int NV, int LEAD>
__device__ __forceinline__ void row_chunk_store_lead(const Op& op, const Pack<typename Op::S, V> (&v)[NV],
                                                     typename Op::template Col<Pack<typename Op::S, V> > (&col)[NV],
                                                     int kv, typename Op::T* yr, long long c,
                                                     const typename Op::Fin& f) {
    typedef Pack<typename Op::S, V> P;
    const int step = blockDim.x * P::E;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k + LEAD < NV && k + LEAD < kv)
            col[k + LEAD] = op.template column<P>(c + (long long)(k + LEAD) * step);
        if (k < kv) {
            const long long ck = c + (long long)k * step;
            float o[P::E];
            op.apply(v[k], col[k], f, o);
            rm_store<typename Op::S, V, true>(o, yr + ck);
        }
    }
}

// row_block_in is row_block and row_block_lead (below), red their 32 statistics in shared memory.
template <class Op, bool V, int NV, int LEAD>
__device__ __forceinline__ void row_block_in(const Op& op, const typename Op::T* __restrict__ x,
                                             typename Op::T* __restrict__ y, long long cols, RowStat* red) {
    typedef Pack<typename Op::S, V> P;
    const long long row = blockIdx.x;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, 0, c);
    typename Op::template Col<P> col[NV];
    if (LEAD > 0) {
        const int step = blockDim.x * P::E;
#pragma unroll
        for (int k = 0; k < LEAD && k < NV; k++)
            if (k < kv) col[k] = op.template column<P>(c + (long long)k * step);
    }
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
    const typename Op::Fin f = op.finish(s, cols, ctx);
    if (LEAD > 0) {
        row_chunk_store_lead<Op, V, NV, (LEAD > 0 ? LEAD : 1)>(op, v, col, kv, y + row * cols, c, f);
    } else {
        row_chunk_store<Op, V, NV>(op, v, kv, y + row * cols, c, f);
    }
}

// row_block: one block per row (grid = rows), holding all of it: blockDim·NV·E ≥ cols.
template <class Op, bool V, int NV>
__device__ __forceinline__ void row_block(const Op& op, const typename Op::T* __restrict__ x,
                                          typename Op::T* __restrict__ y, long long cols) {
    __shared__ RowStat red[32];
    row_block_in<Op, V, NV, 0>(op, x, y, cols, red);
}

// row_block_lead is row_block (16-byte packs) with each pack's column data loaded LEAD packs ahead of its store,
// the first LEAD packs' before the row's statistic is merged (they do not depend on it): the _blocka_ kernels of
// RMSNorm and LayerNorm (sm_90). row_block loads a pack's just before the pack's store, and the compiler, which
// cannot tell that the column vectors and y do not alias, keeps each such load behind the previous pack's store,
// so a thread's column round trips run one after another. The look-ahead needs registers that the 1024-thread
// bounds of the other block kernels do not leave (there it spilled and lost 7–17 points of the copy on an H200),
// so these kernels are bounded by the block size they are launched with (scripts/experiments/column-ahead.cu).
template <class Op, int NV, int LEAD>
__device__ __forceinline__ void row_block_lead(const Op& op, const typename Op::T* __restrict__ x,
                                               typename Op::T* __restrict__ y, long long cols) {
    __shared__ RowStat red[32];
    row_block_in<Op, true, NV, LEAD>(op, x, y, cols, red);
}

// row_stream_scan reduces packs [lo, hi) of row xr (in packs of E elements), U in flight a thread; row_stream_map
// reads them again and writes the outputs.
template <class Op, bool V, int U>
__device__ __forceinline__ RowStat row_stream_scan(const Op& op, const typename Op::T* xr, long long lo, long long hi,
                                                   const typename Op::Ctx& ctx) {
    typedef Pack<typename Op::S, V> P;
    const int E = P::E;
    const long long step = blockDim.x;
    RowStat s = op.zero();
    for (long long p0 = lo + threadIdx.x; p0 < hi; p0 += U * step) {
        P v[U];
        const int kv = (int)min((long long)U, (hi - p0 + step - 1) / step);
#pragma unroll
        for (int k = 0; k < U; k++)
            if (k < kv) v[k].load(xr + (p0 + k * step) * E);
        s = op.merge(s, op.template scan<P, U>(v, kv, ctx));
    }
    return s;
}

template <class Op, bool V, int U>
__device__ __forceinline__ void row_stream_map(const Op& op, const typename Op::T* xr, typename Op::T* yr, long long lo,
                                               long long hi, const typename Op::Fin& f) {
    typedef Pack<typename Op::S, V> P;
    const int E = P::E;
    const long long step = blockDim.x;
    for (long long p0 = lo + threadIdx.x; p0 < hi; p0 += U * step) {
        P v[U];
        const int kv = (int)min((long long)U, (hi - p0 + step - 1) / step);
#pragma unroll
        for (int k = 0; k < U; k++)
            if (k < kv) v[k].load(xr + (p0 + k * step) * E);
#pragma unroll
        for (int k = 0; k < U; k++) {
            if (k < kv) {
                const long long c = (p0 + k * step) * E;
                float o[E];
                op.apply_raw(v[k], op.template column<P>(c), f, o);
                rm_store<typename Op::S, V>(o, yr + c);
            }
        }
    }
}

// row_loop: one block per row of any width: a pass that reduces, then a pass that reads the row again (from L2,
// mostly) and writes.
template <class Op, bool V, int U>
__device__ __forceinline__ void row_loop(const Op& op, const typename Op::T* __restrict__ x,
                                         typename Op::T* __restrict__ y, long long cols) {
    __shared__ RowStat red[32];
    const long long row = blockIdx.x, packs = cols / Pack<typename Op::S, V>::E;
    const typename Op::T* xr = x + row * cols;
    const typename Op::Ctx ctx = op.context(xr);
    const RowStat s = block_merge(op, row_stream_scan<Op, V, U>(op, xr, 0, packs, ctx), red);
    row_stream_map<Op, V, U>(op, xr, y + row * cols, 0, packs, op.finish(s, cols, ctx));
}

// ROW_BLOCKA_ENTRY declares <prefix>_blocka_<NAME>_v8t<T>a<LEAD> (rowFamily.kernel in rowplan.go: a rowLead of the
// family): row_block_lead over the Op that OP(S) declares as `op`, 8 packs a thread, bounded by T threads. The
// families with column data build theirs in their _sm90 modules.
#ifdef KW_XASYNC  // the _x_sm90a modules: the cluster kernels alone (xasync.cuh)
#define ROW_BLOCKA_ENTRY(PREFIX, S, NAME, T, LEAD, PARAMS, OP)
#else
#define ROW_BLOCKA_ENTRY(PREFIX, S, NAME, T, LEAD, PARAMS, OP)                                                 \
    extern "C" __global__ void __launch_bounds__(T) PREFIX##_blocka_##NAME##_v8t##T##a##LEAD(PARAMS(S)) {      \
        OP(S)                                                                                                  \
        row_block_lead<decltype(op), 8, LEAD>(op, x, y, cols);                                                 \
    }
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// cluster_merge: every block of the cluster publishes its RowStat s and gets the cluster's, merged in rank order
// (the same in every block), through distributed shared memory between hardware cluster barriers. The caller
// ends with barrier.cluster.wait (keep `mine` until every block has read it).
template <class Op, int CS>
__device__ __forceinline__ RowStat cluster_merge(const Op& op, RowStat s, RowStat* mine) {
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    if (threadIdx.x == 0) *mine = s;
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");  // every part published
    RowStat t = *cluster.map_shared_rank(mine, 0);
#pragma unroll
    for (int i = 1; i < CS; i++) t = op.merge(t, *cluster.map_shared_rank(mine, i));
    asm volatile("barrier.cluster.arrive;" ::: "memory");  // done reading the others' parts
    return t;
}

// row_cluster (sm_90): one thread-block cluster of CS blocks per row (grid = rows·CS), each block holding
// blockDim·NV·E columns of it in registers, as rmsnorm_cluster. The cluster's blocks are consecutive, its rank
// the block's part of the row. In the _x_sm90a modules (KW_XASYNC) the blocks' statistics meet by st.async
// (xasync.cuh) instead of cluster_merge's barriers.
template <class Op, int NV, int CS>
__device__ __forceinline__ void row_cluster(const Op& op, const typename Op::T* __restrict__ x,
                                            typename Op::T* __restrict__ y, long long cols) {
    typedef Pack<typename Op::S, true> P;
    __shared__ RowStat red[32];
#ifdef KW_XASYNC
    __shared__ __align__(8) RowStat parts[CS];
    __shared__ __align__(8) unsigned long long xbar;
    xa_init(&xbar, 1);
#else
    __shared__ RowStat mine;
#endif
    const long long row = blockIdx.x / CS;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, (long long)cooperative_groups::this_cluster().block_rank(), c);
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
#ifdef KW_XASYNC
    xa_started();
    if (threadIdx.x == 0) {
        const float w[2] = {s.a, s.b};
        xa_send<2>(w, &parts[cooperative_groups::this_cluster().block_rank()].a, &xbar, CS);
    }
    xa_wait(&xbar, 0);
    RowStat t = parts[0];
#pragma unroll
    for (int i = 1; i < CS; i++) t = op.merge(t, parts[i]);
    row_chunk_store<Op, true, NV>(op, v, kv, y + row * cols, c, op.finish(t, cols, ctx));
#else
    const RowStat t = cluster_merge<Op, CS>(op, s, &mine);
    row_chunk_store<Op, true, NV>(op, v, kv, y + row * cols, c, op.finish(t, cols, ctx));
    asm volatile("barrier.cluster.wait;" ::: "memory");
#endif
}

// row_cstream (sm_90): one cluster of CS blocks per row (grid = rows·CS), each block streaming its ⌈1/CS⌉ share
// of the row twice, U packs in flight a thread: the row's bytes in flight at once are those of the rows on the
// GPU, a few MiB that stay in L2 for the second pass, and the blocks are small enough to run several to a
// multiprocessor.
template <class Op, int CS, int U>
__device__ __forceinline__ void row_cstream(const Op& op, const typename Op::T* __restrict__ x,
                                            typename Op::T* __restrict__ y, long long cols) {
    __shared__ RowStat red[32];
    __shared__ RowStat mine;
    const long long row = blockIdx.x / CS, packs = cols / Pack<typename Op::S, true>::E;
    const long long per = (packs + CS - 1) / CS, lo = cooperative_groups::this_cluster().block_rank() * per;
    const long long hi = min(lo + per, packs);
    const typename Op::T* xr = x + row * cols;
    const typename Op::Ctx ctx = op.context(xr);
    const RowStat s = block_merge(op, row_stream_scan<Op, true, U>(op, xr, lo, hi, ctx), red);
    const RowStat t = cluster_merge<Op, CS>(op, s, &mine);
    row_stream_map<Op, true, U>(op, xr, y + row * cols, lo, hi, op.finish(t, cols, ctx));
    asm volatile("barrier.cluster.wait;" ::: "memory");
}
#endif

// softmax_op.cuh: SoftmaxOp, the softmax as a rowmap.cuh Op (softmax.cu's kernels; experiments that time
// other kernels over the same Op include it alone).
#pragma once
#include "rowmap.cuh"

template <class S_>
struct SoftmaxOp {
    typedef S_ S;
    typedef typename S::T T;
    // INPLACE: fp32 packs hold e^(x − m_t) after local (m_t the thread's own maximum), so that each element's
    // exponential is computed once; bf16 packs cannot, and apply computes it again from x.
    enum { INPLACE = sizeof(T) == 4 };

    struct Ctx {
        float m;  // INPLACE: this thread's maximum
    };
    struct Fin {
        RmSoft e;     // the row maximum m, 1 / Σ e^(x−m), and rm_soft's constant
        float scale;  // (INPLACE) e^(m_t − m) / Σ
    };
    template <class P>
    struct Col {};
    __device__ __forceinline__ Ctx context(const T*) const {
        Ctx c;
        c.m = -__int_as_float(0x7f800000);
        return c;
    }
    __device__ __forceinline__ RowStat zero() const { return RowStat{-__int_as_float(0x7f800000), 0.0f}; }
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx&) const {
        return rm_pack_softstat<P, NV>(v, kv);
    }
    template <class P, int NV>
    __device__ __forceinline__ RowStat local(P (&v)[NV], int kv, Ctx& c) const {
        if (!INPLACE) return scan<P, NV>(v, kv, c);  // (no branch once compiled: INPLACE is a constant)
        c.m = rm_pack_max<P, NV>(v, kv);
        return rm_pack_expand<P, NV>(v, kv, c.m);
    }
    // merge: the sum of each side rescaled to the larger maximum (a side at that maximum exactly is not
    // rescaled, so merging with zero() changes nothing). Written without contractions: commutative bit for bit.
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const {
        const float m = fmaxf(p.a, q.a);
        const float fp = p.a == m ? 1.0f : rm_ex2(__fmul_rn(p.a - m, KW_LOG2E));
        const float fq = q.a == m ? 1.0f : rm_ex2(__fmul_rn(q.a - m, KW_LOG2E));
        return RowStat{m, __fadd_rn(__fmul_rn(p.b, fp), __fmul_rn(q.b, fq))};
    }
    __device__ __forceinline__ Fin finish(RowStat t, long long, const Ctx& c) const {
        Fin f;
        f.e = rm_soft_fin<Pack<S, true> >(t.a, t.b);
        f.scale = INPLACE ? rm_ex2((c.m - t.a) * KW_LOG2E) * f.e.inv : 0.0f;
        return f;
    }
    template <class P>
    __device__ __forceinline__ Col<P> column(long long) const {
        return Col<P>();
    }
    template <class P>
    __device__ __forceinline__ void apply_raw(const P& x, const Col<P>&, const Fin& f, float (&o)[P::E]) const {
#pragma unroll
        for (int j = 0; j < P::E; j++) o[j] = rm_soft<P>(x.get(j), f.e);
    }
    template <class P>
    __device__ __forceinline__ void apply(const P& v, const Col<P>& k, const Fin& f, float (&o)[P::E]) const {
        if (INPLACE) {
#pragma unroll
            for (int j = 0; j < P::E; j++) o[j] = v.get(j) * f.scale;
        } else {
            apply_raw<P>(v, k, f, o);
        }
    }
};

// layernorm_op.cuh: LayerNormOp, LayerNorm as a rowmap.cuh Op (layernorm.cu's kernels; experiments that time
// other kernels over the same Op include it alone).
#pragma once
#include "rowmap.cuh"

template <class S_>
struct LayerNormOp {
    typedef S_ S;
    typedef typename S::T T;
    const T* __restrict__ w;
    const T* __restrict__ b;
    float eps;

    struct Ctx {
        float k;
    };
    struct Fin {
        float mean, rstd;
    };
    template <class P>
    struct Col {
        P w, b;
    };
    __device__ __forceinline__ Ctx context(const T* xr) const {
        Ctx c;
        c.k = S::get(xr[0]);
        return c;
    }
    __device__ __forceinline__ RowStat zero() const { return RowStat{0.0f, 0.0f}; }
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx& c) const {
        float s1 = 0.0f, s2 = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
#pragma unroll
                for (int j = 0; j < P::E; j++) {
                    const float d = v[k].get(j) - c.k;
                    s1 += d;
                    s2 = fmaf(d, d, s2);
                }
            }
        }
        return RowStat{s1, s2};
    }
    template <class P, int NV>
    __device__ __forceinline__ RowStat local(P (&v)[NV], int kv, Ctx& c) const {
        return scan<P, NV>(v, kv, c);
    }
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const { return RowStat{p.a + q.a, p.b + q.b}; }
    __device__ __forceinline__ Fin finish(RowStat t, long long cols, const Ctx& c) const {
        const float n = (float)cols, d = t.a / n;
        const float var = fmaxf(t.b / n - d * d, 0.0f);
        Fin f;
        f.mean = c.k + d;
        f.rstd = rsqrtf(var + eps);
        return f;
    }
    template <class P>
    __device__ __forceinline__ Col<P> column(long long c) const {
        Col<P> k;
        k.w.load(w + c);
        k.b.load(b + c);
        return k;
    }
    template <class P>
    __device__ __forceinline__ void apply_raw(const P& x, const Col<P>& k, const Fin& f, float (&o)[P::E]) const {
#pragma unroll
        for (int j = 0; j < P::E; j++) o[j] = fmaf((x.get(j) - f.mean) * f.rstd, k.w.get(j), k.b.get(j));
    }
    template <class P>
    __device__ __forceinline__ void apply(const P& x, const Col<P>& k, const Fin& f, float (&o)[P::E]) const {
        apply_raw<P>(x, k, f, o);
    }
};

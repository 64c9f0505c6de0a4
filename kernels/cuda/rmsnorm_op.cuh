// rmsnorm_op.cuh: RMSNormOp, RMSNorm as a rowmap.cuh Op (rmsnorm.cu's sm_90 kernels; experiments that time other
// kernels over the same Op include it alone).
#pragma once
#include "rowmap.cuh"

// RMSNormOp is RMSNorm as a rowmap.cuh Op (the sum of squares, then x·rsqrt(mean + ε)·w), which rmsnorm.cu's
// sm_90 module runs through row_dsmem (rowdsmem.cuh), row_ring (rowring.cuh) and row_res (rowres.cuh); its own
// warp, team and cluster kernels do not take an Op.
template <class S_>
struct RMSNormOp {
    typedef S_ S;
    typedef typename S::T T;
    const T* __restrict__ w;
    float eps;

    struct Ctx {};
    struct Fin {
        float inv;
    };
    template <class P>
    struct Col {
        P w;
    };
    __device__ __forceinline__ Ctx context(const T*) const { return Ctx(); }
    __device__ __forceinline__ RowStat zero() const { return RowStat{0.0f, 0.0f}; }
    // scan: Σx² in two chains (elements j even and odd) added at the end: half the dependent adds a thread.
    template <class P, int NV>
    __device__ __forceinline__ RowStat scan(const P (&v)[NV], int kv, const Ctx&) const {
        float ss[2] = {0.0f, 0.0f};
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
#pragma unroll
                for (int j = 0; j < P::E; j++) {
                    const float f = v[k].get(j);
                    ss[j & 1] = fmaf(f, f, ss[j & 1]);
                }
            }
        }
        return RowStat{ss[0] + ss[1], 0.0f};
    }
    template <class P, int NV>
    __device__ __forceinline__ RowStat local(const P (&v)[NV], int kv, const Ctx& c) const {
        return scan<P, NV>(v, kv, c);
    }
    __device__ __forceinline__ RowStat merge(RowStat p, RowStat q) const { return RowStat{p.a + q.a, 0.0f}; }
    __device__ __forceinline__ Fin finish(RowStat t, long long cols, const Ctx&) const {
        Fin f;
        f.inv = rsqrtf(t.a / (float)cols + eps);
        return f;
    }
    template <class P>
    __device__ __forceinline__ Col<P> column(long long c) const {
        Col<P> k;
        k.w.load(w + c);
        return k;
    }
    template <class P>
    __device__ __forceinline__ void apply_raw(const P& x, const Col<P>& k, const Fin& f, float (&o)[P::E]) const {
#pragma unroll
        for (int j = 0; j < P::E; j++) o[j] = x.get(j) * f.inv * k.w.get(j);
    }
    template <class P>
    __device__ __forceinline__ void apply(const P& x, const Col<P>& k, const Fin& f, float (&o)[P::E]) const {
        apply_raw<P>(x, k, f, o);
    }
};

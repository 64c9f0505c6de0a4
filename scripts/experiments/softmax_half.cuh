// softmax_half.cuh: SoftmaxOpH, the bf16 softmax Op whose packs keep their exponentials as fp16 (half-exps.cu says
// why; the experiments that time it include this).
#pragma once
#include "../../kernels/cuda/softmax_op.cuh"

// SoftmaxOpH: SoftmaxOp<BF16> with each exponential kept in its pack as fp16 (half-exps.cu). Only the
// kernels that call local (registers) use the difference; scan is SoftmaxOp's.
struct SoftmaxOpH : SoftmaxOp<BF16> {
    template <class P, int NV>
    __device__ __forceinline__ RowStat local(P (&v)[NV], int kv, Ctx& c) const {
        c.m = rm_pack_max<P, NV>(v, kv);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                unsigned* w = reinterpret_cast<unsigned*>(&v[k].raw);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const float x0 = __uint_as_float(w[i] << 16), x1 = __uint_as_float(w[i] & 0xffff0000u);
                    const float e0 = rm_ex2(fmaf(x0 - c.m, KW_LOG2E, 15.0f));
                    const float e1 = rm_ex2(fmaf(x1 - c.m, KW_LOG2E, 15.0f));
                    s += e0;
                    s += e1;
                    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w[i]) : "f"(e1), "f"(e0));
                }
            }
        }
        return RowStat{c.m, s * 0x1p-15f};
    }
    __device__ __forceinline__ Fin finish(RowStat t, long long, const Ctx& c) const {
        Fin f;
        f.m = t.a;
        f.inv = 1.0f / t.b;
        f.scale = rm_ex2((c.m - t.a) * KW_LOG2E) * f.inv * 0x1p-15f;
        return f;
    }
    template <class P>
    __device__ __forceinline__ void apply(const P& v, const Col<P>&, const Fin& f, float (&o)[P::E]) const {
        const unsigned* w = reinterpret_cast<const unsigned*>(&v.raw);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float a, b;
            asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\tcvt.f32.f16 %0, lo;\n\tcvt.f32.f16 %1, hi;\n\t}"
                : "=f"(a), "=f"(b)
                : "r"(w[i]));
            o[2 * i] = a * f.scale;
            o[2 * i + 1] = b * f.scale;
        }
    }
};

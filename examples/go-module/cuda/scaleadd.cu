// scaleadd.cu: ScaleAdd (scaleadd.go), y = alpha·x + b, fp32 or bf16 storage (dtype: the harness's DType codes,
// KW_FP32 or KW_BF16), fp32 arithmetic. The bf16 conversions are the harness's (common.cuh), bit for bit the
// ones its CPU backend and the float64 reference's inputs use. Every parameter is 8 bytes, as the harness
// passes them.
#include "common.cuh"

__device__ __forceinline__ float load(const void* p, long long i, long long dtype) {
    return dtype == KW_BF16 ? bf16_to_f32(((const unsigned short*)p)[i]) : ((const float*)p)[i];
}

__device__ __forceinline__ void store(void* p, long long i, long long dtype, float v) {
    if (dtype == KW_BF16) {
        ((unsigned short*)p)[i] = f32_to_bf16(v);
    } else {
        ((float*)p)[i] = v;
    }
}

// scaleadd_fused: y[i] = alpha·x[i] + b[i] for i < n, one pass (a grid-stride loop).
extern "C" __global__ void scaleadd_fused(const void* x, const void* b, void* y, long long n, long long dtype,
                                          double alpha) {
    const float a = (float)alpha;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        store(y, i, dtype, a * load(x, i, dtype) + load(b, i, dtype));
    }
}

// scaleadd_scale: t[i] = alpha·x[i] into the fp32 intermediate t, the naive form's first op.
extern "C" __global__ void scaleadd_scale(const void* x, float* t, long long n, long long dtype, double alpha) {
    const float a = (float)alpha;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        t[i] = a * load(x, i, dtype);
    }
}

// scaleadd_add: y[i] = t[i] + b[i], the naive form's second op.
extern "C" __global__ void scaleadd_add(const float* t, const void* b, void* y, long long n, long long dtype) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        store(y, i, dtype, t[i] + load(b, i, dtype));
    }
}

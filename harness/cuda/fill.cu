// fill.cu: the backend's own input generator (CUDA.Fill, fill_cuda.go), not a benchmark. It is the CUDA twin of
// the counter-based generator in dist.go, which documents it and which the tests hold it to: element i of a
// fill is a function of (seed, i) alone, so a grid-stride loop fills 1 GiB at memory speed with no host copy.
#include "common.cuh"

__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned long long fill_hash(unsigned long long seed, long long i) {
    return mix64(seed + (unsigned long long)(i + 1) * 0x9E3779B97F4A7C15ull);
}

// fill_normal writes mean + sd·z, z standard normal by Box–Muller, as fp32 (dtype KW_FP32) or bf16 (KW_BF16,
// rounded to nearest even from the fp32 value).
extern "C" __global__ void fill_normal(void* dst, long long n, long long dtype, unsigned long long seed, double mean,
                                       double sd) {
    const float m = (float)mean, s = (float)sd;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long h = fill_hash(seed, i);
        const float u1 = ((float)(h >> 40) + 1.0f) * (1.0f / 16777216.0f);
        const float u2 = (float)((h >> 16) & 0xFFFFFFull) * (1.0f / 16777216.0f);
        const float v = m + s * (sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
        if (dtype == KW_BF16) {
            ((unsigned short*)dst)[i] = f32_to_bf16(v);
        } else {
            ((float*)dst)[i] = v;
        }
    }
}

// fill_labels writes int32 class labels: IgnoreIndex (-100) when the hash's top three bits are 0, else the hash's
// low 32 bits modulo cols.
extern "C" __global__ void fill_labels(int* dst, long long n, long long cols, unsigned long long seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long h = fill_hash(seed, i);
        dst[i] = (h >> 61) == 0 ? -100 : (int)((unsigned long long)(unsigned)h % (unsigned long long)cols);
    }
}

// fill_rope writes a [rows, 64] fp32 RoPE table: f((start + t) · 10000^(−2i/128)), f = cos (which 0) or sin,
// computed in double like the Go side, start = mix64(seed) mod 4096.
extern "C" __global__ void fill_rope(float* dst, long long rows, long long which, unsigned long long seed) {
    const long long start = (long long)(mix64(seed) % 4096ull);
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < rows * 64; k += (long long)gridDim.x * blockDim.x) {
        const long long t = k / 64, i = k % 64;
        const double x = (double)(start + t) * pow(10000.0, -2.0 * (double)i / 128.0);
        dst[k] = (float)(which == 0 ? cos(x) : sin(x));
    }
}

// fill_uniform writes lo + (hi − lo)·u, u = (h>>40)/2^24, in double with no fused multiply-add (the Go side
// rounds the same way), as fp32 or bf16.
extern "C" __global__ void fill_uniform(void* dst, long long n, long long dtype, unsigned long long seed, double lo,
                                        double hi) {
    const double span = hi - lo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const double u = (double)(fill_hash(seed, i) >> 40) * (1.0 / 16777216.0);
        const float v = (float)__dadd_rn(lo, __dmul_rn(span, u));
        if (dtype == KW_BF16) {
            ((unsigned short*)dst)[i] = f32_to_bf16(v);
        } else {
            ((float*)dst)[i] = v;
        }
    }
}

// fill_bernoulli writes int32 1 when h>>11 is below threshold (⌊p·2^53⌋, computed by the Go side), else 0.
extern "C" __global__ void fill_bernoulli(int* dst, long long n, unsigned long long seed, unsigned long long threshold) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        dst[i] = (fill_hash(seed, i) >> 11) < threshold ? 1 : 0;
    }
}

// fill_polar writes (r cos θ, r sin θ) pairs: pair j from h(seed, j), r = lo + (hi − lo)·(h>>40)/2^24,
// θ = 2π·((h>>16) mod 2^24)/2^24 − π, in double, as fp32 or bf16.
extern "C" __global__ void fill_polar(void* dst, long long n, long long dtype, unsigned long long seed, double lo,
                                      double hi) {
    const double span = hi - lo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long h = fill_hash(seed, i / 2);
        const double r = __dadd_rn(lo, __dmul_rn(span, (double)(h >> 40) * (1.0 / 16777216.0)));
        const double th = __dsub_rn(__dmul_rn(2.0 * 3.141592653589793, (double)((h >> 16) & 0xFFFFFFull) * (1.0 / 16777216.0)),
                                    3.141592653589793);
        const float v = (float)(i % 2 == 0 ? __dmul_rn(r, cos(th)) : __dmul_rn(r, sin(th)));
        if (dtype == KW_BF16) {
            ((unsigned short*)dst)[i] = f32_to_bf16(v);
        } else {
            ((float*)dst)[i] = v;
        }
    }
}

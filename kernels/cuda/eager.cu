// eager.cu: the whole-tensor ops the naive implementations chain, the CUDA twin of eager.go. Each launch is one
// pass over memory, the way an eager framework runs one op; the Go side (cuda_eager.go) allocates each result as
// a new fp32 intermediate and counts it in ScratchBytes.
//
// A view addresses a rows × cols matrix inside a tensor like eager.go's view: element (r, c) is
// p[off + (r/rd)·rs + col(c)] with col(c) = c (cd = 1), c/cd (cd > 1) or 0 (cd = 0), stored as dt (a Go DType
// value). dt = KW_CONST is an immediate: every element is the double whose bits are off.
//
// op is the Go op value (eager.go): 0 copy, 1 exp, 2 log, 3 sigmoid, 4 silu, 5 abs, 6 rsqrt, 7 clamp to ±448,
// 8 add, 9 sub, 10 mul, 11 div, 12 sum, 13 mean, 14 max.
#include "common.cuh"

struct View {
    const void* p;
    long long dt, off, rs, rd, cd;

    // fresh returns the view with its fields passed through an opaque move, once per item of a loop: the
    // compiler then cannot specialise the loop for every combination of dtypes and strides of every view
    // (loop unswitching), which multiplied the kernels' code a hundredfold for no measurable gain.
    __device__ __forceinline__ View fresh() const {
        View v = *this;
        asm volatile("" : "+l"(v.dt), "+l"(v.rd), "+l"(v.cd));
        return v;
    }
    // row returns the index of (r, 0).
    __device__ __forceinline__ long long row(long long r) const { return off + (rd == 1 ? r : r / rd) * rs; }
    // load returns elements (r, c0 + k·s) for k < N whose column is below cols; base is row(r).
    template <int N>
    __device__ __forceinline__ void load(long long base, long long c0, long long s, long long cols, float v[N]) const {
        if (dt == KW_CONST) {
            const float x = (float)__longlong_as_double(off);
#pragma unroll
            for (int k = 0; k < N; k++) v[k] = x;
            return;
        }
        long long i[N];
        bool ok[N];
#pragma unroll
        for (int k = 0; k < N; k++) {
            const long long c = c0 + k * s;
            ok[k] = c < cols;
            i[k] = base + (cd == 1 ? c : cd == 0 ? 0 : c / cd);
        }
        if (dt == KW_BF16) {
            const unsigned short* q = static_cast<const unsigned short*>(p);
#pragma unroll
            for (int k = 0; k < N; k++)
                if (ok[k]) v[k] = bf16_to_f32(q[i[k]]);
        } else {
            const float* q = static_cast<const float*>(p);
#pragma unroll
            for (int k = 0; k < N; k++)
                if (ok[k]) v[k] = q[i[k]];
        }
    }
    // store writes elements (r, c0 + k·s), k < N, of a view whose columns are consecutive (cd = 1).
    template <int N>
    __device__ __forceinline__ void store(long long base, long long c0, long long s, long long cols, const float v[N]) const {
        if (dt == KW_BF16) {
            unsigned short* q = static_cast<unsigned short*>(const_cast<void*>(p));
#pragma unroll
            for (int k = 0; k < N; k++)
                if (c0 + k * s < cols) q[base + c0 + k * s] = f32_to_bf16(v[k]);
        } else {
            float* q = static_cast<float*>(const_cast<void*>(p));
#pragma unroll
            for (int k = 0; k < N; k++)
                if (c0 + k * s < cols) q[base + c0 + k * s] = v[k];
        }
    }
};

#define VIEW_PARAMS(n) \
    const void *n##_p, long long n##_dt, long long n##_off, long long n##_rs, long long n##_rd, long long n##_cd
#define VIEW_OF(n) View{n##_p, n##_dt, n##_off, n##_rs, n##_rd, n##_cd}

__device__ __forceinline__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float unary_op(long long op, float x) {
    switch (op) {
        case 1: return expf(x);
        case 2: return logf(x);
        case 3: return sigmoidf(x);
        case 4: return x * sigmoidf(x);
        case 5: return fabsf(x);
        case 6: return 1.0f / sqrtf(x);
        case 7: return fminf(fmaxf(x, -448.0f), 448.0f);
        default: return x;
    }
}

__device__ __forceinline__ float binary_op(long long op, float a, float b) {
    switch (op) {
        case 8: return a + b;
        case 9: return a - b;
        case 10: return a * b;
        case 11: return a / b;
        default: return fmaxf(a, b);
    }
}

// Elementwise launches: the block walks (row, tile) items, a tile being EW·blockDim consecutive columns of one
// row, each thread EW of them blockDim apart (coalesced), loading all of them before computing.
#define EW 8

extern "C" __global__ void __launch_bounds__(256, 4) eager_unary(long long op, VIEW_PARAMS(d), VIEW_PARAMS(a), long long rows, long long cols) {
    const long long s = blockDim.x, tw = EW * s, tiles = (cols + tw - 1) / tw, items = rows * tiles;
    for (long long it = blockIdx.x; it < items; it += gridDim.x) {
        const View D = VIEW_OF(d).fresh(), A = VIEW_OF(a).fresh();
        const long long r = it / tiles, c0 = (it - r * tiles) * tw + threadIdx.x;
        float v[EW];
        A.load<EW>(A.row(r), c0, s, cols, v);
#pragma unroll
        for (int k = 0; k < EW; k++) v[k] = unary_op(op, v[k]);
        D.store<EW>(D.row(r), c0, s, cols, v);
    }
}

extern "C" __global__ void __launch_bounds__(256, 4) eager_binary(long long op, VIEW_PARAMS(d), VIEW_PARAMS(a), VIEW_PARAMS(b), long long rows,
                                        long long cols) {
    const long long s = blockDim.x, tw = EW * s, tiles = (cols + tw - 1) / tw, items = rows * tiles;
    for (long long it = blockIdx.x; it < items; it += gridDim.x) {
        const View D = VIEW_OF(d).fresh(), A = VIEW_OF(a).fresh(), B = VIEW_OF(b).fresh();
        const long long r = it / tiles, c0 = (it - r * tiles) * tw + threadIdx.x;
        float u[EW], v[EW];
        A.load<EW>(A.row(r), c0, s, cols, u);
        B.load<EW>(B.row(r), c0, s, cols, v);
#pragma unroll
        for (int k = 0; k < EW; k++) u[k] = binary_op(op, u[k], v[k]);
        D.store<EW>(D.row(r), c0, s, cols, u);
    }
}

// The flat kernels: the op over n consecutive elements of tensors that are dense (or constants), as the
// elementwise kernels of an eager framework run on contiguous tensors: each thread takes 4 elements with one
// access (16 bytes of fp32, 8 of bf16), 4 such groups in flight, over a grid-stride loop; the last n % 4
// elements one by one. Each pointer is 16-byte aligned (the launcher checks). dt KW_CONST: every element is k.
__device__ __forceinline__ float flat_load1(const void* p, long long dt, double k, long long i) {
    if (dt == KW_CONST) return (float)k;
    if (dt == KW_BF16) return bf16_to_f32(static_cast<const unsigned short*>(p)[i]);
    return static_cast<const float*>(p)[i];
}

__device__ __forceinline__ void flat_load4(const void* p, long long dt, double k, long long i, float v[4]) {
    if (dt == KW_CONST) {
        v[0] = v[1] = v[2] = v[3] = (float)k;
    } else if (dt == KW_BF16) {
        const uint2 u = *reinterpret_cast<const uint2*>(static_cast<const unsigned short*>(p) + i);
        v[0] = __uint_as_float(u.x << 16);
        v[1] = __uint_as_float(u.x & 0xffff0000u);
        v[2] = __uint_as_float(u.y << 16);
        v[3] = __uint_as_float(u.y & 0xffff0000u);
    } else {
        const float4 f = *reinterpret_cast<const float4*>(static_cast<const float*>(p) + i);
        v[0] = f.x;
        v[1] = f.y;
        v[2] = f.z;
        v[3] = f.w;
    }
}

__device__ __forceinline__ void flat_store1(void* p, long long dt, long long i, float v) {
    if (dt == KW_BF16)
        static_cast<unsigned short*>(p)[i] = f32_to_bf16(v);
    else
        static_cast<float*>(p)[i] = v;
}

__device__ __forceinline__ void flat_store4(void* p, long long dt, long long i, const float v[4]) {
    if (dt == KW_BF16) {
        uint2 u;
        u.x = (unsigned)f32_to_bf16(v[0]) | ((unsigned)f32_to_bf16(v[1]) << 16);
        u.y = (unsigned)f32_to_bf16(v[2]) | ((unsigned)f32_to_bf16(v[3]) << 16);
        *reinterpret_cast<uint2*>(static_cast<unsigned short*>(p) + i) = u;
    } else {
        *reinterpret_cast<float4*>(static_cast<float*>(p) + i) = make_float4(v[0], v[1], v[2], v[3]);
    }
}

extern "C" __global__ void __launch_bounds__(256) eager_unary_flat(long long op, void* d, long long ddt, const void* a,
                                                                   long long adt, double ak, long long n) {
    const long long n4 = n >> 2, s = (long long)gridDim.x * blockDim.x;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < n4; g += 4 * s) {
        float v[4][4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (g + u * s < n4) flat_load4(a, adt, ak, 4 * (g + u * s), v[u]);
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (g + u * s < n4) {
#pragma unroll
                for (int j = 0; j < 4; j++) v[u][j] = unary_op(op, v[u][j]);
                flat_store4(d, ddt, 4 * (g + u * s), v[u]);
            }
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const long long i = 4 * n4 + threadIdx.x;
        flat_store1(d, ddt, i, unary_op(op, flat_load1(a, adt, ak, i)));
    }
}

extern "C" __global__ void __launch_bounds__(256) eager_binary_flat(long long op, void* d, long long ddt, const void* a,
                                                                    long long adt, double ak, const void* b,
                                                                    long long bdt, double bk, long long n) {
    const long long n4 = n >> 2, s = (long long)gridDim.x * blockDim.x;
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < n4; g += 4 * s) {
        float u4[4][4], v4[4][4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (g + u * s < n4) {
                flat_load4(a, adt, ak, 4 * (g + u * s), u4[u]);
                flat_load4(b, bdt, bk, 4 * (g + u * s), v4[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (g + u * s < n4) {
#pragma unroll
                for (int j = 0; j < 4; j++) u4[u][j] = binary_op(op, u4[u][j], v4[u][j]);
                flat_store4(d, ddt, 4 * (g + u * s), u4[u]);
            }
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const long long i = 4 * n4 + threadIdx.x;
        flat_store1(d, ddt, i, binary_op(op, flat_load1(a, adt, ak, i), flat_load1(b, bdt, bk, i)));
    }
}

// eager_reduce writes op (sum, mean or max) over each group of columns of each row to dst, which holds
// rows × ⌈cols/group⌉ fp32 values; one block per (row, group), in a fixed order (deterministic).
extern "C" __global__ void eager_reduce(long long op, float* dst, VIEW_PARAMS(a), long long rows, long long cols,
                                        long long group) {
    __shared__ float red[32];
    const View A = VIEW_OF(a);
    const bool isMax = op == 14;
    const float init = isMax ? -__int_as_float(0x7f800000) : 0.0f;
    const long long groups = (cols + group - 1) / group, items = rows * groups;
    for (long long it = blockIdx.x; it < items; it += gridDim.x) {
        const long long r = it / groups, lo = (it - r * groups) * group, hi = min(lo + group, cols);
        const View B = A.fresh();
        const long long base = B.row(r), s = blockDim.x;
        float acc[4] = {init, init, init, init};
        for (long long c = lo + threadIdx.x; c < hi; c += 4 * s) {
            float v[4];
            B.template load<4>(base, c, s, hi, v);
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (c + k * s < hi) acc[k] = isMax ? fmaxf(acc[k], v[k]) : acc[k] + v[k];
        }
        float t;
        if (isMax) {
            t = block_max(fmaxf(fmaxf(acc[0], acc[1]), fmaxf(acc[2], acc[3])), red);
        } else {
            t = block_sum((acc[0] + acc[1]) + (acc[2] + acc[3]), red);
            if (op == 13) t /= (float)(hi - lo);
        }
        if (threadIdx.x == 0) dst[it] = t;
    }
}

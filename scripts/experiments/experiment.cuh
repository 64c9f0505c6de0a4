// experiment.cuh: what the standalone row-kernel experiments share (resident-columns.cu, half-exps.cu): error
// checks, the inputs, the comparison of outputs on the GPU, and timing as the suite times its GPU benchmarks.
//
// Buffers of 1 GiB (X the input, Y the output, REF the reference output), 1 MiB column vectors Wd and Bd. A
// program calls setup() first, then for each shape prepare() (inputs, the hot copy of the same bytes), writes
// REF, and times each kernel with report() after check() has compared its output with REF.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../harness/cuda/copy.cu"
#include "../../kernels/cuda/layernorm_op.cuh"
#include "../../kernels/cuda/rmsnorm_op.cuh"
#include "../../kernels/cuda/rowres.cuh"
#include "../../kernels/cuda/softmax_op.cuh"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e = (x);                                                                   \
        if (e != cudaSuccess) {                                                                \
            printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define CU(x)                                                                                  \
    do {                                                                                       \
        CUresult e = (x);                                                                      \
        if (e != CUDA_SUCCESS) {                                                               \
            const char* s;                                                                     \
            cuGetErrorString(e, &s);                                                           \
            printf("%s:%d: %s\n", __FILE__, __LINE__, s);                                      \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

// fill_kernel writes n uniform values in [lo, hi) from a hash of the index and seed, fp32 or bf16.
__global__ void fill_kernel(unsigned* p, long long n, unsigned seed, int bf16, float lo, float hi) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        h *= 3266489917u;
        h ^= h >> 16;
        const float u = lo + (hi - lo) * (float)(h >> 8) * (1.0f / 16777216.0f);
        if (bf16) {
            const unsigned short b = f32_to_bf16(u);
            reinterpret_cast<unsigned short*>(p)[i] = b;
        } else {
            reinterpret_cast<float*>(p)[i] = u;
        }
    }
}

// compare_kernel: worst[0] is max |a − b| / (1 + |b|) over n elements, worst[1] max |a − b| / |b| over the elements
// with |b| ≥ 2^-20 (the elementwise relative error), both as float bits (non-negative floats order as their bits).
__global__ void compare_kernel(const void* a, const void* b, long long n, int bf16, unsigned* worst) {
    float m = 0.0f, r = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float u, v;
        if (bf16) {
            u = bf16_to_f32(reinterpret_cast<const unsigned short*>(a)[i]);
            v = bf16_to_f32(reinterpret_cast<const unsigned short*>(b)[i]);
        } else {
            u = reinterpret_cast<const float*>(a)[i];
            v = reinterpret_cast<const float*>(b)[i];
        }
        float d = fabsf(u - v) / (1.0f + fabsf(v));
        if (!(d == d)) d = 1e30f;
        m = fmaxf(m, d);
        if (fabsf(v) >= 0x1p-20f) {
            float q = fabsf(u - v) / fabsf(v);
            if (!(q == q)) q = 1e30f;
            r = fmaxf(r, q);
        }
    }
    atomicMax(worst, __float_as_uint(m));
    atomicMax(worst + 1, __float_as_uint(r));
}

// colvec is column vector i of the Op (LayerNorm: w, b; RMSNorm: w), in the order of its Col's packs.
template <class S>
__device__ __forceinline__ const typename S::T* colvec(const LayerNormOp<S>& op, int i) {
    return i ? op.b : op.w;
}
template <class S>
__device__ __forceinline__ const typename S::T* colvec(const RMSNormOp<S>& op, int) {
    return op.w;
}

// col_prefetch asks for the column data of the pack at column c (every vector of the Op) in L1: no register
// waits for it, so it may run ahead of stores that a load of the same data would wait behind.
template <class Op, class P>
__device__ __forceinline__ void col_prefetch(const Op& op, long long c) {
    enum { W = sizeof(typename Op::template Col<P>) / 16 };
#pragma unroll
    for (int i = 0; i < W; i++) asm volatile("prefetch.global.L1 [%0];" ::"l"(colvec(op, i) + c));
}

static void* X;
static void* Y;
static void* REF;
static void* Wd;
static void* Bd;
static unsigned* Worst;
static int SMS;
static float copyUs, copyColdGBps;
static void* FLUSH;
static const long long FLUSH_BYTES = 128ll << 20;
static unsigned fillValue;
static CUmodule rmsMod, lnMod, smMod;  // the suite's modules (setup)

static float median_us(const std::vector<float>& v) {
    std::vector<float> s = v;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2] * 1e3f;
}

// time_us is the median of 20 single launches, each timed by a pair of events: back to back (hot), or (cold)
// each after overwriting a 128 MiB buffer, as the suite times its GPU benchmarks (harness/cuda.go, Time).
template <class F>
static float time_us(F launch, bool cold) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) launch();
    CK(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int i = 0; i < 20; i++) {
        if (cold) CU(cuMemsetD32Async((CUdeviceptr)FLUSH, ++fillValue, FLUSH_BYTES / 4, 0));
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float m;
        CK(cudaEventElapsedTime(&m, a, b));
        ms.push_back(m);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return median_us(ms);
}

struct Shape {
    const char* family;  // "rmsnorm", "layernorm" or "softmax"
    int bf16;
    long long rows, cols;
    int columns;  // column vectors: RMSNorm 1 (w), LayerNorm 2 (w, b), Softmax 0
    long long bytes() const { return rows * cols * (bf16 ? 2 : 4); }
};

// check stops the program unless Y matches REF (max |a − b| / (1 + |b|) at most 1e-5 for fp32, 1e-2 for bf16);
// it returns the elementwise relative error (compare_kernel's second figure).
static float check(const Shape& s, const char* name) {
    CK(cudaMemset(Worst, 0, 2 * sizeof *Worst));
    compare_kernel<<<1024, 256>>>(Y, REF, s.rows * s.cols, s.bf16, Worst);
    unsigned w[2];
    CK(cudaMemcpy(w, Worst, sizeof w, cudaMemcpyDeviceToHost));
    float f[2];
    memcpy(f, w, sizeof f);
    const float tol = s.bf16 ? 1e-2f : 1e-5f;
    if (!(f[0] <= tol)) {
        printf("%s: WRONG OUTPUT (max rel diff %g)\n", name, f[0]);
        exit(1);
    }
    return f[1];
}

// report prints the hot time and its share of the hot copy of the same bytes, then the cold time and its
// pct-copy as the suite reports it: the bytes the kernel must move (x, y and the column data) over the cold
// time, against the cold copy of 1 GiB.
// With rel ≥ 0 (check's elementwise error) it prints that too.
template <class F>
static void report(const Shape& s, const std::string& name, F launch, float rel = -1.0f) {
    const float hot = time_us(launch, false), cold = time_us(launch, true);
    const double moved = 2.0 * s.bytes() + (double)s.cols * (s.bf16 ? 2 : 4) * s.columns;
    printf("  %-58s hot %8.1f us %6.1f%% | cold %8.1f us %6.1f pct-copy", name.c_str(), hot, 100.0f * copyUs / hot,
           cold, 100.0 * moved / (cold * 1e3) / copyColdGBps);
    if (rel >= 0.0f) printf(" | rel %.2e", rel);
    printf("\n");
    fflush(stdout);
}

// prepare fills the inputs of shape s (x in [−1.5, 2.5), w in [0.5, 1.5), b in [−0.5, 0.5)) and times the hot
// copy of its bytes.
static void prepare(const Shape& s) {
    const long long n = s.rows * s.cols;
    fill_kernel<<<1024, 256>>>((unsigned*)X, n, 12345u, s.bf16, -1.5f, 2.5f);
    fill_kernel<<<1024, 256>>>((unsigned*)Wd, s.cols, 777u, s.bf16, 0.5f, 1.5f);
    fill_kernel<<<1024, 256>>>((unsigned*)Bd, s.cols, 999u, s.bf16, -0.5f, 0.5f);
    CK(cudaDeviceSynchronize());
    const long long nb = s.bytes();
    copyUs = time_us([&] {
        copy_chunk<<<(int)((nb / 16 + 2047) / 2048), 256>>>((const unsigned char*)X, (unsigned char*)Y, nb);
    }, false);
    printf("%s %s %lld x %lld: copy_chunk %.1f us (%.0f GB/s)\n", s.family, s.bf16 ? "bf16" : "fp32", s.rows, s.cols,
           copyUs, 2.0 * nb / (copyUs * 1e-6) / 1e9);
}

// setup names the GPU, loads the suite's RMSNorm, LayerNorm and Softmax modules from the committed PTX in dir
// (rmsnorm.ptx for RMSNorm's one-block kernels, the _sm90 modules of the others), allocates the buffers and times
// the cold copy of 1 GiB, the pct-copy yardstick.
static void setup(const char* dir) {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int drv;
    CK(cudaDriverGetVersion(&drv));
    printf("gpu: %s, %d SMs, driver API %d\n", p.name, p.multiProcessorCount, drv);
    SMS = p.multiProcessorCount;
    CK(cudaFree(0));
    CU(cuModuleLoad(&rmsMod, (std::string(dir) + "/rmsnorm.ptx").c_str()));
    CU(cuModuleLoad(&lnMod, (std::string(dir) + "/layernorm_sm90.ptx").c_str()));
    CU(cuModuleLoad(&smMod, (std::string(dir) + "/softmax_sm90.ptx").c_str()));
    const long long NB = 1ll << 30;
    CK(cudaMalloc(&X, NB));
    CK(cudaMalloc(&Y, NB));
    CK(cudaMalloc(&REF, NB));
    CK(cudaMalloc(&Wd, 1 << 20));
    CK(cudaMalloc(&Bd, 1 << 20));
    CK(cudaMalloc(&Worst, 2 * sizeof *Worst));
    CK(cudaMalloc(&FLUSH, FLUSH_BYTES));
    const float us = time_us([&] {
        copy_chunk<<<(int)(NB / 16 / 2048), 256>>>((const unsigned char*)X, (unsigned char*)Y, NB);
    }, true);
    copyColdGBps = 2.0 * NB / (us * 1e3);
    printf("copy_chunk 1 GiB cold: %.1f us, %.0f GB/s (the pct-copy yardstick)\n", us, copyColdGBps);
}

// suite launches a committed kernel into REF (ref) or Y: one-block-a-row kernels (grid = rows, block = t; RMSNorm's
// team kernels with team = 1 and no partials), or with cs > 1 cluster kernels of compile-time clusters of cs
// blocks (grid = rows·cs), from module mod (by default the family's: setup's).
static void suite(const Shape& s, const char* kernel, int t, bool ref, int cs = 1, CUmodule mod = nullptr) {
    CUfunction fn;
    if (!mod) mod = s.family[0] == 'r' ? rmsMod : s.family[0] == 'l' ? lnMod : smMod;
    CU(cuModuleGetFunction(&fn, mod, kernel));
    CUdeviceptr x = (CUdeviceptr)X, w = (CUdeviceptr)Wd, b = (CUdeviceptr)Bd, y = (CUdeviceptr)(ref ? REF : Y);
    long long rows = s.rows, cols = s.cols, team = 1;
    double eps = 1e-5;
    CUdeviceptr nul = 0;
    void* rms[] = {&x, &w, &y, &rows, &cols, &eps, &team, &nul, &nul, &nul};  // the cluster kernels read six
    void* ln[] = {&x, &w, &b, &y, &rows, &cols, &eps};
    void* sm[] = {&x, &y, &rows, &cols};
    void** args = s.family[0] == 'r' ? rms : s.family[0] == 'l' ? ln : sm;
    auto launch = [&] { CU(cuLaunchKernel(fn, (unsigned)(s.rows * cs), 1, 1, t, 1, 1, 0, 0, args, nullptr)); };
    if (!ref) CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    float rel = -1.0f;
    if (!ref) rel = check(s, kernel);
    char name[120];
    snprintf(name, sizeof name, "suite %s t=%d", kernel, t);
    report(s, name, launch, rel);
}

template <class S>
static LayerNormOp<S> lnop() {
    LayerNormOp<S> op;
    op.w = (const typename S::T*)Wd;
    op.b = (const typename S::T*)Bd;
    op.eps = 1e-5f;
    return op;
}
template <class S>
static RMSNormOp<S> rmsop() {
    RMSNormOp<S> op;
    op.w = (const typename S::T*)Wd;
    op.eps = 1e-5f;
    return op;
}

// rms_ref is a plain RMSNorm for the reference output of rows no suite kernel launched here holds: one block of
// 1024 threads a row, the sum of squares in fp32 over a strided loop, then the row again.
template <class S>
__global__ void __launch_bounds__(1024) rms_ref(const typename S::T* x, const typename S::T* w, typename S::T* y,
                                                long long cols, float eps) {
    __shared__ float red[32];
    const typename S::T* xr = x + blockIdx.x * cols;
    float ss = 0.0f;
    for (long long c = threadIdx.x; c < cols; c += blockDim.x) ss = fmaf(S::get(xr[c]), S::get(xr[c]), ss);
    ss = warp_sum(ss);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
    __syncthreads();
    ss = 0.0f;
    for (int i = 0; i < 32; i++) ss += red[i];
    const float inv = rsqrtf(ss / (float)cols + eps);
    for (long long c = threadIdx.x; c < cols; c += blockDim.x)
        y[blockIdx.x * cols + c] = S::put(S::get(xr[c]) * inv * S::get(w[c]));
}

// rmsref writes the reference output of RMSNorm case s into REF (rms_ref).
template <class S>
static void rmsref(const Shape& s) {
    rms_ref<S><<<(unsigned)s.rows, 1024>>>((const typename S::T*)X, (const typename S::T*)Wd, (typename S::T*)REF,
                                           s.cols, 1e-5f);
    CK(cudaDeviceSynchronize());
}

// res_kernel launches row_res (kernels/cuda/rowres.cuh), which the suite instantiates in its _sm90 modules.
template <class Op, int NV, int T, int G, int MODE, int PF>
__global__ void __launch_bounds__(T* G) res_kernel(Op op, const typename Op::T* __restrict__ x,
                                                   typename Op::T* __restrict__ y, long long rows, long long cols) {
#if defined(__CUDA_ARCH__)
    row_res<Op, NV, T, G, MODE, PF>(op, x, y, rows, cols);
#endif
}

// res times row_res over Op for shape s: as many blocks as the GPU runs at once (at most one a team of rows), PF as
// rowres.cuh's (0: none ahead, 1: the next row in registers, 2: in shared memory).
template <class Op, int NV, int T, int G, int MODE, int PF>
static void res(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    auto k = res_kernel<Op, NV, T, G, MODE, PF>;
    typedef Pack<typename Op::S, true> P;
    const int smem =
        (MODE == 1 ? (int)(NV * T * sizeof(typename Op::template Col<P>)) : 0) + (PF == 2 ? G * NV * T * 16 : 0);
    if (smem > 227 * 1024) {
        printf("  row_res NV=%d T=%d G=%d MODE=%d PF=%d: %d KiB of shared memory do not fit\n", NV, T, G, MODE, PF,
               smem / 1024);
        return;
    }
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T * G, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    char name[120];
    snprintf(name, sizeof name, "row_res NV=%d T=%d G=%d MODE=%d PF=%d (%d/SM, %d regs, %d KiB)", NV, T, G, MODE,
             (int)PF, per, fa.numRegs, smem / 1024);
    if ((long long)NV * T * P::E < s.cols) {
        printf("  %-58s does not cover the row\n", name);
        return;
    }
    if (per == 0) {
        printf("  %-58s does not fit\n", name);
        return;
    }
    const long long want = (s.rows + G - 1) / G;
    const int grid = (int)std::min<long long>((long long)per * SMS, want);
    auto launch = [&] { k<<<grid, T * G, smem>>>(op, (const TT*)X, (TT*)Y, s.rows, s.cols); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = check(s, name);
    report(s, name, launch, rel);
}

// resc_kernel launches row_res_cluster (kernels/cuda/rowres.cuh): a cluster of CS blocks a row, one team of T
// threads a block (XA 1: the program defines KW_XASYNC and is built by CUDA 12.4 or later).
template <class Op, int NV, int T, int MODE, int PF, int CS, int XA = 0>
__global__ void __launch_bounds__(T, 1) resc_kernel(Op op, const typename Op::T* __restrict__ x,
                                                    typename Op::T* __restrict__ y, long long rows, long long cols) {
#if defined(__CUDA_ARCH__)
    row_res_cluster<Op, NV, T, MODE, PF, CS, XA>(op, x, y, rows, cols);
#endif
}

// ClusterLaunch is the configuration of a cudaLaunchKernelEx of kernel k: grid blocks of t threads with smem bytes
// of dynamic shared memory, in clusters of cs blocks (none when cs is 1; past 8, the kernel is allowed them).
struct ClusterLaunch {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    template <class K>
    ClusterLaunch(K k, int cs, int t, int smem, unsigned grid) {
        if (cs > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cs;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        cfg.attrs = at;
        cfg.numAttrs = cs > 1 ? 1 : 0;
        cfg.blockDim = dim3(t);
        cfg.dynamicSmemBytes = smem;
        cfg.gridDim = dim3(grid);
    }
    ClusterLaunch(const ClusterLaunch&) = delete;  // cfg points into at
};

// resc times row_res_cluster: as many clusters as the GPU runs at once (cudaOccupancyMaxActiveClusters), at
// most one a row.
template <class Op, int NV, int T, int MODE, int PF, int CS, int XA = 0>
static void resc(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    typedef Pack<typename Op::S, true> P;
    auto k = resc_kernel<Op, NV, T, MODE, PF, CS, XA>;
    const int smem =
        (MODE == 1 ? (int)(NV * T * sizeof(typename Op::template Col<P>)) : 0) + (PF == 2 ? NV * T * 16 : 0);
    if (smem > 227 * 1024) {
        printf("  resc NV=%d T=%d CS=%d MODE=%d PF=%d: %d KiB of shared memory do not fit\n", NV, T, CS, MODE, PF,
               smem / 1024);
        return;
    }
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    ClusterLaunch cl(k, CS, T, smem, CS * SMS);
    cudaLaunchConfig_t& cfg = cl.cfg;
    int ncl = 0;
    CK(cudaOccupancyMaxActiveClusters(&ncl, k, &cfg));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    char name[120];
    snprintf(name, sizeof name, "resc%s NV=%d T=%d CS=%d MODE=%d PF=%d (%d cl, %d regs, %d B lmem, %d KiB)",
             XA ? " xa" : "", NV, T, CS, MODE, (int)PF, ncl, fa.numRegs, (int)fa.localSizeBytes, smem / 1024);
    if ((long long)CS * NV * T * P::E < s.cols || ncl == 0) {
        printf("  %-58s does not cover the row or fit\n", name);
        return;
    }
    cfg.gridDim = dim3((unsigned)(CS * std::min<long long>(ncl, s.rows)));
    auto launch = [&] { CK(cudaLaunchKernelEx(&cfg, k, op, (const TT*)X, (TT*)Y, s.rows, s.cols)); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = check(s, name);
    report(s, name, launch, rel);
}

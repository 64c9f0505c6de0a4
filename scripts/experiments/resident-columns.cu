// resident-columns.cu: do the row kernels with column data (RMSNorm's w, LayerNorm's w and b) lose their
// H200 rows to reading that data again for every row? A standalone experiment behind the row plans
// (docs/kernels.md): at 16384 columns on an H200 Softmax (no column data) holds its 95% goal and RMSNorm and
// LayerNorm do not, and Nsight Compute counts w's reads from L2 at about three quarters of x's own.
//
// Each shape is timed with the suite's own kernel (loaded from the committed PTX, launched as the suite launches
// it) and with row_res (kernels/cuda/rowres.cuh), a persistent kernel over the same Op (RMSNormOp, LayerNormOp,
// SoftmaxOp): blocks of G teams of T threads, a team a row at a time, NV 16-byte packs a thread in registers, the
// team's partial statistics merged through shared memory behind one named barrier a row. The column data:
//   MODE 0  read from global memory for every row, as the suite's kernels do (what persistence alone changes)
//   MODE 1  staged once a block in shared memory, read from there for every row
//   MODE 2  held in registers, loaded once
// PF 1 loads the team's next row into a second set of registers before storing this one. (The program was first
// written with its own copy of the template, which became rowres.cuh; the figures in kernels/rowres.go are from
// that copy and from TestCUDARowTune.)
//
// Every output is compared with the suite kernel's on the GPU (max |a − b| / (1 + |b|): below 1e-5 for fp32,
// 1e-2 for bf16, else the program stops). Each line: medians of 20 timed launches after 3 untimed ones, hot (back
// to back, as pct of copy_chunk over the same bytes) and cold (each after overwriting 128 MiB, as the suite times
// them, as pct-copy against the cold copy_chunk of 1 GiB).
//
// Build (CUDA 11.8 or later) and run on the GPU host from the repository root:
//   nvcc -O3 -arch=sm_90 -o resident-columns scripts/experiments/resident-columns.cu -lcuda
//   ./resident-columns kernels/cuda/ptx [ABCDEFG]   (the letters pick shapes, in main; all by default)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

// res_kernel launches row_res (kernels/cuda/rowres.cuh), which the suite instantiates in its _sm90 modules.
template <class Op, int NV, int T, int G, int MODE, bool PF>
__global__ void __launch_bounds__(T* G) res_kernel(Op op, const typename Op::T* __restrict__ x,
                                                   typename Op::T* __restrict__ y, long long rows, long long cols) {
#if defined(__CUDA_ARCH__)
    row_res<Op, NV, T, G, MODE, PF>(op, x, y, rows, cols);
#endif
}

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

// worst is max |a − b| / (1 + |b|) over n elements, as float bits (non-negative floats order as their bits).
__global__ void compare_kernel(const void* a, const void* b, long long n, int bf16, unsigned* worst) {
    float m = 0.0f;
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
    }
    atomicMax(worst, __float_as_uint(m));
}

static void* X;
static void* Y;
static void* REF;
static void* Wd;
static void* Bd;
static unsigned* Worst;
static int SMS;
static float copyUs, copyColdGBps;
static CUmodule rmsMod, lnMod, smMod;

static float median_us(const std::vector<float>& v) {
    std::vector<float> s = v;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2] * 1e3f;
}

static void* FLUSH;
static const long long FLUSH_BYTES = 128ll << 20;
static unsigned fillValue;

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
    const char* family;  // "rmsnorm" or "layernorm"
    int bf16;
    long long rows, cols;
    int columns;  // column vectors: RMSNorm 1 (w), LayerNorm 2 (w, b), Softmax 0
    long long bytes() const { return rows * cols * (bf16 ? 2 : 4); }
};

static void check(const Shape& s, const char* name) {
    CK(cudaMemset(Worst, 0, sizeof *Worst));
    compare_kernel<<<1024, 256>>>(Y, REF, s.rows * s.cols, s.bf16, Worst);
    unsigned w;
    CK(cudaMemcpy(&w, Worst, sizeof w, cudaMemcpyDeviceToHost));
    float f;
    memcpy(&f, &w, 4);
    const float tol = s.bf16 ? 1e-2f : 1e-5f;
    if (!(f <= tol)) {
        printf("%s: WRONG OUTPUT (max rel diff %g)\n", name, f);
        exit(1);
    }
}

// report prints the hot time and its share of the hot copy of the same bytes, then the cold time and its
// pct-copy as the suite reports it: the bytes the kernel must move (x, y and the column data) over the cold
// time, against the cold copy of 1 GiB.
template <class F>
static void report(const Shape& s, const std::string& name, F launch) {
    const float hot = time_us(launch, false), cold = time_us(launch, true);
    const double moved = 2.0 * s.bytes() + (double)s.cols * (s.bf16 ? 2 : 4) * s.columns;
    printf("  %-58s hot %8.1f us %6.1f%% | cold %8.1f us %6.1f pct-copy\n", name.c_str(), hot, 100.0f * copyUs / hot,
           cold, 100.0 * moved / (cold * 1e3) / copyColdGBps);
    fflush(stdout);
}

// suite launches one of the committed kernels as the suite does: grid = rows, block = t (RMSNorm's team kernels
// with team = 1 and no partials).
static void suite(const Shape& s, const char* kernel, int t, bool ref) {
    CUfunction fn;
    CU(cuModuleGetFunction(&fn, s.family[0] == 'r' ? rmsMod : s.family[0] == 'l' ? lnMod : smMod, kernel));
    CUdeviceptr x = (CUdeviceptr)X, w = (CUdeviceptr)Wd, b = (CUdeviceptr)Bd, y = (CUdeviceptr)(ref ? REF : Y);
    long long rows = s.rows, cols = s.cols, team = 1;
    double eps = 1e-5;
    CUdeviceptr nul = 0;
    void* rms[] = {&x, &w, &y, &rows, &cols, &eps, &team, &nul, &nul, &nul};
    void* ln[] = {&x, &w, &b, &y, &rows, &cols, &eps};
    void* sm[] = {&x, &y, &rows, &cols};
    void** args = s.family[0] == 'r' ? rms : s.family[0] == 'l' ? ln : sm;
    auto launch = [&] { CU(cuLaunchKernel(fn, (unsigned)s.rows, 1, 1, t, 1, 1, 0, 0, args, nullptr)); };
    launch();
    CK(cudaDeviceSynchronize());
    if (!ref) check(s, kernel);
    char name[120];
    snprintf(name, sizeof name, "suite %s t=%d", kernel, t);
    report(s, name, launch);
}

template <class Op, int NV, int T, int G, int MODE, bool PF>
static void res(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    auto k = res_kernel<Op, NV, T, G, MODE, PF>;
    typedef Pack<typename Op::S, true> P;
    const int smem = MODE == 1 ? (int)(NV * T * sizeof(typename Op::template Col<P>)) : 0;
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
    check(s, name);
    report(s, name, launch);
}

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

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
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
    CK(cudaMalloc(&Worst, sizeof *Worst));
    CK(cudaMalloc(&FLUSH, FLUSH_BYTES));
    {
        const long long nb = 1ll << 30;
        const float us = time_us([&] {
            copy_chunk<<<(int)(nb / 16 / 2048), 256>>>((const unsigned char*)X, (unsigned char*)Y, nb);
        }, true);
        copyColdGBps = 2.0 * nb / (us * 1e3);
        printf("copy_chunk 1 GiB cold: %.1f us, %.0f GB/s (the pct-copy yardstick)\n", us, copyColdGBps);
    }
    for (int rep = 0; rep < 2; rep++) {
        if (!*only || strstr(only, "A")) {
            Shape s = {"rmsnorm", 0, 8192, 16384, 1};
            prepare(s);
            suite(s, "rmsnorm_team_f32_v8", 512, true);
            suite(s, "rmsnorm_team_f32_v8", 512, false);
            typedef RMSNormOp<F32> OP;
            OP op = rmsop<F32>();
            res<OP, 8, 512, 1, 1, false>(s, op);
            res<OP, 8, 512, 1, 2, false>(s, op);
        }
        if (!*only || strstr(only, "B")) {
            Shape s = {"rmsnorm", 1, 8192, 16384, 1};
            prepare(s);
            suite(s, "rmsnorm_team_bf16_v8", 256, true);
            suite(s, "rmsnorm_team_bf16_v8", 256, false);
            typedef RMSNormOp<BF16> OP;
            OP op = rmsop<BF16>();
            res<OP, 8, 256, 1, 1, true>(s, op);
            res<OP, 4, 512, 1, 1, true>(s, op);
        }
        if (!*only || strstr(only, "C")) {
            Shape s = {"layernorm", 0, 8192, 16384, 2};
            prepare(s);
            suite(s, "layernorm_block_f32_v8", 512, true);
            suite(s, "layernorm_block_f32_v8", 512, false);
            typedef LayerNormOp<F32> OP;
            OP op = lnop<F32>();
            res<OP, 8, 512, 1, 1, false>(s, op);
            res<OP, 8, 512, 1, 2, false>(s, op);
            res<OP, 4, 1024, 1, 1, true>(s, op);
        }
        if (!*only || strstr(only, "D")) {
            Shape s = {"layernorm", 1, 8192, 16384, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 256, true);
            suite(s, "layernorm_loop_bf16_v", 256, false);
            suite(s, "layernorm_block_bf16_v8", 256, false);
            typedef LayerNormOp<BF16> OP;
            OP op = lnop<BF16>();
            res<OP, 8, 256, 1, 1, true>(s, op);
            res<OP, 4, 512, 1, 1, false>(s, op);
            res<OP, 4, 512, 1, 1, true>(s, op);
        }
        if (!*only || strstr(only, "E")) {
            Shape s = {"layernorm", 1, 32768, 4096, 2};
            prepare(s);
            suite(s, "layernorm_block_bf16_v8", 64, true);
            suite(s, "layernorm_block_bf16_v8", 64, false);
            typedef LayerNormOp<BF16> OP;
            OP op = lnop<BF16>();
            res<OP, 8, 64, 4, 1, true>(s, op);
            res<OP, 8, 64, 8, 1, true>(s, op);
            res<OP, 2, 256, 2, 0, false>(s, op);
            res<OP, 2, 256, 2, 1, false>(s, op);
            res<OP, 4, 128, 2, 2, true>(s, op);
        }
        if (!*only || strstr(only, "F")) {
            Shape s = {"rmsnorm", 1, 4096, 65536, 1};
            prepare(s);
            suite(s, "rmsnorm_team_bf16_v8", 1024, true);
            suite(s, "rmsnorm_team_bf16_v8", 1024, false);
            typedef RMSNormOp<BF16> OP;
            OP op = rmsop<BF16>();
            res<OP, 8, 1024, 1, 0, false>(s, op);
            res<OP, 8, 1024, 1, 1, false>(s, op);
        }
        if (!*only || strstr(only, "G")) {
            Shape s = {"softmax", 1, 4096, 65536, 0};
            prepare(s);
            suite(s, "softmax_block_bf16_v8", 1024, true);
            suite(s, "softmax_block_bf16_v8", 1024, false);
            typedef SoftmaxOp<BF16> OP;
            OP op;
            res<OP, 8, 1024, 1, 0, false>(s, op);
        }
    }
    return 0;
}

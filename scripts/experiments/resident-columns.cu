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
//   ./resident-columns kernels/cuda/ptx [ABCDEFGHIJK]   (the letters pick shapes, in main; A–G by default)
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// row_res_cluster is row_res with a row spread over a thread-block cluster of CS blocks (the launch's cluster
// dimension), one team a block: block k of the cluster holds packs [k·T·NV, (k + 1)·T·NV) of each of the
// cluster's rows (rows c, c + clusters, … for cluster c) and stages that slice of the column data. The blocks'
// statistics meet through distributed shared memory, merged in rank order (the same in every block), behind one
// cluster barrier a row: each block's part is double-buffered by row parity, and a block writes part[par] again
// two rows on, after every block has arrived at the barrier between, that is, after every block has read it. It
// lost to the rows' plans on an H200 (the figures are in kernels/rowres.go), so the modules do not build it.
template <class Op, int NV, int T, int MODE, bool PF, int CS>
__device__ __forceinline__ void row_res_cluster(const Op& op, const typename Op::T* __restrict__ x,
                                                typename Op::T* __restrict__ y, long long rows, long long cols) {
    typedef Pack<typename Op::S, true> P;
    typedef typename Op::template Col<P> C;
    enum { E = P::E, W = sizeof(C) / 16, WARPS = T / 32 };
    static_assert(T % 32 == 0 && T >= 64 && MODE >= 0 && MODE <= 1 && CS >= 2 && CS <= 16, "row_res_cluster");
    extern __shared__ uint4 res_cols[];  // MODE 1
    __shared__ RowStat red[2][WARPS];
    __shared__ RowStat part[2];
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int tl = threadIdx.x, warp = tl >> 5, lane = tl & 31;
    const long long base = (long long)cluster.block_rank() * T * NV;  // this block's first pack of a row
    const long long packs = cols / E - base;
    const int kv = tl < packs ? (int)min((long long)NV, (packs - tl + T - 1) / T) : 0;
    const long long c0 = (base + tl) * E;  // this thread's first column
    if (MODE == 1) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                const C c = op.template column<P>(c0 + (long long)k * T * E);
                const uint4* s = reinterpret_cast<const uint4*>(&c);
#pragma unroll
                for (int i = 0; i < W; i++) res_cols[(k * W + i) * T + tl] = s[i];
            }
        }
    }
    const long long stride = gridDim.x / CS;
    long long row = blockIdx.x / CS;
    P v[NV], vn[PF ? NV : 1];
    if (row < rows) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k < kv) v[k].load(x + row * cols + c0 + (long long)k * T * E);
    }
    int par = 0;
    for (; row < rows; row += stride) {
        typename Op::Ctx ctx = op.context(x + row * cols);
        RowStat s = warp_merge(op, op.template local<P, NV>(v, kv, ctx));
        if (lane == 0) red[par][warp] = s;
        __syncthreads();  // also: the column data staged (first row)
        s = red[par][0];
#pragma unroll
        for (int i = 1; i < WARPS; i++) s = op.merge(s, red[par][i]);
        if (tl == 0) part[par] = s;
        asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
        s = *cluster.map_shared_rank(&part[par], 0);
#pragma unroll
        for (int i = 1; i < CS; i++) s = op.merge(s, *cluster.map_shared_rank(&part[par], i));
        const typename Op::Fin f = op.finish(s, cols, ctx);
        const long long next = row + stride;
        if (PF && next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                if (k < kv) vn[PF ? k : 0].load(x + next * cols + c0 + (long long)k * T * E);
        }
        typename Op::T* yr = y + row * cols;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (k < kv) {
                const long long c = c0 + (long long)k * T * E;
                C cv;
                if (MODE == 0) cv = op.template column<P>(c);
                if (MODE == 1) {
                    uint4* d = reinterpret_cast<uint4*>(&cv);
#pragma unroll
                    for (int i = 0; i < W; i++) d[i] = res_cols[(k * W + i) * T + tl];
                }
                float o[E];
                op.apply(v[k], cv, f, o);
                rm_store<typename Op::S, true>(o, yr + c);
            }
        }
        if (next < rows) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (PF) v[k] = vn[PF ? k : 0];
                else if (k < kv) v[k].load(x + next * cols + c0 + (long long)k * T * E);
            }
        }
        par ^= 1;
    }
    // No block leaves while another may still read its part (every block of a cluster takes the same rows).
    asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}

#endif

// resc_kernel launches row_res_cluster (above): a cluster of CS blocks a row, one team of T threads a block.
template <class Op, int NV, int T, int MODE, bool PF, int CS>
__global__ void __launch_bounds__(T, 1) resc_kernel(Op op, const typename Op::T* __restrict__ x,
                                                    typename Op::T* __restrict__ y, long long rows, long long cols) {
#if defined(__CUDA_ARCH__)
    row_res_cluster<Op, NV, T, MODE, PF, CS>(op, x, y, rows, cols);
#endif
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

// resc times row_res_cluster: as many clusters as the GPU runs at once (cudaOccupancyMaxActiveClusters), at
// most one a row.
template <class Op, int NV, int T, int MODE, bool PF, int CS>
static void resc(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    typedef Pack<typename Op::S, true> P;
    auto k = resc_kernel<Op, NV, T, MODE, PF, CS>;
    const int smem = MODE == 1 ? (int)(NV * T * sizeof(typename Op::template Col<P>)) : 0;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    if (CS > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CS;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    cfg.blockDim = dim3(T);
    cfg.dynamicSmemBytes = smem;
    cfg.gridDim = dim3(CS * SMS);
    int ncl = 0;
    CK(cudaOccupancyMaxActiveClusters(&ncl, k, &cfg));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    char name[120];
    snprintf(name, sizeof name, "row_res_cluster NV=%d T=%d CS=%d MODE=%d PF=%d (%d clusters, %d regs, %d KiB)", NV, T,
             CS, MODE, (int)PF, ncl, fa.numRegs, smem / 1024);
    if ((long long)CS * NV * T * P::E < s.cols || ncl == 0) {
        printf("  %-58s does not cover the row or fit\n", name);
        return;
    }
    cfg.gridDim = dim3((unsigned)(CS * std::min<long long>(ncl, s.rows)));
    auto launch = [&] { CK(cudaLaunchKernelEx(&cfg, k, op, (const TT*)X, (TT*)Y, s.rows, s.cols)); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    check(s, name);
    report(s, name, launch);
}

// rmsref writes the reference output of RMSNorm case s into REF (rms_ref).
template <class S>
static void rmsref(const Shape& s) {
    rms_ref<S><<<(unsigned)s.rows, 1024>>>((const typename S::T*)X, (const typename S::T*)Wd, (typename S::T*)REF,
                                           s.cols, 1e-5f);
    CK(cudaDeviceSynchronize());
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

// rmsWide times row_res_cluster for RMSNorm rows × cols in dtype S (rms_ref's output as the reference), in
// clusters of CS blocks: 1024 threads of 4 packs, the next row ahead, and 512 threads of 8, w staged and not.
template <class S, int CS>
static void rmsWide(long long rows, long long cols) {
    Shape s = {"rmsnorm", sizeof(typename S::T) == 2, rows, cols, 1};
    prepare(s);
    rmsref<S>(s);
    RMSNormOp<S> op = rmsop<S>();
    resc<RMSNormOp<S>, 4, 1024, 1, true, CS>(s, op);
    resc<RMSNormOp<S>, 4, 1024, 0, true, CS>(s, op);
    resc<RMSNormOp<S>, 8, 512, 1, false, CS>(s, op);
    resc<RMSNormOp<S>, 8, 512, 0, false, CS>(s, op);
}

// lnWide times row_res_cluster for LayerNorm rows × cols in dtype S (the loop kernel's output as the reference), in
// clusters of CS blocks of 1024 threads, 4 packs a thread, the next row ahead, w and b staged in shared memory and
// read from L2.
template <class S, int CS>
static void lnWide(long long rows, long long cols) {
    Shape s = {"layernorm", sizeof(typename S::T) == 2, rows, cols, 2};
    prepare(s);
    suite(s, sizeof(typename S::T) == 2 ? "layernorm_loop_bf16_v" : "layernorm_loop_f32_v", 1024, true);
    LayerNormOp<S> op = lnop<S>();
    resc<LayerNormOp<S>, 4, 1024, 1, true, CS>(s, op);
    resc<LayerNormOp<S>, 4, 1024, 0, true, CS>(s, op);
}

// smWide times row_res_cluster for Softmax rows × cols in dtype S (the loop kernel's output as the reference), in
// clusters of CS blocks of 1024 threads, 4 packs a thread, the next row ahead.
template <class S, int CS>
static void smWide(long long rows, long long cols) {
    Shape s = {"softmax", sizeof(typename S::T) == 2, rows, cols, 0};
    prepare(s);
    suite(s, sizeof(typename S::T) == 2 ? "softmax_loop_bf16_v" : "softmax_loop_f32_v", 1024, true);
    resc<SoftmaxOp<S>, 4, 1024, 0, true, CS>(s, SoftmaxOp<S>());
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
        if (strstr(only, "H")) {  // RMSNorm 1 MiB and 512 KiB rows (the H200 baselines: ring 86.5%, ring2 85.4%)
            rmsWide<F32, 16>(1024, 262144);
            rmsWide<BF16, 8>(1024, 262144);
        }
        if (strstr(only, "I")) {  // LayerNorm 65536 (the H200 baselines: fp32 ring2e 86.0%, bf16 row_res 87.3%)
            lnWide<F32, 4>(4096, 65536);
            lnWide<BF16, 2>(4096, 65536);
        }
        if (strstr(only, "J")) {  // LayerNorm 262144 (H200: fp32 ring 75.2%, bf16 cluster 66.5%)
            lnWide<F32, 16>(1024, 262144);
            lnWide<BF16, 8>(1024, 262144);
        }
        if (strstr(only, "K")) {  // Softmax (H200: fp32 65536 90.8, 262144 86.6%; bf16 86.5, 71.4%)
            smWide<F32, 4>(4096, 65536);
            smWide<BF16, 2>(4096, 65536);
            smWide<F32, 16>(1024, 262144);
            smWide<BF16, 8>(1024, 262144);
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

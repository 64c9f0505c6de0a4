// xent-merge.cu: what do the cross-entropy cluster kernel's merges of (max, Σ e^(x − max)) pairs cost it? A
// standalone experiment behind CrossEntropy fp32 1024 × 262144 on the H200 (docs/kernels.md): its cluster of 16
// blocks of 512 threads (kernels/cuda/crossentropy.cu's xent_cluster, st.async exchange) ran at 89.1% of the copy
// there (goal 90%) and 102.1% on an H100 (TestCUDARowTune, 2026-11-27).
//
// Each row's pairs meet in a chain of merges, each waiting for the one before, and each merge takes two
// exponentials (ms_merge): five in the warp's butterfly, five more across the block's warps, then CS across the
// cluster's blocks — 26 in a row for CS = 16, a few hundred cycles a row in which the block's loads and stores wait.
// The variants, M:
//
//   M 0  the suite's xent_cluster, compiled here
//   M 1  the cluster's CS pairs merged in two passes across a warp's lanes (lane i < CS holds block i's pair): a
//        butterfly of fmaxf for their maximum M, each lane's s_i·e^(m_i − M) by one exponential, a butterfly of
//        additions
//   M 2  M 1, and the block's pairs the same way: the warp's maximum by a butterfly of fmaxf, each lane's sum
//        rescaled to it by one exponential, then a butterfly of additions; the warps' pairs likewise
//
// Every merge keeps a fixed order, so every block of a cluster takes the same pair, bit for bit. The suite's kernel
// from the committed PTX (crossentropy_x_sm90a, launched as the suite launches it) writes the reference; every
// variant's gradients and losses are compared with it.
//
// NVIDIA H200, driver 580.159.04, 2026-11-28, pct of the copy, hot | cold, two rounds (the suite's kernel was then
// xent_cluster_f32_v8_c16, 16 × 512 threads of 8 packs, M 0 NV 8 here):
//   suite 16 × 512                  89.0–89.3 | 88.8–89.1
//   M 0 NV 8, 16 × 512 (64 regs)    89.0      | 89.2–89.6
//   M 1 NV 8, 16 × 512              87.2–87.4 | 87.1–87.5
//   M 2 NV 8, 16 × 512              84.6      | 84.6–84.8
//   M 0 NV 16, 16 × 256 (128 regs)  92.5–92.6 | 92.3–92.4
//   M 2 NV 16, 16 × 256             88.1–88.6 | 88.3
//   M 2 NV 8, 8 × 1024 (one block a multiprocessor)  46.7–46.8 | 46.5–46.6
// The two-pass merges lose: their extra shuffles and barrier cost more than the exchanges' latency they shorten.
// Halving the block (twice the packs a thread, the same two blocks a multiprocessor) wins: the suite's kernel is now
// M 0 NV 16 in 16 × 256 (xent_cluster_f32_v16_c16), the reference below.
//
// Build with CUDA 12.4 or later (st.async) and run from the repository root:
//   scripts/nvcc-hopper -O3 -arch=sm_90 -o .gpu/xm scripts/experiments/xent-merge.cu -lcuda
//   ./xm kernels/cuda/ptx
#define KW_XASYNC 1
#include "experiment.cuh"
#include "../../kernels/cuda/xent.cuh"

static int* LABELS;
static float* LOSS;
static float* LOSSREF;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// ms_scale is s·e^(m − M), 0 for an empty pair (m = −inf), s where m is M (−inf included).
__device__ __forceinline__ float ms_scale(float m, float s, float M) {
    return m == M ? s : __fmul_rn(s, ex2(__fmul_rn(m - M, XENT_L2E)));
}

// warp_ms2 is warp_ms in two passes: every lane ends with the same pair.
__device__ __forceinline__ void warp_ms2(float& m, float& s) {
    float M = m;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
    s = ms_scale(m, s, M);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s = __fadd_rn(s, __shfl_xor_sync(0xffffffffu, s, o));
    m = M;
}

__device__ __forceinline__ void block_ms2(float& m, float& s, float* rm, float* rs) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    warp_ms2(m, s);
    __syncthreads();
    if (lane == 0) rm[warp] = m, rs[warp] = s;
    __syncthreads();
    m = lane < warps ? rm[lane] : XENT_NEG_INF;
    s = lane < warps ? rs[lane] : 0.0f;
    warp_ms2(m, s);
}

template <int NV, int CS, int M>
__device__ __forceinline__ void xm_cluster(const float* __restrict__ x, const int* __restrict__ labels,
                                           float* __restrict__ loss, float* __restrict__ dl, long long cols) {
    typedef XentShare<F32, true, NV> Sh;
    __shared__ float rm[32], rs[32];
    __shared__ __align__(8) float parts[CS][2];
    __shared__ __align__(8) unsigned long long xbar;
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const int E = Sh::P::E;
    const int step = blockDim.x * E;
    const long long chunk = (long long)step * NV;
    const long long row = blockIdx.x / CS;
    const int rank = (int)cluster.block_rank();
    const long long c = (long long)rank * chunk + (long long)threadIdx.x * E;
    const int n = share_len(cols, c, chunk);
    const long long label = labels[row];
    const float* xr = x + row * cols;
    float* dr = dl + row * cols;
    if (!xent_live(label, cols)) {
        Sh::zero(dr + c, step, n);
        if (rank == 0 && threadIdx.x == 0) loss[row] = 0.0f;
        return;
    }
    xa_init(&xbar, 1);
    const bool own = owns_label(label, c, n, step, E);
    Sh sh;
    sh.load(xr + c, step, n);
    float xl = 0.0f;
    if (own) xl = xr[label];
    float m, s;
    sh.local(step, n, m, s);
    const float mloc = m;
    if (M >= 2) block_ms2(m, s, rm, rs);
    else block_ms(m, s, rm, rs);
    xa_started();
    if (threadIdx.x == 0) {
        const float w[2] = {m, s};
        xa_send<2>(w, parts[rank], &xbar, CS);
    }
    xa_wait(&xbar, 0);
    float Mx = XENT_NEG_INF, sum = 0.0f;
    if (M >= 1) {  // lane i < CS takes block i's pair; every warp runs the same butterflies
        const int lane = threadIdx.x & 31;
        Mx = lane < CS ? parts[lane][0] : XENT_NEG_INF;
        sum = lane < CS ? parts[lane][1] : 0.0f;
        warp_ms2(Mx, sum);
    } else {
#pragma unroll
        for (int i = 0; i < CS; i++) ms_merge(Mx, sum, parts[i][0], parts[i][1]);
    }
    const float inv = 1.0f / sum;
    sh.store(dr + c, step, n, mloc, Mx, inv);
    if (own) fix_label<F32>(dr, loss + row, label, xl, Mx, sum, inv);
}
#endif

template <int NV, int T, int MB, int CS, int M>
__global__ void __launch_bounds__(T, MB) xm(const float* x, const int* labels, float* loss, float* dl, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (M == 0) xent_cluster<F32, NV, CS>(x, labels, loss, dl, cols);
    else xm_cluster<NV, CS, M>(x, labels, loss, dl, cols);
#endif
}

// labels_kernel writes a label a row in [0, cols), every eighth row ignored (−100), as the suite's CrossEntropy
// cases mark about one row in eight.
__global__ void labels_kernel(int* l, long long rows, long long cols) {
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)r * 2654435761u ^ 0x5bd1e995u;
        h ^= h >> 13;
        h *= 3266489917u;
        h ^= h >> 16;
        l[r] = r % 8 == 3 ? XENT_IGNORE : (int)(h % (unsigned)cols);
    }
}

// lossCheck stops the program unless LOSS matches LOSSREF (max |a − b| / (1 + |b|) at most 1e-5).
static void lossCheck(const Shape& s, const char* name) {
    CK(cudaMemset(Worst, 0, 2 * sizeof *Worst));
    compare_kernel<<<64, 256>>>(LOSS, LOSSREF, s.rows, 0, Worst);
    unsigned w[2];
    CK(cudaMemcpy(w, Worst, sizeof w, cudaMemcpyDeviceToHost));
    float f[2];
    memcpy(f, w, sizeof f);
    if (!(f[0] <= 1e-5f)) {
        printf("%s: WRONG LOSS (max rel diff %g)\n", name, f[0]);
        exit(1);
    }
}

// run times variant M in clusters of CS blocks of T threads, NV packs a thread, bounded to MB blocks a
// multiprocessor (cluster dimension at launch).
template <int NV, int T, int MB, int CS, int M>
static void run(const Shape& s) {
    auto k = xm<NV, T, MB, CS, M>;
    ClusterLaunch cl(k, CS, T, 0, (unsigned)(CS * s.rows));
    int ncl = 0;
    CK(cudaOccupancyMaxActiveClusters(&ncl, k, &cl.cfg));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, k));
    char name[160];
    snprintf(name, sizeof name, "M%d NV%d %d x %d mb=%d (%d regs, %d B local, %d clusters)", M, NV, CS, T, MB,
             a.numRegs, (int)a.localSizeBytes, ncl);
    if ((long long)CS * NV * T * 4 < s.cols || ncl == 0) {
        printf("  %-58s does not cover the row or fit\n", name);
        return;
    }
    auto launch = [&] {
        CK(cudaLaunchKernelEx(&cl.cfg, k, (const float*)X, (const int*)LABELS, LOSS, (float*)Y, s.cols));
    };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    CK(cudaMemset(LOSS, 0xff, s.rows * sizeof(float)));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = check(s, name);
    lossCheck(s, name);
    report(s, name, launch, rel);
}

// reference launches the suite's xent_cluster_f32_v16_c16 from crossentropy_x_sm90a as the suite launches it
// (clusters of 16 given at launch, the non-portable size allowed) into REF and LOSSREF, and times it.
static void reference(const Shape& s, const char* dir) {
    CUmodule mod;
    CU(cuModuleLoad(&mod, (std::string(dir) + "/crossentropy_x_sm90a.ptx").c_str()));
    CUfunction fn;
    CU(cuModuleGetFunction(&fn, mod, "xent_cluster_f32_v16_c16"));
    CU(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    CUdeviceptr x = (CUdeviceptr)X, l = (CUdeviceptr)LABELS, lo = (CUdeviceptr)LOSSREF, y = (CUdeviceptr)REF;
    long long rows = s.rows, cols = s.cols;
    void* args[] = {&x, &l, &lo, &y, &rows, &cols};
    CUlaunchAttribute at[1];
    at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at[0].value.clusterDim.x = 16;
    at[0].value.clusterDim.y = 1;
    at[0].value.clusterDim.z = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = (unsigned)(16 * s.rows);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    auto launch = [&] { CU(cuLaunchKernelEx(&cfg, fn, args, nullptr)); };
    launch();
    CK(cudaDeviceSynchronize());
    report(s, "suite xent_cluster_f32_v16_c16 (16 x 256)", launch);
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    setup(dir);
    const Shape s = {"xent", 0, 1024, 262144, 0};
    CK(cudaMalloc(&LABELS, s.rows * sizeof(int)));
    CK(cudaMalloc(&LOSS, s.rows * sizeof(float)));
    CK(cudaMalloc(&LOSSREF, s.rows * sizeof(float)));
    for (int rep = 0; rep < 2; rep++) {
        prepare(s);
        labels_kernel<<<8, 128>>>(LABELS, s.rows, s.cols);
        reference(s, dir);
        run<8, 512, 2, 16, 0>(s);
        run<8, 512, 2, 16, 1>(s);
        run<8, 512, 2, 16, 2>(s);
        run<16, 256, 2, 16, 0>(s);
        run<16, 256, 2, 16, 2>(s);
        run<8, 1024, 1, 8, 2>(s);
    }
    return 0;
}

// cluster-ahead.cu: do the wide rows (65536 and 262144 columns) gain what the one-block rows gained from loading
// the column data ahead (column-ahead.cu, rowmap.cuh's row_block_lead), once the row is held by a cluster of
// smaller blocks bounded by their own size? A standalone experiment behind the row plans (docs/kernels.md). No.
//
// The suite's cluster kernels (row_cluster) are bounded by 1024 threads and one block a multiprocessor (at most 64
// registers), so a 1024-thread block waiting at the cluster barrier leaves its multiprocessor idle, and a
// look-ahead of the column data spills; their clusters are declared at compile time, so 8 blocks at most. clu
// below is row_cluster with the look-ahead over 8 or 16 packs a thread, bounded by T threads and MB blocks a
// multiprocessor, launched with its cluster of CS blocks at run time (up to 16).
//
// clu_pf instead prefetches each pack's column data into L1 (prefetch.global.L1, no registers) D packs ahead, under
// the suite's bounds; NOX (clu_pf with no cluster exchange at all, wrong outputs, not checked) is the ceiling.
//
// The suite's cluster kernel from the committed PTX writes the reference output and is timed beside them; every
// other output is compared with it (experiment.cuh).
//
// Results (2026-11-27, driver 580.159.04, the program's cold pct-copy, two rounds; NVIDIA H200 unless named):
//   - The look-ahead lost everywhere, by occupancy: LayerNorm bf16 1024×262144 suite (4 × 1024) 72.8–73.0; 16 × 256
//     no look-ahead 64.4–64.6 (4 a multiprocessor), 3 ahead 43.1–43.3 (108 registers, 2), bounded to 3 a
//     multiprocessor 57.8; 8 × 512 71.3–71.5, 2–3 ahead 52.0–52.1. NVIDIA H100 80GB HBM3 the same shape: suite
//     83.4–83.6, 8 × 512 82.4–82.5, 16 × 256 76.3–76.4, ahead 54–69. LayerNorm bf16 4096×65536: suite 79.7, 4 × 256
//     78.6–79.1, 3 ahead 60.0, bounded to 3 a multiprocessor 69.4–69.5. LayerNorm fp32 4096×65536: suite 73.3–73.4,
//     8 × 256 77.3–77.5, 3 ahead 61.2–61.5; fp32 1024×262144: suite 60.8, 16 × 512 58.5–58.8, ahead 38–43.
//     RMSNorm bf16 1024×262144: suite (rmsnorm_cluster, 4 × 1024) 59.1–59.6; row_cluster over RMSNormOp 8 × 512
//     77.3–77.4, 16 × 256 73.9–74.0, 3 ahead 67.4–67.6; fp32: suite 72.7–72.9, 16 × 512 64.2–68.0.
//   - The L1 prefetch lost too: LayerNorm bf16 1024×262144 69.6–71.8 against 72.8 for the same kernel without it,
//     fp32 56.3–59.3 against 60.5; RMSNorm bf16 78.4–78.6 against 77.3 (8 × 512) — within noise.
//   - With no exchange (NOX): LayerNorm bf16 1024×262144 76.4 against 72.8, fp32 63.8 against 60.5, RMSNorm bf16
//     8 × 512 96.2 against 77.3. The exchange itself is what costs RMSNorm's clusters: cluster-exchange.cu.
//
// Build PTX alone (CUDA 11.8 or later), so that the driver compiles it as it compiles the suite's modules, and run
// on the GPU host from the repository root:
//   nvcc -O3 -gencode arch=compute_90,code=compute_90 -o cluster-ahead scripts/experiments/cluster-ahead.cu -lcuda
//   ./cluster-ahead kernels/cuda/ptx [ABCDEF] [lead|pf]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"

static CUmodule rms90;  // rmsnorm_sm90.ptx: RMSNorm's cluster kernels (setup loads the compute_75 module)

// clu is rowmap.cuh's row_cluster with each pack's column data loaded LEAD packs ahead of its store (the first
// LEAD before the row's statistic; row_chunk_store_lead, as row_block_lead does), LEAD 0: row_cluster itself.
template <class Op, int NV, int T, int MB, int CS, int LEAD>
__global__ void __launch_bounds__(T, MB) clu(Op op, const typename Op::T* __restrict__ x,
                                             typename Op::T* __restrict__ y, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (LEAD == 0) {
        row_cluster<Op, NV, CS>(op, x, y, cols);
        return;
    }
    typedef Pack<typename Op::S, true> P;
    __shared__ RowStat red[32];
    __shared__ RowStat mine;
    const long long row = blockIdx.x / CS;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, (long long)cooperative_groups::this_cluster().block_rank(), c);
    typename Op::template Col<P> col[NV];
    const int step = blockDim.x * P::E;
#pragma unroll
    for (int k = 0; k < LEAD && k < NV; k++)
        if (k < kv) col[k] = op.template column<P>(c + (long long)k * step);
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
    const RowStat t = cluster_merge<Op, CS>(op, s, &mine);
    row_chunk_store_lead<Op, true, NV, (LEAD > 0 ? LEAD : 1)>(op, v, col, kv, y + row * cols, c, op.finish(t, cols, ctx));
    asm volatile("barrier.cluster.wait;" ::: "memory");
#endif
}

// clu_pf is row_cluster with each pack's column data prefetched into L1 D packs ahead of its store (the first D
// before the row's statistic; D = NV: all of them), loaded just before the store as row_cluster loads it.
// NOX: no cluster exchange (each block takes its own part's statistic for the row's: wrong outputs, not checked),
// what the exchange and its barriers cost.
template <class Op, int NV, int T, int MB, int CS, int D, bool NOX = false>
__global__ void __launch_bounds__(T, MB) clu_pf(Op op, const typename Op::T* __restrict__ x,
                                                typename Op::T* __restrict__ y, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    typedef Pack<typename Op::S, true> P;
    __shared__ RowStat red[32];
    __shared__ RowStat mine;
    const long long row = blockIdx.x / CS;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, (long long)cooperative_groups::this_cluster().block_rank(), c);
    const int step = blockDim.x * P::E;
#pragma unroll
    for (int k = 0; k < D && k < NV; k++)
        if (k < kv) col_prefetch<Op, P>(op, c + (long long)k * step);
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
    const RowStat t = NOX ? s : cluster_merge<Op, CS>(op, s, &mine);
    const typename Op::Fin f = op.finish(t, cols, ctx);
    typename Op::T* yr = y + row * cols;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k < kv) {
            const long long ck = c + (long long)k * step;
            if (k + D < NV && k + D < kv) col_prefetch<Op, P>(op, ck + (long long)D * step);
            float o[P::E];
            op.apply(v[k], op.template column<P>(ck), f, o);
            rm_store<typename Op::S, true, true>(o, yr + ck);
        }
    }
    if (!NOX) asm volatile("barrier.cluster.wait;" ::: "memory");
#endif
}

// run times clu (PF: clu_pf, LEAD its D) over shape s: a cluster of CS blocks a row.
template <class Op, int NV, int T, int MB, int CS, int LEAD, bool PF = false, bool NOX = false>
static void run(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    typedef Pack<typename Op::S, true> P;
    auto k = PF ? clu_pf<Op, NV, T, MB, CS, LEAD, NOX> : clu<Op, NV, T, MB, CS, LEAD>;
    ClusterLaunch cl(k, CS, T, 0, (unsigned)(CS * s.rows));
    int ncl = 0;
    CK(cudaOccupancyMaxActiveClusters(&ncl, k, &cl.cfg));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, k));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T, 0));
    char name[160];
    snprintf(name, sizeof name, "clu%s NV%d t=%d mb=%d c=%d a%d (%d regs, %d B local, %d/SM, %d clusters)", NOX ? "_nox" : PF ? "_pf" : "",
             NV, T, MB, CS, LEAD, a.numRegs, (int)a.localSizeBytes, per, ncl);
    if ((long long)CS * NV * T * P::E < s.cols || ncl == 0) {
        printf("  %-58s does not cover the row or fit\n", name);
        return;
    }
    auto launch = [&] { CK(cudaLaunchKernelEx(&cl.cfg, k, op, (const TT*)X, (TT*)Y, s.cols)); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = NOX ? -1.0f : check(s, name);
    report(s, name, launch, rel);
}

// pick prepares shape s when only is empty or names letter: the suite's cluster kernel (compile-time clusters of cs
// blocks of t threads) writes REF and is timed.
static bool pick(const char* only, const char* letter, const Shape& s, const char* kernel, int cs, int t) {
    if (*only && !strstr(only, letter)) return false;
    prepare(s);
    CUmodule mod = s.family[0] == 'r' ? rms90 : lnMod;
    suite(s, kernel, t, true, cs, mod);
    suite(s, kernel, t, false, cs, mod);
    return true;
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    const char* form = argc > 3 ? argv[3] : "";  // "lead" or "pf": one set of variants (both by default)
    const bool lead = !strcmp(form, "pf") ? false : true, pf = !strcmp(form, "lead") ? false : true;
    setup(dir);
    CU(cuModuleLoad(&rms90, (std::string(dir) + "/rmsnorm_sm90.ptx").c_str()));
    typedef LayerNormOp<BF16> LB;
    typedef LayerNormOp<F32> LF;
    typedef RMSNormOp<BF16> RB;
    typedef RMSNormOp<F32> RF;
    for (int rep = 0; rep < 2; rep++) {
        const Shape a = {"layernorm", 1, 4096, 65536, 2};
        if (pick(only, "A", a, "layernorm_cluster_bf16_v8_c2", 2, 512)) {
            if (lead) {
                run<LB, 8, 128, 1, 8, 0>(a, lnop<BF16>());
                run<LB, 8, 128, 1, 8, 4>(a, lnop<BF16>());
                run<LB, 8, 128, 1, 8, 8>(a, lnop<BF16>());
                run<LB, 8, 256, 4, 4, 0>(a, lnop<BF16>());
                run<LB, 8, 256, 1, 4, 0>(a, lnop<BF16>());
                run<LB, 8, 256, 1, 4, 3>(a, lnop<BF16>());
                run<LB, 8, 256, 1, 4, 4>(a, lnop<BF16>());
                run<LB, 8, 256, 3, 4, 3>(a, lnop<BF16>());
                run<LB, 8, 512, 1, 2, 0>(a, lnop<BF16>());
                run<LB, 8, 512, 1, 2, 2>(a, lnop<BF16>());
                run<LB, 8, 512, 1, 2, 3>(a, lnop<BF16>());
            }
            if (pf) {
                run<LB, 8, 1024, 1, 2, 0>(a, lnop<BF16>());
                run<LB, 8, 1024, 1, 2, 2, true>(a, lnop<BF16>());
                run<LB, 8, 1024, 1, 2, 3, true>(a, lnop<BF16>());
                run<LB, 8, 1024, 1, 2, 8, true>(a, lnop<BF16>());
                run<LB, 8, 256, 4, 4, 3, true>(a, lnop<BF16>());
            }
        }
        const Shape b = {"layernorm", 1, 1024, 262144, 2};
        if (pick(only, "B", b, "layernorm_cluster_bf16_v8_c4", 4, 1024)) {
            if (lead) {
                run<LB, 8, 256, 4, 16, 0>(b, lnop<BF16>());
                run<LB, 8, 256, 1, 16, 0>(b, lnop<BF16>());
                run<LB, 8, 256, 1, 16, 3>(b, lnop<BF16>());
                run<LB, 8, 256, 1, 16, 4>(b, lnop<BF16>());
                run<LB, 8, 256, 3, 16, 2>(b, lnop<BF16>());
                run<LB, 8, 256, 3, 16, 3>(b, lnop<BF16>());
                run<LB, 8, 512, 2, 8, 0>(b, lnop<BF16>());
                run<LB, 8, 512, 1, 8, 2>(b, lnop<BF16>());
                run<LB, 8, 512, 1, 8, 3>(b, lnop<BF16>());
            }
            if (pf) {
                run<LB, 8, 1024, 1, 4, 0>(b, lnop<BF16>());
                run<LB, 8, 1024, 1, 4, 2, true>(b, lnop<BF16>());
                run<LB, 8, 1024, 1, 4, 3, true>(b, lnop<BF16>());
                run<LB, 8, 1024, 1, 4, 8, true>(b, lnop<BF16>());
                run<LB, 8, 1024, 1, 4, 0, true, true>(b, lnop<BF16>());
                run<LB, 8, 512, 2, 8, 3, true>(b, lnop<BF16>());
                run<LB, 8, 512, 2, 8, 8, true>(b, lnop<BF16>());
            }
        }
        const Shape c = {"layernorm", 0, 4096, 65536, 2};
        if (pick(only, "C", c, "layernorm_cluster_f32_v8_c2", 2, 1024)) {
            if (lead) {
                run<LF, 8, 128, 1, 16, 0>(c, lnop<F32>());
                run<LF, 8, 128, 1, 16, 4>(c, lnop<F32>());
                run<LF, 8, 128, 1, 16, 8>(c, lnop<F32>());
                run<LF, 8, 256, 4, 8, 0>(c, lnop<F32>());
                run<LF, 8, 256, 1, 8, 0>(c, lnop<F32>());
                run<LF, 8, 256, 1, 8, 3>(c, lnop<F32>());
                run<LF, 8, 256, 3, 8, 3>(c, lnop<F32>());
                run<LF, 8, 256, 1, 8, 8>(c, lnop<F32>());
                run<LF, 8, 512, 1, 4, 0>(c, lnop<F32>());
                run<LF, 8, 512, 1, 4, 3>(c, lnop<F32>());
            }
            if (pf) {
                run<LF, 8, 1024, 1, 2, 0>(c, lnop<F32>());
                run<LF, 8, 1024, 1, 2, 2, true>(c, lnop<F32>());
                run<LF, 8, 1024, 1, 2, 3, true>(c, lnop<F32>());
                run<LF, 8, 1024, 1, 2, 8, true>(c, lnop<F32>());
                run<LF, 8, 256, 4, 8, 3, true>(c, lnop<F32>());
                run<LF, 8, 256, 4, 8, 8, true>(c, lnop<F32>());
            }
        }
        const Shape d = {"layernorm", 0, 1024, 262144, 2};
        if (pick(only, "D", d, "layernorm_cluster_f32_v8_c8", 8, 1024)) {
            if (lead) {
                run<LF, 8, 512, 2, 16, 0>(d, lnop<F32>());
                run<LF, 8, 512, 1, 16, 0>(d, lnop<F32>());
                run<LF, 8, 512, 1, 16, 2>(d, lnop<F32>());
                run<LF, 8, 512, 1, 16, 3>(d, lnop<F32>());
                run<LF, 8, 512, 1, 16, 8>(d, lnop<F32>());
                run<LF, 16, 256, 1, 16, 0>(d, lnop<F32>());
                run<LF, 16, 256, 1, 16, 4>(d, lnop<F32>());
            }
            if (pf) {
                run<LF, 8, 1024, 1, 8, 0>(d, lnop<F32>());
                run<LF, 8, 1024, 1, 8, 2, true>(d, lnop<F32>());
                run<LF, 8, 1024, 1, 8, 3, true>(d, lnop<F32>());
                run<LF, 8, 1024, 1, 8, 8, true>(d, lnop<F32>());
                run<LF, 8, 1024, 1, 8, 0, true, true>(d, lnop<F32>());
                run<LF, 8, 512, 2, 16, 3, true>(d, lnop<F32>());
            }
        }
        const Shape e = {"rmsnorm", 1, 1024, 262144, 1};
        if (pick(only, "E", e, "rmsnorm_cluster_bf16_v8_c4", 4, 1024)) {
            if (lead) {
                run<RB, 8, 256, 4, 16, 0>(e, rmsop<BF16>());
                run<RB, 8, 256, 1, 16, 0>(e, rmsop<BF16>());
                run<RB, 8, 256, 1, 16, 3>(e, rmsop<BF16>());
                run<RB, 8, 256, 3, 16, 3>(e, rmsop<BF16>());
                run<RB, 8, 256, 1, 16, 8>(e, rmsop<BF16>());
                run<RB, 8, 512, 1, 8, 0>(e, rmsop<BF16>());
                run<RB, 8, 512, 1, 8, 3>(e, rmsop<BF16>());
            }
            if (pf) {
                run<RB, 8, 512, 2, 8, 0>(e, rmsop<BF16>());
                run<RB, 8, 512, 2, 8, 3, true>(e, rmsop<BF16>());
                run<RB, 8, 512, 2, 8, 8, true>(e, rmsop<BF16>());
                run<RB, 8, 512, 2, 8, 0, true, true>(e, rmsop<BF16>());
                run<RB, 8, 1024, 1, 4, 0>(e, rmsop<BF16>());
                run<RB, 8, 1024, 1, 4, 3, true>(e, rmsop<BF16>());
                run<RB, 8, 1024, 1, 4, 8, true>(e, rmsop<BF16>());
            }
        }
        const Shape f = {"rmsnorm", 0, 1024, 262144, 1};
        if (pick(only, "F", f, "rmsnorm_cluster_f32_v8_c8", 8, 1024)) {
            if (lead) {
                run<RF, 8, 512, 2, 16, 0>(f, rmsop<F32>());
                run<RF, 8, 512, 1, 16, 0>(f, rmsop<F32>());
                run<RF, 8, 512, 1, 16, 3>(f, rmsop<F32>());
                run<RF, 8, 512, 1, 16, 8>(f, rmsop<F32>());
                run<RF, 16, 256, 1, 16, 0>(f, rmsop<F32>());
                run<RF, 16, 256, 1, 16, 4>(f, rmsop<F32>());
            }
            if (pf) {
                run<RF, 8, 1024, 1, 8, 0>(f, rmsop<F32>());
                run<RF, 8, 1024, 1, 8, 3, true>(f, rmsop<F32>());
                run<RF, 8, 1024, 1, 8, 8, true>(f, rmsop<F32>());
                run<RF, 8, 512, 2, 16, 3, true>(f, rmsop<F32>());
            }
        }
    }
    return 0;
}

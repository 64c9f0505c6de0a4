// cluster-exchange.cu: what does the cluster exchange of a row's statistic cost the cluster kernels (row_cluster
// in kernels/cuda/rowmap.cuh: each block of a cluster of CS holds its part of the row in registers, the blocks'
// statistics meet through distributed shared memory)? A standalone experiment behind the row plans
// (docs/kernels.md). In cluster-ahead.cu, RMSNorm bf16 1024 × 262144 in clusters of 8 × 512 threads ran at 77% of
// the copy on an H200 and at 96% with no exchange at all (each block taking its own part's statistic).
//
// row_cluster's exchange takes two cluster barriers a row (barrier.cluster.arrive/wait with their default
// release/acquire semantics, which ptxas compiles to MEMBAR.ALL.GPU before each arrive and CCTL.IVALL, an L1
// invalidate, after each wait) and a final wait. The variants, X:
//
//   X 0  row_cluster as the suite builds it
//   X 1  each block's thread 0 writes its statistic into every block's shared memory, behind one barrier arrived
//        at when the block starts and waited on before the writes, then one barrier (arrive and wait) after them;
//        the merge reads local shared memory only (row_ring's exchange; PTX 7.8)
//   X 2  the statistics go to every block by st.async, each completing on the receiving block's mbarrier
//        (PTX 8.1, CUDA 12.4 or later): one relaxed barrier arrived at when the block starts and waited on before
//        the writes (the mbarriers are initialized), no fence, no L1 invalidate after it
//   X 3  no exchange: each block takes its own part's statistic (wrong outputs, not checked): the ceiling
//
// The suite's cluster kernel from the committed PTX writes the reference output; every other output but X 3's is
// compared with it (experiment.cuh).
//
// Results (NVIDIA H200, 2026-11-27, driver 580.159.04, the program's cold pct-copy, two rounds, X 0 / 1 / 2 / 3):
//   - RMSNorm bf16 1024×262144, 8 × 512: 78.3–78.4 / 78.8–79.0 / 88.1–88.2 / 96.3–96.4; 4 × 1024: 80.7–81.0 /
//     77.3–77.4 / 84.5 / 87.4–87.5; 16 × 256: 73.6–73.7 / 75.5–75.7 / 82.5–82.9 / 98.2–98.3.
//   - RMSNorm fp32 1024×262144, 8 × 1024: 64.3–64.6 / 64.0–64.2 / 69.4–69.9 / 75.8–76.3; 16 × 512: 64.5–64.7 /
//     66.3–67.0 / 69.7–70.2 / 75.1–75.2.
//   - LayerNorm bf16 1024×262144, 4 × 1024: 73.1–73.3 / 72.1–72.2 / 77.3–77.6 / 79.9–80.2; 8 × 512: 71.7–71.8 /
//     73.4–73.8 / 80.9–81.1 / 89.6–89.7.
//   - LayerNorm fp32 1024×262144, 8 × 1024: 61.1 / 64.1–64.2 / 69.6–69.8 / 73.4–73.7.
//   - LayerNorm bf16 4096×65536, 2 × 512: 79.5–79.7 / 79.5–80.7 / 88.8–88.9 / 95.5–95.7; 4 × 256: 79.3–79.4 /
//     80.2–80.6 / 88.3–88.6 / 96.5–96.7.
// The barriers' release and acquire (X 0, X 1) compile to MEMBAR.ALL.GPU before each arrive and CCTL.IVALL after
// each wait; X 2 keeps one CCTL.IVALL (the start barrier's wait) and no MEMBAR. The suite builds X 2 as the
// _x_sm90a modules' cluster kernels (kernels/cuda/xasync.cuh).
//
// Build with CUDA 12.4 or later (st.async; the GPU host's nvcc) and run from the repository root:
//   nvcc -O3 -arch=sm_90 -o cluster-exchange scripts/experiments/cluster-exchange.cu -lcuda
//   ./cluster-exchange kernels/cuda/ptx [ABCDE]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"

static CUmodule rms90;  // rmsnorm_sm90.ptx: RMSNorm's cluster kernels (setup loads the compute_75 module)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned sh_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned sh_map(unsigned a, unsigned rank) {
    unsigned d;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(rank));
    return d;
}
#endif

template <class Op, int NV, int T, int MB, int CS, int XM>
__global__ void __launch_bounds__(T, MB) cx(Op op, const typename Op::T* __restrict__ x,
                                            typename Op::T* __restrict__ y, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (XM == 0) {
        row_cluster<Op, NV, CS>(op, x, y, cols);
        return;
    }
    typedef Pack<typename Op::S, true> P;
    __shared__ RowStat red[32];
    __shared__ __align__(8) RowStat parts[CS];
    __shared__ __align__(8) unsigned long long mbar;
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    if (XM == 2) {
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sh_addr(&mbar)) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    }
    if (XM == 1) asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
    const long long row = blockIdx.x / CS;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, (long long)rank, c);
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
    RowStat t = s;
    if (XM == 1) {
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every block has started
        if (threadIdx.x == 0) {
            cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
#pragma unroll
            for (int i = 0; i < CS; i++) *cl.map_shared_rank(&parts[rank], i) = s;
        }
        asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
    }
    if (XM == 2) {
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every block's mbarrier is initialized
        const unsigned mb = sh_addr(&mbar);
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(mb), "r"(CS * 8) : "memory");
            const unsigned pa = sh_addr(&parts[rank]);
#pragma unroll
            for (int i = 0; i < CS; i++)
                asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
                                 sh_map(pa, i)),
                             "f"(s.a), "f"(s.b), "r"(sh_map(mb, i))
                             : "memory");
        }
        unsigned done = 0;
        do {
            asm volatile(
                "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                : "=r"(done)
                : "r"(mb)
                : "memory");
        } while (!done);
    }
    if (XM == 1 || XM == 2) {
        t = parts[0];
#pragma unroll
        for (int i = 1; i < CS; i++) t = op.merge(t, parts[i]);
    }
    row_chunk_store<Op, true, NV>(op, v, kv, y + row * cols, c, op.finish(t, cols, ctx));
#endif
}

// run times cx over shape s: a cluster of CS blocks of T threads a row.
template <class Op, int NV, int T, int MB, int CS, int XM>
static void run(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    typedef Pack<typename Op::S, true> P;
    auto k = cx<Op, NV, T, MB, CS, XM>;
    ClusterLaunch cl(k, CS, T, 0, (unsigned)(CS * s.rows));
    int ncl = 0;
    CK(cudaOccupancyMaxActiveClusters(&ncl, k, &cl.cfg));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, k));
    char name[160];
    snprintf(name, sizeof name, "X%d NV%d t=%d mb=%d c=%d (%d regs, %d B local, %d clusters)", XM, NV, T, MB, CS,
             a.numRegs, (int)a.localSizeBytes, ncl);
    if ((long long)CS * NV * T * P::E < s.cols || ncl == 0) {
        printf("  %-58s does not cover the row or fit\n", name);
        return;
    }
    auto launch = [&] { CK(cudaLaunchKernelEx(&cl.cfg, k, op, (const TT*)X, (TT*)Y, s.cols)); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = XM == 3 ? -1.0f : check(s, name);
    report(s, name, launch, rel);
}

template <class Op, int NV, int T, int MB, int CS>
static void all(const Shape& s, const Op& op) {
    run<Op, NV, T, MB, CS, 0>(s, op);
    run<Op, NV, T, MB, CS, 1>(s, op);
    run<Op, NV, T, MB, CS, 2>(s, op);
    run<Op, NV, T, MB, CS, 3>(s, op);
}

// pick prepares shape s when only is empty or names letter, and has the suite's cluster kernel (compile-time
// clusters of cs blocks of t threads) write REF.
static bool pick(const char* only, const char* letter, const Shape& s, const char* kernel, int cs, int t) {
    if (*only && !strstr(only, letter)) return false;
    prepare(s);
    suite(s, kernel, t, true, cs, s.family[0] == 'r' ? rms90 : lnMod);
    return true;
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    setup(dir);
    CU(cuModuleLoad(&rms90, (std::string(dir) + "/rmsnorm_sm90.ptx").c_str()));
    typedef LayerNormOp<BF16> LB;
    typedef LayerNormOp<F32> LF;
    typedef RMSNormOp<BF16> RB;
    typedef RMSNormOp<F32> RF;
    for (int rep = 0; rep < 2; rep++) {
        const Shape a = {"rmsnorm", 1, 1024, 262144, 1};
        if (pick(only, "A", a, "rmsnorm_cluster_bf16_v8_c4", 4, 1024)) {
            all<RB, 8, 512, 2, 8>(a, rmsop<BF16>());
            all<RB, 8, 1024, 1, 4>(a, rmsop<BF16>());
            all<RB, 8, 256, 4, 16>(a, rmsop<BF16>());
        }
        const Shape b = {"rmsnorm", 0, 1024, 262144, 1};
        if (pick(only, "B", b, "rmsnorm_cluster_f32_v8_c8", 8, 1024)) {
            all<RF, 8, 1024, 1, 8>(b, rmsop<F32>());
            all<RF, 8, 512, 2, 16>(b, rmsop<F32>());
        }
        const Shape c = {"layernorm", 1, 1024, 262144, 2};
        if (pick(only, "C", c, "layernorm_cluster_bf16_v8_c4", 4, 1024)) {
            all<LB, 8, 1024, 1, 4>(c, lnop<BF16>());
            all<LB, 8, 512, 2, 8>(c, lnop<BF16>());
        }
        const Shape d = {"layernorm", 0, 1024, 262144, 2};
        if (pick(only, "D", d, "layernorm_cluster_f32_v8_c8", 8, 1024)) {
            all<LF, 8, 1024, 1, 8>(d, lnop<F32>());
        }
        const Shape e = {"layernorm", 1, 4096, 65536, 2};
        if (pick(only, "E", e, "layernorm_cluster_bf16_v8_c2", 2, 512)) {
            all<LB, 8, 512, 2, 2>(e, lnop<BF16>());
            all<LB, 8, 256, 4, 4>(e, lnop<BF16>());
        }
    }
    return 0;
}

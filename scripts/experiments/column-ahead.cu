// column-ahead.cu: what do a norm's column data (LayerNorm's w and b, RMSNorm's w) cost the one-block-a-row
// kernels at 4096 and 16384 columns, where Softmax, over the same row_block and without column data, runs 3–4
// points of the copy faster on an H200? A standalone experiment behind the row plans (docs/kernels.md).
//
// row_block (kernels/cuda/rowmap.cuh) loads a pack's column data just before the pack's store; the compiler cannot
// tell that w and y do not alias, so it keeps each load behind the previous pack's store, and a thread's NV column
// round trips run one after another. blk below is row_block with the column loads placed by CM:
//
//   CM 0  as row_block: each pack's columns just before its store
//   CM 1  every pack's columns in registers before the row's statistic is merged
//   CM 2  each pack's columns two packs ahead of its store, the first two before the merge
//   CM 3  staged in shared memory by cp.async.ca together with the row's loads, read from there for the stores
//   CM 4  none: w = 1, b = 0 (no longer the Op: the output is not checked; the ceiling the column data leaves)
//   CM 5  loaded just before the store as CM 0, but prefetched into L1 (prefetch.global.L1, no register) D packs
//         ahead, the first D before the merge
//   CM 6  the same with every pack's prefetched before the merge
//
// each under the suite's launch bounds (1024 threads, one block: at most 64 registers) or, LB, the launch's own
// block size (more registers, fewer blocks a multiprocessor). The suite's kernel from the committed PTX writes
// the reference output and is timed beside them; every other output but CM 4's is compared with it (experiment.cuh).
//
// Results (2026-11-27, driver 580.159.04; the program's cold pct-copy, two rounds; NVIDIA H200 / NVIDIA H100 80GB
// HBM3; the suite's kernel first):
//   - LayerNorm bf16 32768×4096, 64 threads: suite 92.4–93.5 / 95.7–95.8; CM 2 ahead 2 95.8–96.2 / 96.8–97.0,
//     ahead 3 97.0–97.2 / 97.4–97.6, ahead 4 97.4–97.5 / 97.2–97.3; CM 1 94.9–95.0 / 97.8–98.0; CM 3 84.3–84.4;
//     CM 4 (no columns) 97.2–97.4 / 97.7–97.8. Under the 1024-thread bounds CM 2 spilled: 85.9–86.3 / 86.1–86.2.
//   - LayerNorm bf16 8192×16384, 256 threads: suite 94.0–94.6 / 96.2–96.3; ahead 2 95.8–96.2 / 97.2, ahead 3
//     96.6–96.7 / 97.6–97.7, ahead 4 88.9–89.2 / 97.5–97.6 (two blocks a multiprocessor); CM 4 97.1–97.2 / 98.1.
//   - RMSNorm bf16 8192×16384, 256 threads: suite (its team of one) 94.5–95.0 / 97.2–97.5; CM 0 over RMSNormOp
//     96.5–96.9 / 97.8; ahead 3 97.9 / 98.4; CM 4 98.6–98.8 / 99.0.
//   - RMSNorm bf16 32768×4096, 64 threads: suite 96.2–96.6 / 97.1–97.4; ahead 2 97.9–98.1 / 97.9.
//   - LayerNorm fp32 32768×4096, 128 threads: suite 93.4–94.5 / 98.5–98.8; CM 1 (all 8 ahead) 101.1–101.5 /
//     100.2–100.3; ahead 3 99.6–99.8 / 99.9–100.1.
//   - RMSNorm fp32 32768×4096, 128 threads: suite 99.8–99.9 / 98.5–99.0; CM 1 100.1–100.2 / 99.8.
//   - The L1 prefetches (CM 5, 6) lost under the suite's bounds, whatever D (NVIDIA H200, 2026-11-27): LayerNorm bf16
//     4096 74.1–74.8 (CM 0 93.0), 16384 83.6–85.5 (94.1), fp32 4096 80.7–81.1 (93.3). Each CCTL.E.PF1 costs more
//     than the round trip it is meant to hide.
// The figures were taken with this program's own copies of the CM 0–2 loops, since moved into rowmap.cuh as
// row_block_lead (which blk now calls); the modules build the chosen ones as the _blocka_ kernels (rowplan.go's
// rowLead).
//
// Build PTX alone (CUDA 11.8 or later), so that the driver compiles it as it compiles the suite's modules, and run
// on the GPU host from the repository root:
//   nvcc -O3 -gencode arch=compute_90,code=compute_90 -o column-ahead scripts/experiments/column-ahead.cu -lcuda
//   ./column-ahead kernels/cuda/ptx [ABCDEF]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void ca_cp16(void* smem, const void* gmem) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
#endif

template <class Op, class P>
__device__ __forceinline__ typename Op::template Col<P> unit_col() {
    typename Op::template Col<P> k;
    uint4* d = reinterpret_cast<uint4*>(&k);
    for (int i = 0; i < (int)(sizeof k / 16); i++) d[i] = make_uint4(0, 0, 0, 0);
    P* q = reinterpret_cast<P*>(&k);  // w first (LayerNormOp's and RMSNormOp's Col)
#pragma unroll
    for (int j = 0; j < P::E; j++) q->set(j, 1.0f);
    return k;
}

// blk_cols is blk for CM 3–6, which the modules do not build.
template <class Op, int NV, int CM, int D = 2>
__device__ __forceinline__ void blk_cols(const Op& op, const typename Op::T* __restrict__ x,
                                         typename Op::T* __restrict__ y, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    typedef Pack<typename Op::S, true> P;
    typedef typename Op::template Col<P> C;
    enum { W = sizeof(C) / 16 };
    extern __shared__ uint4 ca_cols[];
    __shared__ RowStat red[32];
    const long long row = blockIdx.x;
    const typename Op::T* xr = x + row * cols;
    typename Op::Ctx ctx = op.context(xr);
    P v[NV];
    long long c;
    const int kv = row_chunk_load<P, NV>(v, xr, cols, 0, c);
    const int step = blockDim.x * P::E, T = blockDim.x, tid = threadIdx.x;
    if (CM == 3) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (k < kv) {
#pragma unroll
                for (int i = 0; i < W; i++)  // word i of pack k: vector i's pack (Col<P> holds w, then b)
                    ca_cp16(&ca_cols[(k * W + i) * T + tid], colvec(op, i) + c + (long long)k * step);
            }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    if (CM == 5 || CM == 6) {
#pragma unroll
        for (int k = 0; k < (CM == 6 ? NV : D) && k < NV; k++)
            if (k < kv) col_prefetch<Op, P>(op, c + (long long)k * step);
    }
    const RowStat s = block_merge(op, op.template local<P, NV>(v, kv, ctx), red);
    const typename Op::Fin f = op.finish(s, cols, ctx);
    if (CM == 3) asm volatile("cp.async.wait_all;" ::: "memory");
    typename Op::T* yr = y + row * cols;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (k < kv) {
            const long long ck = c + (long long)k * step;
            C cv;
            if (CM == 3) {
                uint4* d = reinterpret_cast<uint4*>(&cv);
#pragma unroll
                for (int i = 0; i < W; i++) d[i] = ca_cols[(k * W + i) * T + tid];
            }
            if (CM == 4) cv = unit_col<Op, P>();
            if (CM == 5 && k + D < NV && k + D < kv) col_prefetch<Op, P>(op, ck + (long long)D * step);
            if (CM >= 5) cv = op.template column<P>(ck);
            float o[P::E];
            op.apply(v[k], cv, f, o);
            rm_store<typename Op::S, true, true>(o, yr + ck);
        }
    }
#endif
}

// blk is row_block with the column loads placed by CM (the top of the file): CM 0–2 the suite's templates
// (row_block; row_block_lead with all NV packs ahead, or D), CM 3 and 4 blk_cols.
template <class Op, int NV, int CM, int D = 2>
__device__ __forceinline__ void blk(const Op& op, const typename Op::T* __restrict__ x, typename Op::T* __restrict__ y,
                                    long long cols) {
    if (CM == 0) row_block<Op, true, NV>(op, x, y, cols);
    if (CM == 1) row_block_lead<Op, NV, NV>(op, x, y, cols);
    if (CM == 2) row_block_lead<Op, NV, D>(op, x, y, cols);
    if (CM >= 3) blk_cols<Op, NV, CM, D>(op, x, y, cols);
}

template <class Op, int NV, int CM, int D>
__global__ void __launch_bounds__(1024, 1) blk_1024(Op op, const typename Op::T* __restrict__ x,
                                                   typename Op::T* __restrict__ y, long long cols) {
    blk<Op, NV, CM, D>(op, x, y, cols);
}
template <class Op, int NV, int CM, int T, int D>
__global__ void __launch_bounds__(T) blk_t(Op op, const typename Op::T* __restrict__ x, typename Op::T* __restrict__ y,
                                          long long cols) {
    blk<Op, NV, CM, D>(op, x, y, cols);
}

// run times one blk variant over shape s in blocks of T threads (LB: bounds of T, else of 1024).
template <class Op, int NV, int CM, int T, bool LB, int D = 2>
static void run(const Shape& s, const Op& op) {
    typedef typename Op::T TT;
    typedef Pack<typename Op::S, true> P;
    auto k = LB ? blk_t<Op, NV, CM, T, D> : blk_1024<Op, NV, CM, D>;
    const int smem = CM == 3 ? (int)(T * NV * sizeof(typename Op::template Col<P>)) : 0;
    if (smem > 48 * 1024) CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, k));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T, smem));
    auto launch = [&] { k<<<(unsigned)s.rows, T, smem>>>(op, (const TT*)X, (TT*)Y, s.cols); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    const float rel = CM == 4 ? -1.0f : check(s, "blk");
    char name[160];
    snprintf(name, sizeof name, "blk CM%d%s t=%d %s (%d regs, %d B local, %d blocks/SM)", CM,
             (CM == 2 || CM == 5) && D != 2 ? (D == 3 ? " D3" : D == 4 ? " D4" : " D8") : "", T, LB ? "LB" : "1024", a.numRegs,
             (int)a.localSizeBytes, per);
    report(s, name, launch, rel);
}

template <class Op, int T>
static void all(const Shape& s, const Op& op) {
    run<Op, 8, 0, T, false>(s, op);
    run<Op, 8, 0, T, true>(s, op);
    run<Op, 8, 2, T, false>(s, op);
    run<Op, 8, 2, T, true>(s, op);
    run<Op, 8, 2, T, true, 3>(s, op);
    run<Op, 8, 2, T, true, 4>(s, op);
    run<Op, 8, 1, T, true>(s, op);
    run<Op, 8, 4, T, false>(s, op);
    run<Op, 8, 5, T, false>(s, op);
    run<Op, 8, 5, T, false, 3>(s, op);
    run<Op, 8, 5, T, false, 4>(s, op);
    run<Op, 8, 6, T, false>(s, op);
}

// shape times the suite's kernel (in blocks of T threads, its output the reference) and every blk variant over
// shape s, when only is empty or names letter.
template <class Op, int T>
static void shape(const char* only, const char* letter, const Shape& s, const char* kernel, const Op& op) {
    if (*only && !strstr(only, letter)) return;
    prepare(s);
    suite(s, kernel, T, true);
    suite(s, kernel, T, false);
    all<Op, T>(s, op);
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    setup(dir);
    for (int rep = 0; rep < 2; rep++) {
        shape<LayerNormOp<BF16>, 64>(only, "A", {"layernorm", 1, 32768, 4096, 2}, "layernorm_block_bf16_v8",
                                     lnop<BF16>());
        shape<LayerNormOp<BF16>, 256>(only, "B", {"layernorm", 1, 8192, 16384, 2}, "layernorm_block_bf16_v8",
                                      lnop<BF16>());
        shape<RMSNormOp<BF16>, 256>(only, "C", {"rmsnorm", 1, 8192, 16384, 1}, "rmsnorm_team_bf16_v8", rmsop<BF16>());
        shape<RMSNormOp<BF16>, 64>(only, "D", {"rmsnorm", 1, 32768, 4096, 1}, "rmsnorm_team_bf16_v8", rmsop<BF16>());
        shape<LayerNormOp<F32>, 128>(only, "E", {"layernorm", 0, 32768, 4096, 2}, "layernorm_block_f32_v8",
                                     lnop<F32>());
        shape<RMSNormOp<F32>, 128>(only, "F", {"rmsnorm", 0, 32768, 4096, 1}, "rmsnorm_team_f32_v8", rmsop<F32>());
    }
    return 0;
}

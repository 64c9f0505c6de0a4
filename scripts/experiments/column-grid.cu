// column-grid.cu: do blocks that own columns instead of rows (row_grid, kernels/cuda/rowgrid.cuh) take the widest
// rows closer to the copy than the rings and clusters of the row plans? A standalone experiment behind the row
// plans (docs/kernels.md).
//
// row_grid: every block resident (a cooperative launch), in G groups of P blocks; a group takes every G-th row,
// each block the same slice of every row, its column data in registers once; a row's P partial statistics meet in
// global memory, tagged by launch, and are waited for L steps after they were made, while D − L − 1 rows of loads
// are in flight in each block's ring.
//
// Each shape: the reference output from a suite kernel (the committed PTX) or rms_ref, then row_grid over the
// suite's Op in the layouts below, each also timed with the exchange switched off (ROW_GRID_STATS: the output is then
// wrong, and not checked) to tell the exchange's cost from the stream's. Every output is compared with the reference
// (experiment.cuh's check); timing as resident-columns.cu; "late/step" counts the merges whose slots were not all
// there when first looked at.
//
// Results (2026-11-27, driver 580.159.04; the program's cold pct-copy):
//   - The first builds (slices of 4–24 KiB a block a row, groups of 11–132 blocks) ran at 11–63% on an H200, about
//     2–3 µs a step whatever its bytes, and as slowly with the exchange switched off: the stream, not the exchange.
//     Nsight Compute (LayerNorm bf16 1024×262144, 6 groups of 22): issue slots 41% busy, 615 instructions a warp a
//     step, stalls on the block barrier first (2.7 cycles an instruction of 9.8), DRAM 41% of peak. Ring slots and
//     rows stepped instead of divided (64-bit remainders), warp 0's merge moved after the barrier: 58–62% for the
//     same layouts, still at about a microsecond a step beside the bytes.
//   - Slices of 32 KiB (4 packs × 512 threads; the layouts below) hide it. H100 / H200: Softmax fp32 1024×262144
//     (4 × 33) 95.5 / 91.8%, 4096×65536 (16 × 8) 94.8 / 95.3%, bf16 1024×262144 (8 × 16) 94.2 / 70.4%;
//     LayerNorm fp32 1024×262144 91.7 / 83.4%, 4096×65536 94.3 / 87.4%, bf16 81.8 / 63.9% and 81.4 / 63.4%;
//     RMSNorm fp32 90.0 / 86.2% and 92.9 / 90.9%, bf16 92.4 / 87.7% and 89.9 / 86.8%; Softmax bf16 4096×65536
//     92.5 / 70.3%. With the exchange switched off they ran from 5.5 points slower to 3.2 faster: the exchange is
//     not what holds the slower of them back. TestCUDARowTune's figures, and which rows take it, are
//     in kernels/rowgrid.go.
//
// Build PTX alone (CUDA 11.8 or later), so that the driver compiles it as it compiles the suite's modules, and run
// on the GPU host from the repository root:
//   nvcc -O3 -gencode arch=compute_90,code=compute_90 -o column-grid scripts/experiments/column-grid.cu -lcuda
//   ./column-grid kernels/cuda/ptx [ABCDEFG]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"
#define ROW_GRID_STATS
#include "../../kernels/cuda/rowgrid.cuh"

template <class M, int T, int NP, int BPS, int NS, int K>
__global__ void __launch_bounds__(T, BPS) grid_kernel(M m, const typename M::T* __restrict__ x,
                                                      typename M::T* __restrict__ y, long long rows, long long cols,
                                                      int groups, int lag, GridSlot* slots, unsigned* ctl) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    RowMapDSMEM<M> op{m, x, y, cols};
    row_grid<RowMapDSMEM<M>, NP, NS, K>(op, x, rows, cols, groups, lag, slots, ctl);
#endif
}

static GridSlot* Slots;
static unsigned* Ctl;
static const long long SLOT_BYTES = 64ll << 20;

// grid times row_grid over M for shape s: BPS blocks of T threads a multiprocessor in G groups, a ring of D rows,
// lag L.
template <class M, int T, int NP, int BPS, int NS, int K>
static void grid(const Shape& s, const M& m, int G, int D, int L) {
    typedef typename M::T TT;
    auto k = grid_kernel<M, T, NP, BPS, NS, K>;
    const int smem = D * T * NP * 16;
    const int nblk = SMS * BPS / G * G, np = nblk / G;  // (a multiple of G: some multiprocessors may idle)
    const long long packs = s.cols / (16 / (s.bf16 ? 2 : 4)), per = (packs + np - 1) / np;
    char name[140];
    snprintf(name, sizeof name, "row_grid T=%d NP=%d %d/SM G=%d P=%d D=%d L=%d K=%d", T, NP, BPS, G, np, D, L, K);
    if (np > 32 * NS || L < K + 1 || per > T * NP || smem > 227 * 1024 || D < L + 3 || s.rows * np * 16 > SLOT_BYTES) {
        printf("  %-58s does not fit (per %lld, %d KiB)\n", name, per, smem / 1024);
        return;
    }
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int occ;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, T, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    if (occ < BPS) {
        printf("  %-58s does not fit (%d/SM, %d regs)\n", name, occ, fa.numRegs);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeCooperative;
    at[0].val.cooperative = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    cfg.blockDim = dim3(T);
    cfg.gridDim = dim3(nblk);
    cfg.dynamicSmemBytes = smem;
    auto launch = [&] {
        CK(cudaLaunchKernelEx(&cfg, k, m, (const TT*)X, (TT*)Y, s.rows, s.cols, G, L, Slots, Ctl));
    };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    CK(cudaMemset(Ctl + 2, 0, sizeof(unsigned)));
    launch();
    CK(cudaDeviceSynchronize());
    unsigned late;
    CK(cudaMemcpy(&late, Ctl + 2, sizeof late, cudaMemcpyDeviceToHost));
    char full[180];
    snprintf(full, sizeof full, "%s (%d regs, %.2f late/step)", name, fa.numRegs,
             late / (double)(nblk * ((s.rows + G - 1) / G)));
    const float rel = check(s, full);
    report(s, full, launch, rel);
    const unsigned one = 1, zero = 0;
    CK(cudaMemcpy(Ctl + 3, &one, sizeof one, cudaMemcpyHostToDevice));
    report(s, "    the same without the exchange (output wrong)", launch);
    CK(cudaMemcpy(Ctl + 3, &zero, sizeof zero, cudaMemcpyHostToDevice));
}

int main(int argc, char** argv) {
    if (argc < 2) {
        printf("usage: column-grid PTXDIR [letters]\n");
        return 2;
    }
    setup(argv[1]);
    CK(cudaMalloc(&Slots, SLOT_BYTES));
    CK(cudaMemset(Slots, 0, SLOT_BYTES));
    CK(cudaMalloc(&Ctl, 4 * sizeof(unsigned)));
    CK(cudaMemset(Ctl, 0, 4 * sizeof(unsigned)));
    const char* only = argc > 2 ? argv[2] : "";
    typedef LayerNormOp<BF16> LN;
    typedef LayerNormOp<F32> LN32;
    typedef RMSNormOp<BF16> RMS;
    typedef RMSNormOp<F32> RMS32;
    typedef SoftmaxOp<BF16> SM;
    typedef SoftmaxOp<F32> SM32;
    for (int round = 0; round < 1; round++) {
        if (!*only || strstr(only, "A")) {  // H200 baseline 66.5% (cluster 8 × 512), H100 80.3%
            Shape s = {"layernorm", 1, 1024, 262144, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 1024, true);
            grid<LN, 512, 3, 1, 1, 2>(s, lnop<BF16>(), 6, 9, 3);
            grid<LN, 512, 4, 1, 1, 2>(s, lnop<BF16>(), 8, 7, 3);
            grid<LN, 256, 4, 2, 1, 2>(s, lnop<BF16>(), 16, 3, 3);
        }
        if (!*only || strstr(only, "B")) {  // H200 baseline 75.5% (ring 16 × 256), H100 87.0%
            Shape s = {"layernorm", 0, 1024, 262144, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            grid<LN32, 512, 4, 1, 2, 2>(s, lnop<F32>(), 4, 7, 3);
            grid<LN32, 1024, 2, 1, 2, 2>(s, lnop<F32>(), 4, 7, 3);
        }
        if (!*only || strstr(only, "C")) {  // H200 baselines: fp32 87.0% (ring), bf16 85.7% (ring2)
            Shape s = {"rmsnorm", 0, 1024, 262144, 1};
            prepare(s);
            rmsref<F32>(s);
            grid<RMS32, 512, 4, 1, 2, 2>(s, rmsop<F32>(), 4, 7, 3);
            Shape b = {"rmsnorm", 1, 1024, 262144, 1};
            prepare(b);
            rmsref<BF16>(b);
            grid<RMS, 512, 4, 1, 1, 2>(b, rmsop<BF16>(), 8, 7, 3);
        }
        if (!*only || strstr(only, "D")) {  // H200 baselines: fp32 86.6% (ring 16 × 256), bf16 70.8%
            Shape s = {"softmax", 0, 1024, 262144, 0};
            prepare(s);
            suite(s, "softmax_loop_f32_v", 1024, true);
            grid<SM32, 512, 4, 1, 2, 2>(s, SM32(), 4, 7, 3);
            Shape b = {"softmax", 1, 1024, 262144, 0};
            prepare(b);
            suite(b, "softmax_loop_bf16_v", 1024, true);
            grid<SM, 512, 4, 1, 1, 2>(b, SM(), 8, 7, 3);
            grid<SM, 1024, 2, 1, 1, 2>(b, SM(), 8, 7, 3);  // twice the warps (60 registers, no spills), not yet timed
        }
        if (!*only || strstr(only, "E")) {  // H200 baselines: LayerNorm fp32 86.2%, bf16 90.7%
            Shape s = {"layernorm", 0, 4096, 65536, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            grid<LN32, 512, 4, 1, 1, 2>(s, lnop<F32>(), 16, 7, 3);
            Shape b = {"layernorm", 1, 4096, 65536, 2};
            prepare(b);
            suite(b, "layernorm_loop_bf16_v", 1024, true);
            grid<LN, 512, 4, 1, 1, 2>(b, lnop<BF16>(), 32, 7, 3);
        }
        if (!*only || strstr(only, "F")) {  // H200 baselines: Softmax fp32 90.9%, bf16 91.7%
            Shape s = {"softmax", 0, 4096, 65536, 0};
            prepare(s);
            suite(s, "softmax_loop_f32_v", 1024, true);
            grid<SM32, 512, 4, 1, 1, 2>(s, SM32(), 16, 7, 3);
            Shape b = {"softmax", 1, 4096, 65536, 0};
            prepare(b);
            suite(b, "softmax_loop_bf16_v", 1024, true);
            grid<SM, 512, 4, 1, 1, 2>(b, SM(), 32, 7, 3);
        }
        if (!*only || strstr(only, "G")) {  // H200 baselines: RMSNorm fp32 65536 (at goal), bf16 65536 93.6%
            Shape s = {"rmsnorm", 0, 4096, 65536, 1};
            prepare(s);
            rmsref<F32>(s);
            grid<RMS32, 512, 4, 1, 1, 2>(s, rmsop<F32>(), 16, 7, 3);
            Shape b = {"rmsnorm", 1, 4096, 65536, 1};
            prepare(b);
            rmsref<BF16>(b);
            grid<RMS, 512, 4, 1, 1, 2>(b, rmsop<BF16>(), 32, 7, 3);
        }
    }
    return 0;
}

// shared-ahead.cu: does a resident team that loads its next row into shared memory, while it reduces and stores
// the row in its registers, take the rows one team a multiprocessor holds (bf16 rows of 128 KiB) and the rows
// where row_res already runs close to the copy? A standalone experiment behind the row plans (docs/kernels.md).
//
// row_res (kernels/cuda/rowres.cuh) holds a row in registers; with its next row ahead (PF) it needs a second set
// of registers, so a bf16 row of 128 KiB (65536 columns) gets none: 512 threads of 16 packs or 1024 of 8 are one
// team a multiprocessor, which loads, then reduces, then stores, and its loads wait for its stores. With PF 2 it
// keeps the next row in shared memory instead: each thread copies its own packs of the team's next row there by
// cp.async (as row_ring fills its ring: no barrier, a thread's commit groups are its full bits) as soon as it has
// read this row's packs from there into registers, so the next row's loads are in flight during this row's
// reduction, exchange and stores, at the cost of one read of shared memory an element. (This program was first
// written with its own copy of that loop, row_res_sa, which became rowres.cuh's PF 2; the figures below are from
// that copy.)
//
// Each shape: the reference output from a suite kernel (the committed PTX), the plan chosen now (as the suite
// launches it, or the same template built here), and row_res with PF 2. Every output is compared with the reference
// (experiment.cuh's check); timing as resident-columns.cu.
//
// Results (2026-11-27, driver 580.159.04; the program's cold pct-copy, two rounds; the plans then chosen in
// brackets; TestCUDARowTune's figures for the kernels the modules build are in kernels/rowres.go):
//   - H200: Softmax bf16 4096×65536 16 packs × 512 threads 91.6–92.4% (the block of 1024: 86.7–86.9; row_res
//     without the next row 89.7–89.8); LayerNorm bf16 4096×65536 8 × 1024 90.8–92.0% (row_res 87.9–88.1);
//     LayerNorm fp32 8192×16384 8 × 512 95.9–96.3% (the block of 512: 94.2–94.7). H100: 93.2%, 93.6 and 89.1%,
//     95.6–95.7% (92.5–92.6, 91.9–92.2, 98.3–98.6).
//   - Not there: LayerNorm bf16 8192×16384 (H200 92.3–92.5% against 92.2–92.3 for row_res with the next row in
//     registers), RMSNorm bf16 8192×16384 (92.0% at best against 94.7–95.1 for the block), LayerNorm bf16 32768×4096
//     in teams of 64–256 (90.0–91.0 against 85.8–86.4 here, but 90.2 against 92.6% in TestCUDARowTune).
//   - SoftmaxOpH's fp16 exponentials add 0.1–0.4 points here on the H200 and 0.6–1.1 on the H100.
//   - A prefetch of the row after the next into L2 (prefetch.global.L2, a line per 8 lanes) costs 5–25 points.
//   - A row over a cluster of 2–16 such blocks, each its slice in registers and the next slice in shared memory
//     (row_res_cluster, PF 2; letters G–K), lost to every chosen plan on the H200: LayerNorm fp32 4096×65536
//     83.4–84.1% (ring2e 86.0), Softmax fp32 83.8% (ring 90.8), 1024×262144 RMSNorm fp32 67.1–67.2% (ring 86.5),
//     bf16 76.3% (ring2 85.4), LayerNorm fp32 62.4–63.5% (ring 75.2), bf16 72.0–72.3% (cluster 66.5: the one
//     gain, far from the goal), Softmax fp32 72.9–73.0% (ring 86.6), bf16 71.3–71.5% (ring 71.4).
//
// Build PTX alone (CUDA 11.8 or later), so that the driver compiles it as it compiles the suite's modules, and run
// on the GPU host from the repository root:
//   nvcc -O3 -gencode arch=compute_90,code=compute_90 -o shared-ahead scripts/experiments/shared-ahead.cu -lcuda
//   ./shared-ahead kernels/cuda/ptx [ABCDEFGHIJK]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"
#include "softmax_half.cuh"
#include "../../kernels/cuda/rowring.cuh"

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    setup(dir);
    typedef SoftmaxOp<BF16> SM;
    typedef SoftmaxOpH SH;
    typedef LayerNormOp<BF16> LN;
    typedef LayerNormOp<F32> LN32;
    typedef RMSNormOp<BF16> RMS;
    typedef RMSNormOp<F32> RMS32;
    typedef SoftmaxOp<F32> SM32;
    for (int rep = 0; rep < 2; rep++) {
        if (!*only || strstr(only, "A")) {  // H200 baseline 86.5% (the block of 1024 threads), H100 92.6%
            Shape s = {"softmax", 1, 4096, 65536, 0};
            prepare(s);
            suite(s, "softmax_loop_bf16_v", 1024, true);
            suite(s, "softmax_block_bf16_v8", 1024, false);
            res<SH, 16, 512, 1, 0, 0>(s, SH());
            res<SM, 16, 512, 1, 0, 2>(s, SM());
            res<SH, 16, 512, 1, 0, 2>(s, SH());
            res<SM, 8, 1024, 1, 0, 2>(s, SM());
        }
        if (!*only || strstr(only, "B")) {  // H200 baseline 87.3% (row_res 1 × 1024, w and b from L2), H100 93.0%
            Shape s = {"layernorm", 1, 4096, 65536, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 1024, true);
            res<LN, 8, 1024, 1, 0, 0>(s, lnop<BF16>());
            res<LN, 8, 1024, 1, 0, 2>(s, lnop<BF16>());
        }
        if (!*only || strstr(only, "C")) {  // H200 baseline 92.0% (row_res 4 × 512, staged, ahead), H100 93.6%
            Shape s = {"layernorm", 1, 8192, 16384, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 256, true);
            res<LN, 4, 512, 1, 1, 1>(s, lnop<BF16>());
            res<LN, 4, 512, 1, 1, 2>(s, lnop<BF16>());
            res<LN, 4, 512, 1, 0, 2>(s, lnop<BF16>());
        }
        if (!*only || strstr(only, "D")) {  // H200 baseline 94.5% (the block of 256 threads), H100 97.2%
            Shape s = {"rmsnorm", 1, 8192, 16384, 1};
            prepare(s);
            suite(s, "rmsnorm_team_bf16_v8", 256, true);
            suite(s, "rmsnorm_team_bf16_v8", 256, false);
            res<RMS, 8, 256, 2, 1, 2>(s, rmsop<BF16>());
        }
        if (!*only || strstr(only, "E")) {  // H200 baseline 93.1% (the block of 512 threads), H100 98.4%
            Shape s = {"layernorm", 0, 8192, 16384, 2};
            prepare(s);
            suite(s, "layernorm_block_f32_v8", 512, true);
            suite(s, "layernorm_block_f32_v8", 512, false);
            res<LN32, 8, 512, 1, 0, 2>(s, lnop<F32>());
            res<LN32, 4, 1024, 1, 0, 2>(s, lnop<F32>());
        }
        if (!*only || strstr(only, "F")) {  // H200 baseline 92.4% (the block of 64 threads), H100 95.3%
            Shape s = {"layernorm", 1, 32768, 4096, 2};
            prepare(s);
            suite(s, "layernorm_block_bf16_v8", 64, true);
            suite(s, "layernorm_block_bf16_v8", 64, false);
            res<LN, 8, 64, 8, 1, 2>(s, lnop<BF16>());
            res<LN, 4, 128, 4, 1, 2>(s, lnop<BF16>());
            res<LN, 4, 128, 8, 1, 2>(s, lnop<BF16>());
            res<LN, 2, 256, 4, 1, 2>(s, lnop<BF16>());
        }
        // Rows a multiprocessor cannot hold twice: a cluster of CS blocks a row, each block's slice in registers
        // and its next slice in shared memory (row_res_cluster with PF 2, experiment.cuh).
        if (!*only || strstr(only, "G")) {  // H200 baseline 86.0% (ring2e 16 × 128), H100 94.5%
            Shape s = {"layernorm", 0, 4096, 65536, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            resc<LN32, 8, 1024, 0, 2, 2>(s, lnop<F32>());
            resc<LN32, 8, 512, 0, 2, 4>(s, lnop<F32>());
            resc<LN32, 4, 1024, 0, 2, 4>(s, lnop<F32>());
        }
        if (!*only || strstr(only, "H")) {  // H200 baseline 90.8% (ring 8 × 128), H100 94.4%
            Shape s = {"softmax", 0, 4096, 65536, 0};
            prepare(s);
            suite(s, "softmax_loop_f32_v", 1024, true);
            resc<SM32, 8, 1024, 0, 2, 2>(s, SM32());
            resc<SM32, 8, 512, 0, 2, 4>(s, SM32());
        }
        if (!*only || strstr(only, "I")) {  // H200 baselines: fp32 86.5% (ring 16 × 256), bf16 85.4% (ring2)
            Shape s = {"rmsnorm", 0, 1024, 262144, 1};
            prepare(s);
            rmsref<F32>(s);
            resc<RMS32, 8, 1024, 0, 2, 8>(s, rmsop<F32>());
            resc<RMS32, 8, 512, 0, 2, 16>(s, rmsop<F32>());
            Shape b = {"rmsnorm", 1, 1024, 262144, 1};
            prepare(b);
            rmsref<BF16>(b);
            resc<RMS, 8, 1024, 0, 2, 4>(b, rmsop<BF16>());
            resc<RMS, 8, 512, 0, 2, 8>(b, rmsop<BF16>());
        }
        if (!*only || strstr(only, "J")) {  // H200 baselines: fp32 75.2% (ring), bf16 66.5% (cluster 8 × 512)
            Shape s = {"layernorm", 0, 1024, 262144, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            resc<LN32, 8, 1024, 0, 2, 8>(s, lnop<F32>());
            resc<LN32, 8, 512, 0, 2, 16>(s, lnop<F32>());
            Shape b = {"layernorm", 1, 1024, 262144, 2};
            prepare(b);
            suite(b, "layernorm_loop_bf16_v", 1024, true);
            resc<LN, 8, 1024, 0, 2, 4>(b, lnop<BF16>());
            resc<LN, 8, 512, 0, 2, 8>(b, lnop<BF16>());
        }
        if (!*only || strstr(only, "K")) {  // H200 baselines: fp32 86.6% (ring 16 × 256), bf16 71.4% (ring 8 × 256)
            Shape s = {"softmax", 0, 1024, 262144, 0};
            prepare(s);
            suite(s, "softmax_loop_f32_v", 1024, true);
            resc<SM32, 8, 1024, 0, 2, 8>(s, SM32());
            resc<SM32, 8, 512, 0, 2, 16>(s, SM32());
            Shape b = {"softmax", 1, 1024, 262144, 0};
            prepare(b);
            suite(b, "softmax_loop_bf16_v", 1024, true);
            resc<SM, 8, 1024, 0, 2, 4>(b, SM());
            resc<SM, 8, 512, 0, 2, 8>(b, SM());
        }
    }
    return 0;
}

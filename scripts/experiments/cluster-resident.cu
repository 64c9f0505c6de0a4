// cluster-resident.cu: the persistent cluster kernel (experiment.cuh's row_res_cluster: a cluster of CS blocks a
// row, as many clusters as run at once, each block the same slice of every row its cluster takes, the column data
// of that slice staged once) with the statistics exchanged by st.async (XA 1, kernels/cuda/xasync.cuh) instead of a
// cluster barrier a row. With the barrier it lost to every chosen plan on an H200 (kernels/rowres.go): its
// release compiles to MEMBAR.ALL.GPU, which waits for every load in flight, the next row's among them, so the
// loads ahead (PF 1, 2) bought nothing. Here nothing waits for them.
//
// Results (NVIDIA H200, 2026-11-27, driver 580.159.04, the program's cold pct-copy, two rounds; MODE 1: the column
// data staged; PF 0: the next row after the stores, 2: into shared memory, 3: into registers before the exchange):
//   - RMSNorm bf16 1024×262144, 8 × 512: barrier MODE 1 PF 1 79.2; xa MODE 0 PF 0 73.6, MODE 0 PF 3 95.1, MODE 1
//     PF 0 73.4, PF 2 87.7–88.4, PF 3 97.2–97.3; 16 × 256 MODE 1 PF 2 84.4–84.5, PF 3 94.0–94.1; 4 × 1024 PF 3
//     54.0 (64 registers: spills).
//   - RMSNorm fp32 1024×262144, 16 × 512 (7 clusters): MODE 1 PF 2 86.7–86.8, PF 3 95.7–95.8, MODE 0 PF 3
//     93.3–93.4; 8 × 1024 MODE 1 PF 0 75.4–75.5, PF 3 51.6–52.0 (spills); 8 × 512 of 16 packs PF 0 89.6, PF 3 66.5.
//   - LayerNorm bf16 1024×262144, 8 × 512: MODE 0 PF 3 83.9–84.1, MODE 1 PF 0 75.8–76.6, PF 2 89.0–89.2, PF 3
//     94.1–94.5; 16 × 256 PF 2 84.6–84.8, PF 3 92.1–92.5.
//   - LayerNorm fp32 1024×262144, 16 × 512: MODE 0 PF 3 76.4–76.5, MODE 1 PF 0 63.8–63.9, PF 2 70.2–71.9, PF 3
//     96.8–97.2.
//   - LayerNorm bf16 4096×65536: 2 × 512 MODE 1 PF 2 83.4, PF 3 97.1–97.2; 4 × 256 PF 2 81.7, PF 3 93.4, MODE 0
//     PF 3 74.2–74.3; 2 × 1024 of 4 packs PF 3 93.0–94.1.
//   - LayerNorm fp32 4096×65536: 4 × 512 MODE 1 PF 2 81.0, PF 3 96.5–96.7; 8 × 256 PF 2 91.0–91.1, PF 3 95.6;
//     4 × 1024 of 4 packs PF 3 94.4–94.5.
// So the kernels of the _x_sm90a modules are MODE 1 (MODE 0 for Softmax), PF 3, 512 threads of 8 packs, the
// smallest cluster that holds the row (cuda/rowres.cuh's ROW_RESC_ENTRY; kernels/rowres.go, rowXARes).
//
// Build with CUDA 12.4 or later (st.async) and run from the repository root:
//   scripts/nvcc-hopper -O3 -arch=sm_90 -o .gpu/cr scripts/experiments/cluster-resident.cu -lcuda
//   ./cr kernels/cuda/ptx [ABCDEF]   (the letters pick shapes, in main; all by default)
#define KW_XASYNC 1
#include "experiment.cuh"

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    setup(dir);
    typedef LayerNormOp<BF16> LB;
    typedef LayerNormOp<F32> LF;
    typedef RMSNormOp<BF16> RB;
    typedef RMSNormOp<F32> RF;
    for (int rep = 0; rep < 2; rep++) {
        if (!*only || strstr(only, "A")) {  // H200 baseline: grid 87.9
            const Shape s = {"rmsnorm", 1, 1024, 262144, 1};
            prepare(s);
            rmsref<BF16>(s);
            const RB op = rmsop<BF16>();
            resc<RB, 8, 512, 1, 1, 8, 0>(s, op);
            resc<RB, 8, 512, 0, 0, 8, 1>(s, op);
            resc<RB, 8, 512, 0, 3, 8, 1>(s, op);
            resc<RB, 8, 512, 1, 0, 8, 1>(s, op);
            resc<RB, 8, 512, 1, 2, 8, 1>(s, op);
            resc<RB, 8, 512, 1, 3, 8, 1>(s, op);
            resc<RB, 8, 256, 1, 2, 16, 1>(s, op);
            resc<RB, 8, 256, 1, 3, 16, 1>(s, op);
            resc<RB, 8, 1024, 1, 3, 4, 1>(s, op);
        }
        if (!*only || strstr(only, "B")) {  // H200 baseline: ring 87.1
            const Shape s = {"rmsnorm", 0, 1024, 262144, 1};
            prepare(s);
            rmsref<F32>(s);
            const RF op = rmsop<F32>();
            resc<RF, 8, 512, 1, 2, 16, 1>(s, op);
            resc<RF, 8, 512, 1, 3, 16, 1>(s, op);
            resc<RF, 8, 512, 0, 3, 16, 1>(s, op);
            resc<RF, 8, 1024, 1, 0, 8, 1>(s, op);
            resc<RF, 8, 1024, 1, 3, 8, 1>(s, op);
            resc<RF, 16, 512, 1, 0, 8, 1>(s, op);
            resc<RF, 16, 512, 1, 3, 8, 1>(s, op);
        }
        if (!*only || strstr(only, "C")) {  // H200 baseline: xa cluster 8 × 512 79.7
            const Shape s = {"layernorm", 1, 1024, 262144, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 1024, true);
            const LB op = lnop<BF16>();
            resc<LB, 8, 512, 0, 3, 8, 1>(s, op);
            resc<LB, 8, 512, 1, 0, 8, 1>(s, op);
            resc<LB, 8, 512, 1, 2, 8, 1>(s, op);
            resc<LB, 8, 512, 1, 3, 8, 1>(s, op);
            resc<LB, 8, 256, 1, 2, 16, 1>(s, op);
            resc<LB, 8, 256, 1, 3, 16, 1>(s, op);
        }
        if (!*only || strstr(only, "D")) {  // H200 baseline: grid 83.9
            const Shape s = {"layernorm", 0, 1024, 262144, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            const LF op = lnop<F32>();
            resc<LF, 8, 512, 0, 3, 16, 1>(s, op);
            resc<LF, 8, 512, 1, 0, 16, 1>(s, op);
            resc<LF, 8, 512, 1, 2, 16, 1>(s, op);
            resc<LF, 8, 512, 1, 3, 16, 1>(s, op);
        }
        if (!*only || strstr(only, "E")) {  // H200 baseline: row_res 91.3
            const Shape s = {"layernorm", 1, 4096, 65536, 2};
            prepare(s);
            suite(s, "layernorm_loop_bf16_v", 1024, true);
            const LB op = lnop<BF16>();
            resc<LB, 8, 512, 1, 2, 2, 1>(s, op);
            resc<LB, 8, 512, 1, 3, 2, 1>(s, op);
            resc<LB, 8, 256, 1, 2, 4, 1>(s, op);
            resc<LB, 8, 256, 1, 3, 4, 1>(s, op);
            resc<LB, 8, 256, 0, 3, 4, 1>(s, op);
            resc<LB, 4, 1024, 1, 3, 2, 1>(s, op);
        }
        if (!*only || strstr(only, "F")) {  // H200 baseline: xa cluster 8 × 256 88.3
            const Shape s = {"layernorm", 0, 4096, 65536, 2};
            prepare(s);
            suite(s, "layernorm_loop_f32_v", 1024, true);
            const LF op = lnop<F32>();
            resc<LF, 8, 512, 1, 2, 4, 1>(s, op);
            resc<LF, 8, 512, 1, 3, 4, 1>(s, op);
            resc<LF, 8, 256, 1, 2, 8, 1>(s, op);
            resc<LF, 8, 256, 1, 3, 8, 1>(s, op);
            resc<LF, 4, 1024, 1, 3, 4, 1>(s, op);
        }
    }
    return 0;
}

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
#include "experiment.cuh"

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
    setup(dir);
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

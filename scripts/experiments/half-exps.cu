// half-exps.cu: are the bf16 softmax rows of 128 KiB and more bound by their exponentials? A standalone experiment
// behind the row plans (docs/kernels.md).
//
// A bf16 softmax kernel that holds its row in registers computes each e^(x − m) twice: once for the row's sum and
// once for the output, because its packs (8 bf16 in 16 bytes) cannot keep fp32 exponentials as the fp32 packs do.
// At the H200's bf16 rate that is about 7 elements a cycle a multiprocessor, 14 of the 16 exponentials a cycle
// the special-function units issue. SoftmaxOpH keeps them anyway: each e^(x − m_t)·2^15 (m_t the thread's own
// maximum, so the value lies in (0, 2^15]) rounded to fp16 in the pack's own 16 bytes, and the output is one
// multiply an element. fp16 keeps 11 significant bits (the bf16 output has 8) down to 2^-14, that is for
// elements within e^-20 of their thread's largest; below that fewer, and none below 2^-39 of it.
//
// (A first version also timed LayerNorm bf16 with its output as fma(fma(x, rstd, −mean·rstd), w, b), two
// operations an element instead of three: on an H200, 2026-11-27, no faster at 8192×16384 in row_res (92.5–93.1%
// against 92.6%) or 4096×65536 (88.6–88.9% both), slower at 32768×4096 in the block of 64 threads (86.0% against
// 88.1%), so those rows are not bound by their arithmetic.)
//
// Each shape: the suite's kernel from the committed PTX (the reference output, and the plan chosen now), the same
// template over the suite's Op built here (a control), and the variants. Every output is compared with the
// reference (max |a − b| / (1 + |b|) at most 1e-2 for bf16, else the program stops; "rel" is the largest
// elementwise relative error over outputs of at least 2^-20). Timing as resident-columns.cu (experiment.cuh).
//
// Build PTX alone (CUDA 11.8 or later), so that the driver compiles it as it compiles the suite's modules, and run
// on the GPU host from the repository root:
//   nvcc -O3 -gencode arch=compute_90,code=compute_90 -o half-exps scripts/experiments/half-exps.cu -lcuda
//   ./half-exps kernels/cuda/ptx [STU]   (the letters pick shapes, in main; all by default)
#include "experiment.cuh"
#include "softmax_half.cuh"

template <class Op, int NV, int CS, int T>
__global__ void __launch_bounds__(T, 1) cluster_kernel(Op op, const typename Op::T* __restrict__ x,
                                                       typename Op::T* __restrict__ y, long long cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    row_cluster<Op, NV, CS>(op, x, y, cols);
#endif
}

template <class Op, int NV, int T>
__global__ void __launch_bounds__(T) block_kernel(Op op, const typename Op::T* __restrict__ x,
                                                  typename Op::T* __restrict__ y, long long cols) {
    row_block<Op, true, NV>(op, x, y, cols);
}

// timed checks and times one launch of kernel k (rows·cs blocks of T threads, clusters of cs when cs > 1).
template <class Op>
static void timed(const Shape& s, const char* what, void (*k)(Op, const typename Op::T*, typename Op::T*, long long),
                  const Op& op, int cs, int T) {
    typedef typename Op::T TT;
    ClusterLaunch cl(k, cs, T, 0, (unsigned)(s.rows * cs));
    int per = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    char name[120];
    snprintf(name, sizeof name, "%s CS=%d T=%d (%d/SM, %d regs)", what, cs, T, per, fa.numRegs);
    auto launch = [&] { CK(cudaLaunchKernelEx(&cl.cfg, k, op, (const TT*)X, (TT*)Y, s.cols)); };
    CK(cudaMemset(Y, 0xff, s.bytes()));
    launch();
    CK(cudaDeviceSynchronize());
    const float rel = check(s, name);
    report(s, name, launch, rel);
}

int main(int argc, char** argv) {
    const char* dir = argc > 1 ? argv[1] : "kernels/cuda/ptx";
    const char* only = argc > 2 ? argv[2] : "";
    setup(dir);
    typedef SoftmaxOp<BF16> SM;
    typedef SoftmaxOpH SH;
    for (int rep = 0; rep < 2; rep++) {
        if (!*only || strstr(only, "S")) {  // H200 baseline: 86.5% (the block of 1024 threads), H100 92.6%
            Shape s = {"softmax", 1, 4096, 65536, 0};
            prepare(s);
            suite(s, "softmax_loop_bf16_v", 1024, true);
            suite(s, "softmax_block_bf16_v8", 1024, false);
            timed<SM>(s, "block SoftmaxOp NV=8", block_kernel<SM, 8, 1024>, SM(), 1, 1024);
            timed<SH>(s, "block SoftmaxOpH NV=8", block_kernel<SH, 8, 1024>, SH(), 1, 1024);
            timed<SH>(s, "cluster SoftmaxOpH NV=8", cluster_kernel<SH, 8, 2, 512>, SH(), 2, 512);
            res<SM, 16, 512, 1, 0, false>(s, SM());
            res<SH, 16, 512, 1, 0, false>(s, SH());
            res<SH, 8, 1024, 1, 0, false>(s, SH());
        }
        if (!*only || strstr(only, "T")) {  // H200 baseline: 71.4% (row_ring 8 × 256), H100 89.7%
            Shape s = {"softmax", 1, 1024, 262144, 0};
            prepare(s);
            suite(s, "softmax_loop_bf16_v", 1024, true);
            timed<SH>(s, "cluster SoftmaxOpH NV=16", cluster_kernel<SH, 16, 8, 256>, SH(), 8, 256);
            resc<SM, 16, 512, 0, false, 4>(s, SM());
            resc<SH, 16, 512, 0, false, 4>(s, SH());
            resc<SH, 8, 1024, 0, false, 4>(s, SH());
            resc<SH, 16, 256, 0, false, 8>(s, SH());
            resc<SH, 8, 512, 0, false, 8>(s, SH());
        }
        if (!*only || strstr(only, "U")) {  // H200 baseline 97.5% (the block of 256 threads), H100 98.2%
            Shape s = {"softmax", 1, 8192, 16384, 0};
            prepare(s);
            suite(s, "softmax_loop_bf16_v", 1024, true);
            suite(s, "softmax_block_bf16_v8", 256, false);
            timed<SH>(s, "block SoftmaxOpH NV=8", block_kernel<SH, 8, 256>, SH(), 1, 256);
            res<SH, 16, 512, 1, 0, false>(s, SH());
        }
    }
    return 0;
}

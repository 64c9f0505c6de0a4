// mma.cu: the tensor-core yardstick (mma_cuda.go, the CUDA backend's MeasureMMA), the compute twin of copy.cu.
//
// mma_probe(out, iters): every warp runs iters rounds of MMA_PROBE_CHAINS independent
// mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 on register operands (independent accumulators, so that the
// tensor pipe never waits on an mma's latency), no memory traffic but one store per thread at the end, which
// keeps the compiler from dropping the chains. FLOPs: gridDim·blockDim/32 · iters · MMA_PROBE_CHAINS · 4096.
// sm_80 and later: ptx/mma_sm80.ptx (compute_80), which the backend loads only on such GPUs.
#include "mma.cuh"

#define MMA_PROBE_CHAINS 8

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
extern "C" __global__ void __launch_bounds__(256) mma_probe(float* out, long long iters) {
    const unsigned lane = threadIdx.x & 31;
    // Operands from the lane and block (not constants the compiler could fold), small bf16 values: 0.5 + lane/64.
    const unsigned h = f32_to_bf16(0.5f + lane / 64.0f) | ((unsigned)f32_to_bf16(1.0f / (1 + blockIdx.x % 7)) << 16);
    unsigned a[4] = {h, h ^ 0x10000u, h, h ^ 0x10000u};
    const unsigned b0 = h, b1 = h ^ 1u;
    float acc[MMA_PROBE_CHAINS][4];
#pragma unroll
    for (int c = 0; c < MMA_PROBE_CHAINS; c++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[c][e] = 0.0f;
    for (long long it = 0; it < iters; it++) {
#pragma unroll
        for (int c = 0; c < MMA_PROBE_CHAINS; c++) mma_bf16(acc[c], a, b0, b1);
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < MMA_PROBE_CHAINS; c++) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif

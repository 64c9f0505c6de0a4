// gemm.cu: y[M, N] = x[M, K] · W[N, K]ᵀ, a Linear layer in bf16 with fp32 accumulation (GEMMFamily, gemm.go).
//
// gemm_bf16_{128x128,64x64}(x, w, unused, y, M, N, K): the fused kernel, on tensor cores (mma.cuh: a cp.async
// pipeline into swizzled shared memory, ldmatrix, mma.sync m16n8k16 bf16); sm_80 and later only, so it is in
// ptx/gemm_sm80.ptx (compute_80) and not in ptx/gemm.ptx (compute_75). K must be a multiple of 8 (16-byte rows
// chunks); M and N are free (zero-filled loads, guarded stores). Grid: ⌈M/BM⌉·⌈N/BN⌉ blocks.
//
// gemm_simt_f32(a, b, c, M, N, K): the naive chain's GEMM (gemm_cuda.go), c = a · bᵀ in fp32 on the fp32 copies
// of x and W that the chain made (x.float() @ W.float().T): what one writes without tensor cores, 64 × 64 tiles of
// 256 threads, each 4 × 4 outputs, K in steps of 16 through shared memory, plain FMA. Grid: ⌈M/64⌉·⌈N/64⌉.
#include "mma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
MMA_LINEAR(gemm_bf16, EPI_NONE)
#endif

extern "C" __global__ void __launch_bounds__(256) gemm_simt_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                                float* __restrict__ c, long long M, long long N,
                                                                long long K) {
    __shared__ float as[16][64 + 4], bs[16][64 + 4];  // [k][row]
    const long long ntiles = (N + 63) / 64;
    const long long m0 = blockIdx.x / ntiles * 64, n0 = blockIdx.x % ntiles * 64;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    float acc[4][4] = {};
    for (long long k0 = 0; k0 < K; k0 += 16) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int q = tid + i * 256, r = q / 16, kk = q % 16;
            const long long k = k0 + kk;
            as[kk][r] = m0 + r < M && k < K ? a[(m0 + r) * K + k] : 0.0f;
            bs[kk][r] = n0 + r < N && k < K ? b[(n0 + r) * K + k] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++) {
            float av[4], bv[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                av[i] = as[kk][ty * 4 + i];
                bv[i] = bs[kk][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long r = m0 + ty * 4 + i;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const long long n = n0 + tx * 4 + j;
            if (r < M && n < N) c[r * N + n] = acc[i][j];
        }
    }
}

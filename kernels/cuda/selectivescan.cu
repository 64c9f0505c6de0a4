// selectivescan.cu: Mamba's selective scan with resets (SelectiveScanFamily, selectivescan.go):
//
//   h_t = exp(Δ_t A) ⊙ h_{t−1} + Δ_t B_t x_t,  y_t = C_t · h_t + D x_t,  Δ = softplus(delta), A = −exp(a_log),
//
// x, delta, y [batch, t, d]; B, C [batch, t, 16]; a_log [d, 16] and D [d] fp32; resets [batch, t]: h = 0 before
// a flagged step. fp32 arithmetic, fp32 or bf16 storage.
//
//   scan_fused_*_l{L}: the fused kernel. L threads per channel, each holding 16/L of its 16 states in registers
//     for the whole sequence; a block is 128 threads, 128/L channels of one batch row. Time runs in chunks of 8
//     steps: the block stages the chunk's B, C and reset flags in shared memory and each thread its channel's x
//     and Δ in registers, loading the next chunk while it computes this one. Each input is read once and y
//     written once; the expanded [batch, t, d, 16] state never leaves the chip. exp(Δ·A) is exp2f(Δ·A·log2 e).
//   scan_softplus_*, scan_expand_*, scan_contract_*: the naive form's own ops (selectivescan_cuda.go chains them
//     with eager.cu's): Δ = softplus(delta); the expanded exp(Δ⊗A) and Δx⊗B; and per step the einsum of the
//     state with C_t into y_t.
#include "recurrent.cuh"

#define SCAN_N 16
#define SCAN_BLOCK 128
#define SCAN_K 8  // steps per chunk: SCAN_K · SCAN_N = SCAN_BLOCK, one B and one C element per thread

template <class S, int L>
__device__ __forceinline__ void scan_fused(const typename S::T* __restrict__ x, const typename S::T* __restrict__ delta,
                                           const float* __restrict__ a_log, const typename S::T* __restrict__ bm,
                                           const typename S::T* __restrict__ cm, const float* __restrict__ dskip,
                                           const typename S::T* __restrict__ resets, typename S::T* __restrict__ y,
                                           long long nt, long long nd) {
    constexpr int NS = SCAN_N / L;      // states per thread
    constexpr int CB = SCAN_BLOCK / L;  // channels per block
    __shared__ float sb[SCAN_K][SCAN_N], sc[SCAN_K][SCAN_N], sr[SCAN_K];
    const long long per_row = (nd + CB - 1) / CB;
    const long long b = blockIdx.x / per_row;
    const long long ch = (blockIdx.x % per_row) * CB + threadIdx.x / L;
    const int sub = threadIdx.x % L;
    const bool active = ch < nd;
    float a2[NS], h[NS];
#pragma unroll
    for (int j = 0; j < NS; j++) {
        a2[j] = active ? -expf(a_log[ch * SCAN_N + sub * NS + j]) * 1.4426950408889634f : 0.0f;
        h[j] = 0.0f;
    }
    const float dsk = active ? dskip[ch] : 0.0f;
    const int e = threadIdx.x;  // this thread's element of a chunk's B and C: step e / 16, state e % 16

    // The next chunk, in registers while this one is computed.
    float nbv, ncv, nrv = 0.0f, nx[SCAN_K], ndl[SCAN_K];
    auto load = [&](long long t0) {
        const long long kt = t0 + e / SCAN_N;
        nbv = kt < nt ? S::get(bm[(b * nt + kt) * SCAN_N + e % SCAN_N]) : 0.0f;
        ncv = kt < nt ? S::get(cm[(b * nt + kt) * SCAN_N + e % SCAN_N]) : 0.0f;
        if (e < SCAN_K) nrv = t0 + e < nt ? S::get(resets[b * nt + t0 + e]) : 0.0f;
#pragma unroll
        for (int k = 0; k < SCAN_K; k++) {
            const long long i = (b * nt + t0 + k) * nd + ch;
            nx[k] = active && t0 + k < nt ? S::get(x[i]) : 0.0f;
            ndl[k] = active && t0 + k < nt ? S::get(delta[i]) : 0.0f;
        }
    };
    load(0);
    for (long long t0 = 0; t0 < nt; t0 += SCAN_K) {
        float cx[SCAN_K], cd[SCAN_K];
#pragma unroll
        for (int k = 0; k < SCAN_K; k++) cx[k] = nx[k], cd[k] = ndl[k];
        sb[e / SCAN_N][e % SCAN_N] = nbv;
        sc[e / SCAN_N][e % SCAN_N] = ncv;
        if (e < SCAN_K) sr[e] = nrv;
        __syncthreads();
        if (t0 + SCAN_K < nt) load(t0 + SCAN_K);
        const long long steps = nt - t0;  // the chunk's steps: min(steps, SCAN_K), the same for the whole block
#pragma unroll
        for (int k = 0; k < SCAN_K; k++) {
            if (k < steps) {
                if (sr[k] != 0.0f) {
#pragma unroll
                    for (int j = 0; j < NS; j++) h[j] = 0.0f;
                }
                const float dt = seq_softplus(cd[k]), dtx = dt * cx[k];
                float acc = 0.0f;
#pragma unroll
                for (int j = 0; j < NS; j++) {
                    h[j] = fmaf(exp2f(dt * a2[j]), h[j], dtx * sb[k][sub * NS + j]);
                    acc = fmaf(sc[k][sub * NS + j], h[j], acc);
                }
#pragma unroll
                for (int o = 1; o < L; o <<= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
                if (active && sub == 0) y[(b * nt + t0 + k) * nd + ch] = S::put(fmaf(dsk, cx[k], acc));
            }
        }
        __syncthreads();  // the chunk's shared B, C and flags are read: the next may overwrite them
    }
}

#define SCAN_FUSED(S, NAME, L)                                                                                    \
    extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_fused_##NAME##_l##L(                            \
        const S::T* x, const S::T* delta, const float* a_log, const S::T* bm, const S::T* cm, const float* dskip, \
        const S::T* resets, S::T* y, long long nb, long long nt, long long nd) {                                  \
        scan_fused<S, L>(x, delta, a_log, bm, cm, dskip, resets, y, nt, nd);                                      \
    }

// The naive form's ops: grid-stride loops over their elements.
#define SCAN_NAIVE(S, NAME)                                                                                       \
    extern "C" __global__ void scan_softplus_##NAME(const S::T* delta, float* dt, long long n) {                  \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) \
            dt[i] = seq_softplus(S::get(delta[i]));                                                               \
    }                                                                                                             \
    /* dA[r, d, n] = exp(Δ[r, d]·A[d, n]), dBx[r, d, n] = Δ[r, d]·x[r, d]·B[r, n] for the bt rows (b, t). */      \
    extern "C" __global__ void scan_expand_##NAME(const float* dt, const S::T* x, const float* a, const S::T* bm, \
                                                  float* da, float* dbx, long long bt, long long nd) {            \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < bt * nd * SCAN_N;                \
             i += (long long)gridDim.x * blockDim.x) {                                                            \
            const long long r = i / (nd * SCAN_N), dn = i % (nd * SCAN_N), rd = r * nd + dn / SCAN_N;             \
            da[i] = expf(dt[rd] * a[dn]);                                                                         \
            dbx[i] = dt[rd] * S::get(x[rd]) * S::get(bm[r * SCAN_N + dn % SCAN_N]);                               \
        }                                                                                                         \
    }                                                                                                             \
    /* ys[b, t, d] = Σ_n h[b, d, n]·C[b, t, n]: the einsum of step t. */                                          \
    extern "C" __global__ void scan_contract_##NAME(const float* h, const S::T* cm, float* ys, long long t,       \
                                                    long long nb, long long nt, long long nd) {                   \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nb * nd;                         \
             i += (long long)gridDim.x * blockDim.x) {                                                            \
            const long long b = i / nd;                                                                           \
            float acc = 0.0f;                                                                                     \
            for (int n = 0; n < SCAN_N; n++) acc += h[i * SCAN_N + n] * S::get(cm[(b * nt + t) * SCAN_N + n]);  \
            ys[(b * nt + t) * nd + i % nd] = acc;                                                                 \
        }                                                                                                         \
    }

SCAN_FUSED(F32, f32, 1)
SCAN_FUSED(F32, f32, 2)
SCAN_FUSED(F32, f32, 4)
SCAN_FUSED(BF16, bf16, 1)
SCAN_FUSED(BF16, bf16, 2)
SCAN_FUSED(BF16, bf16, 4)
SCAN_NAIVE(F32, f32)
SCAN_NAIVE(BF16, bf16)

// conv1d.cu: causal depthwise conv1d with resets (Conv1DFamily, conv1d.go): x (B, T, C), w (C, K), bias (C),
// resets (B, T) or none; y[b,t,c] = bias[c] + Σ_j w[c,j]·x[b, t−(K−1)+j, c] over the inputs at or after the
// last reset at or before t.
//
// conv1d_<dtype>_v<V>_k<K>_l<L>_{r,n}: the fused kernel, one pass. A block of Q × R threads covers a tile of
// Q·V channels × R·L steps of one sequence: thread (q, r) owns V consecutive channels (one access of up to 16
// bytes per step) for L consecutive steps. It loads its L steps at once (all in flight together) and takes
// the K−1 steps before them from the thread before it in time through shared memory (the first thread in time
// loads them), so each input is read from memory once but for K−1 steps a tile; then it slides the window.
// The block's reset flags (with the K−1 before the tile) are staged in shared memory, and a thread counts how
// many of the window's inputs its output may see. The `n` kernels (resets=none) have no mask at all.
// Grid: B × ⌈T/(R·L)⌉ × ⌈C/(Q·V)⌉ tiles, channel tiles fastest.
//
// The naive chain (conv1d_cuda.go) is conv1d_naive_age (steps since the last reset, a cumulative max), a broadcast
// of the bias (eager.cu), K launches of conv1d_naive_shift (one masked shifted multiply-add each) into an fp32
// accumulator, and a cast to the output (eager.cu).
#include "sequence.cuh"

#define CONV1D_MAX_STEPS 1024  // R·L: the reset flags a block stages
#define CONV1D_MAX_THREADS 256

template <class S, int V, int K, int L, bool RESETS>
__device__ __forceinline__ void conv1d_fused(const typename S::T* __restrict__ x, const typename S::T* __restrict__ w,
                                             const typename S::T* __restrict__ bias, const int* __restrict__ resets,
                                             typename S::T* __restrict__ y, long long nb, long long nt, long long nc,
                                             int Q) {
    typedef Vec<S, V> X;
    __shared__ int rs[CONV1D_MAX_STEPS + K - 1];  // rs[i]: the reset flag of step t0 − (K−1) + i
    // halo[j][r·Q + q]: step (r+1)·L − (K−1) + j of thread (q, r)'s channels, for thread (q, r+1)
    __shared__ typename X::Raw halo[K - 1][CONV1D_MAX_THREADS];
    const int R = blockDim.x / Q;
    const int qi = threadIdx.x % Q, ri = threadIdx.x / Q;
    const long long ctiles = (nc + (long long)Q * V - 1) / ((long long)Q * V);
    const long long ttiles = (nt + (long long)R * L - 1) / ((long long)R * L);
    const long long ct = blockIdx.x % ctiles, tt = (blockIdx.x / ctiles) % ttiles, b = blockIdx.x / ctiles / ttiles;
    const long long t0 = tt * R * L;
    const long long c = (ct * Q + qi) * V;
    const long long tb = t0 + (long long)ri * L;  // this thread's first output step
    const bool active = c < nc && tb < nt;
    if (RESETS) {
        for (int i = threadIdx.x; i < R * L + K - 1; i += blockDim.x) {
            const long long s = t0 - (K - 1) + i;
            rs[i] = s >= 0 && s < nt ? resets[b * nt + s] : 0;
        }
    }
    // xs[i] holds step tb − (K−1) + i; steps before 0 or from nt on are zero. A thread loads its own L steps;
    // the K−1 before them come from the thread before it in time (through halo), or from memory for r = 0.
    X xs[L + K - 1];
    const typename S::T* xp = x + (b * nt) * nc + c;
#pragma unroll
    for (int i = K - 1; i < L + K - 1; i++) {
        const long long s = tb - (K - 1) + i;
        if (active && s < nt) {
            xs[i].load(xp + s * nc);
        } else {
            xs[i].zero();
        }
    }
    if (ri == 0) {
#pragma unroll
        for (int i = 0; i < K - 1; i++) {
            const long long s = tb - (K - 1) + i;
            if (active && s >= 0) {
                xs[i].load(xp + s * nc);
            } else {
                xs[i].zero();
            }
        }
    }
#pragma unroll
    for (int j = 0; j < K - 1; j++) halo[j][threadIdx.x] = xs[L + j].u.raw;
    __syncthreads();
    if (!active) return;
    if (ri > 0) {
#pragma unroll
        for (int j = 0; j < K - 1; j++) xs[j].u.raw = halo[j][threadIdx.x - Q];
    }
    float wv[K][V], bv[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        bv[v] = S::get(bias[c + v]);
#pragma unroll
        for (int j = 0; j < K; j++) wv[j][v] = S::get(w[(c + v) * K + j]);
    }
    // n: how many of the window's inputs (newest first) the output of the step before tb may see.
    int n = 0;
    if (RESETS) {
#pragma unroll
        for (int j = 1; j < K; j++) {
            const long long s = tb - j;
            if (s < 0) break;
            n = j;
            if (rs[s - t0 + K - 1]) break;
        }
    }
    typename S::T* yp = y + (b * nt) * nc + c;
#pragma unroll
    for (int i = 0; i < L; i++) {
        const long long t = tb + i;
        if (t < nt) {
            if (RESETS) n = rs[t - t0 + K - 1] ? 1 : min(n + 1, K);
            float acc[V];
#pragma unroll
            for (int v = 0; v < V; v++) acc[v] = bv[v];
#pragma unroll
            for (int j = 0; j < K; j++) {
                if (!RESETS || j >= K - n) {  // input t − (K−1) + j is at most n − 1 steps old
#pragma unroll
                    for (int v = 0; v < V; v++) acc[v] = fmaf(wv[j][v], xs[i + j].get(v), acc[v]);
                }
            }
            X o;
#pragma unroll
            for (int v = 0; v < V; v++) o.set(v, acc[v]);
            o.store(yp + t * nc);
        }
    }
}

#define CONV1D(S, NAME, V, K, L)                                                                                   \
    extern "C" __global__ void __launch_bounds__(CONV1D_MAX_THREADS) conv1d_##NAME##_v##V##_k##K##_l##L##_r(       \
        const S::T* x, const S::T* w, const S::T* bias, const int* resets, S::T* y, long long nb, long long nt,    \
        long long nc, long long q) {                                                                               \
        conv1d_fused<S, V, K, L, true>(x, w, bias, resets, y, nb, nt, nc, (int)q);                                \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(CONV1D_MAX_THREADS) conv1d_##NAME##_v##V##_k##K##_l##L##_n(       \
        const S::T* x, const S::T* w, const S::T* bias, const int* resets, S::T* y, long long nb, long long nt,    \
        long long nc, long long q) {                                                                               \
        conv1d_fused<S, V, K, L, false>(x, w, bias, resets, y, nb, nt, nc, (int)q);                               \
    }
#define CONV1D_K(S, NAME, V, L) CONV1D(S, NAME, V, 2, L) CONV1D(S, NAME, V, 3, L) CONV1D(S, NAME, V, 4, L)

CONV1D_K(F32, f32, 4, 8)
CONV1D_K(F32, f32, 4, 4)
CONV1D_K(F32, f32, 1, 8)
CONV1D_K(BF16, bf16, 8, 8)
CONV1D_K(BF16, bf16, 8, 4)
CONV1D_K(BF16, bf16, 4, 8)
CONV1D_K(BF16, bf16, 1, 8)

// conv1d_naive_age writes age[b,t] = t − (the last reset at or before t, else 0), as fp32: the cumulative max
// an eager framework computes with one op. One block per sequence: each thread finds the last reset of its
// stretch of steps, a max-scan over the threads gives each the last reset before its stretch.
extern "C" __global__ void conv1d_naive_age(const int* resets, float* age, long long nb, long long nt) {
    __shared__ long long last[256];
    const long long b = blockIdx.x;
    const long long per = (nt + blockDim.x - 1) / blockDim.x;
    const long long lo = min(nt, threadIdx.x * per), hi = min(nt, lo + per);
    long long mine = 0;
    for (long long t = lo; t < hi; t++)
        if (resets[b * nt + t]) mine = t;
    last[threadIdx.x] = mine;
    __syncthreads();
    for (int o = 1; o < blockDim.x; o <<= 1) {  // inclusive max-scan (Hillis–Steele)
        const long long v = threadIdx.x >= o ? last[threadIdx.x - o] : 0;
        __syncthreads();
        last[threadIdx.x] = max(last[threadIdx.x], v);
        __syncthreads();
    }
    long long l = threadIdx.x > 0 ? last[threadIdx.x - 1] : 0;
    for (long long t = lo; t < hi; t++) {
        if (resets[b * nt + t]) l = t;
        age[b * nt + t] = (float)(t - l);
    }
}

// conv1d_naive_shift adds [age ≥ s]·w[c, K−1−s]·x[b, t−s, c] to acc[b, t, c] (fp32); age null: the age is t.
// x and w are stored as dtype (KW_FP32 or KW_BF16).
extern "C" __global__ void conv1d_naive_shift(float* acc, const void* x, const void* w, long long dtype,
                                              const float* age, long long nb, long long nt, long long nc, long long k,
                                              long long s) {
    const long long n = nb * nt * nc;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / nc, c = i - r * nc, t = r % nt;
        const float a = age ? age[r] : (float)t;
        if (a < (float)s) continue;
        const long long xi = i - s * nc, wi = c * k + k - 1 - s;
        float xv, wv;
        if (dtype == KW_BF16) {
            xv = bf16_to_f32(static_cast<const unsigned short*>(x)[xi]);
            wv = bf16_to_f32(static_cast<const unsigned short*>(w)[wi]);
        } else {
            xv = static_cast<const float*>(x)[xi];
            wv = static_cast<const float*>(w)[wi];
        }
        acc[i] += wv * xv;
    }
}

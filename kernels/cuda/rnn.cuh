// rnn.cuh: what the LSTM (lstm.cu) and sLSTM (slstm.cu) kernels share: a batched GEMM (the LSTM's input
// projection and both naive forms' per-step recurrent products) and the persistent recurrent kernel, which the
// two cells instantiate with their own gate math.
#pragma once
#include "recurrent.cuh"

// ---------------------------------------------------------------------------------------------------------------
// rnn_gemm: out[z, m, n] = Σ_k A[z, m, k]·W[z, n, k] (+ bias[z, n]) for z < batch, fp32 accumulation and output,
// A and W in storage SA, SW; element (m, k) of A is a[z·az + m·lda + k] (W and out likewise). 256 threads a
// block compute a BM × BN tile (BM = 16·RM, BN = 16·RN), each thread RM × RN outputs from float4 reads of the
// tile's A and W columns staged in shared memory, K in steps of 8 with the next step's loads in flight.
// grid = batch · ⌈M/BM⌉ · ⌈N/BN⌉.
#define RNN_GEMM_BK 8

template <class SA, class SW, int RM, int RN>
__device__ __forceinline__ void rnn_gemm(const typename SA::T* __restrict__ a, long long lda, long long az,
                                         const typename SW::T* __restrict__ w, long long ldw, long long wz,
                                         const float* __restrict__ bias, long long bz, float* __restrict__ out,
                                         long long ldo, long long oz, long long M, long long N, long long K) {
    constexpr int BM = 16 * RM, BN = 16 * RN, BK = RNN_GEMM_BK;
    constexpr int LA = BM * BK / 256, LW = BN * BK / 256;  // elements of a K step each thread loads
    __shared__ __align__(16) float as[BK][BM + 4];
    __shared__ __align__(16) float ws[BK][BN + 4];
    const long long tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN;
    const long long z = blockIdx.x / (tm * tn), tile = blockIdx.x % (tm * tn);
    const long long m0 = tile / tn * BM, n0 = tile % tn * BN;
    a += z * az;
    w += z * wz;
    out += z * oz;
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    float acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; i++)
#pragma unroll
        for (int j = 0; j < RN; j++) acc[i][j] = 0.0f;
    float ra[LA], rw[LW];
    auto fetch = [&](long long k0) {
#pragma unroll
        for (int q = 0; q < LA; q++) {
            const int e = tid + 256 * q;
            const long long m = m0 + e / BK, k = k0 + e % BK;
            ra[q] = m < M && k < K ? SA::get(a[m * lda + k]) : 0.0f;
        }
#pragma unroll
        for (int q = 0; q < LW; q++) {
            const int e = tid + 256 * q;
            const long long n = n0 + e / BK, k = k0 + e % BK;
            rw[q] = n < N && k < K ? SW::get(w[n * ldw + k]) : 0.0f;
        }
    };
    fetch(0);
    for (long long k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int q = 0; q < LA; q++) as[(tid + 256 * q) % BK][(tid + 256 * q) / BK] = ra[q];
#pragma unroll
        for (int q = 0; q < LW; q++) ws[(tid + 256 * q) % BK][(tid + 256 * q) / BK] = rw[q];
        __syncthreads();
        if (k0 + BK < K) fetch(k0 + BK);
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float av[RM], wv[RN];
#pragma unroll
            for (int i = 0; i < RM / 4; i++) {
                const float4 v = *reinterpret_cast<const float4*>(&as[k][ty * 4 + 64 * i]);
                av[4 * i] = v.x, av[4 * i + 1] = v.y, av[4 * i + 2] = v.z, av[4 * i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < RN / 4; j++) {
                const float4 v = *reinterpret_cast<const float4*>(&ws[k][tx * 4 + 64 * j]);
                wv[4 * j] = v.x, wv[4 * j + 1] = v.y, wv[4 * j + 2] = v.z, wv[4 * j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < RM; i++)
#pragma unroll
                for (int j = 0; j < RN; j++) acc[i][j] = fmaf(av[i], wv[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RM; i++) {
        const long long m = m0 + ty * 4 + 64 * (i / 4) + i % 4;
#pragma unroll
        for (int j = 0; j < RN; j++) {
            const long long n = n0 + tx * 4 + 64 * (j / 4) + j % 4;
            if (m < M && n < N) out[m * ldo + n] = acc[i][j] + (bias != nullptr ? bias[z * bz + n] : 0.0f);
        }
    }
}

// RNN_GEMM(PREFIX, SA, A, SW, W, R) defines PREFIX_gemm_A_W_{16·R}: rnn_gemm with R × R outputs a thread.
#define RNN_GEMM(PREFIX, SA, A, SW, W, R)                                                                        \
    extern "C" __global__ void __launch_bounds__(256) PREFIX##_gemm_##A##_##W##_##R(                              \
        const SA::T* a, long long lda, long long az, const SW::T* w, long long ldw, long long wz,                \
        const float* bias, long long bz, float* out, long long ldo, long long oz, long long m, long long n,      \
        long long k) {                                                                                            \
        rnn_gemm<SA, SW, R / 16, R / 16>(a, lda, az, w, ldw, wz, bias, bz, out, ldo, oz, m, n, k);               \
    }

// ---------------------------------------------------------------------------------------------------------------
// rnn_group_barrier waits until all `parts` blocks of a group have called it (bar: the group's arrival count
// and generation, zero before the first launch; the last to arrive resets the count, so no reset between
// launches is needed). Everything the block wrote before it is visible to the group's blocks after it
// (through L2: read it with __ldcg). A block that waits more than 2 s traps rather than hang the GPU.
__device__ __forceinline__ void rnn_group_barrier(unsigned* bar, int parts) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* gen = bar + 1;
        const unsigned g0 = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == (unsigned)parts - 1) {
            *(volatile unsigned*)bar = 0;
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            const unsigned long long t0 = globaltimer();
            while (*gen == g0) {
                __nanosleep(32);
                if (globaltimer() - t0 > 2000000000ull) __trap();
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// rnn_persistent runs a recurrent layer over the whole sequence in one launch. A head's layer has a state vector
// of H units, four gate rows a unit and recurrent weights W [4H, H] (row g·H + u: gate g of unit u); Cell is
// the per-unit update from the unit's four gate pre-activations
//
//   z = in_t + bias + (reset at t ? 0 : W h_{t−1}),  h_t = Cell(z, first = t = 0 or reset at t),
//
// where in_t is either given (XIN false: per (b, t, head) 4H values in storage SI, or nothing when in is null)
// or computed here from the layer's input (XIN true: in is x [batch, t, H] and in_t = Wi x_t with Wi [4H, H]
// held in registers like W).
//
// A block owns U of the H units (all four gates of each) for BB batch rows of one head: blocks
// (tile, head, s) for s < H/U share a (tile, head) and exchange their parts of h through hx (fp32
// [2, batch, H], by step parity) with one rnn_group_barrier a step; for U = H there is no exchange. Its
// 4U·KS threads each hold 1/KS of one gate row of W (and Wi) in registers (float4 chunks q, q+KS, … so that
// the KS lanes of a row read adjacent words of h), dot it with each batch row's h_{t−1} (and x_t) from shared
// memory and add their partial sums with shuffles; then threads (row in tile, unit) < BB·U add the given
// inputs (prefetched a step ahead) and the bias and run the cell, whose state stays in their registers, and
// write h_t to y and to the next step's h. Layouts: in [batch, t, heads, 4H]; W [heads, 4H, H]; bias
// [heads, 4H]; y [batch, t, heads, H]; resets [batch, t]. grid = ⌈batch/BB⌉ · heads · H/U, all resident when
// H/U > 1.
template <class Cell, class S, class SI, int H, int U, int KS, int BB, bool XIN>
__device__ __forceinline__ void rnn_persistent(const typename SI::T* __restrict__ in,
                                               const typename S::T* __restrict__ wi, const float* __restrict__ bias,
                                               const typename S::T* __restrict__ w,
                                               const typename S::T* __restrict__ resets, typename S::T* __restrict__ y,
                                               float* hx, unsigned* bar, long long nb, long long nt, long long heads) {
    constexpr int SPLIT = H / U, ROWS = 4 * U, NT = ROWS * KS, NW = H / (4 * KS);
    // BB ≤ 2: four partial sums a row (one a float4 lane), so that the dot product's chain of dependent FMAs
    // is a quarter as long; with more rows, the rows' sums are the independent chains.
    constexpr int NP = BB <= 2 ? 4 : 1;
    static_assert(H % U == 0 && H % (4 * KS) == 0 && BB * U <= NT, "rnn_persistent: bad shape");
    static_assert(!XIN || (SPLIT == 1 && BB * H <= NT), "rnn_persistent: input projection needs one block a row");
    __shared__ __align__(16) float hs[BB][H];
    __shared__ __align__(16) float xs[XIN ? 2 : 1][XIN ? BB : 1][XIN ? H : 4];
    __shared__ float gs[BB][ROWS];
    __shared__ float sflag[2][BB];
    const int tid = threadIdx.x;
    const long long grp = blockIdx.x / SPLIT, head = grp % heads, b0 = grp / heads * BB;
    const int s = blockIdx.x % SPLIT;

    // Matvec role: gate row r of this block (gate r / U of unit s·U + r % U), lane q of its KS.
    const int r = tid / KS, q = tid % KS;
    float4 wv[NW], wiv[NW];  // wiv: only with XIN
    {
        const long long row = (head * 4 * H + (r / U) * H + s * U + r % U) * H;
#pragma unroll
        for (int j = 0; j < NW; j++) {
            const int k = 4 * (q + KS * j);
            wv[j] = make_float4(S::get(w[row + k]), S::get(w[row + k + 1]), S::get(w[row + k + 2]), S::get(w[row + k + 3]));
            if (XIN) wiv[j] = make_float4(S::get(wi[row + k]), S::get(wi[row + k + 1]), S::get(wi[row + k + 2]), S::get(wi[row + k + 3]));
        }
    }
    // Cell role: batch row cb of the tile, unit s·U + cu.
    const bool cell = tid < BB * U;
    const int cb = tid / U, cu = tid % U;
    const long long bb = b0 + cb, unit = s * U + cu;
    const bool live = cell && bb < nb;
    float cbias[4];
    // The next step's inputs and reset flags stay in their storage type until they are used: a bf16 widened
    // right after its load would make the thread wait for the load there, a memory latency every step.
    typename SI::T nin[4] = {};
#pragma unroll
    for (int g = 0; g < 4; g++) cbias[g] = live && bias != nullptr ? bias[head * 4 * H + g * H + unit] : 0.0f;
    // The input of step t: the given pre-activations (cell threads), or x_t (XIN: element tid of the tile's).
    const long long xb = b0 + tid / H;
    auto fetch = [&](long long t) {
        if (XIN) {
            nin[0] = tid < BB * H && xb < nb ? in[(xb * nt + t) * H + tid % H] : typename SI::T(0);
        } else if (in != nullptr) {
#pragma unroll
            for (int g = 0; g < 4; g++)
                nin[g] = live ? in[((bb * nt + t) * heads + head) * 4 * H + g * H + unit] : typename SI::T(0);
        }
    };
    Cell st;
    for (int i = tid; i < BB * H; i += NT) hs[i / H][i % H] = 0.0f;
    if (tid < BB) sflag[0][tid] = b0 + tid < nb ? S::get(resets[(b0 + tid) * nt]) : 0.0f;
    fetch(0);
    if (XIN && tid < BB * H) xs[0][tid / H][tid % H] = SI::get(nin[0]);
    __syncthreads();
    for (long long t = 0; t < nt; t++) {
        const int par = (int)(t & 1);
        float cur[4];
        typename S::T nflag = 0;
#pragma unroll
        for (int g = 0; g < 4; g++) cur[g] = XIN ? 0.0f : SI::get(nin[g]);
        if (t + 1 < nt) {
            fetch(t + 1);
            if (tid < BB) nflag = b0 + tid < nb ? resets[(b0 + tid) * nt + t + 1] : typename S::T(0);
        }
        float acc[BB], accx[BB];
#pragma unroll
        for (int i = 0; i < BB; i++) {
            float4 p = make_float4(0.0f, 0.0f, 0.0f, 0.0f), px = p;
#pragma unroll
            for (int j = 0; j < NW; j++) {
                const float4 h4 = *reinterpret_cast<const float4*>(&hs[i][4 * (q + KS * j)]);
                if (NP == 4) {
                    p.x = fmaf(wv[j].x, h4.x, p.x), p.y = fmaf(wv[j].y, h4.y, p.y);
                    p.z = fmaf(wv[j].z, h4.z, p.z), p.w = fmaf(wv[j].w, h4.w, p.w);
                } else {
                    p.x = fmaf(wv[j].x, h4.x, fmaf(wv[j].y, h4.y, fmaf(wv[j].z, h4.z, fmaf(wv[j].w, h4.w, p.x))));
                }
                if (XIN) {
                    const float4 x4 = *reinterpret_cast<const float4*>(&xs[XIN ? par : 0][i][4 * (q + KS * j)]);
                    px.x = fmaf(wiv[j].x, x4.x, px.x), px.y = fmaf(wiv[j].y, x4.y, px.y);
                    px.z = fmaf(wiv[j].z, x4.z, px.z), px.w = fmaf(wiv[j].w, x4.w, px.w);
                }
            }
            acc[i] = NP == 4 ? (p.x + p.y) + (p.z + p.w) : p.x;
            accx[i] = (px.x + px.y) + (px.z + px.w);
        }
#pragma unroll
        for (int o = 1; o < KS; o <<= 1)
#pragma unroll
            for (int i = 0; i < BB; i++) {
                acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
                if (XIN) accx[i] += __shfl_xor_sync(0xffffffffu, accx[i], o);
            }
        if (q == 0) {
#pragma unroll
            for (int i = 0; i < BB; i++) gs[i][r] = (sflag[par][i] != 0.0f ? 0.0f : acc[i]) + (XIN ? accx[i] : 0.0f);
        }
        __syncthreads();
        if (cell) {
            float z[4];
#pragma unroll
            for (int g = 0; g < 4; g++) z[g] = gs[cb][g * U + cu] + cur[g] + cbias[g];
            const float hv = st.step(z, t == 0 || sflag[par][cb] != 0.0f);
            if (live) y[((bb * nt + t) * heads + head) * H + unit] = S::put(hv);
            if (SPLIT == 1) {
                hs[cb][cu] = hv;
            } else if (live) {
                hx[(par * nb + bb) * H + unit] = hv;
            }
        }
        if (tid < BB && t + 1 < nt) sflag[par ^ 1][tid] = S::get(nflag);
        if (XIN && tid < BB * H && t + 1 < nt) xs[XIN ? par ^ 1 : 0][tid / H][tid % H] = SI::get(nin[0]);
        if (SPLIT > 1) {
            rnn_group_barrier(bar + 2 * grp, SPLIT);
            for (int i = tid; i < BB * H; i += NT) {
                const long long b = b0 + i / H;
                hs[i / H][i % H] = b < nb ? __ldcg(&hx[(par * nb + b) * H + i % H]) : 0.0f;
            }
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Gate functions for fp32 outputs on the special-function unit, within a few ulp of the accurate ones (expf,
// tanhf, log1pf and IEEE division cost several times as many instructions on the cell's chain of dependent
// operations each step). rnn_exp is 2^(x·log2 e) with the product's rounding error put back (fma): ex2.approx
// of the rounded product alone would be off by |x|·2⁻²⁴ relative; rnn_tanh is 1 − 2/(e^2|x| + 1) with the
// sign (absolute error a few 1e-8, where tanh x ≈ x is small); rnn_logsigmoid takes log(1 + e^−|x|) from
// lg2.approx (absolute error about 2⁻²²). The LSTM's and sLSTM's fp32 tolerance is 1e-5 relative L2.
__device__ __forceinline__ float rnn_exp(float x) {
    x = fminf(x, 88.0f);  // e^88 < FLT_MAX: no ∞·0 below
    const float p = x * 1.44269504f, e = fmaf(x, 1.44269504f, -p) + x * 1.92596299e-8f;  // log2 e = hi + lo
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(p));
    return fmaf(r * e, 0.693147181f, r);
}
__device__ __forceinline__ float rnn_sigmoid(float x) { return __fdividef(1.0f, 1.0f + rnn_exp(-x)); }
__device__ __forceinline__ float rnn_tanh(float x) {
    return copysignf(1.0f - __fdividef(2.0f, rnn_exp(2.0f * fabsf(x)) + 1.0f), x);
}
__device__ __forceinline__ float rnn_logsigmoid(float x) {
    return fminf(x, 0.0f) - __log2f(1.0f + rnn_exp(-fabsf(x))) * 0.693147181f;
}

// rnn_units is the persistent recurrent kernel of rnn_persistent's layer (same recurrence, layouts and inputs,
// one block a (BB batch rows, head), H ≤ 64) with the work split by unit instead of by gate row: thread
// (u, q) of H·KS holds 1/KS of all four gate rows of unit u (W and, with XIN, Wi: float4 chunks q, q + KS, …),
// so that each float4 of h (and x) it reads from shared memory feeds 16 FMAs rather than 4, the KS lanes of a
// unit add their sums with shuffles and then all hold the unit's four pre-activations: no exchange of gates
// through shared memory and one barrier a step (h double-buffered by step parity; __syncwarp when the block is
// one warp). Lane q runs the cell of batch rows q mod BB, q mod BB + KS, … (lanes past BB repeat rows, with the
// same operations on the same values, and do not write), whose state stays in its registers. The given inputs
// of a step and the reset flags are prefetched a step ahead and kept as stored until used. With XA (XIN only),
// x runs a step ahead of h: x_{t+1}·Wiᵀ is computed in step t, after W h_{t−1} and before the shuffles and the
// cell, which do not wait for it (three x buffers, x_{t+2} loaded during step t). grid = ⌈batch/BB⌉ · heads.
template <class Cell, class S, class SI, int H, int KS, int BB, bool XIN, bool XA = false>
__device__ __forceinline__ void rnn_units(const typename SI::T* __restrict__ in, const typename S::T* __restrict__ wi,
                                          const float* __restrict__ bias, const typename S::T* __restrict__ w,
                                          const typename S::T* __restrict__ resets, typename S::T* __restrict__ y,
                                          long long nb, long long nt, long long heads) {
    constexpr int NT = H * KS, NW = H / (4 * KS), CR = BB > KS ? BB / KS : 1, XE = (BB * H + NT - 1) / NT;
    constexpr int P = BB == 1 && !XIN ? 2 : 1;  // partial sums a gate: independent FMA chains with one row
    constexpr bool AHEAD = XIN && XA;
    constexpr int XB = XIN ? (AHEAD ? 3 : 2) : 1;  // x buffers
    static_assert(H % (4 * KS) == 0 && (KS & (KS - 1)) == 0 && KS <= 32 && (BB % KS == 0 || KS % BB == 0),
                  "rnn_units: bad shape");
    __shared__ __align__(16) float hs[2][BB][H];
    __shared__ __align__(16) float xs[XB][XIN ? BB : 1][XIN ? H : 4];
    const int tid = threadIdx.x, u = tid / KS, q = tid % KS;
    const long long head = blockIdx.x % heads, b0 = blockIdx.x / heads * BB;
    float4 wv[4][NW], wiv[XIN ? 4 : 1][XIN ? NW : 1];
#pragma unroll
    for (int g = 0; g < 4; g++) {
        const long long row = (head * 4 * H + g * H + u) * H;
#pragma unroll
        for (int j = 0; j < NW; j++) {
            const int k = 4 * (q + KS * j);
            wv[g][j] = make_float4(S::get(w[row + k]), S::get(w[row + k + 1]), S::get(w[row + k + 2]), S::get(w[row + k + 3]));
            if (XIN)
                wiv[XIN ? g : 0][XIN ? j : 0] = make_float4(S::get(wi[row + k]), S::get(wi[row + k + 1]),
                                                            S::get(wi[row + k + 2]), S::get(wi[row + k + 3]));
        }
    }
    float cbias[4];
#pragma unroll
    for (int g = 0; g < 4; g++) cbias[g] = bias != nullptr ? bias[head * 4 * H + g * H + u] : 0.0f;
    // Rows of this lane's cells: cr = 0 … CR − 1 is batch row b0 + q % BB + KS·cr.
    auto crow = [&](int cr) { return b0 + q % BB + KS * cr; };
    typename SI::T nin[CR][4] = {};
    typename SI::T nx[XE] = {};
    typename S::T nflag[BB] = {};
    auto fetchx = [&](long long t) {  // x_t into nx (t < nt)
#pragma unroll
        for (int e = 0; e < XE; e++) {
            const int i = tid + NT * e;
            const long long b = b0 + i / H;
            nx[e] = i < BB * H && b < nb ? in[(b * nt + t) * H + i % H] : typename SI::T(0);
        }
    };
    auto storex = [&](int buf) {
#pragma unroll
        for (int e = 0; e < XE; e++)
            if (tid + NT * e < BB * H) xs[buf][(tid + NT * e) / H][(tid + NT * e) % H] = SI::get(nx[e]);
    };
    // x·Wiᵀ of this thread's parts from buffer buf.
    auto xproj = [&](int buf, float (&ax)[BB][4]) {
#pragma unroll
        for (int b = 0; b < BB; b++)
#pragma unroll
            for (int g = 0; g < 4; g++) ax[b][g] = 0.0f;
#pragma unroll
        for (int j = 0; j < NW; j++)
#pragma unroll
            for (int b = 0; b < BB; b++) {
                const float4 x4 = *reinterpret_cast<const float4*>(&xs[buf][XIN ? b : 0][4 * (q + KS * j)]);
#pragma unroll
                for (int g = 0; g < 4; g++) {
                    const float4 v = wiv[XIN ? g : 0][XIN ? j : 0];
                    ax[b][g] = fmaf(v.x, x4.x, fmaf(v.y, x4.y, fmaf(v.z, x4.z, fmaf(v.w, x4.w, ax[b][g]))));
                }
            }
    };
    auto fetch = [&](long long t) {
        if (XIN && !AHEAD) {
            fetchx(t);
        } else if (!XIN && in != nullptr) {
#pragma unroll
            for (int cr = 0; cr < CR; cr++)
#pragma unroll
                for (int g = 0; g < 4; g++)
                    nin[cr][g] = crow(cr) < nb ? in[((crow(cr) * nt + t) * heads + head) * 4 * H + g * H + u]
                                               : typename SI::T(0);
        }
#pragma unroll
        for (int b = 0; b < BB; b++) nflag[b] = b0 + b < nb ? resets[(b0 + b) * nt + t] : typename S::T(0);
    };
    auto sync = [] {
        if (NT <= 32) {
            __syncwarp(NT == 32 ? 0xffffffffu : (1u << (NT & 31)) - 1u);  // a block of 16 threads: half a warp
        } else {
            __syncthreads();
        }
    };
    Cell st[CR];
    for (int i = tid; i < BB * H; i += NT) hs[0][i / H][i % H] = 0.0f;
    fetch(0);
    if (XIN) {
        if (AHEAD) fetchx(0);
        storex(0);
        if (AHEAD && nt > 1) {
            fetchx(1);
            storex(1);
        }
    }
    sync();
    float accx[BB][4];
    if (AHEAD) xproj(0, accx);
    for (long long t = 0; t < nt; t++) {
        const int par = (int)(t & 1);
        float cur[CR][4];
        bool first[BB];
#pragma unroll
        for (int cr = 0; cr < CR; cr++)
#pragma unroll
            for (int g = 0; g < 4; g++) cur[cr][g] = XIN ? 0.0f : SI::get(nin[cr][g]);
#pragma unroll
        for (int b = 0; b < BB; b++) first[b] = t == 0 || S::get(nflag[b]) != 0.0f;
        if (t + 1 < nt) fetch(t + 1);
        if (AHEAD && t + 2 < nt) fetchx(t + 2);
        float acc[BB][4][P];
#pragma unroll
        for (int b = 0; b < BB; b++)
#pragma unroll
            for (int g = 0; g < 4; g++) {
                if (!AHEAD) accx[b][g] = 0.0f;
#pragma unroll
                for (int p = 0; p < P; p++) acc[b][g][p] = 0.0f;
            }
#pragma unroll
        for (int j = 0; j < NW; j++)
#pragma unroll
            for (int b = 0; b < BB; b++) {
                const float4 h4 = *reinterpret_cast<const float4*>(&hs[par][b][4 * (q + KS * j)]);
#pragma unroll
                for (int g = 0; g < 4; g++) {
                    if (P == 2) {
                        acc[b][g][0] = fmaf(wv[g][j].x, h4.x, fmaf(wv[g][j].y, h4.y, acc[b][g][0]));
                        acc[b][g][P - 1] = fmaf(wv[g][j].z, h4.z, fmaf(wv[g][j].w, h4.w, acc[b][g][P - 1]));
                    } else {
                        acc[b][g][0] = fmaf(wv[g][j].x, h4.x, fmaf(wv[g][j].y, h4.y,
                                            fmaf(wv[g][j].z, h4.z, fmaf(wv[g][j].w, h4.w, acc[b][g][0]))));
                    }
                }
                if (XIN && !AHEAD) {
                    const float4 x4 = *reinterpret_cast<const float4*>(&xs[XIN ? par : 0][XIN ? b : 0][4 * (q + KS * j)]);
#pragma unroll
                    for (int g = 0; g < 4; g++) {
                        const float4 v = wiv[XIN ? g : 0][XIN ? j : 0];
                        accx[b][g] = fmaf(v.x, x4.x, fmaf(v.y, x4.y, fmaf(v.z, x4.z, fmaf(v.w, x4.w, accx[b][g]))));
                    }
                }
            }
        float accn[BB][4];  // AHEAD: x_{t+1}·Wiᵀ, independent of this step's cells
        if (AHEAD && t + 1 < nt) xproj((int)((t + 1) % 3), accn);
        // The recurrent part of a row's pre-activations is dropped at its first step (h_{t−1} = 0), before the
        // lanes add their parts.
        float pre[BB][4];
#pragma unroll
        for (int b = 0; b < BB; b++)
#pragma unroll
            for (int g = 0; g < 4; g++) {
                const float a = P == 2 ? acc[b][g][0] + acc[b][g][P - 1] : acc[b][g][0];
                pre[b][g] = (first[b] ? 0.0f : a) + accx[b][g];
            }
#pragma unroll
        for (int o = 1; o < KS; o <<= 1)
#pragma unroll
            for (int b = 0; b < BB; b++)
#pragma unroll
                for (int g = 0; g < 4; g++) pre[b][g] += __shfl_xor_sync(0xffffffffu, pre[b][g], o);
#pragma unroll
        for (int cr = 0; cr < CR; cr++) {
            const int b = q % BB + KS * cr;
            float z[4];
#pragma unroll
            for (int g = 0; g < 4; g++) {
                float v = pre[0][g];
#pragma unroll
                for (int i = 1; i < BB; i++) v = b == i ? pre[i][g] : v;
                z[g] = v + cur[cr][g] + cbias[g];
            }
            bool f = first[0];
#pragma unroll
            for (int i = 1; i < BB; i++) f = b == i ? first[i] : f;
            const float hv = st[cr].step(z, f);
            if (q < BB) {
                hs[par ^ 1][b][u] = hv;
                if (b0 + b < nb) y[(((b0 + b) * nt + t) * heads + head) * H + u] = S::put(hv);
            }
        }
        if (XIN && !AHEAD && t + 1 < nt) storex(par ^ 1);
        if (AHEAD) {
            if (t + 2 < nt) storex((int)((t + 2) % 3));
#pragma unroll
            for (int b = 0; b < BB; b++)
#pragma unroll
                for (int g = 0; g < 4; g++) accx[b][g] = accn[b][g];
        }
        sync();
    }
}

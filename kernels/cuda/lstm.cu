// lstm.cu: the LSTM forward pass with resets (LSTMFamily, lstm.go), gate order (i, f, g, o):
//
//   z_t = G_t + W_hh h_{t−1}  (G = x·W_ihᵀ + bias),  c_t = σ(z_f) c_{t−1} + σ(z_i) tanh(z_g),  h_t = σ(z_o) tanh(c_t),
//
// h and c zero at t = 0 and at a reset. fp32 arithmetic and state, fp32 or bf16 storage of x, W_ih, W_hh, y.
//
//   lstm_gemm_*: rnn.cuh's GEMM: the input projection G of hidden 128 and 256 and of the naive form, and the
//     naive form's per-step W_hh·h.
//   lstm_rnnx_*_h{H}_bb{BB}: the fused form for hidden 16, 32, 64: one persistent kernel (rnn.cuh's
//     rnn_persistent) that also computes the input projection: a block of 4·hidden threads holds all of W_ih and
//     W_hh in registers (a row of each a thread) for BB batch rows, and reads x_t and writes h_t once.
//   lstm_rnn_*_h{H}_bb{BB}: the fused form for hidden 128 and 256, after the input projection G: W_hh alone
//     fills the registers of two (128: 64 units, 2 lanes a row) or eight (256: 32 units, 4 lanes a row) blocks
//     a batch tile, which exchange h through global memory once a step.
//   lstm_cell_*: the naive form's pointwise cell over [batch, h | c] (PyTorch's fused LSTM cell), which also
//     writes y_t.
#include "rnn.cuh"

// LstmCellF is LstmCell (below) with rnn.cuh's fp32 gate functions on the special-function unit: the unit
// kernels' fast cell, and the 3xTF32 kernel's.
struct LstmCellF {
    float c = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = 0.0f;
        c = rnn_sigmoid(z[1]) * c + rnn_sigmoid(z[0]) * rnn_tanh(z[2]);
        return rnn_sigmoid(z[3]) * rnn_tanh(c);
    }
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900  // module lstm (compute_75); lstm_sm90 has only lstm_tc below

struct LstmCell {
    float c = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = 0.0f;
        c = seq_sigmoid(z[1]) * c + seq_sigmoid(z[0]) * tanhf(z[2]);
        return seq_sigmoid(z[3]) * tanhf(c);
    }
};

#define LSTM_RNN(S, NAME, H, U, KS, BB)                                                                          \
    extern "C" __global__ void __launch_bounds__(4 * U * KS, 1) lstm_rnn_##NAME##_h##H##_bb##BB(                 \
        const float* g, const S::T* w_hh, const S::T* resets, S::T* y, float* hx, unsigned* bar, long long nb,     \
        long long nt) {                                                                                           \
        rnn_persistent<LstmCell, S, F32, H, U, KS, BB, false>(g, nullptr, nullptr, w_hh, resets, y, hx, bar, nb, \
                                                                nt, 1);                                           \
    }

// lstm_units{,f}_f32_h{H}_l{KS}_bb{BB}: rnn.cuh's rnn_units with the input projection inside (a thread per
// unit and 1/KS of its four gate rows of W_ih and W_hh), with the accurate cell or LstmCellF (f).
#define LSTM_UNITS(CELL, F, H, KS, BB)                                                                            \
    extern "C" __global__ void __launch_bounds__(H * KS) lstm_units##F##_f32_h##H##_l##KS##_bb##BB(               \
        const float* x, const float* w_ih, const float* bias, const float* w_hh, const float* resets, float* y,   \
        long long nb, long long nt) {                                                                             \
        rnn_units<CELL, F32, F32, H, KS, BB, true>(x, w_ih, bias, w_hh, resets, y, nb, nt, 1);                    \
    }
// _xa: x a step ahead of h (rnn_units' XA).
#define LSTM_UNITS_XA(H, KS, BB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(H * KS) lstm_unitsf_f32_h##H##_l##KS##_bb##BB##_xa(              \
        const float* x, const float* w_ih, const float* bias, const float* w_hh, const float* resets, float* y,   \
        long long nb, long long nt) {                                                                             \
        rnn_units<LstmCellF, F32, F32, H, KS, BB, true, true>(x, w_ih, bias, w_hh, resets, y, nb, nt, 1);         \
    }
#define LSTM_UNITS_BB(CELL, F, H, KS) LSTM_UNITS(CELL, F, H, KS, 1) LSTM_UNITS(CELL, F, H, KS, 2) LSTM_UNITS(CELL, F, H, KS, 4)
// The default lanes (lstmUnitLanes) with both cells and with the fast one and x ahead (_xa), twice as many
// (lstmUnitLanesAlt) with the fast one.
#define LSTM_UNITS_H(H, KS, KS2)                                                                                  \
    LSTM_UNITS_BB(LstmCell, , H, KS) LSTM_UNITS_BB(LstmCellF, f, H, KS) LSTM_UNITS_BB(LstmCellF, f, H, KS2)       \
    LSTM_UNITS_XA(H, KS, 1) LSTM_UNITS_XA(H, KS, 2) LSTM_UNITS_XA(H, KS, 4)

// lstm_rnnx: the input projection inside the persistent kernel, W_ih in registers next to W_hh.
#define LSTM_RNNX(S, NAME, H, BB)                                                                                 \
    extern "C" __global__ void __launch_bounds__(4 * H) lstm_rnnx_##NAME##_h##H##_bb##BB(                         \
        const S::T* x, const S::T* w_ih, const float* bias, const S::T* w_hh, const S::T* resets, S::T* y,        \
        long long nb, long long nt) {                                                                             \
        rnn_persistent<LstmCell, S, S, H, H, 1, BB, true>(x, w_ih, bias, w_hh, resets, y, nullptr, nullptr, nb,   \
                                                           nt, 1);                                                \
    }

// lstm_cell: per (b, u) the four gates z = gates[b] + G[b, t], then the cell on st [batch, 2H] = [h | c].
#define LSTM_CELL(S, NAME)                                                                                        \
    extern "C" __global__ void lstm_cell_##NAME(const float* gates, const float* g, float* st, S::T* y,           \
                                                long long t, long long nb, long long nt, long long nh) {          \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nb * nh;                         \
             i += (long long)gridDim.x * blockDim.x) {                                                            \
            const long long b = i / nh, u = i % nh;                                                               \
            const float* zb = gates + b * 4 * nh + u;                                                             \
            const float* gb = g + (b * nt + t) * 4 * nh + u;                                                      \
            float z[4];                                                                                           \
            for (int k = 0; k < 4; k++) z[k] = gb[k * nh] + zb[k * nh];                                           \
            LstmCell cell;                                                                                        \
            cell.c = st[b * 2 * nh + nh + u];                                                                     \
            const float h = cell.step(z, false);                                                                  \
            st[b * 2 * nh + u] = h;                                                                               \
            st[b * 2 * nh + nh + u] = cell.c;                                                                     \
            y[(b * nt + t) * nh + u] = S::put(h);                                                                 \
        }                                                                                                         \
    }

#define LSTM_DTYPE(S, NAME)                                                                                       \
    LSTM_RNNX(S, NAME, 16, 1)                                                                                     \
    LSTM_RNNX(S, NAME, 16, 2)                                                                                     \
    LSTM_RNNX(S, NAME, 16, 4)                                                                                     \
    LSTM_RNNX(S, NAME, 32, 1)                                                                                     \
    LSTM_RNNX(S, NAME, 32, 2)                                                                                     \
    LSTM_RNNX(S, NAME, 32, 4)                                                                                     \
    LSTM_RNNX(S, NAME, 64, 1)                                                                                     \
    LSTM_RNNX(S, NAME, 64, 2)                                                                                     \
    LSTM_RNNX(S, NAME, 64, 4)                                                                                     \
    LSTM_RNN(S, NAME, 128, 64, 2, 1)                                                                              \
    LSTM_RNN(S, NAME, 128, 64, 2, 2)                                                                              \
    LSTM_RNN(S, NAME, 128, 64, 2, 4)                                                                              \
    LSTM_RNN(S, NAME, 128, 64, 2, 8)                                                                              \
    LSTM_RNN(S, NAME, 256, 32, 4, 1)                                                                              \
    LSTM_RNN(S, NAME, 256, 32, 4, 2)                                                                              \
    LSTM_RNN(S, NAME, 256, 32, 4, 4)                                                                              \
    LSTM_RNN(S, NAME, 256, 32, 4, 8)                                                                              \
    LSTM_RNN(S, NAME, 256, 32, 4, 16)                                                                             \
    LSTM_CELL(S, NAME)

LSTM_DTYPE(F32, f32)
LSTM_DTYPE(BF16, bf16)
LSTM_UNITS_H(16, 1, 2)
LSTM_UNITS_H(32, 2, 4)
LSTM_UNITS_H(64, 4, 8)
RNN_GEMM(lstm, F32, f32, F32, f32, 64)
RNN_GEMM(lstm, F32, f32, F32, f32, 128)
RNN_GEMM(lstm, BF16, bf16, BF16, bf16, 64)
RNN_GEMM(lstm, BF16, bf16, BF16, bf16, 128)
RNN_GEMM(lstm, F32, f32, BF16, bf16, 64)
RNN_GEMM(lstm, F32, f32, BF16, bf16, 128)
#endif  // module lstm

// Module lstm_sm90 (compute_90): the fused form for bf16 on tensor cores (rnn_tc.cuh), after lstm_tc_proj_bf16,
// the input projection G (fp32, bias included) for hidden 128 and 256; for hidden ≤ 64 the projection is inside.
//   lstm_tc_bf16_h{H}_cl{CL}_{mt1,mt2,r8}[_g]: rnn_tc with 16, 32 or 8 batch rows a cluster of CL blocks; _g: the
//     hidden-64 kernels over G.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include "rnn_tc.cuh"
#include "rnn_x3.cuh"

// LstmCellTC is LstmCell with tanh.approx gates (bf16 outputs only).
struct LstmCellTC {
    float c = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = 0.0f;
        c = tc_sigmoid(z[1]) * c + tc_sigmoid(z[0]) * tc_tanh(z[2]);
        return tc_sigmoid(z[3]) * tc_tanh(c);
    }
};

// LstmPairTC is two LstmCellTC: rnn_tc_r8x's cells of a thread's two units.
struct LstmPairTC {
    LstmCellTC u0, u1;
    __device__ __forceinline__ void step2(const float z[4][2], float h[2]) {
        const float a[4] = {z[0][0], z[1][0], z[2][0], z[3][0]}, b[4] = {z[0][1], z[1][1], z[2][1], z[3][1]};
        h[0] = u0.step(a, false);
        h[1] = u1.step(b, false);
    }
};

#define LSTM_TC(H, CL, TILE, MT, R8, IN, SUFFIX)                                                            \
    extern "C" __global__ void __launch_bounds__(4 * H / CL, 1) lstm_tc_bf16_h##H##_cl##CL##_##TILE##SUFFIX(       \
        const void* in, const unsigned short* w_ih, const float* bias, const unsigned short* w_hh,                \
        const unsigned short* resets, unsigned short* y, long long nb, long long nt) {                            \
        rnn_tc<LstmCellTC, H, CL, MT, IN, R8>(in, w_ih, bias, w_hh, resets, y, nb, nt, 1);                        \
    }
// x: the projection inside (hidden ≤ 64); _g: over G from lstm_tc_proj_bf16 (every r8 tile takes G).
#define LSTM_TC_X(H, CL) LSTM_TC(H, CL, mt1, 1, false, RNN_TC_X, ) LSTM_TC(H, CL, mt2, 2, false, RNN_TC_X, )
#define LSTM_TC_G(H, CL, SUFFIX)                                                                                  \
    LSTM_TC(H, CL, mt1, 1, false, RNN_TC_G32, SUFFIX)                                                             \
    LSTM_TC(H, CL, mt2, 2, false, RNN_TC_G32, SUFFIX) LSTM_TC(H, CL, r8, 1, true, RNN_TC_G32, SUFFIX)

LSTM_TC_X(16, 1)
LSTM_TC_X(32, 1)
LSTM_TC_X(64, 1)
LSTM_TC_X(64, 2)
LSTM_TC_G(64, 1, _g)
LSTM_TC_G(128, 2, )
LSTM_TC_G(256, 4, )
LSTM_TC_G(256, 8, )

// lstm_tc_bf16_h{H}_r8x[_k2]: rnn_tc_r8x, 8 batch rows a block with the projection inside a step ahead, W h in
// one chain of mma or two (k2); static shared memory.
#define LSTM_TC_R8X(H, PAIR, K2, SUFFIX)                                                                          \
    extern "C" __global__ void __launch_bounds__(4 * H, 1) lstm_tc_bf16_h##H##_r8x##SUFFIX(                       \
        const unsigned short* x, const unsigned short* w_ih, const float* bias, const unsigned short* w_hh,       \
        const unsigned short* resets, unsigned short* y, long long nb, long long nt) {                            \
        rnn_tc_r8x<PAIR, H, 8, K2>(x, w_ih, bias, w_hh, resets, y, nb, nt);                                       \
    }
LSTM_TC_R8X(64, LstmPairTC, false, )
LSTM_TC_R8X(64, LstmPairTC, true, _k2)

// fp32 on tensor cores in 3xTF32 (rnn_x3.cuh), for hidden 128 and 256: lstm_x3_proj_f32_*, the input projection G
// (fp32, bias included), then
//   lstm_x3_f32_h{H}_cl{CL}_kp{KP}_mt{MT}[_wl]: rnn_x3 over G, 16·MT batch rows a cluster of CL blocks, K
//     split over KP warps; _wl: W's bf16 lo parts held in registers (else made each step); y staged in
//     shared memory (written 8 steps at a time) is gone and clusters of 16 are no longer built (slower on an H100 and an
//     H200, docs/kernels.md), to keep the module's JIT short; _ko2, _ko3, _ko4: timing only (TestCUDALSTMX3Parts), a step
//     without its y stores, its h stores into the other blocks, its G loads; _a1: one accumulator a gate tile
//     (RnnX3's A1: 16·MT fewer registers, so that two m16 tiles fit without spilling); _h3: W_hh·h as three fp16
//     products (rnn_x3's H3) rather than 3xTF32.
#define LSTM_X3H(H, CL, KP, MT, WLO, NS, V, A1, H3, SUFFIX)                                                       \
    extern "C" __global__ void __launch_bounds__(RnnX3<H, CL, KP, MT, WLO, NS, V, A1>::THREADS, 1)                \
        lstm_x3_f32_h##H##_cl##CL##_kp##KP##_mt##MT##SUFFIX(const float* g, const float* w_hh, const float* resets, \
                                                            float* y, long long nb, long long nt) {               \
        rnn_x3<LstmCellF, H, CL, KP, MT, WLO, NS, V, A1, false, H3>(g, w_hh, resets, y, nb, nt);                   \
    }
#define LSTM_X3A(H, CL, KP, MT, WLO, NS, V, A1, SUFFIX) LSTM_X3H(H, CL, KP, MT, WLO, NS, V, A1, false, SUFFIX)
#define LSTM_X3(H, CL, KP, MT, WLO, NS, V, SUFFIX) LSTM_X3A(H, CL, KP, MT, WLO, NS, V, false, SUFFIX)
LSTM_X3(128, 4, 2, 1, false, 1, 0, )
LSTM_X3(256, 8, 2, 1, false, 1, 0, )
LSTM_X3(256, 8, 2, 1, true, 1, 0, _wl)
LSTM_X3(256, 8, 2, 1, true, 1, 2, _wl_ko2)
LSTM_X3(256, 8, 2, 1, true, 1, 3, _wl_ko3)
LSTM_X3(256, 8, 2, 1, true, 1, 4, _wl_ko4)
LSTM_X3A(256, 8, 2, 2, false, 1, 0, true, _a1)
LSTM_X3H(256, 8, 2, 1, false, 1, 0, false, true, _h3)
LSTM_X3H(256, 8, 2, 2, false, 1, 0, true, true, _a1_h3)

// lstm_x3_f32_h{H}_cl{CL}_kp{KP}_mt{MT}_a1_pa[_h3][_ph]: rnn_x3_pa, the projection made alongside the recurrence in
// one launch, into g (scratch [batch, t, 4H] fp32), ready: rnn_x3_pa's counters, zero at the first launch; _h3: the
// recurrence's products in fp16 (rnn_x3's H3); _ph: the projection's too (rnn_x3_proj_tile's PH3). A projection
// block's tiles through one cp.async ring of 4 stages was no faster (0.833 ms against 0.815) and is gone.
#define LSTM_X3PAP(H, CL, KP, MT, WLO, H3, PH3, SUFFIX)                                                          \
    extern "C" __global__ void __launch_bounds__(RnnX3<H, CL, KP, MT, WLO, 1, 0, true>::THREADS, 1)               \
        lstm_x3_f32_h##H##_cl##CL##_kp##KP##_mt##MT##SUFFIX(                                                      \
            const float* x, const float* w_ih, const float* bias, float* g, const float* w_hh, const float* resets, \
            float* y, int* ready, long long nb, long long nt, long long nrc) {                                     \
        rnn_x3_pa<LstmCellF, H, CL, KP, MT, WLO, true, H3, PH3>(x, w_ih, bias, g, w_hh, resets, y, ready, nb, nt,  \
                                                              nrc);                                              \
    }
LSTM_X3PAP(256, 8, 2, 2, false, true, false, _a1_pa_h3)
LSTM_X3PAP(256, 8, 2, 2, false, true, true, _a1_pa_h3_ph)

// LstmCellF8 is LstmCellF in 8 special-function operations instead of 10: with s = e^−|z|, σ(z) is
// (z ≥ 0 ? 1 : s)/(1 + s), and with t = e^−2|z|, tanh z is ±(1 − t)/(1 + t), so that σ(z_i)·tanh(z_g) and
// σ(z_o)·tanh(c) each take one reciprocal of a product of two denominators (each in [1, 2]: no overflow, no
// denormals, rcp.approx.ftz as it is), and σ(z_f) one: five exponentials and three reciprocals. The absolute
// errors are those of LstmCellF (1 − t loses what t's rounding holds where |z| is small, as 1 − 2/(e^2|z| + 1)
// does). EXACT: rnn_expneg's corrected product.
template <bool EXACT>
struct LstmCellF8 {
    float c = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = 0.0f;
        const float si = rnn_expneg<EXACT>(fabsf(z[0])), sf = rnn_expneg<EXACT>(fabsf(z[1]));
        const float tg = rnn_expneg<EXACT>(2.0f * fabsf(z[2])), so = rnn_expneg<EXACT>(fabsf(z[3]));
        const float ni = z[0] >= 0.0f ? 1.0f : si, nf = z[1] >= 0.0f ? 1.0f : sf, no = z[3] >= 0.0f ? 1.0f : so;
        const float ig = copysignf(ni * (1.0f - tg), z[2]) * rnn_rcp((1.0f + si) * (1.0f + tg));
        c = fmaf(nf * rnn_rcp(1.0f + sf), c, ig);
        const float tc = rnn_expneg<EXACT>(2.0f * fabsf(c));
        return copysignf(no * (1.0f - tc), c) * rnn_rcp((1.0f + so) * (1.0f + tc));
    }
};

// lstm_unitsf_f32_h{H}_l4_bb{BB}_xt[_e][_c8|_c8n]: rnn_units_xt (the projection on tensor cores a chunk of steps at a
// time) with LstmCellF, or LstmCellF8 with (c8) or without (c8n) the exponentials' correction; _e: the step's flag
// and projection read before its FMAs (XE).
#define LSTM_UNITS_XT(H, BB, CELL, XE, SUFFIX)                                                                    \
    extern "C" __global__ void __launch_bounds__(H * 4) lstm_unitsf_f32_h##H##_l4_bb##BB##_xt##SUFFIX(            \
        const float* x, const float* w_ih, const float* bias, const float* w_hh, const float* resets, float* y,   \
        long long nb, long long nt) {                                                                             \
        rnn_units_xt<CELL, H, BB, XE>(x, w_ih, bias, w_hh, resets, y, nb, nt);                                    \
    }
#define LSTM_UNITS_XT_BB(H, CELL, XE, SUFFIX)                                                                     \
    LSTM_UNITS_XT(H, 1, CELL, XE, SUFFIX) LSTM_UNITS_XT(H, 2, CELL, XE, SUFFIX) LSTM_UNITS_XT(H, 4, CELL, XE, SUFFIX)
LSTM_UNITS_XT_BB(64, LstmCellF, false, )
LSTM_UNITS_XT_BB(64, LstmCellF8<true>, false, _c8)
LSTM_UNITS_XT_BB(64, LstmCellF8<false>, false, _c8n)
LSTM_UNITS_XT_BB(64, LstmCellF8<false>, true, _e_c8n)
// _e_r: also a reset applied a step early, y's offset carried and W_ih's lo fragments made once (XR).
#define LSTM_UNITS_XT_R(H, BB)                                                                                    \
    extern "C" __global__ void __launch_bounds__(H * 4) lstm_unitsf_f32_h##H##_l4_bb##BB##_xt_e_r_c8n(             \
        const float* x, const float* w_ih, const float* bias, const float* w_hh, const float* resets, float* y,   \
        long long nb, long long nt) {                                                                             \
        rnn_units_xt<LstmCellF8<false>, H, BB, true, true>(x, w_ih, bias, w_hh, resets, y, nb, nt);               \
    }
LSTM_UNITS_XT_R(64, 1)
LSTM_UNITS_XT_R(64, 2)
LSTM_UNITS_XT_R(64, 4)

// lstm_x3_proj_f32_{BM}x{BN}_w{WM}x{WN}: rnn_x3_proj's tile shapes.
#define LSTM_X3_PROJ(BM, BN, WM, WN)                                                                              \
    extern "C" __global__ void __launch_bounds__(32 * WM * WN) lstm_x3_proj_f32_##BM##x##BN##_w##WM##x##WN(        \
        const float* x, const float* w_ih, const float* bias, float* g, long long m, long long n, long long k) {  \
        rnn_x3_proj<BM, BN, WM, WN>(x, w_ih, bias, g, m, n, k);                                                    \
    }
LSTM_X3_PROJ(128, 128, 2, 4)

extern "C" __global__ void __launch_bounds__(256) lstm_tc_proj_bf16(const unsigned short* x, const unsigned short* w_ih,
                                                                   const float* bias, float* g, long long m,
                                                                   long long n, long long k) {
    rnn_tc_proj(x, w_ih, bias, g, m, n, k);
}
#endif

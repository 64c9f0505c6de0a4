// slstm.cu: the xLSTM sLSTM cell with resets (SLSTMFamily, slstm.go), gate order (i, f, z, o), per head:
//
//   z̃ = Wx_t + b + R h_{t−1},  m_t = max(log σ(f̃) + m_{t−1}, ĩ) (ĩ at t = 0 and after a reset),
//   i' = exp(ĩ − m_t), f' = exp(log σ(f̃) + m_{t−1} − m_t),  c_t = f' c + i' tanh(z̃),  n_t = f' n + i',
//   h_t = σ(õ) c_t / n_t,
//
// h, c, n, m zero before t = 0 and a reset. fp32 arithmetic and state, fp32 or bf16 storage of Wx, R, h.
//
//   slstm_rnn_*_dh{DH}_bb{BB}: the fused form's persistent kernel (rnn.cuh's rnn_persistent): a block per
//     (head, BB batch rows), the head's R [4·dh, dh] in registers of its 4·dh threads.
//   slstm_gemm_*: rnn.cuh's GEMM, the naive form's per-step head-wise R·h.
//   slstm_cell_*: the naive form's pointwise cell over the stacked state [batch, h | c | n | m], adding Wx_t and
//     the bias, with n = 0 marking a row's first step (the official implementation's rule, elementwise).
#include "rnn.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900  // module slstm (compute_75); slstm_sm90 has only slstm_tc

struct SlstmCell {
    float c = 0.0f, n = 0.0f, m = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = n = m = 0.0f;
        const float logfm = m + seq_logsigmoid(z[1]);
        const float mn = first ? z[0] : fmaxf(z[0], logfm);
        const float i = expf(z[0] - mn), f = expf(logfm - mn);
        c = f * c + i * tanhf(z[2]);
        n = f * n + i;
        m = mn;
        return seq_sigmoid(z[3]) * c / n;
    }
};

// SlstmCellF is SlstmCell with rnn.cuh's fp32 gate functions on the special-function unit (rnn_exp …) and fast
// division (n ≥ 1 after a row's first step, see SlstmCellTC).
struct SlstmCellF {
    float c = 0.0f, n = 0.0f, m = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = n = m = 0.0f;
        const float logfm = m + rnn_logsigmoid(z[1]);
        const float mn = first ? z[0] : fmaxf(z[0], logfm);
        const float i = rnn_exp(z[0] - mn), f = rnn_exp(logfm - mn);
        c = f * c + i * rnn_tanh(z[2]);
        n = f * n + i;
        m = mn;
        return __fdividef(rnn_sigmoid(z[3]) * c, n);
    }
};

// slstm_units{,f}_f32_dh{DH}_l{KS}_bb{BB}: rnn.cuh's rnn_units (a thread per unit and 1/KS of its four gate
// rows), with the accurate cell or SlstmCellF (f).
#define SLSTM_UNITS(CELL, F, DH, KS, BB)                                                                          \
    extern "C" __global__ void __launch_bounds__(DH * KS) slstm_units##F##_f32_dh##DH##_l##KS##_bb##BB(           \
        const float* wx, const float* r, const float* bias, const float* resets, float* h, long long nb,          \
        long long nt, long long heads) {                                                                          \
        rnn_units<CELL, F32, F32, DH, KS, BB, false>(wx, nullptr, bias, r, resets, h, nb, nt, heads);             \
    }
#define SLSTM_UNITS_BB(CELL, F, DH, KS)                                                                           \
    SLSTM_UNITS(CELL, F, DH, KS, 1) SLSTM_UNITS(CELL, F, DH, KS, 2) SLSTM_UNITS(CELL, F, DH, KS, 4)
// The default lanes (slstmUnitLanes) with both cells, twice as many (slstmUnitLanesAlt) with the fast one.
#define SLSTM_UNITS_DH(DH, KS, KS2)                                                                               \
    SLSTM_UNITS_BB(SlstmCell, , DH, KS) SLSTM_UNITS_BB(SlstmCellF, f, DH, KS) SLSTM_UNITS_BB(SlstmCellF, f, DH, KS2)

#define SLSTM_RNN(S, NAME, DH, BB)                                                                               \
    extern "C" __global__ void __launch_bounds__(4 * DH) slstm_rnn_##NAME##_dh##DH##_bb##BB( \
        const S::T* wx, const S::T* r, const float* bias, const S::T* resets, S::T* h, long long nb, long long nt, \
        long long heads) {                                                                                        \
        rnn_persistent<SlstmCell, S, S, DH, DH, 1, BB, false>(wx, nullptr, bias, r, resets, h, nullptr, nullptr, nb, nt, heads);  \
    }

// slstm_cell: per (b, head, j) the four gates ry[b] + Wx[b, t] + bias, then the cell on st [batch, 4D].
#define SLSTM_CELL(S, NAME)                                                                                       \
    extern "C" __global__ void slstm_cell_##NAME(const float* ry, const S::T* wx, const float* bias, float* st,   \
                                                 S::T* h, long long t, long long nb, long long nt, long long heads,\
                                                 long long dh) {                                                  \
        const long long d = heads * dh;                                                                           \
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nb * d;                          \
             i += (long long)gridDim.x * blockDim.x) {                                                            \
            const long long b = i / d, u = i % d, hd = u / dh, j = u % dh, o = hd * 4 * dh + j;                  \
            float z[4];                                                                                           \
            for (int k = 0; k < 4; k++)                                                                           \
                z[k] = ry[b * 4 * d + o + k * dh] + S::get(wx[(b * nt + t) * 4 * d + o + k * dh]) + bias[o + k * dh]; \
            float* sb = st + b * 4 * d;                                                                           \
            SlstmCell cell;                                                                                       \
            cell.c = sb[d + u], cell.n = sb[2 * d + u], cell.m = sb[3 * d + u];                                   \
            const float hv = cell.step(z, cell.n == 0.0f);                                                        \
            sb[u] = hv, sb[d + u] = cell.c, sb[2 * d + u] = cell.n, sb[3 * d + u] = cell.m;                       \
            h[(b * nt + t) * d + u] = S::put(hv);                                                                 \
        }                                                                                                         \
    }

#define SLSTM_DTYPE(S, NAME)                                                                                      \
    SLSTM_RNN(S, NAME, 16, 1)                                                                                     \
    SLSTM_RNN(S, NAME, 16, 2)                                                                                     \
    SLSTM_RNN(S, NAME, 16, 4)                                                                                     \
    SLSTM_RNN(S, NAME, 32, 1)                                                                                     \
    SLSTM_RNN(S, NAME, 32, 2)                                                                                     \
    SLSTM_RNN(S, NAME, 32, 4)                                                                                     \
    SLSTM_RNN(S, NAME, 64, 1)                                                                                     \
    SLSTM_RNN(S, NAME, 64, 2)                                                                                     \
    SLSTM_RNN(S, NAME, 64, 4)                                                                                     \
    SLSTM_CELL(S, NAME)

SLSTM_DTYPE(F32, f32)
SLSTM_DTYPE(BF16, bf16)
SLSTM_UNITS_DH(16, 1, 2)
SLSTM_UNITS_DH(32, 1, 2)
SLSTM_UNITS_DH(64, 2, 4)
RNN_GEMM(slstm, F32, f32, F32, f32, 64)
RNN_GEMM(slstm, F32, f32, F32, f32, 128)
RNN_GEMM(slstm, F32, f32, BF16, bf16, 64)
RNN_GEMM(slstm, F32, f32, BF16, bf16, 128)
#endif  // module slstm

// Module slstm_sm90 (compute_90): the fused form for bf16 on tensor cores (rnn_tc.cuh), Wx and the bias as the
// step's inputs (RNN_TC_G16), a block per (head, batch tile).
//   slstm_tc_bf16_dh{DH}_{mt1,mt2,r8}: batch tiles of 16, 32 or 8 rows.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include "rnn_tc.cuh"

// SlstmCellTC is SlstmCell with approximate exponentials, logarithm, tanh and division (bf16 outputs only).
// n ≥ 1 after a row's first step (i' = 1 there, and n never shrinks while m does not grow past ĩ), so the fast
// division is safe.
struct SlstmCellTC {
    float c = 0.0f, n = 0.0f, m = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = n = m = 0.0f;
        const float logfm = m + fminf(z[1], 0.0f) - __logf(1.0f + __expf(-fabsf(z[1])));
        const float mn = first ? z[0] : fmaxf(z[0], logfm);
        const float i = __expf(z[0] - mn), f = __expf(logfm - mn);
        c = f * c + i * tc_tanh(z[2]);
        n = f * n + i;
        m = mn;
        return __fdividef(tc_sigmoid(z[3]) * c, n);
    }
};

#define SLSTM_TC(DH, TILE, MT, R8)                                                                                \
    extern "C" __global__ void __launch_bounds__(4 * DH, 1) slstm_tc_bf16_dh##DH##_##TILE(                         \
        const void* wx, const unsigned short* r, const float* bias, const unsigned short* resets, unsigned short* h,\
        long long nb, long long nt, long long heads) {                                                            \
        rnn_tc<SlstmCellTC, DH, 1, MT, RNN_TC_G16, R8>(wx, nullptr, bias, r, resets, h, nb, nt, heads);           \
    }
#define SLSTM_TC_DH(DH) SLSTM_TC(DH, mt1, 1, false) SLSTM_TC(DH, mt2, 2, false) SLSTM_TC(DH, r8, 1, true)

SLSTM_TC_DH(16)
SLSTM_TC_DH(32)
SLSTM_TC_DH(64)
#endif

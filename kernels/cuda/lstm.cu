// lstm.cu: the LSTM forward pass with resets (LSTMFamily, lstm.go), gate order (i, f, g, o):
//
//   z_t = G_t + W_hh h_{t−1}  (G = x·W_ihᵀ + bias),  c_t = σ(z_f) c_{t−1} + σ(z_i) tanh(z_g),  h_t = σ(z_o) tanh(c_t),
//
// h and c zero at t = 0 and at a reset. fp32 arithmetic and state, fp32 or bf16 storage of x, W_ih, W_hh, y.
//
//   lstm_gemm_*: rnn.cuh's GEMM: both forms' input projection G, and the naive form's per-step W_hh·h.
//   lstm_rnn_*_h{H}_bb{BB}: the fused form's persistent kernel (rnn.cuh's rnn_persistent), W_hh in registers:
//     hidden 16, 32, 64: one block holds all of W_hh (256 threads, 64 weights each, for 64), BB batch rows;
//     hidden 128: two blocks a batch tile (64 units each, 2 lanes a row), hidden 256: eight (32 units each, 4
//     lanes a row), which exchange h through global memory once a step.
//   lstm_cell_*: the naive form's pointwise cell over [batch, h | c] (PyTorch's fused LSTM cell), which also
//     writes y_t.
#include "rnn.cuh"

struct LstmCell {
    float c = 0.0f;
    __device__ __forceinline__ float step(const float z[4], bool first) {
        if (first) c = 0.0f;
        c = seq_sigmoid(z[1]) * c + seq_sigmoid(z[0]) * tanhf(z[2]);
        return seq_sigmoid(z[3]) * tanhf(c);
    }
};

#define LSTM_RNN(S, NAME, H, U, KS, BB)                                                                          \
    extern "C" __global__ void __launch_bounds__(4 * U * KS, 4 * U * KS <= 256 ? 2 : 1)                           \
        lstm_rnn_##NAME##_h##H##_bb##BB(const float* g, const S::T* w_hh, const S::T* resets, S::T* y, float* hx, \
                                        unsigned* bar, long long nb, long long nt) {                              \
        rnn_persistent<LstmCell, S, F32, H, U, KS, BB>(g, nullptr, w_hh, resets, y, hx, bar, nb, nt, 1);        \
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
    LSTM_RNN(S, NAME, 16, 16, 1, 1)                                                                               \
    LSTM_RNN(S, NAME, 16, 16, 1, 2)                                                                               \
    LSTM_RNN(S, NAME, 16, 16, 1, 4)                                                                               \
    LSTM_RNN(S, NAME, 32, 32, 1, 1)                                                                               \
    LSTM_RNN(S, NAME, 32, 32, 1, 2)                                                                               \
    LSTM_RNN(S, NAME, 32, 32, 1, 4)                                                                               \
    LSTM_RNN(S, NAME, 64, 64, 1, 1)                                                                               \
    LSTM_RNN(S, NAME, 64, 64, 1, 2)                                                                               \
    LSTM_RNN(S, NAME, 64, 64, 1, 4)                                                                               \
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
RNN_GEMM(lstm, F32, f32, F32, f32, 64)
RNN_GEMM(lstm, F32, f32, F32, f32, 128)
RNN_GEMM(lstm, BF16, bf16, BF16, bf16, 64)
RNN_GEMM(lstm, BF16, bf16, BF16, bf16, 128)
RNN_GEMM(lstm, F32, f32, BF16, bf16, 64)
RNN_GEMM(lstm, F32, f32, BF16, bf16, 128)

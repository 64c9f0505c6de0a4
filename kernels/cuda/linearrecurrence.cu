// linearrecurrence.cu: the diagonal linear recurrence with resets (LinearRecurrenceFamily,
// linearrecurrence.go): a, b, x, h (B, T, D), resets (B, T); h_t = a_t ⊙ h_{t−1} + b_t ⊙ x_t with h_{t−1} := 0 at a
// reset, real, or complex (CPLX: channels 2j, 2j+1 hold one complex number, ⊙ the complex product).
//
// linrec_<dtype>_<real|cplx>_v<V>_l<L>: the fused kernel, a chained scan (chainscan.cuh): a block of Q × S
// threads covers Q·V channels × S·L steps; thread (q, s) loads its L steps of a, b and x at once (V channels an
// access), scans them from a zero state keeping each step's decay and local state in registers, gets the state
// entering its segment from the block and the tile before it, and writes h. Each input is read once and h
// written once; the chain adds W floats and a flag per tile. Grid: one block per tile (tickets, not blockIdx).
//
// The naive implementation (linearrecurrence_cuda.go): u = b ⊙ x (linrec_naive_bx, an fp32 intermediate), then
// one launch of linrec_naive_step per step, as an eager framework's loop over time runs it.
#include "chainscan.cuh"

#define LINREC_MAX_COMPONENTS 2048  // S·Q·V: 256 threads of 8 components

template <class S, bool CPLX, int V, int L>
__device__ __forceinline__ void linrec_fused(const typename S::T* __restrict__ a, const typename S::T* __restrict__ b,
                                             const typename S::T* __restrict__ x, const int* __restrict__ resets,
                                             typename S::T* __restrict__ h, long long nb, long long nt, long long nd,
                                             int Q, float* states, unsigned* flags, unsigned long long* counter) {
    typedef Comp<CPLX> C;
    typedef Vec<S, V> X;
    enum { N = C::N };
    const int Sg = blockDim.x / Q;
    const int q = threadIdx.x % Q, s = threadIdx.x / Q;
    const long long ctiles = (nd + (long long)Q * V - 1) / ((long long)Q * V);
    const long long groups = nb * ctiles;
    const long long tiles = groups * ((nt + (long long)Sg * L - 1) / ((long long)Sg * L));
    const ChainTile tile = chain_ticket(counter, groups, tiles);
    const long long g = tile.v % groups, k = tile.v / groups;
    const long long bi = g / ctiles, c = (g % ctiles * Q + q) * V;
    const long long t0 = k * Sg * L + (long long)s * L;
    const bool active = c < nd;
    float am[L][V], hl[L][V], A[V], H[V];
#pragma unroll
    for (int j = 0; j < V; j += N) C::one(A + j);
#pragma unroll
    for (int j = 0; j < V; j++) H[j] = 0.0f;
    const long long base = (bi * nt) * nd + c;
#pragma unroll
    for (int i = 0; i < L; i++) {
        const long long t = t0 + i;
        if (active && t < nt) {
            X av, bv, xv;
            av.load(a + base + t * nd);
            bv.load(b + base + t * nd);
            xv.load(x + base + t * nd);
            const bool reset = resets[bi * nt + t] != 0;
#pragma unroll
            for (int j = 0; j < V; j += N) {
                float ak[N], bk[N], xk[N], u[N], na[N];
#pragma unroll
                for (int n = 0; n < N; n++) {
                    ak[n] = reset ? 0.0f : av.get(j + n);
                    bk[n] = bv.get(j + n);
                    xk[n] = xv.get(j + n);
                    am[i][j + n] = ak[n];
                }
                if (CPLX) {
                    u[0] = bk[0] * xk[0] - bk[N - 1] * xk[N - 1];
                    u[N - 1] = bk[0] * xk[N - 1] + bk[N - 1] * xk[0];
                } else {
                    u[0] = bk[0] * xk[0];
                }
                C::axpy(ak, H + j, u, H + j);
                C::mul(ak, A + j, na);
#pragma unroll
                for (int n = 0; n < N; n++) A[j + n] = na[n];
            }
        } else {
#pragma unroll
            for (int j = 0; j < V; j += N) C::one(am[i] + j);
        }
#pragma unroll
        for (int j = 0; j < V; j++) hl[i][j] = H[j];
    }
    float cin[V];
    chain_carry<CPLX, V, LINREC_MAX_COMPONENTS>(A, H, cin, q, s, Q, Sg, tile, states, flags);
    if (!active) return;
#pragma unroll
    for (int i = 0; i < L; i++) {
        const long long t = t0 + i;
        if (t < nt) {
            X o;
#pragma unroll
            for (int j = 0; j < V; j += N) {
                float nc[N];
                C::mul(am[i] + j, cin + j, nc);
#pragma unroll
                for (int n = 0; n < N; n++) {
                    cin[j + n] = nc[n];
                    o.set(j + n, hl[i][j + n] + nc[n]);
                }
            }
            o.store(h + base + t * nd);
        }
    }
}

#define LINREC(S, NAME, CPLX, KIND, V, L)                                                                         \
    extern "C" __global__ void __launch_bounds__(256) linrec_##NAME##_##KIND##_v##V##_l##L(                      \
        const S::T* a, const S::T* b, const S::T* x, const int* resets, S::T* h, long long nb, long long nt,    \
        long long nd, long long q, float* states, unsigned* flags, unsigned long long* counter) {               \
        linrec_fused<S, CPLX, V, L>(a, b, x, resets, h, nb, nt, nd, (int)q, states, flags, counter);           \
    }
#define LINREC_BOTH(S, NAME, V, L) LINREC(S, NAME, false, real, V, L) LINREC(S, NAME, true, cplx, V, L)

LINREC_BOTH(F32, f32, 4, 4)
LINREC_BOTH(F32, f32, 4, 8)
LINREC_BOTH(F32, f32, 2, 8)
LINREC(F32, f32, false, real, 1, 8)
LINREC_BOTH(BF16, bf16, 8, 4)
LINREC_BOTH(BF16, bf16, 4, 4)
LINREC_BOTH(BF16, bf16, 4, 8)
LINREC_BOTH(BF16, bf16, 2, 8)
LINREC(BF16, bf16, false, real, 1, 8)

// load_f32 reads element i of a tensor stored as dtype (KW_FP32 or KW_BF16).
__device__ __forceinline__ float load_f32(const void* p, long long dtype, long long i) {
    return dtype == KW_BF16 ? bf16_to_f32(static_cast<const unsigned short*>(p)[i]) : static_cast<const float*>(p)[i];
}

// linrec_naive_bx writes u = b ⊙ x (fp32), n elements (complex products of pairs when cplx).
extern "C" __global__ void linrec_naive_bx(float* u, const void* b, const void* x, long long dtype, long long n,
                                           long long cplx) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        if (cplx) {
            const long long p = i & ~1ll;
            const float br = load_f32(b, dtype, p), bi = load_f32(b, dtype, p + 1);
            const float xr = load_f32(x, dtype, p), xi = load_f32(x, dtype, p + 1);
            u[i] = (i & 1) ? br * xi + bi * xr : br * xr - bi * xi;
        } else {
            u[i] = load_f32(b, dtype, i) * load_f32(x, dtype, i);
        }
    }
}

// linrec_naive_step advances every sequence by step t: state = (reset ? 0 : a_t) ⊙ state + u_t (state ignored at
// t = 0), and writes h[:, t] = state. a is stored as adtype with strides ab (batch) and at (step) — 0 and 0 for
// the RTU's constant decays; u is fp32 (nb, nt, nd); state fp32 (nb, nd); h stored as hdtype.
extern "C" __global__ void linrec_naive_step(const void* a, long long adtype, long long ab, long long at, const float* u,
                                             const int* resets, float* state, void* h, long long hdtype, long long nb,
                                             long long nt, long long nd, long long t, long long cplx) {
    const long long per = cplx ? 2 : 1, n = nb * nd / per;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long bi = i * per / nd, d = i * per - bi * nd;
        const bool keep = t > 0 && !resets[bi * nt + t];
        const long long ui = (bi * nt + t) * nd + d, ai = bi * ab + t * at + d;
        float out[2];
        if (cplx) {
            const float ar = keep ? load_f32(a, adtype, ai) : 0.0f, aim = keep ? load_f32(a, adtype, ai + 1) : 0.0f;
            const float sr = keep ? state[bi * nd + d] : 0.0f, si = keep ? state[bi * nd + d + 1] : 0.0f;
            out[0] = ar * sr - aim * si + u[ui];
            out[1] = ar * si + aim * sr + u[ui + 1];
        } else {
            const float av = keep ? load_f32(a, adtype, ai) : 0.0f, sv = keep ? state[bi * nd + d] : 0.0f;
            out[0] = av * sv + u[ui];
        }
        for (int k = 0; k < per; k++) {
            state[bi * nd + d + k] = out[k];
            if (hdtype == KW_BF16) {
                static_cast<unsigned short*>(h)[ui + k] = f32_to_bf16(out[k]);
            } else {
                static_cast<float*>(h)[ui + k] = out[k];
            }
        }
    }
}

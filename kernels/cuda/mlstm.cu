// mlstm.cu: the xLSTM mLSTM cell with resets (MLSTMFamily, mlstm.go), per head (k scaled by 1/√dh):
//
//   m_t = max(log σ(f̃_t) + m_{t−1}, ĩ_t) (ĩ_t at t = 0 and after a reset),  i' = exp(ĩ − m_t),
//   f' = exp(log σ(f̃) + m_{t−1} − m_t),  C_t = f' C_{t−1} + i' v_t k_tᵀ,  n_t = f' n_{t−1} + i' k_t,
//   h_t = C_t q_t / max(|n_tᵀ q_t|, exp(−m_t)),
//
// C, n, m zero before t = 0 and a reset. q, k, v, h [batch, heads, t, dh]; ĩ, f̃ [batch, heads, t]; resets
// [batch, t]. fp32 arithmetic and state, fp32 or bf16 storage.
//
//   mlstm_chunkwise_*_dh{DH}_vs{VS}: the fused, chunkwise-parallel form. A block of 256 threads walks one head's
//     sequence in chunks of L = 32 steps with the state (C, n, m) entering the chunk in shared memory; VS blocks
//     share a head, each computing the outputs and C rows of dh/VS value columns. Per chunk: stage q, k, v (the
//     next chunk's loads are in flight meanwhile); warp 0 takes the cumulative log forget gates b_τ (a scan),
//     the last reset at or before each step, and the stabilizers m_τ = max(b_τ + m_prev if no reset in the
//     chunk up to τ, max_s b_τ − b_s + ĩ_s over the steps s since the last reset); the scores
//     P[τ][s] = (q_τ·k_s)·exp(b_τ − b_s + ĩ_s − m_τ) for those s; then h_τ = (e0_τ C q_τ + Σ_s P[τ][s] v_s) /
//     max(|e0_τ n·q_τ + Σ_s P[τ][s]|, exp(−m_τ)) with e0_τ = exp(b_τ + m_prev − m_τ) (0 after a reset); and
//     the state advanced to the chunk's last step in one product. The same arithmetic, in the same order, as
//     the CPU's mlstmFused; it equals the recurrence exactly in exact arithmetic (m_τ is the recurrent m_t).
//   mlstm_step_*_dh{DH}: the naive form's sequential step for every head (a block each, 4 threads a row of C),
//     the state in global memory between launches.
#include "recurrent.cuh"

#define MLSTM_L 32   // chunk length: warp 0 has a lane a step
#define MLSTM_T 256  // threads of a chunkwise block

template <class S, int DH, int VS>
__device__ __forceinline__ void mlstm_chunkwise(const typename S::T* __restrict__ q, const typename S::T* __restrict__ k,
                                                const typename S::T* __restrict__ v,
                                                const typename S::T* __restrict__ ig,
                                                const typename S::T* __restrict__ fg,
                                                const typename S::T* __restrict__ resets, typename S::T* __restrict__ h,
                                                long long nh, long long nt) {
    constexpr int L = MLSTM_L, DV = DH / VS, NT = MLSTM_T;
    constexpr int NQ = (L * DH + NT - 1) / NT, NV = (L * DV + NT - 1) / NT;
    __shared__ float sq[L][DH + 1], sk[L][DH + 1], sv[L][DV + 1], sp[L][L + 1], sc[DV][DH + 1];
    __shared__ float sn[DH], sb[L], si[L], sm[L], se0[L], sdiv[L], sw[L];
    __shared__ int slo[L];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long bh = blockIdx.x / VS, b = bh / nh;
    const int vp = blockIdx.x % VS;
    const float scale = 1.0f / sqrtf((float)DH);
    const float neg_inf = -__int_as_float(0x7f800000);

    for (int i = tid; i < DV * DH; i += NT) sc[i / DH][i % DH] = 0.0f;
    if (tid < DH) sn[tid] = 0.0f;
    float m_prev = 0.0f;

    float rq[NQ], rk[NQ], rv[NV], rig = 0.0f, rfg = 0.0f, rfirst = 0.0f;
    auto fetch = [&](long long t0) {
#pragma unroll
        for (int r = 0; r < NQ; r++) {
            const int p = tid + NT * r, tau = p / DH, kk = p % DH;
            const bool ok = p < L * DH && t0 + tau < nt;
            const long long x = (bh * nt + t0 + tau) * DH + kk;
            rq[r] = ok ? S::get(q[x]) : 0.0f;
            rk[r] = ok ? S::get(k[x]) * scale : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < NV; r++) {
            const int p = tid + NT * r, tau = p / DV, j = p % DV;
            const bool ok = p < L * DV && t0 + tau < nt;
            rv[r] = ok ? S::get(v[(bh * nt + t0 + tau) * DH + vp * DV + j]) : 0.0f;
        }
        if (tid < L) {
            const long long t = t0 + tid;
            const bool ok = t < nt;
            rig = ok ? S::get(ig[bh * nt + t]) : 0.0f;
            rfg = ok ? S::get(fg[bh * nt + t]) : 0.0f;
            rfirst = ok && (t == 0 || S::get(resets[b * nt + t]) != 0.0f) ? 1.0f : 0.0f;
        }
    };
    fetch(0);
    for (long long t0 = 0; t0 < nt; t0 += L) {
        const int steps = (int)min((long long)L, nt - t0), te = steps - 1;
#pragma unroll
        for (int r = 0; r < NQ; r++) {
            const int p = tid + NT * r;
            if (p < L * DH) sq[p / DH][p % DH] = rq[r], sk[p / DH][p % DH] = rk[r];
        }
#pragma unroll
        for (int r = 0; r < NV; r++) {
            const int p = tid + NT * r;
            if (p < L * DV) sv[p / DV][p % DV] = rv[r];
        }
        const float gi = rig, gf = rfg, gfirst = rfirst;
        __syncthreads();
        if (t0 + L < nt) fetch(t0 + L);

        // Gate statistics, a lane a step.
        if (warp == 0) {
            float cum = seq_logsigmoid(gf);
            int last = gfirst != 0.0f ? lane : -1;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const float c2 = __shfl_up_sync(0xffffffffu, cum, o);
                const int l2 = __shfl_up_sync(0xffffffffu, last, o);
                if (lane >= o) cum += c2, last = max(last, l2);
            }
            sb[lane] = cum;
            si[lane] = gi;
            __syncwarp();
            const int lo = max(last, 0);
            float m = last < 0 ? cum + m_prev : neg_inf;
            for (int s = lo; s <= lane; s++) m = fmaxf(m, cum - sb[s] + si[s]);
            sm[lane] = m;
            slo[lane] = lo;
            se0[lane] = last < 0 ? expf(cum + m_prev - m) : 0.0f;
        }
        __syncthreads();

        // Scores.
        for (int p = tid; p < L * L; p += NT) {
            const int tau = p / L, s = p % L;
            float val = 0.0f;
            if (s >= slo[tau] && s <= tau) {
                float d = 0.0f;
#pragma unroll 16
                for (int kk = 0; kk < DH; kk++) d = fmaf(sq[tau][kk], sk[s][kk], d);
                val = expf(sb[tau] - sb[s] + si[s] - sm[tau]) * d;
            }
            sp[tau][s] = val;
        }
        __syncthreads();

        // Each step's divisor, and the weights that advance the state to the chunk's last step.
        if (warp == 0) {
            float nq = 0.0f, den = 0.0f;
            for (int kk = 0; kk < DH; kk++) nq = fmaf(sn[kk], sq[lane][kk], nq);
            for (int s = 0; s < L; s++) den += sp[lane][s];
            sdiv[lane] = fmaxf(fabsf(se0[lane] * nq + den), expf(-sm[lane]));
            sw[lane] = lane >= slo[te] && lane <= te ? expf(sb[te] - sb[lane] + si[lane] - sm[te]) : 0.0f;
        }
        __syncthreads();

        // Outputs.
        for (int p = tid; p < L * DV; p += NT) {
            const int tau = p / DV, j = p % DV;
            if (tau < steps) {
                float cq = 0.0f, pv = 0.0f;
#pragma unroll 16
                for (int kk = 0; kk < DH; kk++) cq = fmaf(sc[j][kk], sq[tau][kk], cq);
                for (int s = 0; s < L; s++) pv = fmaf(sp[tau][s], sv[s][j], pv);
                h[(bh * nt + t0 + tau) * DH + vp * DV + j] = S::put((se0[tau] * cq + pv) / sdiv[tau]);
            }
        }
        __syncthreads();

        // The state after the chunk's last step.
        const float e0 = se0[te];
        for (int p = tid; p < DV * DH; p += NT) {
            const int j = p / DH, kk = p % DH;
            float acc = 0.0f;
            for (int s = 0; s < L; s++) acc = fmaf(sw[s] * sv[s][j], sk[s][kk], acc);
            sc[j][kk] = e0 * sc[j][kk] + acc;
        }
        if (tid < DH) {
            float acc = 0.0f;
            for (int s = 0; s < L; s++) acc = fmaf(sw[s], sk[s][tid], acc);
            sn[tid] = e0 * sn[tid] + acc;
        }
        m_prev = sm[te];
        __syncthreads();  // the chunk's q, k, v and statistics are read: the next may overwrite them
    }
}

// mlstm_step: step t of every head's recurrence; C [batch·heads, dh, dh], n [batch·heads, dh], m [batch·heads]
// fp32 in global memory. Thread (j, part) holds elements part, part + 4, … of row j of C.
template <class S, int DH>
__device__ __forceinline__ void mlstm_step(const typename S::T* __restrict__ q, const typename S::T* __restrict__ k,
                                           const typename S::T* __restrict__ v, const typename S::T* __restrict__ ig,
                                           const typename S::T* __restrict__ fg,
                                           const typename S::T* __restrict__ resets, typename S::T* __restrict__ h,
                                           float* __restrict__ cst, float* __restrict__ nst, float* __restrict__ mst,
                                           long long t, long long nh, long long nt) {
    constexpr int P = 4, NK = DH / P;
    __shared__ float sq[DH], sk[DH], sv[DH], sn[DH];
    const long long bh = blockIdx.x, b = bh / nh, i = bh * nt + t;
    const int tid = threadIdx.x, j = tid / P, part = tid % P;
    const bool first = t == 0 || S::get(resets[b * nt + t]) != 0.0f;
    const float logf = seq_logsigmoid(S::get(fg[i])), gi = S::get(ig[i]), mo = mst[bh];
    const float mn = first ? gi : fmaxf(logf + mo, gi);
    const float ip = expf(gi - mn), fp = expf(logf + mo - mn);
    if (tid < DH) {
        sq[tid] = S::get(q[i * DH + tid]);
        sk[tid] = S::get(k[i * DH + tid]) * (1.0f / sqrtf((float)DH));
        sv[tid] = S::get(v[i * DH + tid]);
    }
    __syncthreads();
    if (tid < DH) {
        float nv = ip * sk[tid];
        if (!first) nv += fp * nst[bh * DH + tid];
        nst[bh * DH + tid] = nv;
        sn[tid] = nv;
    }
    float* c = cst + (bh * DH + j) * DH;
    float acc = 0.0f;
#pragma unroll
    for (int e = 0; e < NK; e++) {
        const int kk = part + P * e;
        float cv = ip * sv[j] * sk[kk];
        if (!first) cv += fp * c[kk];
        c[kk] = cv;
        acc = fmaf(cv, sq[kk], acc);
    }
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    acc += __shfl_xor_sync(0xffffffffu, acc, 2);
    __syncthreads();
    if (part == 0) {
        float nq = 0.0f;
        for (int kk = 0; kk < DH; kk++) nq += sn[kk] * sq[kk];
        h[i * DH + j] = S::put(acc / fmaxf(fabsf(nq), expf(-mn)));
    }
    if (tid == 0) mst[bh] = mn;
}

#define MLSTM_CHUNKWISE(S, NAME, DH, VS)                                                                         \
    extern "C" __global__ void __launch_bounds__(MLSTM_T) mlstm_chunkwise_##NAME##_dh##DH##_vs##VS(              \
        const S::T* q, const S::T* k, const S::T* v, const S::T* ig, const S::T* fg, const S::T* resets, S::T* h, \
        long long nb, long long nh, long long nt) {                                                               \
        mlstm_chunkwise<S, DH, VS>(q, k, v, ig, fg, resets, h, nh, nt);                                           \
    }
#define MLSTM_STEP(S, NAME, DH)                                                                                   \
    extern "C" __global__ void __launch_bounds__(4 * DH) mlstm_step_##NAME##_dh##DH(                             \
        const S::T* q, const S::T* k, const S::T* v, const S::T* ig, const S::T* fg, const S::T* resets, S::T* h, \
        float* cst, float* nst, float* mst, long long t, long long nh, long long nt) {                             \
        mlstm_step<S, DH>(q, k, v, ig, fg, resets, h, cst, nst, mst, t, nh, nt);                                  \
    }
#define MLSTM_DTYPE(S, NAME)                                                                                      \
    MLSTM_CHUNKWISE(S, NAME, 16, 1)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 16, 2)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 32, 1)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 32, 2)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 32, 4)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 64, 1)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 64, 2)                                                                               \
    MLSTM_CHUNKWISE(S, NAME, 64, 4)                                                                               \
    MLSTM_STEP(S, NAME, 16)                                                                                       \
    MLSTM_STEP(S, NAME, 32)                                                                                       \
    MLSTM_STEP(S, NAME, 64)

MLSTM_DTYPE(F32, f32)
MLSTM_DTYPE(BF16, bf16)

// attention.cu: attention forward (AttentionFamily, attention.go): Q, K, V, O of shape (B, H, T, d), bf16,
// O = softmax(Q·Kᵀ/√d [causal: keys j ≤ query i]) · V with fp32 accumulation.
//
// Compiled twice: to cuda/ptx/attention.ptx (compute_75: the naive chain's softmax only) and to
// cuda/ptx/attention_sm80.ptx (compute_80: every kernel below that uses mma.sync, ldmatrix and cp.async, which
// the backend loads on compute capability 8.0 and later only; attention_cuda.go refuses older GPUs).
//
// attention_fused_d<D>_{none,causal}: FlashAttention-2's forward. One block of 4 warps per (batch·head,
// 64-query tile), heaviest query tiles first (causal: the last tiles see the most keys). Each warp owns 16
// query rows: their Q fragments stay in registers (ldmatrix from shared memory once), and per 64-key tile it
// computes S = Q·Kᵀ with mma.sync.m16n8k16 (bf16 in, fp32 accumulators; K fragments by ldmatrix), masks
// (causal: only the diagonal tile; keys ≥ T: only the last tile), updates the running row max and sum (fp32,
// in the log2 domain: exp2f with log2 e folded into the scale), rescales its O accumulators, converts P to
// bf16 in registers and uses it directly as the A operand of O += P·V (V fragments by ldmatrix.trans).
// Causal blocks stop at the diagonal tile: fully masked tiles are never loaded.
// K and V tiles stream through shared memory with cp.async, as FlashAttention-2 does on sm_80: V_j loads
// while S_j is computed, K_{j+1} while P_j·V_j is; rows at or after T are zero-filled (cp.async's src-size 0).
// Shared memory rows are 16-byte chunks stored at chunk ^ (row mod 8), so the eight rows of every ldmatrix
// phase and of every cp.async quarter-warp fall in distinct banks. Q (64 × d), K and V (64 × d) tiles: 24 KiB
// at d = 64, 48 KiB at d = 128 (static shared memory: the backend launches with no dynamic shared memory). O
// leaves through the Q tile's shared memory (each warp its own rows) as 16-byte stores, guarded by row < T.
//
// The naive chain (attention_cuda.go), as an eager framework runs it on tensor cores: attention_naive_scores_d<D>
// (S = Q·Kᵀ·scale, fp32, one 64 × 64 tile a block, the same mma code), attention_naive_softmax (masked row
// softmax into a bf16 P) and attention_naive_pv_d<D> (O = P·V over every key tile). S and P are (B·H, Tp, Tp)
// with Tp = T rounded up to 64, padding zero in P.
#include "common.cuh"

#define ATT_BM 64  // query rows a block: 4 warps × 16
#define ATT_BN 64  // keys a tile
#define ATT_THREADS 128

// attention_naive_softmax: one block of ATT_THREADS threads per padded row (bh, i) of S (row stride tp); writes
// P[bh, i, j] = softmax over the keys the query sees (j < T, and j ≤ i when causal), 0 elsewhere — also for
// the padded rows i ≥ T and columns j ≥ T, which attention_naive_pv reads.
extern "C" __global__ void __launch_bounds__(ATT_THREADS) attention_naive_softmax(const float* s, unsigned short* p,
                                                                                  long long t, long long tp,
                                                                                  long long causal) {
    __shared__ float red[32];
    const long long row = blockIdx.x;
    const long long i = row % tp;
    const float* sr = s + row * tp;
    unsigned short* pr = p + row * tp;
    const long long n = i < t ? (causal ? i + 1 : t) : 0;  // the keys row i sees: [0, n)
    float mx = -__int_as_float(0x7f800000);
    for (long long j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, sr[j]);
    mx = block_max(mx, red);
    const float LOG2E = 1.4426950408889634f;
    float sum = 0.0f;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) sum += exp2f((sr[j] - mx) * LOG2E);
    sum = block_sum(sum, red);
    const float inv = 1.0f / sum;
    for (long long j = threadIdx.x; j < tp; j += blockDim.x) {
        pr[j] = j < n ? f32_to_bf16(exp2f((sr[j] - mx) * LOG2E) * inv) : (unsigned short)0;
    }
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

typedef unsigned short bf16_t;

__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// cp_async16 copies 16 bytes from global src to shared dst, or writes 16 zero bytes when !valid (src-size 0:
// nothing is read, src need only be a valid address).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// ldsm_x4 loads four 8 × 8 bf16 matrices: lanes 8m … 8m+7 give the row addresses of matrix m, and register m
// of lane l holds row l/4, columns 2(l%4) and 2(l%4)+1 of matrix m; ldsm_x4_t the same of the transposed
// matrices (rows 2(l%4), 2(l%4)+1 of column l/4).
__device__ __forceinline__ void ldsm_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// mma_bf16 is c += a·b on one 16 × 8 × 16 tile: a the row-major 16 × 16 A fragment, b the column-major 16 × 8 B
// fragment, c the 16 × 8 fp32 accumulator (lane l: rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4)+1).
__device__ __forceinline__ void mma_bf16(float* c, const unsigned* a, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// pack_bf16 rounds (lo, hi) to bf16 (to nearest even), lo in the low half: the order of consecutive columns in
// an mma fragment.
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// swz is the element offset of 16-byte chunk c of row r in a shared tile of rows of D bf16 (D/8 ≥ 8 chunks):
// chunk c ^ (r mod 8), so eight consecutive rows at the same chunk hit eight distinct bank groups.
template <int D>
__device__ __forceinline__ int swz(int r, int c) {
    return r * D + ((c ^ (r & 7)) << 3);
}

// load_tile issues the cp.async of rows r0 … r0+ROWS−1 of a row-major matrix g (row stride ld elements, D
// columns) into the swizzled tile at shared address s; rows at or after nrows are zero-filled.
template <int ROWS, int D>
__device__ __forceinline__ void load_tile(unsigned s, const bf16_t* g, long long ld, long long r0, long long nrows) {
    constexpr int CH = D / 8;
    static_assert(ROWS * CH % ATT_THREADS == 0, "tile not a multiple of the block");
#pragma unroll
    for (int k = 0; k < ROWS * CH / ATT_THREADS; k++) {
        const int i = k * ATT_THREADS + threadIdx.x;
        const int r = i / CH, c = i % CH;
        const long long row = r0 + r;
        const bool ok = row < nrows;
        cp_async16(s + 2 * swz<D>(r, c), g + (ok ? row : 0) * ld + c * 8, ok);
    }
}

// load_a loads this warp's A fragments (rows w16 … w16+15, all D columns) from a swizzled tile.
template <int D>
__device__ __forceinline__ void load_a(unsigned (&a)[D / 16][4], unsigned s, int w16, int lane) {
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        ldsm_x4(a[kk][0], a[kk][1], a[kk][2], a[kk][3], s + 2 * swz<D>(w16 + (lane & 15), kk * 2 + (lane >> 4)));
    }
}

// qk computes this warp's 16 × ATT_BN scores S = Q·Kᵀ from its Q fragments and the K tile at shared address sk.
template <int D>
__device__ __forceinline__ void qk(float (&s)[ATT_BN / 8][4], const unsigned (&qf)[D / 16][4], unsigned sk, int lane) {
#pragma unroll
    for (int j = 0; j < ATT_BN / 8; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
#pragma unroll
        for (int np = 0; np < ATT_BN / 16; np++) {
            // matrices: keys np·16 + 0…7 | 0…7 | 8…15 | 8…15 at d chunks 2kk | 2kk+1 | 2kk | 2kk+1
            unsigned b0, b1, b2, b3;
            ldsm_x4(b0, b1, b2, b3, sk + 2 * swz<D>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
            mma_bf16(s[2 * np], qf[kk], b0, b1);
            mma_bf16(s[2 * np + 1], qf[kk], b2, b3);
        }
    }
}

// pv adds P·V to this warp's 16 × D accumulators: P fragment kk (keys 16kk … 16kk+15) from pa, V from the tile
// at shared address sv, transposed by ldmatrix.trans.
template <int D>
__device__ __forceinline__ void pv(float (&acc)[D / 8][4], const unsigned (&pa)[4], int kk, unsigned sv, int lane) {
#pragma unroll
    for (int dp = 0; dp < D / 16; dp++) {
        // matrices: keys 16kk + 0…7 | 8…15 | 0…7 | 8…15 at d chunks 2dp | 2dp | 2dp+1 | 2dp+1
        unsigned b0, b1, b2, b3;
        ldsm_x4_t(b0, b1, b2, b3, sv + 2 * swz<D>(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), dp * 2 + (lane >> 4)));
        mma_bf16(acc[2 * dp], pa, b0, b1);
        mma_bf16(acc[2 * dp + 1], pa, b2, b3);
    }
}

// store_o writes this warp's 16 × D accumulators, times inv0 (rows l/4) and inv1 (rows l/4 + 8), as bf16 to rows
// m0 + w16 … of o (row stride D), those before nrows only: through the swizzled tile at st (rows w16 …, this
// warp's own), then as 16-byte stores.
template <int D>
__device__ __forceinline__ void store_o(const float (&acc)[D / 8][4], float inv0, float inv1, bf16_t* st, bf16_t* o,
                                        long long m0, long long nrows, int w16, int lane) {
    const int g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int j = 0; j < D / 8; j++) {
        *reinterpret_cast<unsigned*>(st + swz<D>(w16 + g, j) + 2 * tq) = pack_bf16(acc[j][0] * inv0, acc[j][1] * inv0);
        *reinterpret_cast<unsigned*>(st + swz<D>(w16 + g + 8, j) + 2 * tq) = pack_bf16(acc[j][2] * inv1, acc[j][3] * inv1);
    }
    __syncwarp();
    constexpr int CH = D / 8;
#pragma unroll
    for (int k = 0; k < 16 * CH / 32; k++) {
        const int i = k * 32 + lane;
        const int r = i / CH, c = i % CH;
        const long long row = m0 + w16 + r;
        if (row < nrows) {
            *reinterpret_cast<uint4*>(o + row * D + c * 8) = *reinterpret_cast<const uint4*>(st + swz<D>(w16 + r, c));
        }
    }
}

template <int D, bool CAUSAL>
__device__ __forceinline__ void attention_fused(const bf16_t* __restrict__ q, const bf16_t* __restrict__ k,
                                                const bf16_t* __restrict__ v, bf16_t* __restrict__ o, long long nbh,
                                                long long t, float scale_log2) {
    static_assert(ATT_BM == ATT_BN, "the causal diagonal is one tile");
    __shared__ __align__(128) bf16_t sq[ATT_BM * D];
    __shared__ __align__(128) bf16_t sk[ATT_BN * D];
    __shared__ __align__(128) bf16_t sv[ATT_BN * D];
    const float NEG_INF = -__int_as_float(0x7f800000);
    const int lane = threadIdx.x & 31, w16 = (threadIdx.x >> 5) * 16;
    const long long mtiles = (t + ATT_BM - 1) / ATT_BM;
    const long long bh = blockIdx.x % nbh;
    const long long mt = mtiles - 1 - blockIdx.x / nbh;  // the last query tiles (causal: the most keys) first
    const long long m0 = mt * ATT_BM;
    const long long base = bh * t * D;
    q += base;
    k += base;
    v += base;
    o += base;
    const unsigned sq_u = smem_u32(sq), sk_u = smem_u32(sk), sv_u = smem_u32(sv);
    const long long ntiles = CAUSAL ? mt + 1 : (t + ATT_BN - 1) / ATT_BN;

    load_tile<ATT_BM, D>(sq_u, q, D, m0, t);
    load_tile<ATT_BN, D>(sk_u, k, D, 0, t);
    cp_async_commit();
    cp_async_wait_all();
    __syncthreads();
    unsigned qf[D / 16][4];
    load_a<D>(qf, sq_u, w16, lane);

    float acc[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    float mrow[2] = {NEG_INF, NEG_INF};  // running max of this thread's rows l/4 and l/4 + 8, × scale·log2 e
    float lrow[2] = {0.0f, 0.0f};        // running sum of this thread's columns of them (reduced at the end)
    const long long qrow0 = m0 + w16 + (lane >> 2);

    for (long long n = 0; n < ntiles; n++) {
        const long long n0 = n * ATT_BN;
        load_tile<ATT_BN, D>(sv_u, v, D, n0, t);  // V_n, while S_n is computed
        cp_async_commit();

        float s[ATT_BN / 8][4];
        qk<D>(s, qf, sk_u, lane);

        if ((CAUSAL && n == mt) || n0 + ATT_BN > t) {  // the diagonal tile, the tile past T: mask
#pragma unroll
            for (int j = 0; j < ATT_BN / 8; j++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const long long key = n0 + j * 8 + 2 * (lane & 3) + (e & 1);
                    const long long qi = qrow0 + (e >> 1) * 8;
                    if (key >= t || (CAUSAL && key > qi)) s[j][e] = NEG_INF;
                }
            }
        }

        // Online softmax: new running max, rescale of sum and accumulators, P = 2^(s·scale·log2 e − max).
        float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int j = 0; j < ATT_BN / 8; j++) {
            mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
            mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
        }
        float msub[2], alpha[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            const float mnew = fmaxf(mrow[r], mx[r] * scale_log2);
            msub[r] = mnew == NEG_INF ? 0.0f : mnew;  // a row with nothing unmasked yet: no −∞ − −∞
            alpha[r] = exp2f(mrow[r] - msub[r]);
            mrow[r] = mnew;
            lrow[r] *= alpha[r];
        }
#pragma unroll
        for (int j = 0; j < ATT_BN / 8; j++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[j][e] = exp2f(fmaf(s[j][e], scale_log2, -msub[e >> 1]));
                lrow[e >> 1] += s[j][e];
            }
        }
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            acc[j][0] *= alpha[0];
            acc[j][1] *= alpha[0];
            acc[j][2] *= alpha[1];
            acc[j][3] *= alpha[1];
        }

        cp_async_wait_all();  // V_n is in; after the barrier no warp reads K_n any more
        __syncthreads();
        if (n + 1 < ntiles) load_tile<ATT_BN, D>(sk_u, k, D, n0 + ATT_BN, t);  // K_{n+1}, while P_n·V_n is computed
        cp_async_commit();

#pragma unroll
        for (int kk = 0; kk < ATT_BN / 16; kk++) {
            const unsigned pa[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                                    pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                    pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
            pv<D>(acc, pa, kk, sv_u, lane);
        }
        cp_async_wait_all();  // K_{n+1} is in; after the barrier no warp reads V_n any more
        __syncthreads();
    }

    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
        lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
        inv[r] = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f;
    }
    store_o<D>(acc, inv[0], inv[1], sq, o, m0, t, w16, lane);  // sq: this warp's rows, read only before the loop
}

#define ATTENTION_FUSED(D, MINB)                                                                                  \
    extern "C" __global__ void __launch_bounds__(ATT_THREADS, MINB)                                               \
        attention_fused_d##D##_none(const bf16_t* q, const bf16_t* k, const bf16_t* v, bf16_t* o, long long nbh,  \
                                    long long t, double scale_log2) {                                             \
        attention_fused<D, false>(q, k, v, o, nbh, t, (float)scale_log2);                                        \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(ATT_THREADS, MINB)                                               \
        attention_fused_d##D##_causal(const bf16_t* q, const bf16_t* k, const bf16_t* v, bf16_t* o,               \
                                      long long nbh, long long t, double scale_log2) {                            \
        attention_fused<D, true>(q, k, v, o, nbh, t, (float)scale_log2);                                         \
    }

ATTENTION_FUSED(64, 3)
ATTENTION_FUSED(128, 2)

// attention_naive_scores_d<D>: S[bh, i, j] = scale · Q[bh, i]·K[bh, j] for one 64 × 64 tile of the padded
// (tp × tp) score matrix a block, tiles (bh, query tile, key tile) with key tiles fastest.
template <int D>
__device__ __forceinline__ void attention_scores(const bf16_t* q, const bf16_t* k, float* s, long long t, long long tp,
                                                 float scale) {
    __shared__ __align__(128) bf16_t sq[ATT_BM * D];
    __shared__ __align__(128) bf16_t sk[ATT_BN * D];
    const int lane = threadIdx.x & 31, w16 = (threadIdx.x >> 5) * 16;
    const long long tiles = tp / ATT_BN;
    const long long nt = blockIdx.x % tiles, mt = blockIdx.x / tiles % tiles, bh = blockIdx.x / tiles / tiles;
    const long long m0 = mt * ATT_BM, n0 = nt * ATT_BN;
    const unsigned sq_u = smem_u32(sq), sk_u = smem_u32(sk);
    load_tile<ATT_BM, D>(sq_u, q + bh * t * D, D, m0, t);
    load_tile<ATT_BN, D>(sk_u, k + bh * t * D, D, n0, t);
    cp_async_commit();
    cp_async_wait_all();
    __syncthreads();
    unsigned qf[D / 16][4];
    load_a<D>(qf, sq_u, w16, lane);
    float acc[ATT_BN / 8][4];
    qk<D>(acc, qf, sk_u, lane);
    float* row = s + (bh * tp + m0 + w16 + (lane >> 2)) * tp + n0 + 2 * (lane & 3);
#pragma unroll
    for (int j = 0; j < ATT_BN / 8; j++) {
        *reinterpret_cast<float2*>(row + j * 8) = make_float2(acc[j][0] * scale, acc[j][1] * scale);
        *reinterpret_cast<float2*>(row + 8 * tp + j * 8) = make_float2(acc[j][2] * scale, acc[j][3] * scale);
    }
}

// attention_naive_pv_d<D>: O[bh, i] = Σ_j P[bh, i, j]·V[bh, j] for one 64-query tile a block, over every key
// tile of the padded P (its padding is zero), one tile of P and V at a time.
template <int D>
__device__ __forceinline__ void attention_pv(const bf16_t* p, const bf16_t* v, bf16_t* o, long long t, long long tp) {
    __shared__ __align__(128) bf16_t sp[ATT_BM * ATT_BN];
    __shared__ __align__(128) bf16_t sv[ATT_BN * D];
    const int lane = threadIdx.x & 31, w16 = (threadIdx.x >> 5) * 16;
    const long long mtiles = tp / ATT_BM;
    const long long mt = blockIdx.x % mtiles, bh = blockIdx.x / mtiles;
    const long long m0 = mt * ATT_BM;
    const unsigned sp_u = smem_u32(sp), sv_u = smem_u32(sv);
    const bf16_t* prow = p + bh * tp * tp;
    v += bh * t * D;
    float acc[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    for (long long n0 = 0; n0 < tp; n0 += ATT_BN) {
        load_tile<ATT_BM, ATT_BN>(sp_u, prow + n0, tp, m0, tp);
        load_tile<ATT_BN, D>(sv_u, v, D, n0, t);
        cp_async_commit();
        cp_async_wait_all();
        __syncthreads();
        unsigned pf[ATT_BN / 16][4];
        load_a<ATT_BN>(pf, sp_u, w16, lane);
#pragma unroll
        for (int kk = 0; kk < ATT_BN / 16; kk++) pv<D>(acc, pf[kk], kk, sv_u, lane);
        __syncthreads();
    }
    store_o<D>(acc, 1.0f, 1.0f, sv, o + bh * t * D, m0, t, w16, lane);  // sv: no warp reads it after the barrier
}

#define ATTENTION_NAIVE(D)                                                                                        \
    extern "C" __global__ void __launch_bounds__(ATT_THREADS) attention_naive_scores_d##D(                       \
        const bf16_t* q, const bf16_t* k, float* s, long long t, long long tp, double scale) {                    \
        attention_scores<D>(q, k, s, t, tp, (float)scale);                                                        \
    }                                                                                                             \
    extern "C" __global__ void __launch_bounds__(ATT_THREADS)                                                     \
        attention_naive_pv_d##D(const bf16_t* p, const bf16_t* v, bf16_t* o, long long t, long long tp) {         \
        attention_pv<D>(p, v, o, t, tp);                                                                          \
    }

ATTENTION_NAIVE(64)
ATTENTION_NAIVE(128)

#endif

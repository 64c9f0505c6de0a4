// mma.cuh: bf16 tensor-core building blocks (sm_80 and later, inline PTX: CUDA 11.8 has no wgmma) shared by the
// mma probe (mma.cu), the GEMM (gemm.cu) and the FFN (ffn.cu).
//
// MmaTile is a whole block's tile of a Linear layer, C[m, n] = Σ_k A[m, k] · B[n, k] (A = x [M, K] and
// B = W [N, K], both row-major with K contiguous, so that B read row by row is the "col" operand of
// mma.sync.m16n8k16.row.col), bf16 operands with fp32 accumulation:
//
//   - block tile BM × BN, K in steps of BK = 32; WM × WN warps, each a (BM/WM) × (BN/WN) warp tile of
//     MI × NI m16n8 accumulators (4 fp32 registers each);
//   - a STAGES-deep cp.async pipeline (16-byte cp.async.cg, zero-filled past M, N and K: K must be a multiple of 8,
//     so that a 16-byte chunk is either wholly inside a row or wholly past its end), one commit group a stage;
//   - shared memory rows of BK bf16 = 64 bytes = four 16-byte chunks, chunk c of row r stored at c ^ ((r >> 1) & 3):
//     the eight row addresses of an ldmatrix 8×8 matrix (rows r … r+7, one chunk column) then fall in eight
//     different 16-byte bank groups, and so do the eight chunks a quarter-warp of cp.async writes (two rows) —
//     no bank conflicts, no padding (the 128 × 128 tile's three stages fill the 48 KiB of static shared memory);
//   - fragments through ldmatrix.x4 (A: one m16k16 tile; B: two n8k16 tiles), then mma.sync.
//
// The caller maps shared-memory B rows to global rows (brow), which lets the SwiGLU FFN interleave the gate
// and up weights so that each warp holds the gate and up accumulators of the same outputs.
#pragma once
#include "common.cuh"

#define MMA_BK 32

// smem_addr is p as a 32-bit shared-state-space address.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

// cp_async16 copies 16 bytes from global src to shared dst, or writes 16 zero bytes when !valid (src is then not
// read, but must still be a valid address).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// mma_bf16 is d += a · b on one m16n8k16 tile (row-major A, column-major B, fp32 accumulators).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// mma_swz is the byte offset of 16-byte chunk c of row r in a BK-wide tile (see the header).
__device__ __forceinline__ unsigned mma_swz(int r, int c) { return (unsigned)(r * 64 + ((c ^ ((r >> 1) & 3)) << 4)); }

// MmaTile is one block's share of a GEMM, the accumulators of its thread included.
template <int BM, int BN, int WM, int WN, int STAGES>
struct MmaTile {
    static const int THREADS = 32 * WM * WN;
    static const int TM = BM / WM, TN = BN / WN;  // warp tile
    static const int MI = TM / 16, NI = TN / 8;
    static const int A_BYTES = BM * MMA_BK * 2, B_BYTES = BN * MMA_BK * 2;
    static_assert(MI >= 1 && NI % 2 == 0 && TM % 16 == 0 && TN % 16 == 0, "warp tile");
    static_assert((BM * 4) % THREADS == 0 && (BN * 4) % THREADS == 0, "loads");

    float acc[MI][NI][4];

    // run accumulates the block's tile: rows m0 … m0+BM−1 of A (K elements each), and the BN rows of B given by
    // brow: brow(j) is where shared row j comes from (K elements), or null past the end (zero fill).
    template <class BRow>
    __device__ __forceinline__ void run(const unsigned short* __restrict__ A, long long M, long long K, long long m0,
                                        BRow brow, unsigned char* smem) {
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;

        const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int wm = warp / WN, wn = warp % WN;
        const unsigned sbase = smem_addr(smem);
        const int ktiles = (int)((K + MMA_BK - 1) / MMA_BK);
        const int STAGE = A_BYTES + B_BYTES;

        // This thread's cp.async chunks: the same rows and chunk columns every k-tile, the source pointers
        // advancing by BK elements a tile. A chunk past M or N (its row pointer is then the row-0 or A base, a
        // valid address that is not read) or past K is zero-filled.
        const int AL = BM * 4 / THREADS, BL = BN * 4 / THREADS;
        const int kc = (tid & 3) * 8;  // the chunk's first k within a tile: THREADS is a multiple of 4
        const unsigned short* asrc[AL];
        const unsigned short* bsrc[BL];
        bool aok[AL], bok[BL];
#pragma unroll
        for (int i = 0; i < AL; i++) {
            const long long gr = m0 + ((tid + i * THREADS) >> 2);
            aok[i] = gr < M;
            asrc[i] = A + (aok[i] ? gr : 0) * K + kc;
        }
#pragma unroll
        for (int i = 0; i < BL; i++) {
            const unsigned short* src = brow((tid + i * THREADS) >> 2);
            bok[i] = src != nullptr;
            bsrc[i] = (bok[i] ? src : A) + kc;
        }
        const unsigned adst = mma_swz(tid >> 2, tid & 3);  // + i·THREADS/4 rows: the same swizzle (rows of 8)
        int kleft = (int)K - kc;                          // k of the chunk, counted down from K
        auto load = [&](unsigned s) {
            const bool kin = kleft > 0;
#pragma unroll
            for (int i = 0; i < AL; i++) {
                const bool ok = aok[i] && kin;
                cp_async16(s + adst + i * (THREADS / 4) * 64, ok ? asrc[i] : A, ok);
                asrc[i] += MMA_BK;
            }
#pragma unroll
            for (int i = 0; i < BL; i++) {
                const bool ok = bok[i] && kin;
                cp_async16(s + A_BYTES + adst + i * (THREADS / 4) * 64, ok ? bsrc[i] : A, ok);
                bsrc[i] += MMA_BK;
            }
            kleft -= MMA_BK;
        };

#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < ktiles) load(sbase + s * STAGE);
            cp_async_commit();
        }
        // ldmatrix lane addresses. A (m16k16 at row i0, chunk c0): lanes 0–15 rows i0+0…15 chunk c0, lanes 16–31
        // the same rows at chunk c0+1 — matrices a0 … a3 in mma order. B (two n8k16 tiles at row j0): lanes 0–7
        // rows j0+0…7 chunk c0, 8–15 the same rows chunk c0+1, 16–23 rows j0+8…15 chunk c0, 24–31 chunk c0+1:
        // b0, b1 of the first n8 tile, then of the second. Row i0 + 16 has the swizzle of row i0, 1024 bytes on;
        // the second k16 step (chunks 2, 3) is the first one's address with bit 5 flipped (rows are 64 bytes
        // and the stages 64-byte aligned).
        const unsigned a_ld = sbase + mma_swz(wm * TM + (lane & 15), lane >> 4);
        const unsigned b_ld = sbase + A_BYTES + mma_swz(wn * TN + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
        unsigned rd = 0, wr = (STAGES - 1) * STAGE;
        for (int kt = 0; kt < ktiles; kt++) {
            cp_async_wait<STAGES - 2>();
            __syncthreads();  // stage kt is in; every warp is done with the stage the next load overwrites
            if (kt + STAGES - 1 < ktiles) load(sbase + wr);
            cp_async_commit();
            wr = wr + STAGE == STAGES * STAGE ? 0 : wr + STAGE;
#pragma unroll
            for (int kk = 0; kk < MMA_BK / 16; kk++) {
                const unsigned fa = (a_ld + rd) ^ (kk * 32), fb = (b_ld + rd) ^ (kk * 32);
                unsigned af[MI][4], bf[NI / 2][4];
#pragma unroll
                for (int i = 0; i < MI; i++) ldmatrix_x4(af[i], fa + i * 1024);
#pragma unroll
                for (int j = 0; j < NI / 2; j++) ldmatrix_x4(bf[j], fb + j * 1024);
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int j = 0; j < NI; j++)
                        mma_bf16(acc[i][j], af[i], bf[j / 2][2 * (j & 1)], bf[j / 2][2 * (j & 1) + 1]);
            }
            rd = rd + STAGE == STAGES * STAGE ? 0 : rd + STAGE;
        }
        cp_async_wait<0>();
    }

    // Output coordinates of accumulator (i, j, e) within the block tile: row wm·TM + 16i + g (+8 for e ≥ 2),
    // column wn·TN + 8j + 2·(lane%4) (+1 for odd e).
    __device__ __forceinline__ int row(int i, int e) const {
        return (threadIdx.x >> 5) / WN * TM + i * 16 + ((threadIdx.x & 31) >> 2) + (e >> 1) * 8;
    }
    __device__ __forceinline__ int col(int j) const {
        return (threadIdx.x >> 5) % WN * TN + j * 8 + (threadIdx.x & 3) * 2;
    }
};

// mma_tile_coords maps blockIdx.x to a (tile row, tile column), grouping 8 tile rows so that consecutive blocks
// share B tiles and a wave of blocks touches a compact patch of A and B (L2 reuse).
__device__ __forceinline__ void mma_tile_coords(long long mtiles, long long ntiles, long long& tm, long long& tn) {
    const long long G = 8, pid = blockIdx.x;
    const long long per = G * ntiles, first = pid / per * G;
    const long long gsize = min(mtiles - first, G);
    tm = first + (pid % per) % gsize;
    tn = (pid % per) / gsize;
}

// store_bf16x2 writes (v0, v1) to p[0], p[1] as bf16 (p[1] only when two), one 4-byte store when both are
// written and p is 4-byte aligned.
__device__ __forceinline__ void store_bf16x2(unsigned short* p, float v0, float v1, bool two) {
    const unsigned short h0 = f32_to_bf16(v0);
    if (two && ((unsigned long long)p & 3) == 0) {
        *(unsigned*)p = (unsigned)h0 | ((unsigned)f32_to_bf16(v1) << 16);
    } else {
        p[0] = h0;
        if (two) p[1] = f32_to_bf16(v1);
    }
}

// Epilogues of mma_linear: what a pair of accumulators becomes before it is rounded to bf16.
#define EPI_NONE 0
#define EPI_GELU 1  // the tanh form, x·σ(2u) with u = √(2/π)·(x + 0.044715·x³) (as gelu.cu)
#define EPI_SWIGLU 2  // silu(gate) · up: B holds the gate rows then the up rows of each warp tile (ffn.cu)

__device__ __forceinline__ float mma_gelu(float x) {
    const float k0 = -2.0f * 0.7978845608028654f, k1 = k0 * 0.044715f;
    return x / (1.0f + __expf(x * fmaf(k1, x * x, k0)));
}
__device__ __forceinline__ float mma_silu(float x) { return x / (1.0f + __expf(-x)); }

// mma_linear is one block of y = epi(x · Wᵀ): x [M, K], W [N, K] (for EPI_SWIGLU: Wg and Wu, each [N, K], and y
// = silu(x·Wgᵀ) ⊙ (x·Wuᵀ)), y [M, N], all bf16, fp32 accumulation. Blocks cover ⌈M/BM⌉ × ⌈N/BN'⌉ output tiles,
// BN' = BN (BN/2 for EPI_SWIGLU, whose BN shared rows are BN/2 gate and BN/2 up rows).
template <int BM, int BN, int WM, int WN, int STAGES, int EPI>
__device__ __forceinline__ void mma_linear(const unsigned short* __restrict__ x, const unsigned short* __restrict__ w,
                                           const unsigned short* __restrict__ wu, unsigned short* __restrict__ y,
                                           long long M, long long N, long long K) {
    typedef MmaTile<BM, BN, WM, WN, STAGES> T;
    __shared__ __align__(128) unsigned char smem[STAGES * (T::A_BYTES + T::B_BYTES)];
    const int ON = EPI == EPI_SWIGLU ? BN / 2 : BN;  // output columns of a block
    long long tm, tn;
    mma_tile_coords((M + BM - 1) / BM, (N + ON - 1) / ON, tm, tn);
    const long long m0 = tm * BM, n0 = tn * ON;
    T t;
    if (EPI == EPI_SWIGLU) {
        // Shared row j: warp column j / TN; its first TN/2 rows are gate rows, the next TN/2 the up rows of the
        // same outputs, so that accumulator columns j and j + NI/2 of a thread are the gate and up of one output.
        t.run(x, M, K, m0,
              [&](int j) -> const unsigned short* {
                  const int within = j % T::TN, half = T::TN / 2;
                  const long long n = n0 + (j / T::TN) * half + within % half;
                  if (n >= N) return nullptr;
                  return (within < half ? w : wu) + n * K;
              },
              smem);
    } else {
        t.run(x, M, K, m0, [&](int j) -> const unsigned short* { return n0 + j < N ? w + (n0 + j) * K : nullptr; },
              smem);
    }
    const int NO = EPI == EPI_SWIGLU ? T::NI / 2 : T::NI;  // accumulator columns that are outputs
#pragma unroll
    for (int i = 0; i < T::MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long r = m0 + t.row(i, 2 * h);
            if (r >= M) continue;
#pragma unroll
            for (int j = 0; j < NO; j++) {
                float v0 = t.acc[i][j][2 * h], v1 = t.acc[i][j][2 * h + 1];
                int c = t.col(j);
                if (EPI == EPI_GELU) {
                    v0 = mma_gelu(v0);
                    v1 = mma_gelu(v1);
                } else if (EPI == EPI_SWIGLU) {
                    v0 = mma_silu(v0) * t.acc[i][j + NO][2 * h];
                    v1 = mma_silu(v1) * t.acc[i][j + NO][2 * h + 1];
                    c = (threadIdx.x >> 5) % WN * (T::TN / 2) + j * 8 + (threadIdx.x & 3) * 2;
                }
                const long long n = n0 + c;
                if (n < N) store_bf16x2(y + r * N + n, v0, v1, n + 1 < N);
            }
        }
}

// The plans every module instantiates: 128 × 128 blocks of 8 warps (64 × 32 warp tiles, 3 stages: 48 KiB) for
// large problems, 64 × 64 blocks of 4 warps (32 × 32 warp tiles, 4 stages: 32 KiB) where the large tiles would
// leave multiprocessors idle. MMA_LINEAR(NAME, EPI, ...) defines NAME_128x128 and NAME_64x64 with the
// parameters (x, w, wu, y, M, N, K).
#define MMA_LINEAR_PLAN(NAME, EPI, BM, BN, WM, WN, ST, MINB)                                                      \
    extern "C" __global__ void __launch_bounds__(32 * WM * WN, MINB)                                           \
        NAME##_##BM##x##BN(const unsigned short* x, const unsigned short* w, const unsigned short* wu,       \
                           unsigned short* y, long long M, long long N, long long K) {                       \
        mma_linear<BM, BN, WM, WN, ST, EPI>(x, w, wu, y, M, N, K);                                           \
    }
#define MMA_LINEAR(NAME, EPI)                          \
    MMA_LINEAR_PLAN(NAME, EPI, 128, 128, 2, 4, 3, 2) \
    MMA_LINEAR_PLAN(NAME, EPI, 64, 64, 2, 2, 4, 4)

#endif

// rnn_x3.cuh: the LSTM's fp32 persistent kernel on tensor cores (sm_90: mma.sync, ldmatrix, cp.async,
// thread-block clusters) with fp32 accuracy from tf32 products (3xTF32), and the input projection as a 3xTF32
// GEMM. For fp32 storage: the LSTM's (lstm.cu, module lstm_sm90) at hidden 128 and 256, where the SIMT kernels
// spend most of a step on W h and the eager chain is only a few times slower.
//
// 3xTF32: a product a·b of fp32 values is a_hi·b_hi + a_lo·b_hi + a_hi·b_lo, with x = x_hi + x_lo, x_hi the
// value as a tf32 (10 mantissa bits) and x_lo = x − x_hi exact in fp32 (below 2⁻¹⁰|x|); what is dropped (a_lo·b_lo
// and the roundings of the lo parts) is about 2⁻²⁰ of the product, near fp32's own rounding, where a tf32 product
// alone is off by about 2⁻¹¹. Here (mma_x3) the two large products are tf32 m16n8k8 mma with the fp32 a passed
// as it is (the tensor core ignores its low 13 bits: a_hi is a truncated, for free) and a_lo = x3_lo(a); the
// small a_hi·b_lo is one bf16 m16n8k16 mma over twice the k, a and b_lo rounded to bf16 (2⁻⁹ of a term below
// 2⁻¹⁰ of the product), b_hi rounded to nearest so that b_lo is below 2⁻¹¹|b|. Rounding to tf32 with cvt.rna costs
// five instructions on sm_90 (no such unit): the splits here are one or two integer or fp32 instructions each.
//
// rnn_x3 runs rnn_tc.cuh's recurrence over G [batch, t, 4H] fp32 (the projection already made, bias included:
// rnn_x3_proj), with these differences from rnn_tc:
//   - W_hh is fp32 in registers, split into hi and lo at each use (two instructions a weight a step: the hi and
//     lo of all of W would need twice the register file of the cluster); h_{t−1} is fp32 in shared memory, read
//     as A fragments with ldmatrix (an 8 × 16-byte matrix of fp32 is an 8 × 4 tf32 block) and split likewise;
//   - K is split over KP warps: warp (ug, kp) takes the four gates of 8 units (ug) over the kp-th H/KP of h, so
//     that a thread holds 4·H/KP/8·2 fp32 of W (128 at H = 256, KP = 2). The KP warps of a unit group then
//     reduce-scatter their accumulators through shared memory (a named barrier of the KP warps): each ends with
//     the full pre-activations of 4/KP of the (row, unit) pairs of its accumulator tile and runs their cells;
//   - h is fp32: each thread writes its h_t into the next buffer of every block of the cluster (distributed
//     shared memory), then one cluster barrier ends the step.
// The gates use rnn.cuh's fp32 functions on the special-function unit (LstmCellF), the fp32 unit kernel's.
// With H3, W_hh·h is three fp16 products instead (each value split into two fp16: fewer mma, as accurate); and
// rnn_x3_pa makes the projection in the same launch, in the clusters beside the recurrence's.
//
// A cluster of CL blocks takes 16·MT batch rows (MT m16 tiles: the split of W serves MT times as many mma);
// block `rank` owns U = H/CL units in U/8 · KP warps.
// Layouts: G [batch, t, 4H]; W [4H, H]; y [batch, t, H]; resets [batch, t] (fp32, 0 or 1).
// grid = ⌈batch / (16·MT)⌉ · CL blocks of RnnX3::THREADS threads in clusters of CL; dynamic shared memory
// RnnX3::SMEM (rnnX3Smem in lstm.go; the kernel traps on less).
#pragma once
#include "rnn.cuh"
#include "rnn_tc.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

// x3_lo is a − trunc(a), trunc(a) = a with its low 13 bits cleared: what the tensor core drops of an fp32 value
// passed as a tf32 operand (it reads the upper 19 bits), exact in fp32, below 2⁻¹⁰|a|.
__device__ __forceinline__ float x3_lo(float a) { return a - __uint_as_float(__float_as_uint(a) & 0xffffe000u); }

// x3_rna is finite a rounded to the nearest tf32 (the carry of bit 12 into the kept bits), so that a − x3_rna(a)
// is below 2⁻¹¹|a|.
__device__ __forceinline__ float x3_rna(float a) {
    return __uint_as_float((__float_as_uint(a) + 0x1000u) & 0xffffe000u);
}

// mma_tf32 is d += a · b on one m16n8k8 tile (row-major A, column-major B, tf32 operands, fp32 accumulators).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// X3A is a thread's A operand of one m16 tile over a k16 step, read as two m16n8k8 tf32 fragments (a[0], a[1]:
// k 0–7, 8–15) of fp32 values, passed as they are (the tensor core truncates them: their hi parts); lo, their lo
// parts; bf, the values rounded to bf16 as one m16n8k16 fragment. The k16 fragment's lanes hold other k than the
// two k8 ones (lane q has k 2q, 2q + 1, 2q + 8, 2q + 9 against q, q + 4, q + 8, q + 12); a product sums over k,
// so bf takes its own values in the k16 slots of the k8 ones (slot 2q ← k q, 2q + 1 ← q + 4, 2q + 8 ← q + 8,
// 2q + 9 ← q + 12), and so must the B operand's bf16 fragment (x3_bf16_b).
struct X3A {
    unsigned a[2][4], lo[2][4], bf[4];
    __device__ __forceinline__ void split() {
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int i = 0; i < 4; i++) lo[h][i] = __float_as_uint(x3_lo(__uint_as_float(a[h][i])));
#pragma unroll
        for (int h = 0; h < 2; h++) {
            bf[2 * h] = tc_pack_bf16(__uint_as_float(a[h][0]), __uint_as_float(a[h][2]));
            bf[2 * h + 1] = tc_pack_bf16(__uint_as_float(a[h][1]), __uint_as_float(a[h][3]));
        }
    }
};

// x3_bf16_b is the m16n8k16 bf16 B fragment (b0, b1) of the values whose m16n8k8 tf32 B fragments over the same
// k16 step are (v00, v01) (k 0–7) and (v10, v11) (k 8–15), in X3A's slots.
__device__ __forceinline__ void x3_bf16_b(float v00, float v01, float v10, float v11, unsigned& b0, unsigned& b1) {
    b0 = tc_pack_bf16(v00, v01);
    b1 = tc_pack_bf16(v10, v11);
}

// mma_x3 is d += A·B over a k16 step for fp32 A (X3A) and B given as hi, two tf32 fragments (k 0–7, 8–15), and lo,
// the bf16 fragment of B − hi (x3_bf16_b): A·hi in two products (A's hi and lo parts: the tensor core drops the
// low 13 bits of each, about 2⁻²⁰ of A), A·lo in one bf16 product (A and lo each rounded to bf16, 2⁻⁹ of a term
// below 2⁻¹⁰ of A·B). The small terms go into ds, the large one into d: shorter chains of dependent mma.
__device__ __forceinline__ void mma_x3(float (&d)[4], float (&ds)[4], const X3A& a, const unsigned (&hi)[2][2],
                                       unsigned lo0, unsigned lo1) {
    mma_bf16(ds, a.bf, lo0, lo1);
    mma_tf32(ds, a.lo[0], hi[0][0], hi[0][1]);
    mma_tf32(ds, a.lo[1], hi[1][0], hi[1][1]);
    mma_tf32(d, a.a[0], hi[0][0], hi[0][1]);
    mma_tf32(d, a.a[1], hi[1][0], hi[1][1]);
}

// H3 (rnn_x3): W_hh·h as three fp16 products instead of 3xTF32's four tf32 and one bf16 (per k16 step: 3 mma
// of the same cost against 5). A value v is v1 + v2, v1 = fp16(v) (11 significant bits), v2 = fp16(v − v1);
// a·b ≈ a1·b1 + a1·b2 + a2·b1, what is dropped (a2·b2, the rounding of the v2) about 2⁻²² of the product, where
// 3xTF32 drops about 2⁻¹⁹ (its bf16 term). fp16's range is the catch: h = σ·tanh is below 1, so its parts are
// normal down to |h| ≈ 2⁻², below which a2 is subnormal and absolute errors of 2⁻²⁵ remain (a dot product of 256
// such terms with weights of 1/16 stays near 1e-8); W is scaled by a power of two per block (exact, undone on
// the sums) so that its largest magnitude is in [2¹³, 2¹⁴): no overflow whatever W, and w2 normal down to
// 2⁻¹³ of the block's largest weight.
// x3_pack_f16 is (lo, hi) rounded to nearest as an fp16 pair, lo in the low half.
__device__ __forceinline__ unsigned x3_pack_f16(float lo, float hi) {
    unsigned d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}
// x3_unpack_f16 is the fp16 pair p as two fp32 (lo, hi).
__device__ __forceinline__ void x3_unpack_f16(unsigned p, float& lo, float& hi) {
    unsigned short l, h;
    asm("mov.b32 {%0, %1}, %2;" : "=h"(l), "=h"(h) : "r"(p));
    asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"(l));
    asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"(h));
}
// mma_f16 is d += a · b on one m16n8k16 tile (fp16 operands, fp32 accumulators).
__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// x3_split_f16 makes the fp16 m16n8k16 A fragments a1, a2 of a k16 step from its two m16n8k8 tf32 fragments of
// fp32 values (X3A's a; in X3A's k slots).
__device__ __forceinline__ void x3_split_f16(const unsigned (&a)[2][4], unsigned (&a1)[4], unsigned (&a2)[4]) {
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const float lo = __uint_as_float(a[h][i]), hi = __uint_as_float(a[h][i + 2]);
            a1[2 * h + i] = x3_pack_f16(lo, hi);
            float l1, h1;
            x3_unpack_f16(a1[2 * h + i], l1, h1);
            a2[2 * h + i] = x3_pack_f16(lo - l1, hi - h1);
        }
}
// x3_split_f16_b makes the fp16 B fragments (b1, b2) of values whose tf32 B fragments are (v00, v01) (k 0–7) and
// (v10, v11) (k 8–15), in X3A's slots (as x3_bf16_b).
__device__ __forceinline__ void x3_split_f16_b(float v00, float v01, float v10, float v11, unsigned (&b1)[2],
                                               unsigned (&b2)[2]) {
    b1[0] = x3_pack_f16(v00, v01);
    b1[1] = x3_pack_f16(v10, v11);
    float l, h;
    x3_unpack_f16(b1[0], l, h);
    b2[0] = x3_pack_f16(v00 - l, v01 - h);
    x3_unpack_f16(b1[1], l, h);
    b2[1] = x3_pack_f16(v10 - l, v11 - h);
}

__device__ __forceinline__ void x3_st_cluster2(unsigned addr, float a, float b) {
    asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void x3_st_cluster1(unsigned addr, float a) {
    asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(addr), "f"(a) : "memory");
}
// x3_bar_sync is a named barrier (bar.sync id, n threads: whole warps).
__device__ __forceinline__ void x3_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }

// PA (rnn_x3_pa): the projection made alongside the recurrence, in chunks of RNN_X3_PA_TC steps, tiles of
// RNN_X3_PA_BN columns; x3_wait_ready spins until the counter at f (acquire, device scope) reaches need, trapping
// after 2 s rather than hanging the GPU (projection clusters that were never scheduled, a GPU shared with another
// context): the launch fails loudly instead.
#define RNN_X3_PA_TC 4
#define RNN_X3_PA_BN 128
__device__ __forceinline__ int x3_ready(const int* f) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}
__device__ __forceinline__ void x3_wait_ready(const int* f, int need) {
    if (x3_ready(f) >= need) return;
    const unsigned long long t0 = globaltimer();
    while (x3_ready(f) < need)
        if (globaltimer() - t0 > 2000000000ull) __trap();
}

// RnnX3 is the shape of one instantiation and its shared memory (bytes): two h buffers of 16·MT rows of H fp32,
// rows padded by 16 bytes (the eight rows of an ldmatrix fall in distinct banks); RNN_TC_PD input stages of 16·MT
// rows of the block's 4·U columns of G (padded by 32 bytes); the reduce-scatter buffer, 16·MT floats a thread.
// V: 0; for timing only, what a step costs without a part of it: 2 no y, 3 h into the block's own buffer only, 4
// no G. (1, y staged in shared memory and written 8 steps at a time, was no faster and is gone.)
// A1: one accumulator a gate tile (the small products' mma chained into the large ones'), 16·MT fewer registers
// a thread, so that two m16 tiles (MT 2) fit in registers without spilling (ptxas at hidden 256, CL 8, KP 2: 24
// bytes of spills with W's lo parts made each step, 124 with them held; 256 and 296 with two accumulator sets).
template <int H, int CL, int KP, int MT, bool WLO, int NS, int V = 0, bool A1 = false>
struct RnnX3 {
    static const int U = H / CL, UG = U / 8, NW = UG * KP, THREADS = 32 * NW, KH = H / KP, KT = KH / 8, ROWS = 16 * MT;
    static const int NP = 4 * MT, P = NP / KP;  // (row, unit) pairs of a thread's accumulators; those whose cells it runs
    static const int HP = 4 * H + 16, GSEG = 4 * U, SP = 4 * GSEG + 32, CPR = 4 * GSEG / 16;
    static const int HBYTES = 2 * ROWS * HP, RBYTES = RNN_TC_PD * ROWS * SP, XBYTES = KP > 1 ? THREADS * 16 * MT * 4 : 0;
    static const int SMEM = HBYTES + RBYTES + XBYTES;
    static_assert(H % (8 * CL) == 0 && (KP == 1 || KP == 2 || KP == 4) && KH % 16 == 0 && UG >= 1 && NW <= 32 &&
                      UG <= 15 && (MT == 1 || MT == 2),
                  "rnn_x3: bad shape");
};

template <class Cell, int H, int CL, int KP, int MT, bool WLO, int NS, int V = 0, bool A1 = false, bool PA = false,
          bool H3 = false>
__device__ __forceinline__ void rnn_x3(const float* __restrict__ gin, const float* __restrict__ w,
                                       const float* __restrict__ resets, float* __restrict__ y, long long nb,
                                       long long nt, int* __restrict__ ready = nullptr) {
    typedef RnnX3<H, CL, KP, MT, WLO, NS, V, A1> L;
    constexpr int U = L::U, UG = L::UG, KT = L::KT, KH = L::KH, HP = L::HP, SP = L::SP, CPR = L::CPR, P = L::P;
    constexpr int NP = L::NP, PD = RNN_TC_PD, ROWS = L::ROWS;
    extern __shared__ __align__(128) unsigned char x3_smem[];
    {
        unsigned dyn;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
        if (dyn < (unsigned)L::SMEM || (CL > 1 && tc_cluster_size() != CL)) __trap();  // a launch that lies
    }
    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5, g = lane >> 2, q = lane & 3;
    const int ug = wp % UG, kp = wp / UG;
    const unsigned rank = CL > 1 ? tc_cluster_rank() : 0;
    const long long b0 = (long long)(blockIdx.x / CL) * ROWS;
    const int lu = ug * 8 + 2 * q;        // this thread's first unit in the block (and lu + 1)
    const int unit = (int)rank * U + lu;  // … in the layer

    // B fragments of W: gate j of unit rank·U + ug·8 + g (column g of the n8 tile), k = kp·KH + 8·kt + q (+ 4).
    // With WLO, W rounded to nearest tf32 and wl, the bf16 fragments of the rest; else W as it is (its lo parts
    // are made each step, two instructions a value).
    float wh[KT][4][2];
    unsigned wl[WLO ? KT / 2 : 1][4][2];
    {
        const float* wrow = w + ((long long)rank * U + ug * 8 + g) * H + kp * KH + q;
#pragma unroll
        for (int kt = 0; kt < KT; kt++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                wh[kt][j][0] = wrow[(long long)j * H * H + kt * 8];
                wh[kt][j][1] = wrow[(long long)j * H * H + kt * 8 + 4];
            }
        if (WLO) {
#pragma unroll
            for (int kk = 0; kk < KT / 2; kk++)
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    float lo[2][2];
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const float v = wh[2 * kk + h][j][e];
                            wh[2 * kk + h][j][e] = x3_rna(v);
                            lo[h][e] = v - wh[2 * kk + h][j][e];
                        }
                    x3_bf16_b(lo[0][0], lo[0][1], lo[1][0], lo[1][1], wl[WLO ? kk : 0][j][0], wl[WLO ? kk : 0][j][1]);
                }
        }
    }
    // H3: W·2^e as fp16 B fragments (w1, w2: x3_split_f16_b), e making the block's largest |W| in [2¹³, 2¹⁴).
    unsigned w1[H3 ? KT / 2 : 1][4][2], w2[H3 ? KT / 2 : 1][4][2];
    float wunscale = 1.0f;
    if (H3) {
        float m = 0.0f;
#pragma unroll
        for (int kt = 0; kt < KT; kt++)
#pragma unroll
            for (int j = 0; j < 4; j++) m = fmaxf(m, fmaxf(fabsf(wh[kt][j][0]), fabsf(wh[kt][j][1])));
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        float* red = reinterpret_cast<float*>(x3_smem);
        if (lane == 0) red[wp] = m;
        __syncthreads();
        m = 0.0f;
        for (int i = 0; i < L::NW; i++) m = fmaxf(m, red[i]);
        __syncthreads();  // red is h's buffer, cleared below
        int ex = 0;
        if (m > 0.0f && m < 3.0e38f) frexpf(m, &ex);  // m = f·2^ex, f in [0.5, 1)
        ex = max(ex, -100);                              // 2^(14 − ex) a normal fp32
        const float scale = ldexpf(1.0f, 14 - ex);
        wunscale = ldexpf(1.0f, ex - 14);
#pragma unroll
        for (int kk = 0; kk < KT / 2; kk++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                x3_split_f16_b(wh[2 * kk][j][0] * scale, wh[2 * kk][j][1] * scale, wh[2 * kk + 1][j][0] * scale,
                               wh[2 * kk + 1][j][1] * scale, w1[H3 ? kk : 0][j], w2[H3 ? kk : 0][j]);
    }
    const unsigned sbase = smem_addr(x3_smem), stbase = sbase + L::HBYTES;
    float* xb = reinterpret_cast<float*>(x3_smem + L::HBYTES + L::RBYTES);
    unsigned hpeer[CL];
#pragma unroll
    for (int r = 0; r < CL; r++) hpeer[r] = CL > 1 ? tc_mapa(sbase, r) : sbase;

    // load(s) starts the copies of step s's columns of G into stage s mod PD (one commit group, empty past the end).
    const long long nchunks = (nt + RNN_X3_PA_TC - 1) / RNN_X3_PA_TC;
    auto load = [&](long long s) {
        if (V == 4) s = nt;
        if (PA && s < nt && s % RNN_X3_PA_TC == 0)  // the projection's tiles of this chunk of steps are written
            x3_wait_ready(ready + (long long)(blockIdx.x / CL) * nchunks + s / RNN_X3_PA_TC, 4 * H / RNN_X3_PA_BN);
        if (s < nt) {
            const unsigned dst0 = stbase + (unsigned)(s % PD) * ROWS * SP;
            for (int i = tid; i < ROWS * CPR; i += L::THREADS) {
                const int r = i / CPR, cc = i % CPR;
                const long long b = b0 + r;
                const bool ok = b < nb;
                constexpr int PER = L::GSEG / 16;  // chunks a gate
                const int j = cc / PER, c = cc % PER;
                const float* src = gin + ((ok ? b : 0) * nt + s) * 4 * H + j * H + rank * U + c * 4;
                cp_async16(dst0 + r * SP + j * L::GSEG + c * 16, src, ok);
            }
        }
        cp_async_commit();
    };
    // Pair p of a thread's accumulators: tile p / 4, element p % 4 of each gate's m16n8 accumulator, which is row
    // 16·(p / 4) + 8·(p % 4 / 2) + g of the tile and unit lu + p % 2.
    auto prow = [](int p) { return 16 * (p / 4) + 8 * (p % 4 / 2); };  // + g
    // The reset flag of step s for the row of half rh (16·MT rows: rh = 2·mt + hh), tested two steps on.
    auto flag = [&](int rh, long long s) -> float {
        const long long b = b0 + 8 * rh + g;
        return b < nb && s < nt ? resets[b * nt + s] : 0.0f;
    };

    for (int i = tid; i < 2 * ROWS * HP / 16; i += L::THREADS)
        *reinterpret_cast<uint4*>(x3_smem + 16 * i) = make_uint4(0u, 0u, 0u, 0u);  // h_{−1} = 0
#pragma unroll
    for (int s = 0; s < PD - 1; s++) load(s);
    float f0[2 * MT], f1[2 * MT];
#pragma unroll
    for (int rh = 0; rh < 2 * MT; rh++) f0[rh] = flag(rh, 0), f1[rh] = flag(rh, 1);
    Cell cell[P];
    cp_async_wait<PD - 2>();
    rnn_tc_arrive<CL>();
    rnn_tc_wait<CL>();  // also: every block of the cluster runs before any writes into another's shared memory

    // ldmatrix lane address within a 16-row tile: row lane % 16, 16-byte chunk lane / 16 of a k8 step.
    const unsigned lda = (lane & 15) * HP + (lane >> 4) * 16 + kp * KH * 4;
    for (long long t = 0; t < nt; t++) {
        load(t + PD - 1);
        const unsigned hcur = sbase + (unsigned)(t & 1) * ROWS * HP, scur = (unsigned)(t % PD) * ROWS * SP;
        // NS sets of accumulators (k16 steps kk mod NS): NS times as many independent chains of mma.
        float acc[NS][MT][4][4], accs[NS][MT][4][4];
#pragma unroll
        for (int n = 0; n < NS; n++)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[n][mt][j][e] = accs[n][mt][j][e] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < KT / 2; kk++) {
            if (!WLO && !H3) {
                // W as if new each step: the compiler would otherwise hoist its split out of the loop, twice the
                // registers.
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int j = 0; j < 4; j++) asm volatile("" : "+f"(wh[2 * kk + h][j][0]), "+f"(wh[2 * kk + h][j][1]));
            }
            X3A a[MT];
            unsigned af1[H3 ? MT : 1][4], af2[H3 ? MT : 1][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
#pragma unroll
                for (int h = 0; h < 2; h++) ldmatrix_x4(a[mt].a[h], hcur + mt * 16 * HP + lda + (2 * kk + h) * 32);
                if (H3)
                    x3_split_f16(a[mt].a, af1[H3 ? mt : 0], af2[H3 ? mt : 0]);
                else
                    a[mt].split();
            }
            if (H3) {
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        float(&d)[4] = acc[kk % NS][mt][j];
                        float(&ds)[4] = A1 ? acc[kk % NS][mt][j] : accs[kk % NS][mt][j];
                        const unsigned(&b1)[2] = w1[H3 ? kk : 0][j];
                        const unsigned(&b2)[2] = w2[H3 ? kk : 0][j];
                        mma_f16(ds, af1[H3 ? mt : 0], b2[0], b2[1]);
                        mma_f16(ds, af2[H3 ? mt : 0], b1[0], b1[1]);
                        mma_f16(d, af1[H3 ? mt : 0], b1[0], b1[1]);
                    }
            }
#pragma unroll
            for (int j = 0; j < (H3 ? 0 : 4); j++) {
                unsigned hi[2][2], lo0, lo1;
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int e = 0; e < 2; e++) hi[h][e] = __float_as_uint(wh[2 * kk + h][j][e]);
                if (WLO) {
                    lo0 = wl[WLO ? kk : 0][j][0], lo1 = wl[WLO ? kk : 0][j][1];
                } else {
                    x3_bf16_b(x3_lo(wh[2 * kk][j][0]), x3_lo(wh[2 * kk][j][1]), x3_lo(wh[2 * kk + 1][j][0]),
                              x3_lo(wh[2 * kk + 1][j][1]), lo0, lo1);
                }
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
                    mma_x3(acc[kk % NS][mt][j], A1 ? acc[kk % NS][mt][j] : accs[kk % NS][mt][j], a[mt], hi, lo0, lo1);
            }
        }
        float pre[NP][4];  // pair p's four gates
#pragma unroll
        for (int p = 0; p < NP; p++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                pre[p][j] = acc[0][p / 4][j][p % 4] + accs[0][p / 4][j][p % 4];
#pragma unroll
                for (int n = 1; n < NS; n++) pre[p][j] += acc[n][p / 4][j][p % 4] + accs[n][p / 4][j][p % 4];
                if (H3) pre[p][j] *= wunscale;
            }
        // Reduce-scatter over the KP warps of the unit group: pair p belongs to warp kp = p / P; slot (source warp,
        // owner) of xb holds the 4 gates of each of the owner's P pairs.
        if (KP > 1) {
#pragma unroll
            for (int p = 0; p < NP; p++)
                if (p / P != kp)
#pragma unroll
                    for (int j = 0; j < 4; j++) xb[((wp * KP + p / P) * 4 * P + (p % P) * 4 + j) * 32 + lane] = pre[p][j];
            x3_bar_sync(1 + ug, 32 * KP);
#pragma unroll
            for (int p = 0; p < NP; p++)
                if (p / P == kp)
#pragma unroll
                    for (int ks = 0; ks < KP; ks++)
                        if (ks != kp)
#pragma unroll
                            for (int j = 0; j < 4; j++)
                                pre[p][j] += xb[(((ks * UG + ug) * KP + kp) * 4 * P + (p % P) * 4 + j) * 32 + lane];
        }
        const unsigned hnext = (unsigned)((t + 1) & 1) * ROWS * HP;
        float hv[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            hv[p] = 0.0f;
            if (p / P == kp) {
                const int row = prow(p) + g, e = p & 1;
                const bool first = t == 0 || f0[p / 2] != 0.0f;
                const float* srow = reinterpret_cast<const float*>(x3_smem + L::HBYTES + scur + row * SP);
                float z[4];
#pragma unroll
                for (int j = 0; j < 4; j++) z[j] = (first ? 0.0f : pre[p][j]) + srow[j * U + lu + e];
                hv[p] = cell[p % P].step(z, first);
            }
        }
        // h_t into every block's next buffer: a row's two units of the thread as a pair where it has both.
#pragma unroll
        for (int p = 0; p < NP; p += 2) {
            const unsigned off = hnext + (prow(p) + g) * HP + unit * 4;
            if (P >= 2) {
                if (p / P == kp)
#pragma unroll
                    for (int r = 0; r < CL; r++)
                        if (V != 3 || r == (int)rank) x3_st_cluster2(hpeer[r] + off, hv[p], hv[p + 1]);
            } else {
#pragma unroll
                for (int e = 0; e < 2; e++)
                    if (p + e == kp)
#pragma unroll
                        for (int r = 0; r < CL; r++)
                            if (V != 3 || r == (int)rank) x3_st_cluster1(hpeer[r] + off + 4 * e, hv[p + e]);
            }
        }
        cp_async_wait<PD - 2>();  // this thread's copies of step t + 1 are in; the barrier publishes them
        rnn_tc_arrive<CL>();
#pragma unroll
        for (int p = 0; p < NP; p += 2) {
            const long long b = b0 + prow(p) + g;
            float* yp = y + (b * nt + t) * H + unit;
            if (b < nb && V != 2) {
                if (P >= 2) {
                    if (p / P == kp) *reinterpret_cast<float2*>(yp) = make_float2(hv[p], hv[p + 1]);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; e++)
                        if (p + e == kp) yp[e] = hv[p + e];
                }
            }
        }
#pragma unroll
        for (int rh = 0; rh < 2 * MT; rh++) f0[rh] = f1[rh], f1[rh] = flag(rh, t + 2);
        rnn_tc_wait<CL>();
    }
    cp_async_wait<0>();
    if (PA && rank == 0)  // every block of the cluster is past its last wait (the last step's barrier): reset for
        for (long long i = tid; i < nchunks; i += L::THREADS) ready[(long long)(blockIdx.x / CL) * nchunks + i] = 0;  // the next launch
}

// rnn_x3_proj is the input projection out[m, n] = Σ_k x[m, k]·Wi[n, k] + bias[n] in 3xTF32, x [M, K] and
// Wi [N, K] fp32 (K a multiple of 4, N even): BM × BN block tiles of WM × WN warps, K in steps of 32 through a
// 3-stage cp.async ring (rows of 32 fp32 padded by 16 bytes: the eight rows of an ldmatrix fall in distinct
// banks), fragments by ldmatrix (A: one m16k8 tile; B: two n8k8 tiles) split as mma_x3 takes them, one
// accumulator a tile. grid = ⌈M/BM⌉·⌈N/BN⌉, 32·WM·WN threads, dynamic shared memory RnnX3Proj::SMEM.
template <int BM, int BN, int WM, int WN>
struct RnnX3Proj {
    static const int BK = 32, ST = 3, PITCH = 144, STAGE = (BM + BN) * PITCH, SMEM = ST * STAGE;
    static const int THREADS = 32 * WM * WN, MI = BM / WM / 16, NI = BN / WN / 8;
    static_assert(MI >= 1 && NI >= 2 && NI % 2 == 0 && (BM + BN) * 8 % THREADS == 0, "rnn_x3_proj: bad shape");
};

// rnn_x3_proj_tile is one BM × BN tile of rnn_x3_proj, columns n0 …, its row r the row rowof(r) of x and out (−1:
// none, read as zeros and not written), in the dynamic shared memory from its start. PH3: the products as rnn_x3's
// H3 makes them, three fp16 mma a k16 step rather than five, W scaled by 2¹⁰ (not by its largest value: that
// would take a pass over W first), where x is within fp16's range (|x| < 65504) and W below 64 in magnitude, as
// inputs and weights of an LSTM are; a tile whose sums come out inf or NaN (anything beyond, or a NaN) is made
// again in 3xTF32, so the result is fp32's whatever the data, and the products' loop checks nothing.
template <int BM, int BN, int WM, int WN, class RowOf, bool PH3 = false>
__device__ __forceinline__ void rnn_x3_proj_tile(const float* __restrict__ x, const float* __restrict__ wi,
                                                 const float* __restrict__ bias, float* __restrict__ out, long long n0,
                                                 long long N, long long K, RowOf rowof) {
    typedef RnnX3Proj<BM, BN, WM, WN> T;
    constexpr int BK = T::BK, ST = T::ST, PITCH = T::PITCH, MI = T::MI, NI = T::NI, NT = T::THREADS;
    extern __shared__ __align__(128) unsigned char x3_smem[];
    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5, wm = wp / WN, wn = wp % WN;
    const unsigned sbase = smem_addr(x3_smem);
    const long long nk = (K + BK - 1) / BK;
    auto load = [&](long long kt) {
        if (kt < nk) {
            const unsigned st = sbase + (unsigned)(kt % ST) * T::STAGE;
#pragma unroll
            for (int i = 0; i < (BM + BN) * 8 / NT; i++) {  // rows of A then of B, 8 chunks a row
                const int c = tid + NT * i, r = c >> 3, ch = c & 7;
                const bool isb = r >= BM;
                const long long k = kt * BK + ch * 4;
                const long long row = isb ? n0 + r - BM : rowof(r);
                const bool ok = (isb ? row < N : row >= 0) && k < K;
                const float* src = (isb ? wi : x) + (ok ? row * K + k : 0);
                cp_async16(st + r * PITCH + ch * 16, src, ok);
            }
        }
        cp_async_commit();
    };
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
#pragma unroll
    for (int s = 0; s < ST - 1; s++) load(s);
    // ldmatrix lane addresses: A rows lane % 16, chunk lane / 16; B rows (lane / 16)·8 + lane % 8, chunk lane / 8 % 2.
    const unsigned la = (wm * (BM / WM) + (lane & 15)) * PITCH + (lane >> 4) * 16;
    const unsigned lb = (BM + wn * (BN / WN) + ((lane >> 4) << 3) + (lane & 7)) * PITCH + ((lane >> 3) & 1) * 16;
    for (long long kt = 0; kt < nk; kt++) {
        cp_async_wait<ST - 2>();
        __syncthreads();
        load(kt + ST - 1);
        const unsigned st = sbase + (unsigned)(kt % ST) * T::STAGE;
#pragma unroll
        for (int kk = 0; kk < BK / 16 && PH3; kk++) {  // PH3: three fp16 products, W·2¹⁰
            unsigned b[NI / 2][2][4], a[MI][2][4];
#pragma unroll
            for (int j = 0; j < NI; j += 2)
#pragma unroll
                for (int h = 0; h < 2; h++) ldmatrix_x4(b[j / 2][h], st + lb + j * 8 * PITCH + (2 * kk + h) * 32);
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) ldmatrix_x4(a[i][h], st + la + i * 16 * PITCH + (2 * kk + h) * 32);
            unsigned w1[NI][2], w2[NI][2];
#pragma unroll
            for (int j = 0; j < NI; j += 2)
#pragma unroll
                for (int e = 0; e < 2; e++)
                    x3_split_f16_b(__uint_as_float(b[j / 2][0][2 * e]) * 1024.0f,
                                   __uint_as_float(b[j / 2][0][2 * e + 1]) * 1024.0f,
                                   __uint_as_float(b[j / 2][1][2 * e]) * 1024.0f,
                                   __uint_as_float(b[j / 2][1][2 * e + 1]) * 1024.0f, w1[j + e], w2[j + e]);
#pragma unroll
            for (int i = 0; i < MI; i++) {
                unsigned a1[4], a2[4];
                x3_split_f16(a[i], a1, a2);
#pragma unroll
                for (int j = 0; j < NI; j++) {
                    mma_f16(acc[i][j], a1, w2[j][0], w2[j][1]);
                    mma_f16(acc[i][j], a2, w1[j][0], w1[j][1]);
                    mma_f16(acc[i][j], a1, w1[j][0], w1[j][1]);
                }
            }
        }
#pragma unroll
        for (int kk = 0; kk < BK / 16 && !PH3; kk++) {
            unsigned bh[NI][2][2], bl[NI][2];  // W rounded to tf32 (k8 halves h), and the bf16 fragment of the rest
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                float v[2][4];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    unsigned b[4];
                    ldmatrix_x4(b, st + lb + j * 8 * PITCH + (2 * kk + h) * 32);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const float hv = x3_rna(__uint_as_float(b[e]));
                        v[h][e] = __uint_as_float(b[e]) - hv;
                        bh[j + e / 2][h][e % 2] = __float_as_uint(hv);
                    }
                }
                x3_bf16_b(v[0][0], v[0][1], v[1][0], v[1][1], bl[j][0], bl[j][1]);
                x3_bf16_b(v[0][2], v[0][3], v[1][2], v[1][3], bl[j + 1][0], bl[j + 1][1]);
            }
#pragma unroll
            for (int i = 0; i < MI; i++) {
                X3A a;
#pragma unroll
                for (int h = 0; h < 2; h++) ldmatrix_x4(a.a[h], st + la + i * 16 * PITCH + (2 * kk + h) * 32);
                a.split();
#pragma unroll
                for (int j = 0; j < NI; j++) mma_x3(acc[i][j], acc[i][j], a, bh[j], bl[j][0], bl[j][1]);
            }
        }
    }
    cp_async_wait<0>();
    if constexpr (PH3) {
        // fp16's range: an x of 65520 or more in magnitude, or a W·2¹⁰, becomes an infinity in its fp16 parts, and
        // every sum of its row (or column) inf or NaN. Then the block makes the tile again in 3xTF32, so that inputs
        // and weights of any size come out as fp32 would make them.
        bool bad = false;
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) bad |= !(fabsf(acc[i][j][e]) < __int_as_float(0x7f800000));
        if (__syncthreads_or(bad)) {
            rnn_x3_proj_tile<BM, BN, WM, WN, RowOf, false>(x, wi, bias, out, n0, N, K, rowof);
            return;
        }
    }
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long r = rowof(wm * (BM / WM) + i * 16 + h * 8 + g);
            if (r < 0) continue;
#pragma unroll
            for (int j = 0; j < NI; j++) {
                const long long c = n0 + wn * (BN / WN) + j * 8 + 2 * q;
                if (c < N)
                    *reinterpret_cast<float2*>(out + r * N + c) =
                        make_float2(acc[i][j][2 * h] * (PH3 ? 1.0f / 1024 : 1.0f) + bias[c],
                                    acc[i][j][2 * h + 1] * (PH3 ? 1.0f / 1024 : 1.0f) + bias[c + 1]);
            }
        }
}

template <int BM, int BN, int WM, int WN>
__device__ __forceinline__ void rnn_x3_proj(const float* __restrict__ x, const float* __restrict__ wi,
                                            const float* __restrict__ bias, float* __restrict__ out, long long M,
                                            long long N, long long K) {
    long long tm, tn;
    mma_tile_coords((M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
    const long long m0 = tm * BM;
    rnn_x3_proj_tile<BM, BN, WM, WN>(x, wi, bias, out, tn * BN, N, K,
                                     [&](int r) -> long long { return m0 + r < M ? m0 + r : -1; });
}

// rnn_x3_pa is rnn_x3 (MT two m16 tiles, 32 batch rows a cluster) with the input projection made alongside it in
// the same launch, so that the recurrence's clusters, which leave half the GPU idle, no longer wait for the whole
// projection first: clusters 0 … nrc − 1 run the recurrence over G as rnn_x3 does, the others make G in
// rnn_x3_proj's 128 × 128 tiles, a tile 32 batch rows (one recurrence cluster's) × RNN_X3_PA_TC steps, chunk by
// chunk of steps (all of a chunk's tiles before the next chunk's), and count each finished tile (its stores
// fenced, then an atomic add) in ready[cluster][chunk]; a recurrence block waits for its chunk's count (4H/128
// tiles) before it copies the chunk's first step of G. The projection blocks wait for nothing, so the launch
// cannot deadlock as long as one cluster more than the recurrence's fits on the GPU (the launcher sizes the grid
// to what fits at once). The recurrence resets its counters at the end, for the next launch. PH3: the
// projection's products in fp16 (rnn_x3_proj_tile's PH3). Shared memory:
// RnnX3's (more than the projection's three stages). grid = (nrc + projection clusters) · CL blocks.
template <class Cell, int H, int CL, int KP, int MT, bool WLO, bool A1, bool H3 = false, bool PH3 = false>
__device__ __forceinline__ void rnn_x3_pa(const float* __restrict__ x, const float* __restrict__ wi,
                                          const float* __restrict__ bias, float* __restrict__ gbuf,
                                          const float* __restrict__ w, const float* __restrict__ resets,
                                          float* __restrict__ y, int* __restrict__ ready, long long nb, long long nt,
                                          long long nrc) {
    constexpr int BM = 128, BN = RNN_X3_PA_BN, TC = RNN_X3_PA_TC, BR = BM / TC, NCT = 4 * H / BN;
    static_assert(BR == 16 * MT && RnnX3<H, CL, KP, MT, WLO, 1, 0, A1>::THREADS == RnnX3Proj<BM, BN, 2, 4>::THREADS &&
                      RnnX3<H, CL, KP, MT, WLO, 1, 0, A1>::SMEM >= RnnX3Proj<BM, BN, 2, 4>::SMEM,
                  "rnn_x3_pa: bad shape");
    if ((long long)(blockIdx.x / CL) < nrc) {
        rnn_x3<Cell, H, CL, KP, MT, WLO, 1, 0, A1, true, H3>(gbuf, w, resets, y, nb, nt, ready);
        return;
    }
    const long long nchunks = (nt + TC - 1) / TC, ntiles = nchunks * nrc * NCT;
    const long long pb = blockIdx.x - nrc * CL, npb = gridDim.x - nrc * CL;
    for (long long tile = pb; tile < ntiles; tile += npb) {
        const long long chunk = tile / (nrc * NCT), bg = tile % (nrc * NCT) / NCT, ct = tile % NCT;
        __syncthreads();  // the last tile's reads of shared memory are done
        auto rowof = [&](int r) -> long long {
            const long long b = bg * BR + r % BR, t = chunk * TC + r / BR;
            return b < nb && t < nt ? b * nt + t : -1;
        };
        rnn_x3_proj_tile<BM, BN, 2, 4, decltype(rowof), PH3>(x, wi, bias, gbuf, ct * BN, 4 * H, H, rowof);
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) atomicAdd(ready + bg * nchunks + chunk, 1);
    }
}

#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// rnn_expneg is e^−a for a ≥ 0 on the special-function unit: with EXACT the rounding error of the product
// a·log2 e put back as rnn_exp does (relative error about 2⁻²²), else ex2.approx of the rounded product alone
// (off by a further a·2⁻²⁴ relative: below 3e-7 where a < 5, as the gates' pre-activations mostly are).
template <bool EXACT>
__device__ __forceinline__ float rnn_expneg(float a) {
    const float p = a * -1.44269504f;
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(p));
    if (!EXACT) return r;
    const float e = fmaf(a, -1.44269504f, -p) - a * 1.92596299e-8f;
    return fmaf(r * e, 0.693147181f, r);
}
// rnn_rcp is 1/x as rcp.approx.ftz (x here in [1, 4]: no denormals to scale).
__device__ __forceinline__ float rnn_rcp(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// x3_cp_async4 copies 4 bytes from global src to shared dst, or writes 4 zero bytes when !valid.
__device__ __forceinline__ void x3_cp_async4(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}

// rnn_units_xt is rnn_units for the LSTM's fp32 layer at hidden 64 (XIN, one head, KS = 4 lanes a unit, so that
// a warp holds 8 units) with the input projection on tensor cores, a chunk of CS = 16/BB steps at a time: at the
// chunk's first step the block makes x_t·W_ihᵀ for its CS steps × BB rows (one m16 tile, row s·BB + b) in 3xTF32
// (mma_x3; warp w the four gates of its 8 units as four n8 tiles, W_ih's B fragments in registers) into shared
// memory, where the cells read it; the recurrent W_hh·h stays on CUDA cores as in rnn_units (the lanes' sums
// reduce-scattered: of rows b and b | o a lane keeps the one its bit o selects and sends the other, then the
// lanes of a row sum). A step's FMAs are then the recurrence's alone, about half of rnn_units'. x and the reset
// flags of the next chunk come by cp.async during the current one. grid = ⌈batch/BB⌉, H·4 threads.
//
// XE: the step's reset flag and projection (plus bias) are read from shared memory before its FMAs, not after the
// lanes' shuffles, where their latency falls on the step's path.
// XR (with XE): a reset at t + 1 is applied in step t, as rnn_tc_r8x does (h_t into the next buffer as 0, y keeps
// h_t; the cell cleared), so that no step selects its products by a flag; the next chunk's x and flags are waited
// for a step earlier (its flags are read a step earlier); y's offset is carried from step to step; and W_ih's
// bf16 lo fragments are made once, not at each chunk.
template <class Cell, int H, int BB, bool XE = false, bool XR = false>
__device__ __forceinline__ void rnn_units_xt(const float* __restrict__ x, const float* __restrict__ wi,
                                             const float* __restrict__ bias, const float* __restrict__ w,
                                             const float* __restrict__ resets, float* __restrict__ y, long long nb,
                                             long long nt) {
    constexpr int KS = 4, NT = H * KS, NW = H / (4 * KS), CS = 16 / BB, XP = H + 4, KT = H / 8;
    static_assert(H % 16 == 0 && BB <= KS && 16 % BB == 0 && NT <= 1024 && (!XR || XE && CS >= 2), "rnn_units_xt: bad shape");
    __shared__ __align__(16) float hs[2][BB][H];
    __shared__ __align__(16) float xt[2][16][XP];  // x of a chunk: row s·BB + b (rows padded by 16 bytes)
    __shared__ float xp[16][4][H];                 // its projection
    __shared__ float fl[2][16];                    // its reset flags
    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5, g = lane >> 2, qq = lane & 3;
    const int u = tid / KS, q = tid % KS, row = q % BB;
    const long long b0 = (long long)blockIdx.x * BB;
    float4 wv[4][NW];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < NW; i++)
            wv[j][i] = *reinterpret_cast<const float4*>(w + ((long long)j * H + u) * H + 4 * (q + KS * i));
    // W_ih's B fragments: gate j of unit 8·wp + g, k = 8·kt + qq (+ 4).
    float wb[KT][4][2];
#pragma unroll
    for (int kt = 0; kt < KT; kt++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) wb[kt][j][e] = wi[((long long)j * H + 8 * wp + g) * H + 8 * kt + qq + 4 * e];
    unsigned wlo[XR ? KT / 2 : 1][4][2];  // XR: W_ih's bf16 lo fragments
    if (XR) {
#pragma unroll
        for (int kk = 0; kk < KT / 2; kk++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                x3_bf16_b(x3_lo(wb[2 * kk][j][0]), x3_lo(wb[2 * kk][j][1]), x3_lo(wb[2 * kk + 1][j][0]),
                          x3_lo(wb[2 * kk + 1][j][1]), wlo[XR ? kk : 0][j][0], wlo[XR ? kk : 0][j][1]);
    }
    float cbias[4];
#pragma unroll
    for (int j = 0; j < 4; j++) cbias[j] = bias[j * H + u];
    // loadc(c): x and the flags of chunk c (steps c·CS …) into buffer c mod 2, one commit group.
    auto loadc = [&](long long c) {
        const long long t0 = c * CS;
        if (t0 < nt) {
            const unsigned dst = smem_addr(&xt[c & 1][0][0]);
            for (int i = tid; i < 16 * (H / 4); i += NT) {
                const int m = i / (H / 4), ch = i % (H / 4), b = m % BB;
                const long long t = t0 + m / BB;
                const bool ok = b0 + b < nb && t < nt;
                cp_async16(dst + m * XP * 4 + ch * 16, x + (ok ? ((b0 + b) * nt + t) * H + 4 * ch : 0), ok);
            }
            if (tid < 16) {
                const int b = tid % BB;
                const long long t = t0 + tid / BB;
                const bool ok = b0 + b < nb && t < nt;
                x3_cp_async4(smem_addr(&fl[c & 1][tid]), resets + (ok ? (b0 + b) * nt + t : 0), ok);
            }
        }
        cp_async_commit();
    };
    for (int i = tid; i < BB * H; i += NT) hs[0][i / H][i % H] = 0.0f;
    loadc(0);
    Cell st;
    const long long rb = b0 + row;
    long long yoff = rb * nt * H + u;  // XR: y's offset at step t
    const bool ystore = q < BB && rb < nb;
    const unsigned lda = (lane & 15) * XP * 4 + (lane >> 4) * 16;
    for (long long t = 0; t < nt; t++) {
        const int s = (int)(t % CS), par = (int)(t & 1);
        const long long c = t / CS;
        if (s == 0) {  // this chunk's x is in (waited for at the end of the last step, or here for the first)
            if (t == 0) {
                cp_async_wait<0>();
                __syncthreads();
            }
            loadc(c + 1);
            float acc[4][4], accs[4][4];
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[j][e] = accs[j][e] = 0.0f;
            const unsigned xa = smem_addr(&xt[c & 1][0][0]) + lda;
#pragma unroll
            for (int kk = 0; kk < KT / 2; kk++) {
                X3A a;
#pragma unroll
                for (int h = 0; h < 2; h++) ldmatrix_x4(a.a[h], xa + (2 * kk + h) * 32);
                a.split();
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    unsigned hi[2][2], lo0, lo1;
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < 2; e++) hi[h][e] = __float_as_uint(wb[2 * kk + h][j][e]);
                    if (XR) {
                        lo0 = wlo[XR ? kk : 0][j][0], lo1 = wlo[XR ? kk : 0][j][1];
                    } else {
                        x3_bf16_b(x3_lo(wb[2 * kk][j][0]), x3_lo(wb[2 * kk][j][1]), x3_lo(wb[2 * kk + 1][j][0]),
                                  x3_lo(wb[2 * kk + 1][j][1]), lo0, lo1);
                    }
                    mma_x3(acc[j], accs[j], a, hi, lo0, lo1);
                }
            }
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) xp[g + 8 * (e >> 1)][j][8 * wp + 2 * qq + (e & 1)] = acc[j][e] + accs[j][e];
            __syncthreads();
        }
        bool firste = false;
        float xe[4];  // XE: bias + x_t·W_ihᵀ of the cell's row
        bool resetn = false;  // XR: a reset at t + 1
        if (XR) {
            const long long t1 = t + 1;
            resetn = t1 < nt && fl[(t1 / CS) & 1][(int)(t1 % CS) * BB + row] != 0.0f;
        }
        if (XE) {
            firste = !XR && (t == 0 || fl[c & 1][s * BB + row] != 0.0f);
#pragma unroll
            for (int j = 0; j < 4; j++) xe[j] = xp[s * BB + row][j][u] + cbias[j];
        }
        float v[BB][4];
#pragma unroll
        for (int b = 0; b < BB; b++)
#pragma unroll
            for (int j = 0; j < 4; j++) v[b][j] = 0.0f;
#pragma unroll
        for (int i = 0; i < NW; i++)
#pragma unroll
            for (int b = 0; b < BB; b++) {
                const float4 h4 = *reinterpret_cast<const float4*>(&hs[par][b][4 * (q + KS * i)]);
#pragma unroll
                for (int j = 0; j < 4; j++)
                    v[b][j] = fmaf(wv[j][i].x, h4.x, fmaf(wv[j][i].y, h4.y, fmaf(wv[j][i].z, h4.z, fmaf(wv[j][i].w, h4.w, v[b][j]))));
            }
        // Reduce-scatter over the bits of q that select the row, then sum over the others.
#pragma unroll
        for (int o = 1; o < BB; o <<= 1)
#pragma unroll
            for (int b = 0; b < BB; b++)
                if ((b & o) == 0 && b % o == 0)
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const bool hi = (q & o) != 0;
                        const float keep = hi ? v[b + o][j] : v[b][j], send = hi ? v[b][j] : v[b + o][j];
                        v[b][j] = keep + __shfl_xor_sync(0xffffffffu, send, o);
                    }
#pragma unroll
        for (int o = BB; o < KS; o <<= 1)
#pragma unroll
            for (int j = 0; j < 4; j++) v[0][j] += __shfl_xor_sync(0xffffffffu, v[0][j], o);
        const bool first = XE ? firste : t == 0 || fl[c & 1][s * BB + row] != 0.0f;
        float z[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            z[j] = XE ? (first ? 0.0f : v[0][j]) + xe[j] : (first ? 0.0f : v[0][j]) + xp[s * BB + row][j][u] + cbias[j];
        const float hv = st.step(z, first);
        if (XR) {
            if (resetn) st = Cell();
            if (q < BB) hs[par ^ 1][row][u] = resetn ? 0.0f : hv;
            if (ystore) y[yoff] = hv;
            yoff += H;
        } else if (q < BB) {
            hs[par ^ 1][row][u] = hv;
            if (rb < nb) y[(rb * nt + t) * H + u] = hv;
        }
        if (s == CS - (XR ? 2 : 1)) cp_async_wait<0>();  // the next chunk's x (and flags); the barrier publishes it
        __syncthreads();
    }
    cp_async_wait<0>();
}
#endif

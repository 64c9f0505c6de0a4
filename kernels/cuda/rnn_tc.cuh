// rnn_tc.cuh: the recurrent layers' persistent kernel on bf16 tensor cores (sm_90: mma.sync, ldmatrix, cp.async,
// thread-block clusters), for bf16 storage: the LSTM's (lstm.cu, module lstm_sm90), written over the cell so that
// a layer with the same shape of recurrence (four gate rows a unit, block-diagonal heads) can take it too.
//
// A head's layer has H units, four gate rows a unit and recurrent weights W [4H, H] (row g·H + u: gate g of unit
// u); per step and batch row
//
//   z = in_t + (first ? 0 : W h_{t−1}),  h_t = Cell(z, first),  first = t = 0 or a reset at t,
//
// with in_t one of (IN):
//   RNN_TC_X    x_t [batch, t, H] bf16 times Wi [4H, H] (bf16, held like W) plus bias [4H] fp32: the input
//               projection inside the kernel (heads = 1);
//   RNN_TC_G32  G [batch, t, heads, 4H] fp32, the projection already made (bias included: rnn_tc_proj);
//   RNN_TC_G16  G [batch, t, heads, 4H] bf16, plus bias [heads, 4H] fp32.
//
// The product W h for 16·MT batch rows is an m16n8k16 GEMM with the batch rows as M, the gate rows as N and the
// units of h as K. A cluster of CL blocks takes a (batch tile, head); block `rank` owns U = H/CL units, all four
// gates of each, in U/8 warps: warp w's four n8 tiles are gates i, f, g, o of the same 8 units, so that the
// accumulators of a thread hold all four gates of 2 units × 2 batch rows (an m16 tile) and the cell runs where
// the products land, without shuffles. Each warp holds its B fragments of W (and Wi) in registers for the whole
// sequence (H/2 registers a thread for W); h_{t−1} is read from shared memory as bf16 A fragments (ldmatrix),
// double-buffered by step parity: each thread writes its h_t (2 units × 2 rows as bf16 pairs) into the next
// buffer of every block of the cluster (distributed shared memory, st.shared::cluster), then one cluster barrier
// (__syncthreads when CL = 1) ends the step. The cell state stays in registers. The inputs of step t (the x
// tile, or the block's columns of G) come through a PD-stage cp.async ring in shared memory, PD − 1 steps ahead;
// the reset flags through registers, two steps ahead. Every h and y is rounded to bf16 (h_{t−1} is the next
// step's A operand) and the gates use tanh.approx: bf16 storage only.
//
// Layouts: W, Wi [heads, 4H, H] (Wi: heads = 1); y [batch, t, heads, H] bf16; resets [batch, t] bf16.
// grid = ⌈batch / SROWS⌉ · heads · CL blocks (SROWS: 16·MT, or 8: see RnnTC) of 4·U threads in clusters of CL; dynamic shared memory
// RnnTC::SMEM (rnnTCSmem in lstm.go; the kernel traps on less).
#pragma once
#include "mma.cuh"
#include "recurrent.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

#define RNN_TC_X 0
#define RNN_TC_G32 1
#define RNN_TC_G16 2
#define RNN_TC_PD 4  // stages of the input ring

// tc_tanh is tanh.approx.f32 (relative error about 2⁻¹¹: for bf16 outputs, whose rounding is 2⁻⁹).
__device__ __forceinline__ float tc_tanh(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
// tc_sigmoid is σ(x) = (1 + tanh(x/2)) / 2, one MUFU operation.
__device__ __forceinline__ float tc_sigmoid(float x) { return fmaf(0.5f, tc_tanh(0.5f * x), 0.5f); }

// tc_pack_bf16 is (lo, hi) rounded to nearest even as a bf16 pair, lo in the low half (the lower address).
__device__ __forceinline__ unsigned tc_pack_bf16(float lo, float hi) {
    unsigned d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}

__device__ __forceinline__ unsigned tc_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned tc_cluster_size() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}
// tc_mapa is shared address addr of this block as the address of the same variable in block rank of the cluster.
__device__ __forceinline__ unsigned tc_mapa(unsigned addr, unsigned rank) {
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
__device__ __forceinline__ void tc_st_cluster(unsigned addr, unsigned v) {
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void tc_st_shared(unsigned addr, unsigned v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

// rnn_tc_arrive and rnn_tc_wait end a step: every thread of the cluster (CL > 1) or of the block has arrived.
// barrier.cluster.arrive has release and .wait acquire semantics at cluster scope (the only ones PTX 7.8 has),
// which order the distributed shared memory stores; ptxas makes the release a MEMBAR.ALL.GPU, which waits for the
// thread's outstanding stores, so the global stores of y go between arrive and wait.
template <int CL>
__device__ __forceinline__ void rnn_tc_arrive() {
    if (CL > 1) asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");
}
template <int CL>
__device__ __forceinline__ void rnn_tc_wait() {
    if (CL > 1) {
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    } else {
        __syncthreads();
    }
}

// RnnTC is the shape of one instantiation: its batch tile, SROWS = 16·MT rows, or with R8 8 rows in one m16 tile
// (the other 8 rows of the tile idle: half the cells a multiprocessor, for twice the blocks; G inputs only),
// and its shared memory (bytes): two h buffers of 16·MT rows of H bf16 and PD input stages of SROWS rows, rows
// padded by 16 bytes (32 for fp32 G) so that the ldmatrix and fragment reads of eight rows fall in distinct
// banks.
template <int H, int CL, int MT, int IN, bool R8>
struct RnnTC {
    static const int U = H / CL, NW = U / 8, THREADS = 32 * NW, KT = H / 16, ROWS = 16 * MT, SROWS = R8 ? 8 : ROWS;
    static const int NH = R8 ? 1 : 2;  // row halves (g, g + 8) of an m16 tile that are batch rows
    static const int HP = 2 * H + 16;  // h (and x) row pitch
    static const int GSEG = IN == RNN_TC_G32 ? 4 * U : 2 * U;  // bytes of one gate's U columns of G
    static const int SP = IN == RNN_TC_X ? HP : 4 * GSEG + (IN == RNN_TC_G32 ? 32 : 16);  // stage row pitch
    static const int CPR = IN == RNN_TC_X ? H / 8 : 4 * GSEG / 16;  // 16-byte chunks of a stage row
    static const int HBYTES = 2 * ROWS * HP, SMEM = HBYTES + RNN_TC_PD * SROWS * SP;
    // Two accumulator sets (even and odd k16 steps) where the chain of dependent mma would be long.
    static const int KSPLIT = KT >= 8 && MT == 1 ? 2 : 1;
    static_assert(!R8 || (MT == 1 && IN != RNN_TC_X), "rnn_tc: 8-row tiles take G inputs, one m16 tile");
    static_assert(H % (8 * CL) == 0 && H % 16 == 0 && NW >= 1 && NW <= 32, "rnn_tc: bad shape");
    static_assert(IN != RNN_TC_X || CPR * 16 <= HP, "rnn_tc: x tile");
};

template <class Cell, int H, int CL, int MT, int IN, bool R8>
__device__ __forceinline__ void rnn_tc(const void* __restrict__ in, const unsigned short* __restrict__ wi,
                                       const float* __restrict__ bias, const unsigned short* __restrict__ w,
                                       const unsigned short* __restrict__ resets, unsigned short* __restrict__ y,
                                       long long nb, long long nt, long long heads) {
    typedef RnnTC<H, CL, MT, IN, R8> L;
    constexpr int U = L::U, KT = L::KT, ROWS = L::ROWS, HP = L::HP, SP = L::SP, CPR = L::CPR, PD = RNN_TC_PD;
    constexpr int SROWS = L::SROWS, NH = L::NH;
    constexpr int KX = IN == RNN_TC_X ? KT : 1;
    extern __shared__ __align__(128) unsigned char tc_smem[];
    {
        unsigned dyn;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
        if (dyn < (unsigned)L::SMEM || (CL > 1 && tc_cluster_size() != CL)) __trap();  // a launch that lies
    }
    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5, g = lane >> 2, q = lane & 3;
    const unsigned rank = CL > 1 ? tc_cluster_rank() : 0;
    const long long grp = blockIdx.x / CL, head = grp % heads, b0 = grp / heads * SROWS;
    const int lu = wp * 8 + 2 * q;                     // this thread's first unit in the block (and lu + 1)
    const int unit = (int)rank * U + lu;               // … in the head
    const long long wrow = (head * 4 * H + rank * U + wp * 8 + g) * H + 2 * q;  // gate 0, k = 2q of B column g

    unsigned wh[KT][4][2], wx[KX][4][2];
#pragma unroll
    for (int kt = 0; kt < KT; kt++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const unsigned short* p = w + wrow + (long long)j * H * H + kt * 16;
            wh[kt][j][0] = *reinterpret_cast<const unsigned*>(p);
            wh[kt][j][1] = *reinterpret_cast<const unsigned*>(p + 8);
            if (IN == RNN_TC_X) {
                const unsigned short* px = wi + wrow + (long long)j * H * H + kt * 16;
                wx[kt < KX ? kt : 0][j][0] = *reinterpret_cast<const unsigned*>(px);
                wx[kt < KX ? kt : 0][j][1] = *reinterpret_cast<const unsigned*>(px + 8);
            }
        }
    float bz[4][2];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) bz[j][e] = IN != RNN_TC_G32 ? bias[head * 4 * H + j * H + unit + e] : 0.0f;

    const unsigned sbase = smem_addr(tc_smem), stbase = sbase + L::HBYTES;
    unsigned hpeer[CL];
#pragma unroll
    for (int r = 0; r < CL; r++) hpeer[r] = CL > 1 ? tc_mapa(sbase, r) : sbase;

    // load(s) starts the copies of step s's inputs into stage s mod PD (one commit group, empty past the end).
    auto load = [&](long long s) {
        if (s < nt) {
            const unsigned dst0 = stbase + (unsigned)(s % PD) * SROWS * SP;
            for (int i = tid; i < SROWS * CPR; i += L::THREADS) {
                const int r = i / CPR, cc = i % CPR;
                const long long b = b0 + r;
                const bool ok = b < nb;
                const long long bt = (ok ? b : 0) * nt + s;
                const char* src;
                unsigned dst;
                if (IN == RNN_TC_X) {
                    src = static_cast<const char*>(in) + (bt * H + cc * 8) * 2;
                    dst = r * SP + cc * 16;
                } else {
                    constexpr int PER = L::GSEG / 16, ES = IN == RNN_TC_G32 ? 4 : 2;  // chunks a gate, element size
                    const int j = cc / PER, c = cc % PER;
                    src = static_cast<const char*>(in) +
                          ((bt * heads + head) * 4 * H + j * H + rank * U) * ES + c * 16;
                    dst = r * SP + j * L::GSEG + c * 16;
                }
                cp_async16(dst0 + dst, src, ok);
            }
        }
        cp_async_commit();
    };
    // The reset flag of step s for row (mt, hh) of this thread (batch row b0 + 16·mt + 8·hh + g), as stored: it
    // is tested only where used, two steps on, so that the thread does not wait for the load where it is made.
    auto flag = [&](int mt, int hh, long long s) -> unsigned short {
        const long long b = b0 + 16 * mt + 8 * hh + g;
        return b < nb && s < nt ? resets[b * nt + s] : (unsigned short)0;
    };

    for (int i = tid; i < 2 * ROWS * HP / 16; i += L::THREADS)
        *reinterpret_cast<uint4*>(tc_smem + 16 * i) = make_uint4(0u, 0u, 0u, 0u);  // h_{−1} = 0, idle rows 0
#pragma unroll
    for (int s = 0; s < PD - 1; s++) load(s);
    unsigned short f0[MT][2], f1[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int hh = 0; hh < NH; hh++) f0[mt][hh] = flag(mt, hh, 0), f1[mt][hh] = flag(mt, hh, 1);
    Cell cell[MT][2][2];
    cp_async_wait<PD - 2>();
    rnn_tc_arrive<CL>();
    rnn_tc_wait<CL>();  // also: every block of the cluster runs before any writes into another's shared memory

    // ldmatrix lane address within a 16-row tile: row lane % 16, 16-byte chunk lane / 16 of a k16 step.
    const unsigned lda = (lane & 15) * HP + (lane >> 4) * 16;
    for (long long t = 0; t < nt; t++) {
        load(t + PD - 1);
        const unsigned hcur = sbase + (unsigned)(t & 1) * ROWS * HP, scur = (unsigned)(t % PD) * SROWS * SP;
        float acc[MT][4][4], accx[MT][4][4], acc2[MT][4][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][j][e] = accx[mt][j][e] = acc2[mt][j][e] = 0.0f;
        if (IN == RNN_TC_X) {  // x_t · Wiᵀ first: it does not wait for h
#pragma unroll
            for (int kt = 0; kt < KX; kt++)
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    unsigned a[4];
                    ldmatrix_x4(a, stbase + scur + mt * 16 * HP + lda + kt * 32);
#pragma unroll
                    for (int j = 0; j < 4; j++) mma_bf16(accx[mt][j], a, wx[kt][j][0], wx[kt][j][1]);
                }
        }
#pragma unroll
        for (int kt = 0; kt < KT; kt++)
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                unsigned a[4];
                ldmatrix_x4(a, hcur + mt * 16 * HP + lda + kt * 32);
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (L::KSPLIT == 2 && (kt & 1)) {
                        mma_bf16(acc2[mt][j], a, wh[kt][j][0], wh[kt][j][1]);
                    } else {
                        mma_bf16(acc[mt][j], a, wh[kt][j][0], wh[kt][j][1]);
                    }
                }
            }
        if (L::KSPLIT == 2) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < 4; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[mt][j][e] += acc2[mt][j][e];
        }
        const unsigned hnext = (unsigned)((t + 1) & 1) * ROWS * HP;
        unsigned yv[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hh = 0; hh < NH; hh++) {
                const int row = 16 * mt + 8 * hh + g;
                const bool first = t == 0 || (f0[mt][hh] & 0x7fffu) != 0;  // a bf16 other than ±0
                const unsigned char* srow = tc_smem + L::HBYTES + scur + row * SP;
                float gin[4][2];
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (IN == RNN_TC_X) {
                        gin[j][0] = accx[mt][j][2 * hh] + bz[j][0];
                        gin[j][1] = accx[mt][j][2 * hh + 1] + bz[j][1];
                    } else if (IN == RNN_TC_G32) {
                        const float2 v = *reinterpret_cast<const float2*>(srow + j * L::GSEG + lu * 4);
                        gin[j][0] = v.x, gin[j][1] = v.y;
                    } else {
                        const unsigned v = *reinterpret_cast<const unsigned*>(srow + j * L::GSEG + lu * 2);
                        gin[j][0] = bf16_to_f32((unsigned short)(v & 0xffffu)) + bz[j][0];
                        gin[j][1] = bf16_to_f32((unsigned short)(v >> 16)) + bz[j][1];
                    }
                }
                float hv[2];
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    float z[4];
#pragma unroll
                    for (int j = 0; j < 4; j++) z[j] = (first ? 0.0f : acc[mt][j][2 * hh + e]) + gin[j][e];
                    hv[e] = cell[mt][hh][e].step(z, first);
                }
                const unsigned packed = tc_pack_bf16(hv[0], hv[1]);
                const unsigned off = hnext + row * HP + unit * 2;
#pragma unroll
                for (int r = 0; r < CL; r++) {
                    if (CL > 1) {
                        tc_st_cluster(hpeer[r] + off, packed);
                    } else {
                        tc_st_shared(sbase + off, packed);
                    }
                }
                yv[mt][hh] = packed;
            }
        cp_async_wait<PD - 2>();  // this thread's copies of step t + 1 are in; the barrier publishes them
        rnn_tc_arrive<CL>();
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hh = 0; hh < NH; hh++) {
                const long long b = b0 + 16 * mt + 8 * hh + g;
                if (b < nb) *reinterpret_cast<unsigned*>(y + ((b * nt + t) * heads + head) * H + unit) = yv[mt][hh];
                f0[mt][hh] = f1[mt][hh], f1[mt][hh] = flag(mt, hh, t + 2);
            }
        rnn_tc_wait<CL>();
    }
    cp_async_wait<0>();
}

// tc_ldmatrix_x2 loads two 8 × 8 b16 matrices (lanes 0–7 give the rows of the first, 8–15 of the second).
__device__ __forceinline__ void tc_ldmatrix_x2(unsigned& r0, unsigned& r1, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}

// rnn_tc_r8x is rnn_tc's recurrence (heads = 1) for one block a batch tile of 8 rows (H ≤ 64: the block holds W
// and Wi in registers, H/8 warps; no cluster) with the input projection inside and a step ahead, so that a step's
// latency is the recurrence's own:
//   - x_{t+1}·Wiᵀ + bias is made in step t, after W h_{t−1} has been issued, into the accumulators that step
//     t + 1's W h_t then adds to: the pre-activations come out of the mma whole (two accumulator sets that
//     alternate: the loop runs two steps a turn);
//   - a reset at t + 1 is applied in step t: the row's h_t goes into the next h buffer as 0 (y keeps h_t) and the
//     cells' state is cleared (Pair() again), so that no step waits on a flag before its products; the flags are
//     loaded 3 steps ahead into two registers that alternate with the steps, no copy waiting on a load;
//   - x comes through a PD-stage cp.async ring of 8 rows, each copying thread's addresses made once (a step adds
//     H elements to the source), and is read PD − 3 steps after its copy was issued;
//   - A operands of 8 rows are ldmatrix .x2: rows 8–15 of the m16 tile are zero registers, not shared memory.
// With K2, W h_{t−1} runs as two chains of mma (even and odd k16 steps, the odd ones from zero), added after: half
// the dependent mma on the step's path, for one addition a value.
// Pair runs the cells of a thread's two units (lu, lu + 1) of its row g: step2(z[gate][unit], h[unit]).
// grid = ⌈batch/8⌉ blocks of 4·H threads; static shared memory (2 + PD buffers of 8 rows of H bf16).
template <class Pair, int H, int PD, bool K2 = false>
__device__ __forceinline__ void rnn_tc_r8x(const unsigned short* __restrict__ x, const unsigned short* __restrict__ wi,
                                           const float* __restrict__ bias, const unsigned short* __restrict__ w,
                                           const unsigned short* __restrict__ resets, unsigned short* __restrict__ y,
                                           long long nb, long long nt) {
    constexpr int KT = H / 16, HP = 2 * H + 16, CPR = H / 8, NT = 4 * H;
    static_assert(H % 16 == 0 && H <= 64 && (PD & (PD - 1)) == 0 && PD >= 4, "rnn_tc_r8x: bad shape");
    __shared__ __align__(128) unsigned char hs[2][8 * HP];  // h_{t−1} by step parity, rows padded by 16 bytes
    __shared__ __align__(128) unsigned char xs[PD][8 * HP];
    const int tid = threadIdx.x, lane = tid & 31, wp = tid >> 5, g = lane >> 2, q = lane & 3;
    const long long b0 = (long long)blockIdx.x * 8, row = b0 + g;
    const int lu = wp * 8 + 2 * q;  // this thread's units lu, lu + 1 (of batch row g)
    const long long wrow = (long long)(wp * 8 + g) * H + 2 * q;  // gate 0, k = 2q of B column g

    unsigned wh[KT][4][2], wx[KT][4][2];
#pragma unroll
    for (int kt = 0; kt < KT; kt++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const long long o = wrow + (long long)j * H * H + kt * 16;
            wh[kt][j][0] = *reinterpret_cast<const unsigned*>(w + o);
            wh[kt][j][1] = *reinterpret_cast<const unsigned*>(w + o + 8);
            wx[kt][j][0] = *reinterpret_cast<const unsigned*>(wi + o);
            wx[kt][j][1] = *reinterpret_cast<const unsigned*>(wi + o + 8);
        }
    float bz[4][2];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) bz[j][e] = bias[j * H + lu + e];

    // Thread tid < 8·CPR copies 16-byte chunk tid % CPR of row tid / CPR.
    const bool copier = tid < 8 * CPR;
    const int cr = tid / CPR, cc = tid % CPR;
    const bool cok = copier && b0 + cr < nb;
    const unsigned short* xsrc = x + (cok ? (b0 + cr) * nt * H + cc * 8 : 0);
    const unsigned xbase = smem_addr(&xs[0][0]), xdst = xbase + cr * HP + cc * 16;
    auto load = [&](long long s) {  // x_s into stage s mod PD: one commit group, empty past the end
        if (copier && s < nt) cp_async16(xdst + (unsigned)(s & (PD - 1)) * 8 * HP, xsrc + (cok ? s * H : 0), cok);
        cp_async_commit();
    };
    const bool rok = row < nb;
    const unsigned short* rflag = resets + (rok ? row * nt : 0);
    auto flag = [&](long long s) -> unsigned short { return rok && s < nt ? rflag[s] : (unsigned short)0; };

    // ldmatrix .x2 lane address: lanes 0–7 rows 0–7 at k 0–7 of a k16 step, lanes 8–15 at k 8–15.
    const unsigned ldx = (lane & 7) * HP + ((lane >> 3) & 1) * 16;
    // xproj(d, s): d = bias + x_s·Wiᵀ (rows 8–15 of the tile: 0).
    auto xproj = [&](float (&d)[4][4], long long s) {
#pragma unroll
        for (int j = 0; j < 4; j++) d[j][0] = bz[j][0], d[j][1] = bz[j][1], d[j][2] = d[j][3] = 0.0f;
        const unsigned a0 = xbase + (unsigned)(s & (PD - 1)) * 8 * HP + ldx;
#pragma unroll
        for (int kt = 0; kt < KT; kt++) {
            unsigned a[4];
            tc_ldmatrix_x2(a[0], a[2], a0 + kt * 32);
            a[1] = a[3] = 0u;
#pragma unroll
            for (int j = 0; j < 4; j++) mma_bf16(d[j], a, wx[kt][j][0], wx[kt][j][1]);
        }
    };

    for (int i = tid; i < 2 * 8 * HP / 16; i += NT)
        reinterpret_cast<uint4*>(&hs[0][0])[i] = make_uint4(0u, 0u, 0u, 0u);  // h_{−1} = 0
#pragma unroll
    for (int s = 0; s < PD - 1; s++) load(s);
    unsigned short fa = flag(1), fb = flag(2);  // the reset flags of steps t + 1 for even and odd t
    Pair cells;
    cp_async_wait<PD - 3>();  // this thread's copies of x_0 and x_1 are in; the barrier publishes them
    __syncthreads();
    float acc0[4][4], acc1[4][4];
    xproj(acc0, 0);

    // step(t): acc holds bias + x_t·Wiᵀ; next gets bias + x_{t+1}·Wiᵀ; fnext is the flag of t + 1, then of t + 3.
    auto step = [&](long long t, int par, float (&acc)[4][4], float (&next)[4][4], unsigned short& fnext) {
        const unsigned hcur = smem_addr(&hs[par][0]) + ldx;
        float odd[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++) odd[j][0] = odd[j][1] = odd[j][2] = odd[j][3] = 0.0f;
#pragma unroll
        for (int kt = 0; kt < KT; kt++) {
            unsigned a[4];
            tc_ldmatrix_x2(a[0], a[2], hcur + kt * 32);
            a[1] = a[3] = 0u;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (K2 && (kt & 1)) {
                    mma_bf16(odd[j], a, wh[kt][j][0], wh[kt][j][1]);
                } else {
                    mma_bf16(acc[j], a, wh[kt][j][0], wh[kt][j][1]);
                }
            }
        }
        load(t + PD - 1);
        xproj(next, t + 1);  // its stage came in before the last barrier (past the end: unused)
        float z[4][2], hv[2];
#pragma unroll
        for (int j = 0; j < 4; j++) z[j][0] = acc[j][0] + odd[j][0], z[j][1] = acc[j][1] + odd[j][1];
        cells.step2(z, hv);
        const bool reset = (fnext & 0x7fffu) != 0;  // a bf16 other than ±0
        if (reset) cells = Pair();
        const unsigned packed = tc_pack_bf16(hv[0], hv[1]);
        tc_st_shared(smem_addr(&hs[par ^ 1][0]) + g * HP + lu * 2, reset ? 0u : packed);
        if (rok) *reinterpret_cast<unsigned*>(y + (row * nt + t) * H + lu) = packed;
        fnext = flag(t + 3);
        cp_async_wait<PD - 3>();  // this thread's copies of x_{t+2} are in; the barrier publishes them
        __syncthreads();
    };
    for (long long t = 0; t < nt; t += 2) {
        step(t, 0, acc0, acc1, fa);
        if (t + 1 < nt) step(t + 1, 1, acc1, acc0, fb);
    }
    cp_async_wait<0>();
}

// rnn_tc_proj is the input projection of RNN_TC_G32: G[m, n] = Σ_k x[m, k]·Wi[n, k] + bias[n], x [M, K] and
// Wi [N, K] bf16, G fp32 — mma.cuh's MmaTile (128 × 128 tiles, 8 warps, 3 stages) with an fp32 epilogue.
// K a multiple of 8, N even. grid = ⌈M/128⌉·⌈N/128⌉, 256 threads.
__device__ __forceinline__ void rnn_tc_proj(const unsigned short* __restrict__ x, const unsigned short* __restrict__ wi,
                                            const float* __restrict__ bias, float* __restrict__ out, long long M,
                                            long long N, long long K) {
    typedef MmaTile<128, 128, 2, 4, 3> T;
    __shared__ __align__(128) unsigned char smem[3 * (T::A_BYTES + T::B_BYTES)];
    long long tm, tn;
    mma_tile_coords((M + 127) / 128, (N + 127) / 128, tm, tn);
    const long long m0 = tm * 128, n0 = tn * 128;
    T t;
    t.run(x, M, K, m0, [&](int j) -> const unsigned short* { return n0 + j < N ? wi + (n0 + j) * K : nullptr; },
          smem);
#pragma unroll
    for (int i = 0; i < T::MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long r = m0 + t.row(i, 2 * h);
            if (r >= M) continue;
#pragma unroll
            for (int j = 0; j < T::NI; j++) {
                const long long c = n0 + t.col(j);
                if (c < N)
                    *reinterpret_cast<float2*>(out + r * N + c) =
                        make_float2(t.acc[i][j][2 * h] + bias[c], t.acc[i][j][2 * h + 1] + bias[c + 1]);
            }
        }
}

#endif

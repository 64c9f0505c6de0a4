// wsattn_sm90a.cu: the Attention family's Hopper kernels (AttentionFamily, attention.go): scaled dot-product
// attention forward, bf16 in and out with fp32 accumulation, Q, K, V and O (batch, heads, t, d) row-major, on
// wgmma and the bulk tensor copy engine (TMA), after FlashAttention-3. Compiled by the Hopper
// toolchain (CUDA 12.4, scripts/nvcc-hopper) for compute_90a; the backend loads the module only on compute
// capability exactly 9.0, and the family's launcher (attention_cuda.go → wsattn_cuda.go) launches it there
// while the pending switch allows (wsattn.go: attentionUsesWGMMA; the kernel is wsAttnChoose's).
//
// Kernel wsattn_d<D>_m<BM>_n<BN>_s<ST>_<form>_<mask>: a block of BM/64 warpgroups (2 · BM threads) computes O for BM
// queries (128, 192 or 256) of one (batch, head); warpgroup h takes queries 64h … 64h + 63.
//   - Copies: thread 0 of the last warpgroup issues them (the issuer). It loads the block's Q tile (BM × D)
//     once, then the K and V tiles of BN keys × D, each into its own ring of ST stages (2 or 3), with
//     cp.async.bulk.tensor.3d (tensor maps of (D, t, batch·heads) by value as __grid_constant__ parameters,
//     boxes of 64 columns: the 128-byte swizzle's row; rows past t read as zeros). Each stage completes on its
//     "full" mbarrier by transaction count; when both warpgroups have released tile n of K (or V) on its
//     "empty" mbarrier, the issuer refills the stage with tile n + ST, so that (ST = 2) K(n+2) is in flight
//     during the softmax of tile n and V(n+1) during the products of tile n + 1.
//   - Products: per key tile, S = Q·Kᵀ (wgmma.m64nBNk16, both operands from shared memory, K-major), the keys
//     past t (and, causal, after the query) masked to −∞ on the tiles that have any, the online softmax in
//     registers (a running max and sum per row in the exp2 domain, the scale log2 e / √d folded into one
//     fma), P rounded to bf16 in registers and used as wgmma's A operand from registers: the accumulator
//     layout of m64nNk16 (a thread holds rows lane/4 and +8 of its warp's 16, columns 8i + 2·(lane%4) +
//     {0, 1}) is the A fragment's for k-step i/2, so P[j] = pack(S[2j], S[2j+1]) and k-step kk takes
//     P[4kk … 4kk+3]. O += P·V (wgmma.m64nDk16) reads the V tile as it lies, keys × D, as an MN-major B
//     operand (imm-trans-b 1): 8-key core-matrix groups 1024 bytes apart (stride byte offset), the 64-column
//     swizzle rows of a D = 128 tile one chunk apart (leading byte offset).
// Forms: "plain" runs S, softmax, P·V one after the other; "ov" overlaps the softmax of tile n with the P·V
// product of tile n−1 (two wgmma groups in flight: S(n) is issued, then P(n−1)·V(n−1), and the softmax starts
// when S(n) completes; O is rescaled once P·V has); "pp" is "ov" with the warpgroups taking turns to issue
// (named barriers 1 …  BM/64, round robin), so that one's softmax runs while another's products do.
// Variants (wsattn_d<D>_m<BM>_n<BN>_s<ST>_<form>_<VNAME>_<mask>, WA_KERNEL_V): the products' descriptors stepped from
// ones made once (WA_OPT_DESC, "dc"), about 30 fewer instructions a tile in the stream the softmax issues from — at
// D = 64 the default, 2.5% faster; and the stages refilled by the warpgroup whose release of them is the last
// (WA_OPT_LASTREL, "lr": each counts its release with an atomic in the slot of the stage's "empty" barrier, and
// nobody waits for a stage), since the issuer's waits held its own warpgroup and kept the warpgroups in lockstep;
// and the lazy rescale (WA_OPT_LAZY, "lz": the running max moves only past 8, O is rescaled only where it moved).
// (Moving a share of the exponentials from the special-function units to a polynomial on the FMA pipe, after
// FlashAttention-4, timed slower at every share on an H100: the softmax's instruction issue binds, not MUFU;
// docs/kernels.md has the figures.)
// Causal: a block takes the key tiles up to its last query only, and masks only the tiles that cross the
// diagonal of a warpgroup's rows; the blocks are ordered longest first.
// Why no producer warp (FlashAttention-3 has one, with setmaxnreg): the "ov" and "pp" forms hold S, P and O at once
// (up to 226 registers a thread at D = 128, BN = 176), and ptxas (CUDA 12.4) allocated the consumers' code of a
// 384-thread block within its entry cap of 168 whatever setmaxnreg.inc granted, and spilled; a block of 288 threads
// has the same cap (three warps on one of the four register files). With 256 threads (__launch_bounds__(256, 1))
// every thread may have 255, and the issuer costs one thread a few instructions a tile. Blocks of three warpgroups
// (168 registers) and four (128) hold the kernels that fit: the plain form at D = 128 with 128-key tiles, and
// D = 64. Every mbarrier wait is bounded (about 2^32 cycles, then __trap): a kernel that would hang fails its launch
// instead.
//
// Shared memory: Q (BM × D × 2 bytes), then ST stages of K and ST of V (BN × D × 2 bytes each), each a list of
// 64-column chunks (rows × 128 bytes), at a 1024-byte boundary (the swizzle's period), + 1024 bytes of
// alignment slack; the barriers are static. The launcher's wsAttnPlan.smem is the same sum.
//
// No common.cuh (the compute_75 modules' header): only hopper.cuh, the building blocks it shares with the other
// wgmma module; its PTX is recorded against the hash of its sources, headers included (ptx/sm90a.sum).

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#include <cuda.h>  // CUtensorMap

#include "hopper.cuh"

__device__ __forceinline__ bool wa_mbar_try(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
// wa_mbar_wait spins until the barrier's phase of parity `parity` has completed, and traps after about 2^32
// cycles (seconds: every wait here is for a copy or a product of microseconds), so that a protocol error
// fails the launch rather than hanging the GPU.
__device__ __forceinline__ void wa_mbar_wait(unsigned bar, unsigned parity) {
    if (wa_mbar_try(bar, parity)) return;
    const long long start = clock64();
    while (!wa_mbar_try(bar, parity))
        if (clock64() - start > (1ll << 32)) __trap();
}

// wa_tma_load copies the box at (c0, c1, c2) (column, row, batch·head) of tensor map tm into shared dst,
// completing on barrier bar.
__device__ __forceinline__ void wa_tma_load(unsigned dst, const CUtensorMap* tm, int c0, int c1, int c2, unsigned bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            dst),
        "l"(tm), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// wa_release_count adds 1 to the release counter at shared address ctr and returns its count before, with
// acquire-release order: the releases before it (the other warpgroups' reads of the stage, done at their
// wgmma.wait_group) happen before the copy that the last one then issues into the stage.
__device__ __forceinline__ unsigned wa_release_count(unsigned ctr) {
    unsigned prev;
    asm volatile("atom.acq_rel.cta.shared::cta.add.u32 %0, [%1], 1;\n" : "=r"(prev) : "r"(ctr) : "memory");
    return prev;
}

// Named barriers 1 … BM/64 (0 is __syncthreads'): the "pp" form's turns. Each completes with 256 threads: the
// warpgroup that waits on it and the one before it, which arrives.
__device__ __forceinline__ void wa_bar_sync(int id, int n) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void wa_bar_arrive(int id, int n) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

// wa_desc_k is the wgmma descriptor of a K-major operand tile at shared address addr laid out by the copy
// engine's 128-byte swizzle: rows of 128 bytes, 8-row core-matrix groups 1024 bytes apart (stride byte
// offset), layout type 1 (128-byte swizzle); stepping k by 16 adds 32 bytes (wsgemm_sm90a.cu's ws_desc).
__device__ __forceinline__ unsigned long long wa_desc_k(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}
// wa_desc_mn is the descriptor of the same swizzled tile read as an MN-major operand (imm-trans-b 1): k runs
// down the 128-byte rows, 8-row groups 1024 bytes apart (stride byte offset), and the next 64 columns of N
// are `chunk` bytes on (leading byte offset). Stepping k by 16 adds 2048 bytes.
__device__ __forceinline__ unsigned long long wa_desc_mn(unsigned addr, unsigned chunk) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((chunk >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

// wa_desc_step is descriptor d of the address `bytes` (a multiple of 16) further on: the start address field,
// bits 0–13, holds the address / 16 and every address is below 256 KiB, so it is one add to the low word, where
// wa_desc_k and wa_desc_mn of the address mask, shift and merge again.
__device__ __forceinline__ unsigned long long wa_desc_step(unsigned long long d, unsigned bytes) {
    return (d & 0xFFFFFFFF00000000ull) | (unsigned)(d + (bytes >> 4));
}

// wa_mma_ss is d = A · Bᵀ (+ d when acc ≠ 0) for the warpgroup, m64nNk16 with N = 2 · len(d): A 64 × 16 and
// B N × 16, both K-major in shared memory. wa_mma_rs is d += A · B with A 64 × 16 from registers (four bf16
// pairs a thread, the m64nNk16 A fragment) and B 16 × N MN-major in shared memory. One overload per width.
__device__ __forceinline__ void wa_mma_ss(float (&d)[32], unsigned long long da, unsigned long long db, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28)
        : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wa_mma_ss(float (&d)[64], unsigned long long da, unsigned long long db, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60)
        : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wa_mma_ss(float (&d)[88], unsigned long long da, unsigned long long db, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87"
        "}, %88, %89, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60),
          HP_D4(64), HP_D4(68), HP_D4(72), HP_D4(76), HP_D4(80), HP_D4(84)
        : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wa_mma_ss(float (&d)[96], unsigned long long da, unsigned long long db, int acc) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1, 0, 0;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60),
          HP_D4(64), HP_D4(68), HP_D4(72), HP_D4(76), HP_D4(80), HP_D4(84), HP_D4(88), HP_D4(92)
        : "l"(da), "l"(db), "r"(acc));
}
__device__ __forceinline__ void wa_mma_rs(float (&d)[32], const unsigned (&a)[4], unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
__device__ __forceinline__ void wa_mma_rs(float (&d)[64], const unsigned (&a)[4], unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : HP_D4(0), HP_D4(4), HP_D4(8), HP_D4(12), HP_D4(16), HP_D4(20), HP_D4(24), HP_D4(28),
          HP_D4(32), HP_D4(36), HP_D4(40), HP_D4(44), HP_D4(48), HP_D4(52), HP_D4(56), HP_D4(60)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

__device__ __forceinline__ float wa_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#define WA_FORM_PLAIN 0
#define WA_FORM_OV 1
#define WA_FORM_PP 2

// wsattn's OPT bits: WA_OPT_DESC, the products' descriptors stepped from ones made once (wa_desc_step) rather
// than made from each address.
#define WA_OPT_DESC 1
// WA_OPT_LASTREL: the warpgroup that releases a stage last refills it, at once, rather than the one copy issuer
// waiting on the stage's "empty" barrier (whose slot then holds a release counter): the issuer's wait held its
// whole warpgroup at its next product until the other warpgroups had caught up, so the warpgroups ran in lockstep.
#define WA_OPT_LASTREL 2
// WA_OPT_LAZY: the running max a row's exponentials subtract moves only when a tile's max passes it by more than 8
// (log2 units; after FlashAttention-4), so P ≤ 2⁸ in bf16 and fp32 alike, and a warp whose rows all kept theirs skips
// rescaling O (alpha 1): the D/2 multiplies a thread a tile leave the stream the softmax issues from.
#define WA_OPT_LAZY 4

// WA_KIND is wsattn's KIND: the form (WA_FORM_*) and OPT, WA_OPT_* bits. One template argument rather than two, so
// that the kernels of OPT 0 keep the names of the symbols they declare (the barriers'), and with them their PTX.
#define WA_KIND(FORM, OPT) ((FORM) | (OPT) << 16)

// wsattn is the kernel body: D the head dim (64 or 128), WGS the warpgroups (64 queries each), BN the keys a
// tile, ST the stages of the K and V rings, KIND the form and variant (WA_KIND).
template <int D, int WGS, int BN, int ST, bool CAUSAL, int KIND>
__device__ __forceinline__ void wsattn(const CUtensorMap* tmq, const CUtensorMap* tmk, const CUtensorMap* tmv,
                                       unsigned short* __restrict__ o, long long nbh, long long t, float scale) {
    constexpr int BM = 64 * WGS;          // queries a block
    constexpr int THREADS = 128 * WGS;
    constexpr int Q_BYTES = BM * D * 2;
    constexpr int KV_CHUNK = BN * 128;  // 64 columns of a K or V tile
    constexpr int KV_BYTES = BN * D * 2;
    constexpr int RS = BN / 2;          // S accumulators a thread
    constexpr int RO = D / 2;           // O accumulators a thread
    constexpr int FORM = KIND & 255, OPT = KIND >> 16;
    constexpr bool OV = FORM != WA_FORM_PLAIN, PP = FORM == WA_FORM_PP, LR = (OPT & WA_OPT_LASTREL) != 0,
                   LZ = (OPT & WA_OPT_LAZY) != 0;
    static_assert(D == 64 || D == 128, "head dims 64 and 128");
    static_assert(BN % 16 == 0 && KV_CHUNK % 1024 == 0, "key tiles of whole k-steps and swizzle periods");

    extern __shared__ __align__(1024) unsigned char wa_smem_raw[];
    __shared__ __align__(8) unsigned long long wa_bars[1 + 4 * ST];
    unsigned char* smem = (unsigned char*)(((unsigned long long)wa_smem_raw + 1023) & ~1023ull);
    const unsigned sq = hp_smem(smem), sk = sq + Q_BYTES, sv = sk + ST * KV_BYTES;
    const unsigned qfull = hp_smem(wa_bars), kfull = qfull + 8, kempty = kfull + 8 * ST, vfull = kempty + 8 * ST,
                   vempty = vfull + 8 * ST;

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int qtiles = (int)((t + BM - 1) / BM);
    int bh, mt;
    if (CAUSAL) {  // longest first: the last query tiles of every head, then the ones before
        mt = qtiles - 1 - (int)(blockIdx.x / nbh);
        bh = (int)(blockIdx.x % nbh);
    } else {  // a head's query tiles side by side, so that the blocks running at once share K and V in L2
        bh = (int)(blockIdx.x / qtiles);
        mt = (int)(blockIdx.x % qtiles);
    }
    const long long q0 = (long long)mt * BM;
    const long long kend = CAUSAL ? min(t, q0 + BM) : t;
    const int ntiles = (int)((kend + BN - 1) / BN);

    if (threadIdx.x == 0) {
        hp_mbar_init(qfull, 1);
        for (int s = 0; s < ST; s++) {
            hp_mbar_init(kfull + 8 * s, 1);  // the issuer's arrive.expect_tx; the bytes complete it
            hp_mbar_init(vfull + 8 * s, 1);
            if (LR) {  // release counters
                *(volatile unsigned*)(wa_bars + 1 + ST + s) = 0u;
                *(volatile unsigned*)(wa_bars + 1 + 3 * ST + s) = 0u;
            } else {
                hp_mbar_init(kempty + 8 * s, WGS);  // one arrive per warpgroup
                hp_mbar_init(vempty + 8 * s, WGS);
            }
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    {
        const int half = wg;  // queries 64·half … 64·half + 63 of the tile
        // The copy issuer: thread 0 of the last warpgroup, which in the "pp" form issues its products after
        // the others, so that the stages it waits for are (nearly always) already free.
        const bool issuer = threadIdx.x == THREADS - 128;
        // tile n of K (or V) → stage n % ST, once every warpgroup has released the tile ST before.
        auto load = [&](const CUtensorMap* tm, unsigned base, unsigned full, unsigned empty, int n) {
            const int st = n % ST;
            if (!LR) wa_mbar_wait(empty + 8 * st, ((n / ST) & 1) ^ 1);  // LR: called only once the stage is free
            hp_mbar_expect_tx(full + 8 * st, KV_BYTES);
#pragma unroll
            for (int c = 0; c < D / 64; c++)
                wa_tma_load(base + st * KV_BYTES + c * KV_CHUNK, tm, 64 * c, n * BN, bh, full + 8 * st);
        };
        if (issuer) {
            hp_mbar_expect_tx(qfull, Q_BYTES);
#pragma unroll
            for (int c = 0; c < D / 64; c++) wa_tma_load(sq + c * BM * 128, tmq, 64 * c, (int)q0, bh, qfull);
            for (int n = 0; n < ST && n < ntiles; n++) {
                load(tmk, sk, kfull, kempty, n);
                load(tmv, sv, vfull, vempty, n);
            }
        }
        const int warp = tid / 32, lane = tid % 32;
        const long long ra = q0 + half * 64 + warp * 16 + lane / 4;  // this thread's rows ra and ra + 8
        const unsigned qa = sq + half * 64 * 128;
        float oacc[RO], s[RS];
        unsigned p[RS / 2];
#pragma unroll
        for (int e = 0; e < RO; e++) oacc[e] = 0.0f;
        float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.0f, 0.0f}, alpha[2];
        bool moved = true;  // LZ: whether a row of this warp moved its max in the last softmax (else alpha is 1)

        const unsigned long long dq = wa_desc_k(qa), dk = wa_desc_k(sk), dv = wa_desc_mn(sv, KV_CHUNK);
        // S = Q · K(n)ᵀ, issued and committed (one wgmma group).
        auto gemm_s = [&](int n) {
            const unsigned kb = sk + (n % ST) * KV_BYTES;
            wa_mbar_wait(kfull + 8 * (n % ST), (n / ST) & 1);
            hp_fence(s);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                if (OPT & WA_OPT_DESC)
                    wa_mma_ss(s, wa_desc_step(dq, (kk / 4) * BM * 128 + 32 * (kk % 4)),
                              wa_desc_step(dk, (n % ST) * KV_BYTES + (kk / 4) * KV_CHUNK + 32 * (kk % 4)), kk > 0);
                else
                    wa_mma_ss(s, wa_desc_k(qa + (kk / 4) * BM * 128 + 32 * (kk % 4)),
                              wa_desc_k(kb + (kk / 4) * KV_CHUNK + 32 * (kk % 4)), kk > 0);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        };
        // O += P · V(n), issued and committed.
        auto gemm_pv = [&](int n) {
            const unsigned vb = sv + (n % ST) * KV_BYTES;
            wa_mbar_wait(vfull + 8 * (n % ST), (n / ST) & 1);
            hp_fence(oacc);
            hp_fence(p);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int kk = 0; kk < BN / 16; kk++) {
                const unsigned a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
                if (OPT & WA_OPT_DESC)
                    wa_mma_rs(oacc, a, wa_desc_step(dv, (n % ST) * KV_BYTES + 2048 * kk));
                else
                    wa_mma_rs(oacc, a, wa_desc_mn(vb + 2048 * kk, KV_CHUNK));
            }
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        };
        // release: this warpgroup is done with tile n of K (or V); the issuer then refills the stage with
        // tile n + ST.
        // LR: the warpgroup whose release is the stage's last (its counter's count reaches a multiple of WGS)
        // refills it.
        auto release = [&](const CUtensorMap* tm, unsigned base, unsigned full, unsigned empty, int n) {
            if (LR) {
                if (tid == 0 && wa_release_count(empty + 8 * (n % ST)) % WGS == WGS - 1 && n + ST < ntiles)
                    load(tm, base, full, empty, n + ST);
                return;
            }
            if (tid == 0) hp_mbar_arrive(empty + 8 * (n % ST));
            if (issuer && n + ST < ntiles) load(tm, base, full, empty, n + ST);
        };
        // The online softmax of S(n): masked, new running max, alpha (the old accumulators' factor), S
        // overwritten by 2^(s·scale − max), the running sums (this thread's columns only; the quad's are added
        // at the end).
        auto softmax = [&](int n) {
            const long long k0 = (long long)n * BN;
            if (k0 + BN > t || (CAUSAL && k0 + BN - 1 > q0 + half * 64)) {
#pragma unroll
                for (int i = 0; i < RS / 4; i++)
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const long long c = k0 + 8 * i + 2 * (lane % 4) + (j & 1), r = ra + 8 * (j >> 1);
                        if (c >= t || (CAUSAL && c > r)) s[4 * i + j] = -INFINITY;
                    }
            }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float mx = -INFINITY;
#pragma unroll
                for (int i = 0; i < RS / 4; i++) mx = fmaxf(mx, fmaxf(s[4 * i + 2 * h], s[4 * i + 2 * h + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 2));
                float msub;
                if (LZ) {  // -inf + 8 is -inf: the first finite max moves it
                    const float mt = mx * scale;
                    if (mt > mrow[h] + 8.0f) {
                        alpha[h] = wa_exp2(mrow[h] - mt);
                        mrow[h] = mt;
                    } else {
                        alpha[h] = 1.0f;
                    }
                    msub = mrow[h] == -INFINITY ? 0.0f : mrow[h];
                } else {
                    const float mnew = fmaxf(mrow[h], mx * scale);
                    msub = mnew == -INFINITY ? 0.0f : mnew;
                    alpha[h] = wa_exp2(mrow[h] - msub);
                    mrow[h] = mnew;
                }
                float sum = 0.0f;
#pragma unroll
                for (int i = 0; i < RS / 4; i++)
#pragma unroll
                    for (int j = 0; j < 2; j++) {
                        const float e = wa_exp2(fmaf(s[4 * i + 2 * h + j], scale, -msub));
                        s[4 * i + 2 * h + j] = e;
                        sum += e;
                    }
                lrow[h] = lrow[h] * alpha[h] + sum;
            }
            if (LZ) moved = __any_sync(0xffffffff, alpha[0] != 1.0f || alpha[1] != 1.0f);
        };
        auto rescale_pack = [&]() {
            if (!LZ || moved)
#pragma unroll
                for (int e = 0; e < RO; e++) oacc[e] *= alpha[(e >> 1) & 1];
#pragma unroll
            for (int j = 0; j < RS / 2; j++) p[j] = hp_pack(s[2 * j], s[2 * j + 1]);
        };

        wa_mbar_wait(qfull, 0);
        if (!OV) {
            for (int n = 0; n < ntiles; n++) {
                gemm_s(n);
                asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
                hp_fence(s);
                release(tmk, sk, kfull, kempty, n);
                softmax(n);
                rescale_pack();
                gemm_pv(n);
                asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
                hp_fence(oacc);
                hp_fence(p);
                release(tmv, sv, vfull, vempty, n);
            }
        } else {
            // Warpgroup h issues when barrier 1 + h completes and then lets the next one go; the last lets the
            // first go at the start, and each waits ntiles times, so the last skips its last arrive.
            if (PP && half == WGS - 1) wa_bar_arrive(1, 256);
            gemm_s(0);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            hp_fence(s);
            release(tmk, sk, kfull, kempty, 0);
            softmax(0);
            rescale_pack();
            for (int n = 1; n < ntiles; n++) {
                if (PP) wa_bar_sync(1 + half, 256);
                gemm_s(n);
                gemm_pv(n - 1);
                if (PP) wa_bar_arrive(1 + (half + 1) % WGS, 256);
                asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
                hp_fence(s);
                release(tmk, sk, kfull, kempty, n);
                softmax(n);
                asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
                hp_fence(oacc);
                hp_fence(p);
                release(tmv, sv, vfull, vempty, n - 1);
                rescale_pack();
            }
            if (PP) wa_bar_sync(1 + half, 256);
            gemm_pv(ntiles - 1);
            if (PP && half < WGS - 1) wa_bar_arrive(2 + half, 256);
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            hp_fence(oacc);
            hp_fence(p);
            release(tmv, sv, vfull, vempty, ntiles - 1);
        }

        // O / l, rounded to bf16, rows past t not stored.
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float l = lrow[h];
            l += __shfl_xor_sync(0xffffffff, l, 1);
            l += __shfl_xor_sync(0xffffffff, l, 2);
            const float inv = 1.0f / l;
            const long long r = ra + 8 * h;
            if (r >= t) continue;
            unsigned short* row = o + ((long long)bh * t + r) * D + 2 * (lane % 4);
#pragma unroll
            for (int i = 0; i < RO / 4; i++)
                *(unsigned*)(row + 8 * i) = hp_pack(oacc[4 * i + 2 * h] * inv, oacc[4 * i + 2 * h + 1] * inv);
        }
    }
}

// The kernels: the tensor maps of Q (boxes 64 × BM × 1), K and V (64 × BN × 1), then O, batch·heads, t and
// the score scale log2 e / √d. BM/64 warpgroups, 2 · BM threads.
#define WA_KERNEL_MASK(D, BM, BN, ST, FNAME, FORM, MNAME, CAUSAL)                                              \
    extern "C" __global__ void __launch_bounds__(2 * BM, 1)                                                    \
        wsattn_d##D##_m##BM##_n##BN##_s##ST##_##FNAME##_##MNAME(                                               \
            const __grid_constant__ CUtensorMap tmq, const __grid_constant__ CUtensorMap tmk,                  \
            const __grid_constant__ CUtensorMap tmv, unsigned short* __restrict__ o, long long nbh, long long t, \
            double scale) {                                                                                     \
        wsattn<D, BM / 64, BN, ST, CAUSAL, FORM>(&tmq, &tmk, &tmv, o, nbh, t, (float)scale);                   \
    }
#define WA_KERNEL(D, BM, BN, ST, FNAME, FORM)                   \
    WA_KERNEL_MASK(D, BM, BN, ST, FNAME, FORM, none, false)     \
    WA_KERNEL_MASK(D, BM, BN, ST, FNAME, FORM, causal, true)
// The variants: wsattn_d<D>_m<BM>_n<BN>_s<ST>_<form>_<VNAME>_<mask>, OPT as wsattn's (VNAME: dc for WA_OPT_DESC, lr
// for WA_OPT_LASTREL;
// wsattn.go's wsAttnOpts spells the same).
#define WA_KERNEL_V_MASK(D, BM, BN, ST, FNAME, FORM, VNAME, OPT, MNAME, CAUSAL)                          \
    extern "C" __global__ void __launch_bounds__(2 * BM, 1)                                                    \
        wsattn_d##D##_m##BM##_n##BN##_s##ST##_##FNAME##_##VNAME##_##MNAME(                                     \
            const __grid_constant__ CUtensorMap tmq, const __grid_constant__ CUtensorMap tmk,                  \
            const __grid_constant__ CUtensorMap tmv, unsigned short* __restrict__ o, long long nbh, long long t, \
            double scale) {                                                                                     \
        wsattn<D, BM / 64, BN, ST, CAUSAL, WA_KIND(FORM, OPT)>(&tmq, &tmk, &tmv, o, nbh, t, (float)scale); \
    }
#define WA_KERNEL_V(D, BM, BN, ST, FNAME, FORM, VNAME, OPT)                        \
    WA_KERNEL_V_MASK(D, BM, BN, ST, FNAME, FORM, VNAME, OPT, none, false)     \
    WA_KERNEL_V_MASK(D, BM, BN, ST, FNAME, FORM, VNAME, OPT, causal, true)

// The plain and turn-taking forms without a variant: what each variant was timed against. (The forms that lost
// before the variants — 128-key tiles at d = 128, 128- and 192-query blocks and three-stage rings at d = 64 and
// 128 — are no longer built: the module is JIT-compiled whole by every process that loads it; docs/kernels.md has
// their figures.)
WA_KERNEL(128, 128, 176, 2, pp, WA_FORM_PP)
WA_KERNEL(128, 128, 176, 2, plain, WA_FORM_PLAIN)
WA_KERNEL(128, 192, 128, 2, plain, WA_FORM_PLAIN)
WA_KERNEL(64, 256, 128, 2, plain, WA_FORM_PLAIN)
WA_KERNEL_V(64, 256, 128, 2, plain, WA_FORM_PLAIN, dc, WA_OPT_DESC)
WA_KERNEL_V(128, 128, 176, 2, plain, WA_FORM_PLAIN, lr, WA_OPT_LASTREL)
WA_KERNEL_V(128, 192, 128, 2, plain, WA_FORM_PLAIN, lr, WA_OPT_LASTREL)
WA_KERNEL_V(128, 128, 176, 2, pp, WA_FORM_PP, lr, WA_OPT_LASTREL)
WA_KERNEL_V(128, 128, 176, 2, ov, WA_FORM_OV, lr, WA_OPT_LASTREL)
// Without a mask only: the causal kernel spilled 8 bytes a thread at its 128-register cap under the driver's JIT.
WA_KERNEL_V_MASK(64, 256, 128, 2, plain, WA_FORM_PLAIN, dc_lr, WA_OPT_DESC | WA_OPT_LASTREL, none, false)
// The defaults with the lazy rescale (WA_OPT_LAZY); not causal d = 64, whose kernel spilled 112 bytes a thread.
WA_KERNEL_V_MASK(64, 256, 128, 2, plain, WA_FORM_PLAIN, dc_lr_lz, WA_OPT_DESC | WA_OPT_LASTREL | WA_OPT_LAZY, none, false)
WA_KERNEL_V(128, 128, 176, 2, pp, WA_FORM_PP, lr_lz, WA_OPT_LASTREL | WA_OPT_LAZY)
WA_KERNEL_V(128, 192, 128, 2, plain, WA_FORM_PLAIN, lr_lz, WA_OPT_LASTREL | WA_OPT_LAZY)
#endif

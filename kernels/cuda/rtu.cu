// rtu.cu: the low-rank RTU cell (RTUFamily, rtu.go): x, h (B, T, D), U (D, r), V (r, D), λ (D), resets (B, T);
// u_t = (x_t U) V, h_t = λ ⊙ h_{t−1} + u_t with h_{t−1} := 0 at a reset, channels 2j, 2j+1 one complex unit.
//
// rtu_<dtype>: the fused kernel. A block covers Tt = S·L steps of one sequence and all D/2 units, Q = D/2 × S
// threads: it stages the tile's x (Tt × D, one contiguous stretch) in shared memory, computes z = x U (Tt × r)
// and u = z V in shared memory, then thread (q, s) scans unit q over segment s's L steps and the chained scan
// of chainscan.cuh carries the state across segments and tiles. x is read once and h written once; u never
// leaves the chip. Grid: one block per tile (tickets).
//
// The naive chain (rtu_cuda.go): rtu_naive_matmul twice (z = x U, u = z V, fp32 intermediates), then one
// launch of linearrecurrence.cu's linrec_naive_step per step with the constant decays.
#include "chainscan.cuh"

#define RTU_TILE_FLOATS 10240    // Tt·(D + r): the x (then u) tile and z in shared memory
#define RTU_MAX_STEPS 256        // Tt
#define RTU_MAX_COMPONENTS 512   // S·Q·2: 256 threads of one complex unit each

template <class S>
__device__ __forceinline__ void rtu_fused(const typename S::T* __restrict__ x, const typename S::T* __restrict__ uw,
                                          const typename S::T* __restrict__ vw, const typename S::T* __restrict__ lambda,
                                          const int* __restrict__ resets, typename S::T* __restrict__ h, long long nb,
                                          long long nt, long long nd, long long nr, int Sg, int L, float* states,
                                          unsigned* flags, unsigned long long* counter) {
    typedef Comp<true> C;
    __shared__ float tile_mem[RTU_TILE_FLOATS];
    __shared__ int rs[RTU_MAX_STEPS];
    const int Q = (int)(nd / 2), Tt = Sg * L;
    const int q = threadIdx.x % Q, s = threadIdx.x / Q;
    const ChainTile tile = chain_ticket(counter, nb, nb * ((nt + Tt - 1) / Tt));
    const long long b = tile.v % nb, t0 = tile.v / nb * Tt;
    const int steps = (int)min((long long)Tt, nt - t0);
    float* xs = tile_mem;            // [Tt][nd]: x, then u, then the segments' local states
    float* zs = tile_mem + Tt * nd;  // [Tt][nr]
    const typename S::T* xp = x + (b * nt + t0) * nd;
    for (int i = threadIdx.x; i < steps * nd; i += blockDim.x) xs[i] = S::get(xp[i]);
    for (int i = threadIdx.x; i < Tt; i += blockDim.x) rs[i] = i < steps ? resets[b * nt + t0 + i] : 0;
    __syncthreads();
    for (int o = threadIdx.x; o < steps * nr; o += blockDim.x) {
        const int tt = o / (int)nr, k = o - tt * (int)nr;
        float acc = 0.0f;
        for (int j = 0; j < nd; j++) acc = fmaf(xs[tt * nd + j], S::get(uw[j * nr + k]), acc);
        zs[o] = acc;
    }
    __syncthreads();
    for (int o = threadIdx.x; o < steps * nd; o += blockDim.x) {
        const int tt = o / (int)nd, d = o - tt * (int)nd;
        float acc = 0.0f;
        for (int k = 0; k < nr; k++) acc = fmaf(zs[tt * nr + k], S::get(vw[k * nd + d]), acc);
        xs[o] = acc;
    }
    __syncthreads();
    const float lr = S::get(lambda[2 * q]), li = S::get(lambda[2 * q + 1]);
    float A[2] = {1.0f, 0.0f}, H[2] = {0.0f, 0.0f};
    for (int i = 0; i < L; i++) {
        const int tt = s * L + i;
        if (tt >= steps) break;
        const float am[2] = {rs[tt] ? 0.0f : lr, rs[tt] ? 0.0f : li};
        float* u = xs + tt * nd + 2 * q;
        float na[2];
        C::axpy(am, H, u, H);
        C::mul(am, A, na);
        A[0] = na[0];
        A[1] = na[1];
        u[0] = H[0];  // the segment's local state at tt, for the output pass
        u[1] = H[1];
    }
    float c[2];
    chain_carry<true, 2, RTU_MAX_COMPONENTS>(A, H, c, q, s, Q, Sg, tile, states, flags);
    typename S::T* hp = h + (b * nt + t0) * nd + 2 * q;
    for (int i = 0; i < L; i++) {
        const int tt = s * L + i;
        if (tt >= steps) break;
        const float am[2] = {rs[tt] ? 0.0f : lr, rs[tt] ? 0.0f : li};
        float nc[2];
        C::mul(am, c, nc);
        c[0] = nc[0];
        c[1] = nc[1];
        Vec<S, 2> o;
        o.set(0, xs[tt * nd + 2 * q] + c[0]);
        o.set(1, xs[tt * nd + 2 * q + 1] + c[1]);
        o.store(hp + tt * nd);
    }
}

#define RTU(S, NAME)                                                                                             \
    extern "C" __global__ void __launch_bounds__(256) rtu_##NAME(                                                \
        const S::T* x, const S::T* uw, const S::T* vw, const S::T* lambda, const int* resets, S::T* h,          \
        long long nb, long long nt, long long nd, long long nr, long long sg, long long l, float* states,         \
        unsigned* flags, unsigned long long* counter) {                                                          \
        rtu_fused<S>(x, uw, vw, lambda, resets, h, nb, nt, nd, nr, (int)sg, (int)l, states, flags, counter);    \
    }
RTU(F32, f32)
RTU(BF16, bf16)

// rtu_naive_matmul writes out = a·w (fp32): a is rows × k stored as adtype, w is k × n stored as wdtype, one
// thread per output (a plain matrix product, one launch).
extern "C" __global__ void rtu_naive_matmul(float* out, const void* a, long long adtype, const void* w, long long wdtype,
                                            long long rows, long long k, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * n; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / n, c = i - r * n;
        float acc = 0.0f;
        for (long long j = 0; j < k; j++) {
            const float av = adtype == KW_BF16 ? bf16_to_f32(static_cast<const unsigned short*>(a)[r * k + j])
                                               : static_cast<const float*>(a)[r * k + j];
            const float wv = wdtype == KW_BF16 ? bf16_to_f32(static_cast<const unsigned short*>(w)[j * n + c])
                                               : static_cast<const float*>(w)[j * n + c];
            acc = fmaf(av, wv, acc);
        }
        out[i] = acc;
    }
}

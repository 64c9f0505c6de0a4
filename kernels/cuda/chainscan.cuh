// chainscan.cuh: the chained segmented scan of the diagonal linear recurrence h_t = a_t ⊙ h_{t−1} + u_t, shared
// by linearrecurrence.cu and rtu.cu. State is fp32, real or complex (CPLX: components 2j, 2j+1 are the real
// and imaginary parts of one channel, ⊙ a complex product); a reset is a_t = 0.
//
// A tile is W = Q·V state components × S·L steps of one sequence, one block of Q × S threads: thread (q, s)
// scans V components over L steps (segment s) from a zero state, keeping each step's decay a_t and local
// state. The recurrence composes: a segment is the affine map h ↦ A·h + H (A the product of its decays, H its
// local final state), and maps compose as (A2, H2) ∘ (A1, H1) = (A2·A1, A2·H1 + H2). The block scans its S
// segments' maps in shared memory, then takes the state entering the tile from the tile before it in time —
// published in global memory with a flag — and publishes its own final state, so the carry crosses a sequence
// one tile after another (a chained scan: each input is read once, no second pass). Tiles are numbered in the
// order blocks start (a ticket from a global counter), all tiles of one time chunk before the next, so a
// tile's predecessor in time has always started and the chain cannot deadlock. Flags hold the launch's epoch
// (from the ticket), so neither flags nor counter are cleared between launches.
#pragma once
#include "sequence.cuh"

// cmul_acc returns a·h + u for one state component pair (CPLX) or component.
template <bool CPLX>
struct Comp;
template <>
struct Comp<false> {
    enum { N = 1 };
    static __device__ __forceinline__ void axpy(const float* a, const float* h, const float* u, float* o) {
        o[0] = fmaf(a[0], h[0], u[0]);
    }
    static __device__ __forceinline__ void mul(const float* a, const float* b, float* o) { o[0] = a[0] * b[0]; }
    static __device__ __forceinline__ void one(float* o) { o[0] = 1.0f; }
};
template <>
struct Comp<true> {
    enum { N = 2 };
    static __device__ __forceinline__ void axpy(const float* a, const float* h, const float* u, float* o) {
        const float re = fmaf(a[0], h[0], fmaf(-a[1], h[1], u[0]));
        const float im = fmaf(a[0], h[1], fmaf(a[1], h[0], u[1]));
        o[0] = re;
        o[1] = im;
    }
    static __device__ __forceinline__ void mul(const float* a, const float* b, float* o) {
        const float re = a[0] * b[0] - a[1] * b[1];
        const float im = a[0] * b[1] + a[1] * b[0];
        o[0] = re;
        o[1] = im;
    }
    static __device__ __forceinline__ void one(float* o) {
        o[0] = 1.0f;
        o[1] = 0.0f;
    }
};

// ChainTile is a block's place in the chain: its tile (v), the launch's epoch, and the tile before it in time.
struct ChainTile {
    long long v, prev;  // prev < 0: the first tile of its sequence
    unsigned epoch;
};

// chain_ticket numbers this block's tile: tiles = groups × chunks, groups (sequences × channel tiles) fastest.
__device__ __forceinline__ ChainTile chain_ticket(unsigned long long* counter, long long groups, long long tiles) {
    __shared__ unsigned long long ticket;
    if (threadIdx.x == 0) ticket = atomicAdd(counter, 1ull);
    __syncthreads();
    ChainTile t;
    t.v = (long long)(ticket % (unsigned long long)tiles);
    t.epoch = (unsigned)(ticket / (unsigned long long)tiles) + 1u;
    t.prev = t.v >= groups ? t.v - groups : -1;
    return t;
}

// chain_carry turns thread (q, s)'s segment map (A, H) — V components each — into the state entering its
// segment (cin), through the block's segments and the chain of tiles; W = Q·V components a tile, and at most
// MAXC = S·Q·V a block. The segments' maps are scanned in shared memory by every thread at once (Hillis–Steele:
// log₂ S rounds); states holds W floats per tile, flags one word per tile. Every thread of the block calls it.
template <bool CPLX, int V, int MAXC>
__device__ __forceinline__ void chain_carry(const float A[V], const float H[V], float cin[V], int q, int s, int Q,
                                            int S, ChainTile tile, float* states, unsigned* flags) {
    typedef Comp<CPLX> C;
    enum { N = C::N };
    __shared__ float segA[MAXC], segH[MAXC];  // segment g's map, then the map of segments 0 … g (inclusive)
    __shared__ float prev[MAXC];              // the state entering the tile, W components
    const int W = Q * V;
    const int at = s * W + q * V;
    float a[V], h[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        a[j] = A[j];
        h[j] = H[j];
    }
    for (int d = 1; d < S; d <<= 1) {
#pragma unroll
        for (int j = 0; j < V; j++) {
            segA[at + j] = a[j];
            segH[at + j] = h[j];
        }
        __syncthreads();
        if (s >= d) {  // compose with the map of the d segments before: (a, h) ∘ (pa, ph)
#pragma unroll
            for (int j = 0; j < V; j += N) {
                float pa[N], ph[N], na[N], nh[N];
#pragma unroll
                for (int n = 0; n < N; n++) {
                    pa[n] = segA[at - d * W + j + n];
                    ph[n] = segH[at - d * W + j + n];
                }
                C::mul(a + j, pa, na);
                C::axpy(a + j, ph, h + j, nh);
#pragma unroll
                for (int n = 0; n < N; n++) {
                    a[j + n] = na[n];
                    h[j + n] = nh[n];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < V; j++) {
        segA[at + j] = a[j];
        segH[at + j] = h[j];
    }
    if (threadIdx.x == 0 && tile.prev >= 0) {
        wait_flag(flags + tile.prev, tile.epoch);
        __threadfence();  // the predecessor's state is read after its flag
    }
    __syncthreads();
    if (s == 0) {  // the tile's end state: its whole map applied to the state entering it
        const int last = (S - 1) * W + q * V;
        float p[V], e[V];
#pragma unroll
        for (int j = 0; j < V; j++) p[j] = tile.prev >= 0 ? __ldcg(states + tile.prev * W + q * V + j) : 0.0f;
#pragma unroll
        for (int j = 0; j < V; j += N) C::axpy(segA + last + j, p + j, segH + last + j, e + j);
#pragma unroll
        for (int j = 0; j < V; j++) {
            __stcg(states + tile.v * W + q * V + j, e[j]);
            prev[q * V + j] = p[j];
        }
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(flags + tile.v, tile.epoch);
    if (s == 0) {
#pragma unroll
        for (int j = 0; j < V; j++) cin[j] = prev[q * V + j];
    } else {
#pragma unroll
        for (int j = 0; j < V; j += N) C::axpy(segA + at - W + j, prev + q * V + j, segH + at - W + j, cin + j);
    }
}

// persistent-copy.cu: how fast can a persistent kernel stream bytes on this GPU, against the suite's copy
// yardstick? A standalone experiment behind the wide-row plans (docs/kernels.md, "What a ring can reach"): the row
// rings are persistent, with their slices in shared memory, and are judged against copy_chunk, which is not.
//
// Every kernel copies 1 GiB (y = x, or y = 1·x through a ring in shared memory); each line is the median of 20
// timed launches after 3 untimed ones, GB/s = 2 · bytes / time, each configuration twice. Forms:
//   copy_chunk   the suite's yardstick (harness/cuda/copy.cu): one pass, each block its own 8 · 256 16-byte vectors
//   pers_reg     copy_chunk's body in a loop over chunks: persistent, 8 loads of a thread in flight
//   ring_cpa     row_ring's way: S stages of T · 4 packs in shared memory, each thread copying its own by cp.async
//   bulk_copy    one thread a block: loads into S stages of B bytes and stores out of them by the bulk copy
//                engine (cp.async.bulk, PTX 8.0)
// "interleaved": block b takes chunks b, b + grid, …; "contiguous": each block a range of its own.
// Every form's output is compared with x, whole, on the GPU.
//
// Build (CUDA 12 or later; sm_90) and run on the GPU host:
//   nvcc -O3 -arch=sm_90a -o persistent-copy scripts/experiments/persistent-copy.cu && ./persistent-copy
// (here: cd scripts/experiments && ../nvcc-hopper -O3 -arch=sm_90a -o persistent-copy persistent-copy.cu)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../harness/cuda/copy.cu"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e = (x);                                                                   \
        if (e != cudaSuccess) {                                                                \
            printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mb_init(uint64_t* b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void mb_expect(uint64_t* b, unsigned tx) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(b)), "r"(tx) : "memory");
}
__device__ __forceinline__ void mb_wait(uint64_t* b, unsigned par) {
    asm volatile(
        "{\n\t.reg .pred p;\n\tW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t@!p bra W;\n\t}" ::"r"(
            sa(b)),
        "r"(par)
        : "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* b) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     sa(dst)),
                 "l"(src), "r"(bytes), "r"(sa(b))
                 : "memory");
}
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sa(src)), "r"(bytes)
                 : "memory");
}

// chunk_range: the chunks [t0, t1) step st of block b of a grid of g, out of nt.
template <bool CONTIG>
__device__ __forceinline__ void chunk_range(long long nt, long long& t0, long long& t1, long long& st) {
    if (CONTIG)
        t0 = nt * blockIdx.x / gridDim.x, t1 = nt * (blockIdx.x + 1) / gridDim.x, st = 1;
    else
        t0 = blockIdx.x, t1 = nt, st = gridDim.x;
}

template <bool CONTIG>
__global__ void pers_reg(const uint4* __restrict__ xv, uint4* __restrict__ yv, long long n16) {
    long long t0, t1, st;
    chunk_range<CONTIG>(n16 / (8ll * blockDim.x), t0, t1, st);
    for (long long t = t0; t < t1; t += st) {
        const long long base = t * 8 * blockDim.x + threadIdx.x;
        uint4 v[8];
#pragma unroll
        for (int k = 0; k < 8; k++) v[k] = xv[base + k * blockDim.x];
#pragma unroll
        for (int k = 0; k < 8; k++) yv[base + k * blockDim.x] = v[k];
    }
}

// scale_store stores a · v (four floats) at y[i]: the work a row kernel's store phase does at the least.
__device__ __forceinline__ void scale_store(uint4* y, long long i, uint4 v, float a) {
    float4 f = *reinterpret_cast<float4*>(&v);
    f.x *= a, f.y *= a, f.z *= a, f.w *= a;
    y[i] = *reinterpret_cast<uint4*>(&f);
}

template <int S, bool CONTIG>
__global__ void ring_cpa(const uint4* __restrict__ x, uint4* __restrict__ y, long long n16, float a) {
    extern __shared__ __align__(128) uint4 ring[];
    const int T = blockDim.x, C = T * 4;
    long long t0, t1, st;
    chunk_range<CONTIG>(n16 / C, t0, t1, st);
    long long ti = t0;
    int si = 0;
    auto issue = [&]() {
        if (ti < t1)
#pragma unroll
            for (int q = 0; q < 4; q++)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(ring + si * C + threadIdx.x + q * T)),
                             "l"(x + ti * C + threadIdx.x + q * T)
                             : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
        ti += st;
        if (++si == S) si = 0;
    };
    for (int k = 0; k < S; k++) issue();
    int s = 0;
    for (long long t = t0; t < t1; t += st) {
        asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
        uint4 v[4];
#pragma unroll
        for (int q = 0; q < 4; q++) v[q] = ring[s * C + threadIdx.x + q * T];
        issue();
#pragma unroll
        for (int q = 0; q < 4; q++) scale_store(y, t * C + threadIdx.x + q * T, v[q], a);
        if (++s == S) s = 0;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
}

template <int S>
__global__ void bulk_copy(const char* __restrict__ x, char* __restrict__ y, long long nbytes, int B) {
    extern __shared__ __align__(128) char sm[];
    __shared__ uint64_t full[S];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < S; s++) mb_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const long long nt = nbytes / B;
    for (int k = 0; k < S && blockIdx.x + (long long)k * gridDim.x < nt; k++) {
        mb_expect(&full[k], B);
        bulk_load(sm + k * B, x + (blockIdx.x + (long long)k * gridDim.x) * B, B, &full[k]);
    }
    int s = 0;
    unsigned ph = 0;
    for (long long t = blockIdx.x; t < nt; t += gridDim.x) {
        mb_wait(&full[s], ph);
        bulk_store(y + t * B, sm + s * B, B);
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        const long long tn = t + (long long)S * gridDim.x;
        if (tn < nt) {
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // the stage is read out
            mb_expect(&full[s], B);
            bulk_load(sm + s * B, x + tn * B, B, &full[s]);
        }
        if (++s == S) s = 0, ph ^= 1;
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void fill(float* x, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = (float)(i % 1000003) + 0.5f;
}
__global__ void mismatches(const unsigned* x, const unsigned* y, long long n, unsigned long long* bad) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        if (x[i] != y[i]) atomicAdd(bad, 1ull);
}

static char *X, *Y;
static unsigned long long* Bad;
static const long long NB = 1ll << 30, N16 = NB / 16;

template <class F>
static void timeit(const char* name, F launch) {
    CK(cudaMemset(Y, 0, NB));
    CK(cudaMemset(Bad, 0, sizeof *Bad));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) launch();
    CK(cudaGetLastError());
    mismatches<<<1024, 256>>>((const unsigned*)X, (const unsigned*)Y, NB / 4, Bad);
    unsigned long long bad;
    CK(cudaMemcpy(&bad, Bad, sizeof bad, cudaMemcpyDeviceToHost));
    std::vector<float> ms;
    for (int i = 0; i < 20; i++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float m;
        CK(cudaEventElapsedTime(&m, a, b));
        ms.push_back(m);
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    const float m = ms[ms.size() / 2];
    printf("%-46s %8.1f us %7.0f GB/s%s\n", name, m * 1e3, 2.0 * NB / (m * 1e-3) / 1e9, bad ? "  WRONG OUTPUT" : "");
    if (bad) exit(1);
}

template <class K>
static int resident(K k, int threads, int smem) {
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, threads, smem));
    return per;
}

template <int S>
static void rings(int sms, int T) {
    const int smem = S * T * 64;
    char name[80];
    int per = resident(ring_cpa<S, false>, T, smem);
    snprintf(name, sizeof name, "ring_cpa interleaved T=%d S=%d %dKiB (%d/SM)", T, S, smem / 1024, per);
    timeit(name, [&] { ring_cpa<S, false><<<sms * per, T, smem>>>((uint4*)X, (uint4*)Y, N16, 1.0f); });
    per = resident(ring_cpa<S, true>, T, smem);
    snprintf(name, sizeof name, "ring_cpa contiguous T=%d S=%d %dKiB (%d/SM)", T, S, smem / 1024, per);
    timeit(name, [&] { ring_cpa<S, true><<<sms * per, T, smem>>>((uint4*)X, (uint4*)Y, N16, 1.0f); });
}

template <int S>
static void bulks(int sms, int B) {
    const int smem = S * B;
    const int per = resident(bulk_copy<S>, 32, smem);
    char name[80];
    snprintf(name, sizeof name, "bulk_copy B=%d S=%d (%d/SM)", B, S, per);
    timeit(name, [&] { bulk_copy<S><<<sms * per, 32, smem>>>(X, Y, NB, B); });
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int drv;
    CK(cudaDriverGetVersion(&drv));
    printf("gpu: %s, %d SMs, driver API %d\n", p.name, p.multiProcessorCount, drv);
    const int sms = p.multiProcessorCount;
    CK(cudaMalloc(&X, NB));
    CK(cudaMalloc(&Y, NB));
    CK(cudaMalloc(&Bad, sizeof *Bad));
    fill<<<1024, 256>>>((float*)X, NB / 4);
    for (int rep = 0; rep < 2; rep++) {
        timeit("copy_chunk (the yardstick) T=256", [&] {
            copy_chunk<<<(int)(N16 / 2048), 256>>>((const unsigned char*)X, (unsigned char*)Y, NB);
        });
        for (int T : {128, 256, 512})
            for (int mult : {1, 2}) {
                char name[80];
                int per = resident(pers_reg<false>, T, 0);
                snprintf(name, sizeof name, "pers_reg interleaved T=%d grid=%d x %d/SM", T, mult, per);
                timeit(name, [&] { pers_reg<false><<<sms * per * mult, T>>>((uint4*)X, (uint4*)Y, N16); });
                snprintf(name, sizeof name, "pers_reg contiguous T=%d grid=%d x %d/SM", T, mult, per);
                timeit(name, [&] { pers_reg<true><<<sms * per * mult, T>>>((uint4*)X, (uint4*)Y, N16); });
            }
        for (int T : {128, 256}) {
            rings<2>(sms, T);
            rings<4>(sms, T);
            rings<8>(sms, T);
        }
        for (int B : {8192, 16384, 32768}) {
            bulks<2>(sms, B);
            bulks<4>(sms, B);
        }
    }
    return 0;
}

// copy.cu: y = x, the speed-of-light reference every memory-bound kernel is judged against (CopyFamily).
//
// Both kernels move the stored bits whatever the dtype with 16-byte loads and stores (buffers come from
// cuMemAlloc and are 256-byte aligned), the last nbytes % 16 bytes one by one. copy_chunk, the one the suite
// uses, gives each block its own 8·blockDim vectors with all eight loads of a thread in flight before its first
// store; copy_fused is a grid-stride loop over one wave of resident blocks with four loads in flight, about 4%
// slower on an H200 (kept for comparison: TestCUDACopyKernels). The naive copy (through an fp32 intermediate, as
// y.copy_(x.float())) is kernels' (kernels/cuda/eager.cu).
#include "common.cuh"

extern "C" __global__ void copy_fused(const unsigned char* __restrict__ x, unsigned char* __restrict__ y,
                                      long long nbytes) {
    const long long n16 = nbytes >> 4;
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x);
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y);
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 a = xv[i], b = xv[i + stride], c = xv[i + 2 * stride], d = xv[i + 3 * stride];
        yv[i] = a;
        yv[i + stride] = b;
        yv[i + 2 * stride] = c;
        yv[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride) yv[i] = xv[i];
    if (blockIdx.x == 0 && threadIdx.x < (nbytes & 15)) {
        const long long t = (n16 << 4) + threadIdx.x;
        y[t] = x[t];
    }
}

// copy_chunk: one pass, no loop: the grid covers the buffer.
extern "C" __global__ void copy_chunk(const unsigned char* __restrict__ x, unsigned char* __restrict__ y,
                                      long long nbytes) {
    const long long n16 = nbytes >> 4;
    const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(x);
    uint4* __restrict__ yv = reinterpret_cast<uint4*>(y);
    const long long base = (long long)blockIdx.x * blockDim.x * 8 + threadIdx.x;
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (base + k * blockDim.x < n16) v[k] = xv[base + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (base + k * blockDim.x < n16) yv[base + k * blockDim.x] = v[k];
    if (blockIdx.x == 0 && threadIdx.x < (nbytes & 15)) {
        const long long t = (n16 << 4) + threadIdx.x;
        y[t] = x[t];
    }
}

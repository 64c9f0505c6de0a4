// layer.cu: the layout copies of the Llama-2 layer (LlamaLayerFamily, a composite of the suite's families):
// its projections give (t, heads, 128) row-major tensors, Attention takes (heads, t, 128).
//
// permute3 swaps the two outer axes of an (n0, n1, w) tensor of 2-byte elements: dst[j][i][:] = src[i][j][:],
// w a multiple of 8 (16-byte rows: the head dim is 128). One thread moves one 16-byte chunk; consecutive
// threads take consecutive chunks of the destination, so the stores are coalesced and each source row of w
// elements is read whole by w/8 neighbouring threads.
#include "common.cuh"

extern "C" __global__ void permute3_b16(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n0,
                                        long long n1, long long w) {
    const long long chunks = w >> 3;  // 16-byte chunks per row
    const long long total = n0 * n1 * chunks;
    const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= total) return;
    const long long c = g % chunks, row = g / chunks;  // destination row = j·n0 + i
    const long long i = row % n0, j = row / n0;
    dst[g] = src[(i * n1 + j) * chunks + c];
}

// recurrent.cuh: device helpers shared by the recurrent families' kernels (selectivescan.cu, lstm.cu, slstm.cu,
// mlstm.cu): gate functions with the accuracy the fp32 tests need (expf, log1pf and tanhf, not the
// approximate intrinsics), and the reset flags.
#pragma once
#include "common.cuh"

// seq_softplus is log(1 + e^x) = max(x, 0) + log1p(e^−|x|) (softplus64 in recurrent.go).
__device__ __forceinline__ float seq_softplus(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }

// seq_sigmoid is 1 / (1 + e^−x).
__device__ __forceinline__ float seq_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// seq_logsigmoid is log σ(x) = min(x, 0) − log1p(e^−|x|).
__device__ __forceinline__ float seq_logsigmoid(float x) { return fminf(x, 0.0f) - log1pf(expf(-fabsf(x))); }

// seq_reset reports whether the reset flag at index i (a [batch, t] tensor of 0/1 in storage S) is set.
template <class S>
__device__ __forceinline__ bool seq_reset(const typename S::T* r, long long i) {
    return S::get(r[i]) != 0.0f;
}

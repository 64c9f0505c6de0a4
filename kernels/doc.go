// Package kernels is kernelwatch's GPU kernel benchmark suite and its pure-Go CPU counterpart, built on package
// harness — the same exported API another module uses for its own kernels.
//
// Each kernel family (copy, RMSNorm, LayerNorm, softmax, GELU, SwiGLU, RoPE, cross-entropy, FP8 quantization,
// the sequence kernels with per-timestep resets: causal conv1d, the diagonal linear recurrence, the low-rank
// RTU cell, selective scan, LSTM, sLSTM, mLSTM, and the tensor-core ones: GEMM, FFN, attention and the Llama
// layer built from them) is declared once, as a harness.Family: its inputs with their generators, its
// outputs, its float64 reference, its tolerance and, for the sequence kernels, its own sizes (Family.Grid).
// That one declaration drives the correctness tests (harness.Test, on every backend) and the benchmarks
// (harness.Bench); the suite supplies code for "fused" (ours: one kernel) and "naive" (a chain of whole-tensor
// ops with intermediates, the way an eager framework runs it) in fp32 and bf16 storage with fp32 arithmetic:
// CPU code always, registered with harness.RegisterCPU, and CUDA code with the cuda build tag
// (harness.RegisterCUDA, kernels from cuda/*.cu compiled to the embedded cuda/ptx).
//
// What the harness decides — the measurement policy (warm-up, per-launch samples, cache treatment, the copy
// and tensor-core yardsticks pct-copy and pct-mma), the correctness check (fresh random inputs, poisoned
// outputs, relative L2 error against the reference) and the benchmark names — is the harness's; see its
// package documentation. What this package adds is the kernels: the eager ops its naive chains are written in
// (eager.go, cuda_eager.go), the tiled CPU GEMM, the composites' helpers (compose.go), and each family.
//
// Layout: a family is the files that share its prefix — <family>.go (declaration, reference, CPU code),
// <family>_cuda.go, cuda/<family>.cu, <family>_test.go, <family>_cuda_test.go; what a group of families shares
// has the group's name (recurrent.go, sequence.go, cuda/chainscan.cuh). The CUDA sources include the harness's
// device helpers (harness/cuda/common.cuh, mma.cuh) through cuda/common.cuh and cuda/mma.cuh. README,
// "Adding a kernel family".
package kernels

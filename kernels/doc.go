// Package kernels is kernelwatch's GPU kernel benchmark suite and its pure-Go CPU counterpart.
//
// Each kernel family (copy, RMSNorm, LayerNorm, softmax, GELU, SwiGLU, RoPE, cross-entropy, FP8 quantization,
// and the sequence kernels with per-timestep resets: causal conv1d, the diagonal linear recurrence, the low-rank
// RTU cell, selective scan, LSTM, sLSTM, mLSTM) is declared once, as a Family: its inputs with their generators,
// its outputs, its float64 reference, its tolerance and, for the sequence kernels, its own sizes (Family.Grid).
// That one declaration drives the correctness tests and the benchmarks of every Backend; a backend
// only supplies code for "fused" (ours: one kernel) and "naive" (a chain of whole-tensor ops with intermediates,
// the way an eager framework runs it) in fp32 and bf16 storage with fp32 arithmetic.
//
// The package's opinion is that a kernel's number means nothing without the copy next to it. Every run
// measures the suite's own copy kernel first (config line copy-gbps), again before each family (run-health: ok
// when within 3% of the first) and last (copy-gbps-end and the whole run's run-health);
// every benchmark reports the median launch time as ns/op, its tail as p99-ns, the bandwidth of the traffic it
// cannot avoid (each input read once, each output written once) as GB/s, that bandwidth as a share of the copy
// as pct-copy, and the intermediates it allocates as scratch-B — so a fused/naive pair shows time and memory
// saved. The measurement policy (warm-up, per-launch samples, cache treatment; Policy) is written once, in
// harness.go; a benchmark only names its family, and the harness sweeps the device's grid (Grids) or the
// family's own (Family.CasesOn).
//
// Layout: a family is the files that share its prefix — <family>.go (declaration, reference, CPU code),
// <family>_cuda.go, cuda/<family>.cu, <family>_test.go, <family>_cuda_test.go; what a group of families shares
// has the group's name (recurrent.go, sequence.go, cuda/chainscan.cuh). README, "Adding a kernel family".
//
// Correctness is checked against the float64 reference on fresh random inputs (the seed is logged), with every
// output byte set to 0xFF first so that an unwritten element fails: relative L2 error ≤ 1e-5 for fp32 and ≤ 1e-2
// for bf16, and FP8 within e4m3's rounding bound.
//
// Backends: the CPU one (cpu.go) is always built; a CUDA one is added with the cuda build tag, registering
// itself with RegisterBackend and its code for each family in its own table. TestMain opens the preferred
// backend (-kernels.device picks one) for the benchmarks; the tests run on every backend built in.
package kernels

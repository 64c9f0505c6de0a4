package harness

import "fmt"

// The tensor-core yardstick (Suite.MMATFLOPS, pct-mma): the CUDA backend measures the device's dense bf16
// mma.sync rate with cuda/mma.cu and prints the theoretical peak beside it, from this table.

// mmaFlopsPerClockSM is the dense bf16 tensor-core rate with fp32 accumulation, FLOP per multiprocessor per
// clock, by compute capability (major·10 + minor), from NVIDIA's published peaks: A100 (8.0) 1024 FMA per SM
// per clock (312 TFLOP/s = 108 SMs × 1410 MHz × 2048), H100/H200 (9.0) twice that (989 TFLOP/s for H100 SXM =
// 132 SMs × 1830 MHz × 4096; the PCIe card's 756 = 114 × 1620 MHz × 4096). On 9.0 only wgmma reaches it: the
// mma.sync that the probe and this suite's kernels use (CUDA 11.8 has no wgmma) runs well below. Other devices
// are left out rather than guessed (the GeForce and professional cards of one architecture differ).
var mmaFlopsPerClockSM = map[int]float64{80: 2048, 90: 4096}

// mmaPeak is the theoretical dense bf16 rate in TFLOP/s of a device with sms multiprocessors at clockKHz, and how
// it was computed; 0 and "" when its compute capability is not in the table.
func mmaPeak(cc, sms, clockKHz int) (float64, string) {
	rate, ok := mmaFlopsPerClockSM[cc]
	if !ok || sms <= 0 || clockKHz <= 0 {
		return 0, ""
	}
	tf := float64(sms) * float64(clockKHz) * 1e3 * rate / 1e12
	return tf, fmt.Sprintf("%d SMs × %d MHz × %.0f dense bf16 FLOP/clk/SM, sm_%d", sms, clockKHz/1000, rate, cc)
}

// mmaPending, while set, keeps Suite.Start from running the probe unless the run asks for pending GPU code
// (Suite.RunPending), as Family.Pending does for a family. Empty: the probe and the tensor-core families
// (GEMM, FFN, Attention, LlamaLayer), written offline, passed their CUDA tests on an H100 on 2026-11-25.
var mmaPending = ""

// mmaProbeChains is MMA_PROBE_CHAINS (cuda/mma.cu): the independent mma.sync chains of each warp.
const mmaProbeChains = 8

// mmaProbeFlops is the work of one launch of the probe: warps × iters × chains × one m16n8k16 (2·16·8·16).
func mmaProbeFlops(blocks, threads, iters int) float64 {
	return float64(blocks) * float64(threads/32) * float64(iters) * mmaProbeChains * 2 * 16 * 8 * 16
}

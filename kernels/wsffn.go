package kernels

import "slices"

// The FFN family's Hopper plan: FC1 on the wgmma GEMM (cuda/wsgemm_sm90a.cu) with the activation applied to
// the fp32 accumulators in its epilogue before they are rounded to bf16, h written once, then FC2 on the plain
// wgmma GEMM. SwiGLU's FC1 is one GEMM whose B tile is bn/2 rows of W_gate and the same bn/2 rows of W_up (two
// tensor maps), so that each consumer thread holds the gate and the up accumulator of the same units and
// writes silu(gate)·up, bn/2 columns a tile. Elsewhere, and while the switch is off, the FFN runs its
// mma.sync kernels (cuda/ffn.cu), whose epilogue (mma.cuh's mma_gelu, mma_silu) the wgmma one repeats operation
// for operation.

// wgmmaFFNPending says why the FFN's launcher would not take the wgmma kernels: "" since they passed
// TestCUDAWGMMAFFN (every FC1 plan of both epilogues and the default, the FFN's test shapes and shapes of several
// tiles each way, nothing written past y, the mma.sync kernels with the switch off) on an H200 with the register
// epilogue, then on H200s and H100s with the store kernels and split last waves; there the FFN ran at 89–106%
// of cuBLASLt's rate on its GEMMs for SwiGLU and 84.5–103% for GELU on an H100 (the benchmarks' pct-cublas at
// 512, 2048 and 4096 tokens; 90–100% and 88–93% on an H200), against 39–44% for the mma.sync FFN. The tests
// swap wgmmaFFNOn to compare.
const wgmmaFFNPending = ""

// wgmmaFFNOn is whether the FFN's launcher may take the wgmma kernels.
var wgmmaFFNOn = wgmmaFFNPending == ""

// wsFFNActs are the FFN variants whose FC1 has a wgmma kernel (an epilogue of cuda/wsgemm_sm90a.cu).
var wsFFNActs = []string{"gelu", "swiglu"}

// wsFFNPlans are the plans whose kernels the module holds with each epilogue of wsFFNActs (WS_KERNEL_GELU,
// WS_KERNEL_SWIGLU, WS_KERNEL_ST), and those wsChooseFFNPlan considers: gelu, the GEMM chooser's single-block
// widths and store plans; swiglu, the widths whose halves are whole 8-row swizzle groups (a half tile is its
// own TMA box, and the up accumulators are the gate's + bn/4 registers only when bn/2 is a multiple of 8): not
// 232, and store plans whose output tiles are whole 64-column boxes, split along K but never along N.
var wsFFNPlans = map[string][]wsPlan{
	"gelu": {{256, 1, 0, wsDefaultGroup, false, 0, false}, {232, 1, 0, wsDefaultGroup, false, 0, false},
		{192, 1, 0, wsDefaultGroup, false, 0, false}, {128, 1, 0, wsDefaultGroup, false, 0, false},
		{256, 1, 0, wsDefaultGroup, true, 0, false}, {256, 1, 0, wsDefaultGroup, true, 64, false},
		{192, 1, 0, wsDefaultGroup, true, 0, false}, {192, 1, 0, wsDefaultGroup, true, 64, false},
		{128, 1, 0, wsDefaultGroup, true, 0, false}, {128, 1, 0, wsDefaultGroup, true, 64, false},
		{256, 1, 0, wsDefaultGroup, true, 0, true}},
	"swiglu": {{256, 1, 0, wsDefaultGroup, false, 0, false}, {192, 1, 0, wsDefaultGroup, false, 0, false}, {128, 1, 0, wsDefaultGroup, false, 0, false},
		{256, 1, 0, wsDefaultGroup, true, 0, false}, {128, 1, 0, wsDefaultGroup, true, 0, false},
		{256, 1, 0, wsDefaultGroup, true, 0, true}, {128, 1, 0, wsDefaultGroup, true, 0, true}},
}

// wsFFNPlanFor picks the plan of FC1 (tokens × inter outputs, epilogue act) on sms multiprocessors; the tests
// swap it.
var wsFFNPlanFor = wsChooseFFNPlan

// wsFFNChoice are the FC1 plans wsChooseFFNPlan considers: gelu, the GEMM chooser's; swiglu, the store
// kernels of 256 and 128 columns (no narrow last wave: a swiglu tile is gate and up halves) and the
// 192-column kernel (whose 96 output columns are not whole 64-column boxes: it stores from registers).
var wsFFNChoice = map[string][]wsPlan{
	"gelu": wsWidths,
	"swiglu": {{256, 1, 0, wsDefaultGroup, true, 0, false}, {192, 1, 0, wsDefaultGroup, false, 0, false},
		{128, 1, 0, wsDefaultGroup, true, 0, false}},
}

// wsChooseFFNPlan is the GEMM's chooser (wsCheapest) over the act's choice, with swiglu's tiles bn/2 outputs
// wide.
func wsChooseFFNPlan(m, n, sms int, act string) wsPlan {
	return wsCheapest(wsFFNChoice[act], act, m, n, sms)
}

// ffnUsesWGMMA reports whether the FFN's act variant on a GPU of compute capability cc runs FC1 on the wgmma
// GEMM with act in its epilogue and FC2 on the plain wgmma GEMM, with the pending switch at on: exactly 9.0
// (sm_90a code, as gemmUsesWGMMA), and an act that has an epilogue (wsFFNActs).
func ffnUsesWGMMA(cc int, act string, on bool) bool {
	return on && gemmUsesWGMMA(cc, true) && slices.Contains(wsFFNActs, act)
}

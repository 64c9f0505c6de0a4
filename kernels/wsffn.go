package kernels

import "slices"

// The FFN family's Hopper plan: FC1 on the wgmma GEMM (cuda/wsgemm_sm90a.cu) with the activation applied to
// the fp32 accumulators in its epilogue before they are rounded to bf16, h written once, then FC2 on the plain
// wgmma GEMM. Elsewhere, and while the switch is off, the FFN runs its mma.sync kernels (cuda/ffn.cu), whose
// epilogue (mma.cuh's mma_gelu) the wgmma one repeats operation for operation.

// wgmmaFFNPending says why the FFN's launcher does not take the wgmma kernels by default: the GELU epilogue
// kernels (wsgemm_gelu_*) have not run on a GPU. Until they pass TestCUDAWGMMAFFN on an H100 or H200, the
// launcher takes them only when the run asks for pending code (-kernels.pending sets wgmmaFFNOn), so the
// benchmarks and the gate keep the verified mma.sync FFN; "" once verified.
const wgmmaFFNPending = "the FFN's wgmma FC1 with GELU in its epilogue (cuda/wsgemm_sm90a.cu: wsgemm_gelu_*) " +
	"has not yet run on a GPU (TestCUDAWGMMAFFN)"

// wgmmaFFNOn is whether the FFN's launcher may take the wgmma kernels.
var wgmmaFFNOn = wgmmaFFNPending == ""

// wsFFNActs are the FFN variants whose FC1 has a wgmma kernel (an epilogue of cuda/wsgemm_sm90a.cu); swiglu,
// whose FC1 is two GEMMs, is not one of them yet and keeps the mma.sync kernels.
var wsFFNActs = []string{"gelu"}

// wsFFNPlans are the plans whose kernels the module holds with each epilogue of wsFFNActs (WS_KERNEL_GELU):
// the chooser's single-block widths, so that the plan wsPlanFor picks for FC1 always has its epilogue kernel.
var wsFFNPlans = wsWidths

// ffnUsesWGMMA reports whether the FFN's act variant on a GPU of compute capability cc runs FC1 on the wgmma
// GEMM with act in its epilogue and FC2 on the plain wgmma GEMM, with the pending switch at on: exactly 9.0
// (sm_90a code, as gemmUsesWGMMA), and an act that has an epilogue (wsFFNActs).
func ffnUsesWGMMA(cc int, act string, on bool) bool {
	return on && gemmUsesWGMMA(cc, true) && slices.Contains(wsFFNActs, act)
}

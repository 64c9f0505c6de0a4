package kernels

import "fmt"

// The Attention family's Hopper plan: the wgmma + TMA kernels of cuda/wsattn_sm90a.cu (sm_90a, compute
// capability exactly 9.0), after FlashAttention-3: 128 to 256 queries a block in warpgroups of 64, K and V
// tiles of bn keys in rings of 2 or 3 stages filled by the copy engine, S = Q·Kᵀ and O += P·V on wgmma with P
// from registers.
// Elsewhere, and while the switch is off, the family runs its mma.sync kernel (cuda/attention.cu), which
// every GPU from compute capability 8.0 on runs. Which kernel a case gets is decided here, on the CPU.

// wgmmaAttnPending says why the family's launcher would not take the wgmma kernels by default: "" since they
// passed TestCUDAWGMMAAttention (every kernel and the default plans, ragged t, nothing written past O, no
// spills) on an H100, and the 128-query ones on an H200 too. -kernels.pending is no longer needed for them;
// the tests swap wgmmaAttnOn to compare.
const wgmmaAttnPending = ""

// wgmmaAttnOn is whether the family's launcher may take the wgmma kernels.
var wgmmaAttnOn = wgmmaAttnPending == ""

// attentionUsesWGMMA reports whether attention with head dim d on a GPU of compute capability cc runs a wgmma
// kernel, with the pending switch at on: wgmma is an sm_90a instruction, not forward compatible, so exactly
// 9.0; and the module holds kernels for d = 64 and 128 only (as the mma.sync one).
func attentionUsesWGMMA(cc, d int, on bool) bool { return on && cc == 90 && (d == 64 || d == 128) }

// wsAttnPlan is one kernel of cuda/wsattn_sm90a.cu: head dim d, bm queries a block (bm/64 warpgroups of 64,
// 2·bm threads), key tiles of bn in rings of `stages`, and its form: "plain" (S, softmax, P·V in turn), "ov"
// (the softmax of one tile overlapping the P·V product of the one before) or "pp" ("ov", the warpgroups taking
// turns to issue their products).
type wsAttnPlan struct {
	d, bm, bn, stages int
	form              string
}

// wsAttnSmemLimit is the dynamic shared memory a block may take on compute capability 9.0: 227 KiB less the
// kilobyte of static shared memory (the barriers, as ptxas lays them out).
const wsAttnSmemLimit = 227<<10 - 1024

// wsAttnPlans lists every kernel pair (mask none and causal) the module holds (WA_KERNEL lines).
var wsAttnPlans = []wsAttnPlan{
	{128, 128, 128, 2, "plain"}, {128, 128, 128, 2, "ov"}, {128, 128, 128, 2, "pp"}, {128, 128, 176, 2, "pp"},
	{64, 128, 128, 2, "plain"}, {64, 128, 128, 2, "pp"}, {64, 128, 192, 2, "pp"}, {64, 192, 128, 2, "ov"},
	{64, 192, 128, 2, "pp"},
	{128, 128, 128, 3, "pp"}, {64, 128, 128, 3, "pp"}, {64, 128, 192, 3, "pp"}, {64, 192, 128, 3, "pp"},
	{128, 128, 176, 2, "plain"}, {128, 192, 128, 2, "plain"},
	{64, 192, 128, 2, "plain"}, {64, 256, 128, 2, "plain"},
}

// kernel is the plan's kernel name for mask ("none" or "causal").
func (p wsAttnPlan) kernel(mask string) string {
	return fmt.Sprintf("%v_%s", p, mask)
}

func (p wsAttnPlan) String() string {
	return fmt.Sprintf("wsattn_d%d_m%d_n%d_s%d_%s", p.d, p.bm, p.bn, p.stages, p.form)
}

// threads is the plan's block size: bm/64 warpgroups.
func (p wsAttnPlan) threads() int { return 2 * p.bm }

// smem is the dynamic shared memory a block takes: the Q tile, the stages of K and V, and the 1024 bytes of
// slack that align them to the swizzle's period (the .cu's layout).
func (p wsAttnPlan) smem() int { return p.bm*p.d*2 + 2*p.stages*p.bn*p.d*2 + 1024 }

// wsAttnPlanFor picks the plan for head dim d and mask; the tests swap it.
var wsAttnPlanFor = wsAttnChoose

// wsAttnChoose is the plan that timed fastest on an H100 (TestCUDAAttentionTune; TFLOP/s as attentionFlops counts
// them, at t = 4096 and 16384 for d = 128, (8, 16, 2048, 64) for d = 64). The plain form: with two or more
// warpgroups a block, one's softmax already runs while another's products do, and the forms that overlap them
// within a warpgroup ("ov") or make the warpgroups take turns ("pp") timed no faster (176-key tiles at d = 128: pp
// 553 and 575, plain 555 and 579) or slower (d = 64, 128-query blocks: pp 316, plain 399). Without a mask, d = 128:
// 176-key tiles (555 and 579; 128-key 535 and 553); causal: 192-query blocks (488 and 535, against 471 and 474 for
// the 128-query pp kernel), whose longer blocks cost less at the diagonal than they lose to the last wave. d = 64:
// 256-query blocks, four warpgroups (440 and 332 causal, against 399 and 280 with 128).
func wsAttnChoose(d int, mask string) wsAttnPlan {
	switch {
	case d == 128 && mask == "causal":
		return wsAttnPlan{128, 192, 128, 2, "plain"}
	case d == 128:
		return wsAttnPlan{128, 128, 176, 2, "plain"}
	default:
		return wsAttnPlan{64, 256, 128, 2, "plain"}
	}
}

package kernels

import (
	"fmt"
	"strings"
)

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
// 2·bm threads), key tiles of bn in rings of `stages`, its form: "plain" (S, softmax, P·V in turn), "ov"
// (the softmax of one tile overlapping the P·V product of the one before) or "pp" ("ov", the warpgroups taking
// turns to issue their products), and its variant (opts).
type wsAttnPlan struct {
	d, bm, bn, stages int
	form              string
	opts              wsAttnOpts
}

// wsAttnOpts is how a kernel spends the multiprocessor's pipes beyond its tiles and form (the .cu's EMU and OPT). At
// d = 64 a score costs the tensor cores 256 FLOP, so at 4096 FLOP a clock they make 16 scores a clock, exactly the
// 16 ex2 a clock of the special-function units (MUFU): the softmax takes as long as the two products. emu of every
// 16 exponentials go instead to a polynomial on the FMA pipe (wa_exp2_poly, after FlashAttention-4: Cody–Waite
// range reduction and a degree-3 minimax polynomial of 2^f, relative error 7.5e-5 against the 3.9e-3 of the bf16
// that P is rounded to next); the running max's alpha stays on ex2. desc steps the products' shared-memory
// descriptors from ones made once rather than making each from its address (about 30 fewer instructions a tile in
// the stream the softmax issues from). The zero value is neither, the kernels before.
type wsAttnOpts struct {
	emu  int
	desc bool
}

// String is the kernel name's part (the .cu's VNAME): e<emu>, dc, joined by "_"; "" for the zero value.
func (o wsAttnOpts) String() string {
	var parts []string
	if o.emu > 0 {
		parts = append(parts, fmt.Sprintf("e%d", o.emu))
	}
	if o.desc {
		parts = append(parts, "dc")
	}
	return strings.Join(parts, "_")
}

// wsAttnSmemLimit is the dynamic shared memory a block may take on compute capability 9.0: 227 KiB less the
// kilobyte of static shared memory (the barriers, as ptxas lays them out).
const wsAttnSmemLimit = 227<<10 - 1024

// wsAttnPlans lists every kernel pair (mask none and causal) the module holds (WA_KERNEL lines).
var wsAttnPlans = []wsAttnPlan{
	{128, 128, 128, 2, "plain", wsAttnOpts{}}, {128, 128, 128, 2, "ov", wsAttnOpts{}}, {128, 128, 128, 2, "pp", wsAttnOpts{}},
	{128, 128, 176, 2, "pp", wsAttnOpts{}},
	{64, 128, 128, 2, "plain", wsAttnOpts{}}, {64, 128, 128, 2, "pp", wsAttnOpts{}}, {64, 128, 192, 2, "pp", wsAttnOpts{}},
	{64, 192, 128, 2, "ov", wsAttnOpts{}}, {64, 192, 128, 2, "pp", wsAttnOpts{}},
	{128, 128, 128, 3, "pp", wsAttnOpts{}}, {64, 128, 128, 3, "pp", wsAttnOpts{}}, {64, 128, 192, 3, "pp", wsAttnOpts{}},
	{64, 192, 128, 3, "pp", wsAttnOpts{}},
	{128, 128, 176, 2, "plain", wsAttnOpts{}}, {128, 192, 128, 2, "plain", wsAttnOpts{}},
	{64, 192, 128, 2, "plain", wsAttnOpts{}}, {64, 256, 128, 2, "plain", wsAttnOpts{}},
	// The variants (WA_KERNEL_V lines).
	{64, 256, 128, 2, "plain", wsAttnOpts{emu: 2}}, {64, 256, 128, 2, "plain", wsAttnOpts{desc: true}},
	{128, 128, 176, 2, "plain", wsAttnOpts{desc: true}}, {128, 192, 128, 2, "plain", wsAttnOpts{desc: true}},
}

// kernel is the plan's kernel name for mask ("none" or "causal").
func (p wsAttnPlan) kernel(mask string) string {
	return fmt.Sprintf("%v_%s", p, mask)
}

func (p wsAttnPlan) String() string {
	name := fmt.Sprintf("wsattn_d%d_m%d_n%d_s%d_%s", p.d, p.bm, p.bn, p.stages, p.form)
	if v := p.opts.String(); v != "" {
		name += "_" + v
	}
	return name
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
		return wsAttnPlan{128, 192, 128, 2, "plain", wsAttnOpts{}}
	case d == 128:
		return wsAttnPlan{128, 128, 176, 2, "plain", wsAttnOpts{}}
	case wsAttnD64On:
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnD64Opts}
	default:
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{}}
	}
}

// wsAttnD64Pending says why wsAttnChoose keeps the d = 64 plan's variant at the zero value rather than
// wsAttnD64Opts; wsAttnD64On is whether it takes it (-kernels.pending turns it on, TestMain).
const wsAttnD64Pending = "the stepped descriptors are not yet timed decisively on a GPU against the kernel without them"

var wsAttnD64On = wsAttnD64Pending == ""

// wsAttnD64Opts is the d = 64 default plan's variant once wsAttnD64On.
var wsAttnD64Opts = wsAttnOpts{desc: true}

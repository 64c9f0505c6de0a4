package kernels

import (
	"fmt"
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

// wsAttnOpts is how a kernel spends the multiprocessor's pipes beyond its tiles and form (the .cu's OPT).
// desc steps the products' shared-memory descriptors from ones made once rather than making each from its address:
// about 30 fewer instructions a 128-key tile in the stream the softmax issues from, which at d = 64 is what binds.
// (A share of the exponentials on a polynomial on the FMA pipe instead of the special-function units timed slower
// at every share on an H100 — 2 of 16: −3% to −6%; 8: −14% to −19% — since each costs 9 instructions where the
// tile's issue already binds; docs/kernels.md has the figures.) The zero value is neither.
//
// lastrel refills a stage of the K or V ring from the warpgroup that releases it last, at once, rather than from
// the one copy issuer, which waited on the stage's barrier for the other warpgroups to release it and, while it
// waited, held its own warpgroup at its next product: the warpgroups ran in lockstep (Nsight Compute, H100, the
// d = 128 kernel without a mask: 28% of the warps' cycles stalled at a barrier, the tensor pipe 63% busy). On an
// H100 (TestCUDAAttentionTune, 300 ms soak, four interleaved repeats, medians, TFLOP/s) it took the causal d = 128
// kernel from 431.9 to 459.8 at t = 4096 and from 536.8 to 570.6 at t = 16384, d = 64 from 421.8 to 435.9 (causal
// 281.2 to 298.1), and the 176-key kernel without a mask from 529.8 to 533.5 at t = 4096 (545.4 and 544.5 at 16384).
// With the lockstep gone, the forms that overlap the softmax with the products pay off where they did not before
// (the same tune, another run): without a mask at d = 128, 176-key tiles, "pp" 566.4 and "ov" 557.2 against the
// plain form's 535.4 at t = 4096, 586.8 and 594.8 against 556.3 at t = 16384; causal at t = 16384 "pp" 552.8 against
// 564.9 for the chosen 192-query plain kernel. They passed TestCUDAWGMMAAttention on an H100 and an H200; "pp" is
// the default without a mask at d = 128 since ee57a57.
//
// lazy moves a row's running max only when a tile's passes it by more than 8 (log2 units), and a warp whose rows all
// kept theirs skips rescaling O: D/2 multiplies a thread a tile out of the same stream (wsAttnLazyPending has the
// figures).
//
// noneOnly says that the module holds the plan's kernel without a mask only: the causal d = 64 kernel with desc and
// lastrel spilled 8 bytes a thread at its 128-register cap under the driver's JIT (580.159.04).
type wsAttnOpts struct {
	desc, lastrel, lazy, noneOnly bool
}

// String is the kernel name's part (the .cu's VNAME): "dc", "lr" or "dc_lr", each with "_lz" after it for lazy
// (the running max moved only past 8, O rescaled only where it moved: WA_OPT_LAZY), or "" for the zero value.
func (o wsAttnOpts) String() string {
	var v string
	switch {
	case o.desc && o.lastrel:
		v = "dc_lr"
	case o.desc:
		v = "dc"
	case o.lastrel:
		v = "lr"
	}
	if o.lazy {
		v += "_lz"
	}
	return v
}

// wsAttnSmemLimit is the dynamic shared memory a block may take on compute capability 9.0: 227 KiB less the
// kilobyte of static shared memory (the barriers, as ptxas lays them out).
const wsAttnSmemLimit = 227<<10 - 1024

// wsAttnPlans lists every kernel pair (mask none and causal) the module holds (WA_KERNEL lines).
var wsAttnPlans = []wsAttnPlan{
	{128, 128, 176, 2, "pp", wsAttnOpts{}}, {128, 128, 176, 2, "plain", wsAttnOpts{}}, {128, 192, 128, 2, "plain", wsAttnOpts{}},
	{64, 256, 128, 2, "plain", wsAttnOpts{}},
	// The variants (WA_KERNEL_V lines).
	{64, 256, 128, 2, "plain", wsAttnOpts{desc: true}},
	{128, 128, 176, 2, "plain", wsAttnOpts{lastrel: true}}, {128, 192, 128, 2, "plain", wsAttnOpts{lastrel: true}},
	{128, 128, 176, 2, "pp", wsAttnOpts{lastrel: true}}, {128, 128, 176, 2, "ov", wsAttnOpts{lastrel: true}},
	{64, 256, 128, 2, "plain", wsAttnD64NoneOpts},
	// The defaults with the lazy rescale.
	{64, 256, 128, 2, "plain", wsAttnOpts{desc: true, lastrel: true, lazy: true, noneOnly: true}},
	{128, 128, 176, 2, "pp", wsAttnOpts{lastrel: true, lazy: true}}, {128, 192, 128, 2, "plain", wsAttnOpts{lastrel: true, lazy: true}},
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

// masks are the masks the module holds the plan's kernel for.
func (p wsAttnPlan) masks() []string {
	if p.opts.noneOnly {
		return []string{"none"}
	}
	return AttentionFamily.Variants
}

// smem is the dynamic shared memory a block takes: the Q tile, the stages of K and V, and the 1024 bytes of
// slack that align them to the swizzle's period (the .cu's layout).
func (p wsAttnPlan) smem() int { return p.bm*p.d*2 + 2*p.stages*p.bn*p.d*2 + 1024 }

// wsAttnPlanFor picks the plan for head dim d and mask; the tests swap it.
var wsAttnPlanFor = wsAttnChoose

// wsAttnChoose is the plan that timed fastest on an H100 (TestCUDAAttentionTune; TFLOP/s as attentionFlops counts them,
// at t = 4096 and 16384 for d = 128, (8, 16, 2048, 64) for d = 64). The plain form, but for d = 128 without a mask (the
// last sentence): with two or more warpgroups a block, one's softmax already runs while another's products do, and the
// forms that overlap them within a warpgroup ("ov") or make the warpgroups take turns ("pp") timed no faster (176-key
// tiles at d = 128: pp 553 and 575, plain 555 and 579) or slower (d = 64, 128-query blocks: pp 316, plain 399). Without
// a mask, d = 128: 176-key tiles (555 and 579; 128-key 535 and 553); causal: 192-query blocks (488 and 535, against 471
// and 474 for the 128-query pp kernel), whose longer blocks cost less at the diagonal than they lose to the last wave.
// d = 64: 256-query blocks, four warpgroups (440 and 332 causal, against 399 and 280 with 128), with the stepped
// descriptors (wsAttnD64Opts). Every head dim and mask with the stages refilled by their last releaser
// (wsAttnOpts.lastrel), but causal d = 64 (its kernel spilled). With that refill the warpgroups no longer wait on each
// other's release, and at d = 128 without a mask the turn-taking form wins after all (after 300 ms of load: pp 566 and
// 587, ov 557 and 595, plain 535 and 556); causal keeps the plain 192-query blocks (565 against pp's 553 at t = 16384).
func wsAttnChoose(d int, mask string) wsAttnPlan {
	switch {
	case d == 128 && mask == "causal":
		return wsAttnPlan{128, 192, 128, 2, "plain", wsAttnOpts{lastrel: true, lazy: wsAttnLazyOn}}
	case d == 128:
		return wsAttnPlan{128, 128, 176, 2, "pp", wsAttnOpts{lastrel: true, lazy: wsAttnLazyOn}}
	case wsAttnD64On && mask == "causal":
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnD64Opts}
	case wsAttnD64On:
		o := wsAttnD64NoneOpts
		o.lazy = wsAttnLazyOn
		return wsAttnPlan{64, 256, 128, 2, "plain", o}
	default:
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{}}
	}
}

// wsAttnLazyPending is empty: wsAttnChoose takes the lazy rescale (wsAttnOpts.lazy, WA_OPT_LAZY) in every default
// plan but causal d = 64's (whose kernel with it spilled 112 bytes a thread). Its kernels passed
// TestCUDAWGMMAAttention on an H100 and an H200 (2026-11-27) and timed faster on both in every shape
// (TestCUDAAttentionTune, 300 ms soak, three interleaved repeats, medians, TFLOP/s, H100 / H200): d = 128 without a
// mask 532.4 → 545.1 / 532.3 → 551.3 at t = 4096 and 589.6 → 612.4 / 592.6 → 609.6 at t = 16384, causal 455.5 → 460.2
// / 463.0 → 470.9 and 564.6 → 577.5 / 571.6 → 576.8, d = 64 without a mask 426.4 → 431.5 / 431.7 → 441.9. Both GPUs'
// stored baselines are recorded with it. wsAttnLazyOn is whether the chooser takes it: a non-empty reason here
// turns it off except under -kernels.pending.
const wsAttnLazyPending = ""

var wsAttnLazyOn = wsAttnLazyPending == ""

// wsAttnD64Pending says why wsAttnChoose would keep the d = 64 plan's variant at the zero value rather than
// wsAttnD64Opts: "" since the stepped descriptors passed TestCUDAWGMMAAttention and timed faster on an H100
// (TestCUDAAttentionTune at (8, 16, 2048, 64), six interleaved repeats, medians): after 300 ms of load 418.8 TFLOP/s
// against 408.4 and, again, 420.7 against 410.1 (+2.5%); idle 429.1 against 415.1 (+3.4%); causal 312.4 against
// 309.1 (+1%). At d = 128 they timed within ±3% of the default plans either way (and −7.5% once), so those keep
// theirs. wsAttnD64On is whether it takes it.
const wsAttnD64Pending = ""

var wsAttnD64On = wsAttnD64Pending == ""

// wsAttnD64Opts is the d = 64 default plan's variant once wsAttnD64On, and wsAttnD64NoneOpts its variant without a
// mask (the stages refilled by their last releaser too; its causal kernel spilled).
var (
	wsAttnD64Opts     = wsAttnOpts{desc: true}
	wsAttnD64NoneOpts = wsAttnOpts{desc: true, lastrel: true, noneOnly: true}
)

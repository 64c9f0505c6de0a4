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
// turns to issue their products), and how its softmax computes.
type wsAttnPlan struct {
	d, bm, bn, stages int
	form              string
	sm                wsAttnSoftmax
}

// wsAttnSoftmax is how a kernel's online softmax spends the multiprocessor's pipes (the .cu's EMU and OPT). At
// d = 64 a score costs the tensor cores 256 FLOP, so at 4096 FLOP a clock they make 16 scores a clock, exactly the
// 16 ex2 a clock of the special-function units: the softmax takes as long as the two products. emu of every 16
// exponentials go instead to a polynomial on the FMA pipe (wa_exp2_poly, after FlashAttention-4: Cody–Waite
// range reduction, a degree-3 minimax polynomial of 2^f, relative error 7.5e-5, or degree 4 with deg4, 2.6e-6,
// against bf16's 3.9e-3 that P is rounded to next); the running max's alpha stays on ex2. intPack rounds P to
// bf16 on the integer pipe (add half an ulp, prmt) rather than by cvt; tree reduces each row's max and sum as
// trees rather than one dependent chain each; desc steps the products' shared-memory descriptors from ones made
// once rather than making each from its address; onesSum has the tensor cores make the row sums (P·V is
// m64n72k16 over V and a tile of ones, bn·128 more bytes of shared memory, d = 64 only) rather than 64 dependent
// adds a row a tile. The zero value is every exponential on ex2, the kernels before.
type wsAttnSoftmax struct {
	emu           int
	deg4          bool
	intPack, tree bool
	desc, onesSum bool
}

// wsAttnEx2 is the softmax with every exponential on ex2.
var wsAttnEx2 = wsAttnSoftmax{}

// String is the kernel name's part (the .cu's SNAME): e<emu> (d4: degree 4), ip, tr, dc, ls, joined by "_"; "" for
// wsAttnEx2.
func (s wsAttnSoftmax) String() string {
	var parts []string
	if s.emu > 0 {
		e := fmt.Sprintf("e%d", s.emu)
		if s.deg4 {
			e += "d4"
		}
		parts = append(parts, e)
	}
	if s.intPack {
		parts = append(parts, "ip")
	}
	if s.tree {
		parts = append(parts, "tr")
	}
	if s.desc {
		parts = append(parts, "dc")
	}
	if s.onesSum {
		parts = append(parts, "ls")
	}
	return strings.Join(parts, "_")
}

// wsAttnSmemLimit is the dynamic shared memory a block may take on compute capability 9.0: 227 KiB less the
// kilobyte of static shared memory (the barriers, as ptxas lays them out).
const wsAttnSmemLimit = 227<<10 - 1024

// wsAttnPlans lists every kernel pair (mask none and causal) the module holds (WA_KERNEL lines).
var wsAttnPlans = []wsAttnPlan{
	{128, 128, 128, 2, "plain", wsAttnEx2}, {128, 128, 128, 2, "ov", wsAttnEx2}, {128, 128, 128, 2, "pp", wsAttnEx2},
	{128, 128, 176, 2, "pp", wsAttnEx2},
	{64, 128, 128, 2, "plain", wsAttnEx2}, {64, 128, 128, 2, "pp", wsAttnEx2}, {64, 128, 192, 2, "pp", wsAttnEx2},
	{64, 192, 128, 2, "ov", wsAttnEx2}, {64, 192, 128, 2, "pp", wsAttnEx2},
	{128, 128, 128, 3, "pp", wsAttnEx2}, {64, 128, 128, 3, "pp", wsAttnEx2}, {64, 128, 192, 3, "pp", wsAttnEx2},
	{64, 192, 128, 3, "pp", wsAttnEx2},
	{128, 128, 176, 2, "plain", wsAttnEx2}, {128, 192, 128, 2, "plain", wsAttnEx2},
	{64, 192, 128, 2, "plain", wsAttnEx2}, {64, 256, 128, 2, "plain", wsAttnEx2},
	// The softmax variants (WA_KERNEL_SM lines).
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 2}}, {64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 6}}, {64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 8}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4, deg4: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{intPack: true}}, {64, 256, 128, 2, "plain", wsAttnSoftmax{tree: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4, tree: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4, intPack: true, tree: true}},
	{128, 128, 176, 2, "plain", wsAttnSoftmax{emu: 2}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{desc: true}}, {64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 2, desc: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4, desc: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{onesSum: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{desc: true, onesSum: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 2, desc: true, onesSum: true}},
	{64, 256, 128, 2, "plain", wsAttnSoftmax{emu: 4, desc: true, onesSum: true}},
}

// kernel is the plan's kernel name for mask ("none" or "causal").
func (p wsAttnPlan) kernel(mask string) string {
	return fmt.Sprintf("%v_%s", p, mask)
}

func (p wsAttnPlan) String() string {
	name := fmt.Sprintf("wsattn_d%d_m%d_n%d_s%d_%s", p.d, p.bm, p.bn, p.stages, p.form)
	if sm := p.sm.String(); sm != "" {
		name += "_" + sm
	}
	return name
}

// threads is the plan's block size: bm/64 warpgroups.
func (p wsAttnPlan) threads() int { return 2 * p.bm }

// smem is the dynamic shared memory a block takes: the Q tile, the stages of K and V, with onesSum the tile of
// ones after them, and the 1024 bytes of slack that align them to the swizzle's period (the .cu's layout).
func (p wsAttnPlan) smem() int {
	b := p.bm*p.d*2 + 2*p.stages*p.bn*p.d*2 + 1024
	if p.sm.onesSum {
		b += p.bn * 128
	}
	return b
}

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
		return wsAttnPlan{128, 192, 128, 2, "plain", wsAttnEx2}
	case d == 128:
		return wsAttnPlan{128, 128, 176, 2, "plain", wsAttnEx2}
	case wsAttnSoftmaxOn:
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnD64Softmax}
	default:
		return wsAttnPlan{64, 256, 128, 2, "plain", wsAttnEx2}
	}
}

// wsAttnSoftmaxPending says why wsAttnChoose keeps every exponential on ex2 at d = 64 rather than
// wsAttnD64Softmax; wsAttnSoftmaxOn is whether it takes it (-kernels.pending turns it on, TestMain).
const wsAttnSoftmaxPending = "the polynomial exponentials are not yet timed on a GPU against the ex2 kernel"

var wsAttnSoftmaxOn = wsAttnSoftmaxPending == ""

// wsAttnD64Softmax is the d = 64 default plan's softmax once wsAttnSoftmaxOn.
var wsAttnD64Softmax = wsAttnSoftmax{emu: 4}

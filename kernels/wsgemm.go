package kernels

import (
	"fmt"
	"math"
)

// The GEMM family's Hopper plan: the warp-specialized wgmma + TMA kernels of cuda/wsgemm_sm90a.cu (sm_90a,
// compute capability exactly 9.0). On an H100 or H200 the tensor cores reach their rate only through wgmma;
// the mma.sync kernels of mma.cuh, which every other GPU runs, stay well below it. Which kernel a problem
// gets is decided here, on the CPU, so that a test without a GPU can hold the choice to what the kernels'
// timings showed.

// wgmmaGEMMPending says why the wgmma GEMM would not be chosen: "" since it passed TestCUDAWGMMAGEMM (every
// kernel and the default plan, ragged shapes, nothing written past y) on an H100 and an H200. -kernels.pending
// is no longer needed for it; the tests swap wgmmaGEMMOn to compare.
const wgmmaGEMMPending = ""

// wgmmaGEMMOn is whether the GEMM family's launcher may choose the wgmma kernels.
var wgmmaGEMMOn = wgmmaGEMMPending == ""

// gemmUsesWGMMA reports whether a GEMM on a GPU of compute capability cc runs the wgmma kernels, with the
// pending switch at on: wgmma and setmaxnreg are sm_90a instructions, not forward compatible, so exactly 9.0.
func gemmUsesWGMMA(cc int, on bool) bool { return on && cc == 90 }

// wsPlan is one kernel of cuda/wsgemm_sm90a.cu: 128 × bn output tiles, blocks in clusters of `cluster` (1 or
// 2) whose pair shares w's k-tiles (share 'b': tiles side by side along M) or x's ('a': along N), and the
// persistent loop's tiles taken in groups of `group` tile rows (pairs of rows for share 'b') for L2 reuse.
//
// A store plan (st, the _st kernels: single blocks, bn a multiple of 64) writes its tiles through shared memory
// and the copy engine, overlapping the stores with the next tile's main loop; with tail (64) it also splits the
// last, partial wave of tiles into narrower tiles, at least tail columns wide, with ksplit into parts along K
// summed through an fp32 workspace (wsTailSplit), so that fewer multiprocessors idle while it runs.
type wsPlan struct {
	bn, cluster int
	share       byte // 'a' or 'b' in clusters of 2, 0 without
	group       int
	st          bool
	tail        int
	ksplit      bool
}

// Shape of the kernels (cuda/wsgemm_sm90a.cu: WS_BM, WS_BK, 384 threads: a producer and two consumer
// warpgroups), and the shared memory a block may take on compute capability 9.0 (227 KiB).
const (
	wsBM, wsBK     = 128, 64
	wsThreads      = 384
	wsSmemLimit    = 227 << 10
	wsSmemSlack    = 1024 // the stages' alignment to the swizzle's 1024-byte period
	wsSmemStatic   = 1024 // the barriers, padded to the dynamic array's 1024-byte alignment (ptxas -v)
	wsMaxStages    = 8
	wsDefaultGroup = 8
	wsEpiBytes     = 4 * 64 * 64 * 2 // the store kernels' epilogue boxes: two 64 × 64 bf16 a consumer warpgroup
)

// wsPlans lists every kernel the module holds (WS_KERNEL lines), with the default raster group.
var wsPlans = []wsPlan{
	{256, 1, 0, wsDefaultGroup, false, 0, false}, {256, 2, 'b', wsDefaultGroup, false, 0, false}, {256, 2, 'a', wsDefaultGroup, false, 0, false},
	{232, 1, 0, wsDefaultGroup, false, 0, false}, {232, 2, 'a', wsDefaultGroup, false, 0, false},
	{192, 1, 0, wsDefaultGroup, false, 0, false}, {192, 2, 'b', wsDefaultGroup, false, 0, false},
	{128, 1, 0, wsDefaultGroup, false, 0, false},
	{256, 1, 0, wsDefaultGroup, true, 0, false}, {256, 1, 0, wsDefaultGroup, true, 64, false},
	{192, 1, 0, wsDefaultGroup, true, 0, false}, {192, 1, 0, wsDefaultGroup, true, 64, false},
	{128, 1, 0, wsDefaultGroup, true, 0, false}, {128, 1, 0, wsDefaultGroup, true, 64, false},
	{256, 1, 0, wsDefaultGroup, true, 0, true}, {192, 1, 0, wsDefaultGroup, true, 0, true}, {128, 1, 0, wsDefaultGroup, true, 0, true},
}

// kernel is the plan's kernel name in the module.
func (p wsPlan) kernel() string { return p.kernelAct("") }

// kernelAct is the name of the plan's kernel with epilogue act: "" (none, the GEMM family's), "gelu" or
// "swiglu" (the FFN's FC1: wsgemm_<act>_*, which exist for single blocks only, wsFFNPlans).
func (p wsPlan) kernelAct(act string) string {
	s := ""
	if p.cluster > 1 {
		s = string(p.share)
	}
	if act != "" {
		act += "_"
	}
	if p.st {
		s += "_st"
	}
	return fmt.Sprintf("wsgemm_%sbf16_%dx%d_c%d%s", act, wsBM, p.bn, p.cluster, s)
}

// outCols is how many output columns a tile of the kernel with epilogue act writes: bn, or bn/2 for swiglu (the
// B tile is bn/2 gate rows and bn/2 up rows).
func (p wsPlan) outCols(act string) int {
	if act == "swiglu" {
		return p.bn / 2
	}
	return p.bn
}

func (p wsPlan) String() string {
	s := fmt.Sprintf("%s/g%d", p.kernel(), p.group)
	if p.tail > 0 {
		s += fmt.Sprintf("/t%d", p.tail)
	}
	if p.ksplit {
		s += "/k"
	}
	return s
}

// stages is the depth of the kernel's shared-memory ring: as many (BM + BN) × BK bf16 stages as fit the limit
// beside the alignment slack and a static kilobyte (the barriers, as ptxas lays them out), at most
// wsMaxStages (the .cu's WS_STAGES).
func (p wsPlan) stages() int {
	return min((wsSmemLimit-wsSmemSlack-wsSmemStatic-p.epiBytes())/p.stageBytes(), wsMaxStages)
}

// epiBytes is the shared memory of the store epilogue's boxes (the .cu's WS_EPI_BYTES), 0 without.
func (p wsPlan) epiBytes() int {
	if p.st {
		return wsEpiBytes
	}
	return 0
}

func (p wsPlan) stageBytes() int { return (wsBM + p.bn) * wsBK * 2 }

// smem is the dynamic shared memory a block takes.
func (p wsPlan) smem() int { return p.stages()*p.stageBytes() + p.epiBytes() + wsSmemSlack }

// wsMaxKSplit is the most parts along K a tile of the last wave is split into (each part's accumulators make a
// round trip through the workspace).
const wsMaxKSplit = 4

// wsTailSplit is how the store plan p splits the last wave of an m × n × k GEMM with epilogue act on a grid of
// blocks blocks: the last `tail` tiles (in the kernel's tile order) each become `split` units — with a tail
// width, the narrowest tiles of the kernel's (64 or 128 columns, at least p.tail) that fit one wave (not for
// swiglu, whose tile holds gate and up halves); with ksplit, parts along K, as many as the idle blocks allow,
// at most wsMaxKSplit and the k-tiles — when the last wave is partial and its units fit in one wave; else
// (0, 1). grid is the blocks the launch needs.
func (p wsPlan) wsTailSplit(m, n, k, blocks int, act string) (tail, split, grid int) {
	tiles := p.unitsAct(m, n, act)
	grid = min(tiles, blocks)
	if !p.st || blocks < 1 {
		return 0, 1, grid
	}
	tail = tiles % blocks
	if tiles <= blocks {
		tail = tiles
	}
	switch {
	case tail == 0:
		return 0, 1, grid
	case p.ksplit:
		split = min(blocks/tail, wsMaxKSplit, ceilDiv(k, wsBK))
	case p.tail > 0 && act != "swiglu":
		for nw := p.tail; nw <= 128 && nw < p.bn; nw *= 2 {
			if p.bn%nw == 0 && tail*(p.bn/nw) <= blocks {
				split = p.bn / nw
				break
			}
		}
	default:
		return 0, 1, grid
	}
	if split < 2 || tail*split > blocks {
		return 0, 1, grid
	}
	return tail, split, min(tiles-tail+tail*split, blocks)
}

// wsWorkspace is the bytes of fp32 workspace a split along K takes: a slot of 128 × bn floats a part.
func (p wsPlan) wsWorkspace(tail, split int) int64 {
	return int64(tail) * int64(split) * wsBM * int64(p.bn) * 4
}

// units is how many work units an m × n problem has: tiles, or pairs of tiles in clusters of 2.
func (p wsPlan) units(m, n int) int { return p.unitsAct(m, n, "") }

// unitsAct is units for the kernel with epilogue act, whose tiles are outCols(act) output columns wide.
func (p wsPlan) unitsAct(m, n int, act string) int {
	um, un := ceilDiv(m, wsBM), ceilDiv(n, p.outCols(act))
	switch {
	case p.cluster > 1 && p.share == 'b':
		um = ceilDiv(um, 2)
	case p.cluster > 1:
		un = ceilDiv(un, 2)
	}
	return um * un
}

// wsPlanFor picks the plan of an m × n GEMM on a GPU of sms multiprocessors; the tests swap it.
var wsPlanFor = wsChoosePlan

// wsWidths are the plans the chooser considers, widest first: the store kernels of 256, 192 and 128 columns
// with their last wave split into narrow tiles, and the 232-column kernel (no store kernel: its tile is not
// whole 64-column boxes). No cluster: on an H200 the cluster pairs (each block loading half of the shared
// operand and multicasting it) ran no faster than single blocks on any of the cuda grid's shapes (705 against
// 706 TFLOP/s at 4096³, 655 against 653 at 2048 × 11008 × 4096, 698 against 703 at 2048 × 4096 × 11008): these
// kernels are not short of L2 bandwidth, and a cluster only adds co-scheduling constraints. No split along K:
// it ran no faster than narrow tiles (H100: 102.0% of cuBLASLt's rate against 102.3% at 2048 × 11008 × 4096,
// the FFN's FC2 at 512 tokens 90.7% against 90.2%) and takes an fp32 workspace. The cluster and split-K kernels
// stay in the module for TestCUDAGEMMTune.
var wsWidths = []wsPlan{
	{256, 1, 0, wsDefaultGroup, true, 64, false}, {232, 1, 0, wsDefaultGroup, false, 0, false},
	{192, 1, 0, wsDefaultGroup, true, 64, false}, {128, 1, 0, wsDefaultGroup, true, 64, false},
}

// wsChoosePlan takes the plan of wsWidths that wsCost expects to be fastest. On 132 multiprocessors that is
// the 256-column store kernel at the cuda grid's three shapes: 98%, 102% and 98% of cuBLASLt's rate at 4096³,
// 2048 × 11008 × 4096 and 2048 × 4096 × 11008 on an H100 (TestCUDAGEMMTune; the benchmarks' pct-cublas 99%,
// 102%, 99%), against 89%, 87% (232 columns) and 94% for the kernels storing from registers; 100%, 103% and
// 100% on an H200.
func wsChoosePlan(m, n, sms int) wsPlan { return wsCheapest(wsWidths, "", m, n, sms) }

// wsCost is the time the chooser expects plan p to take on an m × n output with epilogue act on sms
// multiprocessors, in column-waves: a persistent block computes its tiles one after another, so the whole
// waves of tiles take their count × bn (the wgmma work of a tile is proportional to its width; a swiglu tile
// of width bn writes bn/2 columns), and a last wave split into narrow tiles takes what those measured: 1.8 ×
// 64 for tiles of 64 columns (112 of them ended 2048 × 11008 × 4096 in 0.41 of a 256-column wave on an H200,
// 0.5 on an H100), their width for 128. The sum is divided by the plan's measured efficiency (wsEfficiency).
func wsCost(p wsPlan, act string, m, n, sms int) float64 {
	blocks := max(sms/p.cluster, 1)
	tiles := p.unitsAct(m, n, act)
	tail, split, _ := p.wsTailSplit(m, n, math.MaxInt32, blocks, act)
	var c float64
	switch {
	case split > 1 && p.ksplit:
		c = float64((tiles-tail)/blocks*p.bn) + 0.5*float64(p.bn) // H100, 2048 × 11008 × 4096: 4 parts, 0.5 of a wave
	case split > 1:
		nw := p.bn / split
		c = float64((tiles-tail)/blocks*p.bn) + float64(nw)*map[int]float64{64: 1.8, 128: 1}[nw]
	default:
		c = float64(ceilDiv(tiles, blocks) * p.bn)
	}
	return c / wsEfficiency(p)
}

// wsEfficiency is a plan's rate relative to the 256-column store kernel's at equal waves, as TestCUDAGEMMTune
// measured it at 4096³ (H100 and H200 alike within 2%): 0.91 for a kernel storing from registers (688 against
// 761 TFLOP/s on an H100: its epilogue stalls the next tile), × 0.98 for 192-column tiles and × 0.925 for
// 128-column ones (700 against 761: twice the tiles, each reading its A rows again and paying its epilogue).
func wsEfficiency(p wsPlan) float64 {
	e := 1.0
	if !p.st {
		e *= 0.91
	}
	switch {
	case p.bn <= 128:
		e *= 0.925
	case p.bn <= 192:
		e *= 0.98
	}
	return e
}

// wsCheapest is the plan of plans (widest first) that wsCost expects to be fastest for an m × n output with
// epilogue act, the wider of equal costs (fewer tiles, less of w and x read again).
func wsCheapest(plans []wsPlan, act string, m, n, sms int) wsPlan {
	best, bestCost := wsPlan{}, math.Inf(1)
	for _, p := range plans {
		if cost := wsCost(p, act, m, n, sms); cost < bestCost {
			best, bestCost = p, cost
		}
	}
	return best
}

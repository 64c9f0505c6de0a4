package kernels

import "fmt"

// The row_grid plan (sm_90, cuda/rowgrid.cuh), for RMSNorm, LayerNorm, Softmax and CrossEntropy (rowFamily.grid):
// blocks that own columns instead of rows. Every
// block of the launch is resident (a cooperative launch), one a multiprocessor, in `groups` groups of P blocks;
// a group takes every groups-th row, each of its blocks the same slice of every row it takes (up to 2048 16-byte
// packs: 32 KiB), with that slice's column data in registers for the whole launch. A row's P partial statistics
// meet in global memory (tagged slots, no fence, no cluster), and a block waits for them `lag` steps after it made
// its own, while its ring of `ring` rows in shared memory keeps the next rows' loads in flight.
//
// Measured first in a standalone program (scripts/experiments/column-grid.cu, 2026-11-27, driver 580.159.04: the
// template over the suite's Ops, every output compared with a suite kernel's, each timed cold as the suite times
// it), then in TestCUDARowTune on an H100 and an H200 (the same day; pct of the suite's copy, H100 / H200, the
// default plan against the family's plan before it):
//
//   - Softmax fp32 4096×65536, 16 groups of 8 blocks: 95.1 / 95.5% against 94.1 / 90.8% for the ring of 8 × 128;
//   - Softmax fp32 1024×262144, 4 groups of 33: 97.1 / 92.1% against 93.5 / 86.6% for the ring of 16 × 256;
//   - Softmax bf16 1024×262144, 8 groups of 16: 94.2 / 68.5% against 89.0 / 71.2% for the ring of 8 × 256. The
//     slower GPU loses 2.7 points, 20 from its goal either way, for the 5.2 that take the H100 over its goal;
//   - LayerNorm fp32 4096×65536, 16 groups of 8: 95.7 / 87.9% against 93.2 / 86.1% for ring2e;
//   - LayerNorm fp32 1024×262144, 4 groups of 33: 93.6 / 83.6% against 88.2 / 75.6% for the ring;
//   - RMSNorm bf16 1024×262144, 8 groups of 16: 92.2 / 86.7% against 92.2 / 85.3% for ring2.
//
// It lost where a block's work on a row is mostly arithmetic on few bytes — LayerNorm and Softmax bf16 rows of
// 128 KiB (63–71% on the H200 against 91–92% for row_res), LayerNorm bf16 rows of 512 KiB (63.1% there against
// 67.3%), every CrossEntropy and FP8Quant row (57–81% there against 79–104%) — and at RMSNorm fp32 262144 (86.9%
// there, a tie with the ring). Groups whose slices are a half or a quarter of 32 KiB lost everywhere (23–68% on
// the H200, 34–86% on the H100): a step costs about a microsecond beside its bytes (one block barrier, the
// reduction's shuffles, the statistics' merge), which only a slice of 32 KiB hides. A lag of four steps and a ring
// of six rows moved the six rows by at most a point either way. FP8Quant's kernels passed TestCUDARowGrid on both
// GPUs and are not built: besides losing everywhere (75–81% on the H200), nvcc 11.8 compiled them differently from
// run to run (four texts of the module in six compilations), which the check that the committed PTX matches its
// sources cannot hold.

// rowGridPending says why row_grid would not be chosen: "" since its kernels passed TestCUDARowGrid on an H200 and
// an H100 (2026-11-27: the five families, both dtypes, 266 subtests on each).
const rowGridPending = ""

// rowGridOn is whether the choosers may pick row_grid (the tests turn it off to compare).
var rowGridOn = rowGridPending == ""

// Sizes of row_grid, as ROW_GRID_ENTRIES builds it: blocks of rowGridThreads threads, rowGridPacks 16-byte packs
// a thread of a row's slice, up to rowGridMaxBlocks(dtype) blocks a group (the partials warp 0 merges), the ring of
// rowGridRing rows (rowGridRing·32 KiB = 224 KiB, one block a multiprocessor) and the lag rowGridLag.
const (
	rowGridThreads   = 512
	rowGridPacks     = 4
	rowGridRing      = 7
	rowGridLag       = 3
	rowGridMaxBytes  = rowRingMaxBytes
	rowGridSlotBytes = 16 // a GridSlot: a block's partial statistic of a row, tagged
	rowGridCtlBytes  = 16 // the launch counter and the blocks that have left
	rowGridMinLag    = 3  // the kernels load a row's slots two steps before they merge them: lag ≥ 3
)

// rowGridMaxBlocks is how many blocks' partials the kernels of dtype dt merge a row: 64 in fp32, 32 in bf16, whose
// kernels hold one slot a lane of warp 0 rather than two (the registers LayerNorm's bf16 kernel needs for w and b).
func rowGridMaxBlocks(dt DType) int {
	if dt == BF16 {
		return 32
	}
	return 64
}

// rowGridSmem is the dynamic shared memory a block of plan p (row_grid) takes: its ring.
func rowGridSmem(p rowPlan) int { return p.ring * p.threads * p.nv * 16 }

// rowGridBlocks is how many blocks plan p launches on a GPU that holds resident of them at once, and how many of
// them a group has: the most whole groups.
func rowGridBlocks(p rowPlan, resident int) (blocks, perGroup int) {
	if p.groups < 1 {
		return 0, 0
	}
	perGroup = resident / p.groups
	return perGroup * p.groups, perGroup
}

// rowGridCheck says why plan p (kind rowGrid) cannot run case c on a GPU of compute capability cc that holds
// resident of its blocks at once ("" where it can): sm_90, 16-byte packs, the built block and packs, a group of
// at most rowGridMaxBlocks blocks whose slices cover the row, a ring of at least lag + 3 rows in rowGridMaxBytes.
func rowGridCheck(p rowPlan, c Case, cc, resident int) string {
	e := 16 / c.DType.Size()
	_, per := rowGridBlocks(p, resident)
	switch {
	case cc < 90:
		return fmt.Sprintf("built for compute capability 9.0 (this GPU: %d)", cc)
	case !p.vec || c.Cols%e != 0:
		return fmt.Sprintf("%d columns do not allow 16-byte accesses", c.Cols)
	case p.threads != rowGridThreads || p.nv != rowGridPacks:
		return fmt.Sprintf("built for blocks of %d threads × %d packs", rowGridThreads, rowGridPacks)
	case p.lag < rowGridMinLag || p.ring < p.lag+3 || rowGridSmem(p) > rowGridMaxBytes:
		return fmt.Sprintf("a lag of at least %d rows and a ring of at least lag + 3 rows in %d B", rowGridMinLag, rowGridMaxBytes)
	case per < 1:
		return fmt.Sprintf("%d groups of the %d blocks this GPU holds at once", p.groups, resident)
	case per > rowGridMaxBlocks(c.DType):
		return fmt.Sprintf("groups of %d blocks (at most %d in %s)", per, rowGridMaxBlocks(c.DType), c.DType)
	case per*p.threads*p.nv*e < c.Cols:
		return fmt.Sprintf("%d blocks × %d threads × %d do not cover %d columns", per, p.threads, p.nv*e, c.Cols)
	}
	return ""
}

// rowGridPlan is the row_grid plan of case c on a GPU of compute capability cc with sms multiprocessors (one
// block each): the most groups whose blocks' slices of 32 KiB still cover a row. ok is false where no such plan
// runs the case.
func rowGridPlan(c Case, cc, sms int) (p rowPlan, ok bool) {
	p = rowPlan{kind: rowGrid, vec: true, threads: rowGridThreads, nv: rowGridPacks, ring: rowGridRing, lag: rowGridLag}
	need := ceilDiv(c.Cols*c.DType.Size(), p.threads*p.nv*16) // blocks a row takes
	if need < 1 {
		return rowPlan{}, false
	}
	p.groups = sms / need
	return p, p.groups >= 1 && rowGridCheck(p, c, cc, sms) == ""
}

// Where row_grid is chosen (the figures at the top of the file): Softmax fp32 rows of 256 KiB and more and bf16
// rows of 512 KiB, LayerNorm fp32 rows of 256 KiB and more, RMSNorm bf16 rows of 512 KiB.
func softmaxGridWins(c Case) bool {
	return c.DType == FP32 && c.Cols*4 >= 256<<10 || c.DType == BF16 && c.Cols*2 >= 512<<10
}
func layerNormGridWins(c Case) bool { return c.DType == FP32 && c.Cols*4 >= 256<<10 }
func rmsNormGridWins(c Case) bool   { return c.DType == BF16 && c.Cols*2 >= 512<<10 }

// withRowGrid is chooser choose, but where wins says row_grid wins the case, rowGridOn allows it and the GPU
// runs it (rowGridPlan), that plan.
func withRowGrid(choose func(c Case, cc, sms int) rowPlan, wins func(Case) bool) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if rowGridOn && wins != nil && wins(c) {
			if p, ok := rowGridPlan(c, cc, sms); ok {
				return p
			}
		}
		return choose(c, cc, sms)
	}
}

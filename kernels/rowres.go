package kernels

import "fmt"

// The row_res plan (sm_90, cuda/rowres.cuh), for RMSNorm, LayerNorm and Softmax: persistent blocks of `group` teams
// of `threads` threads, as many blocks as the GPU runs at once (capped by the rows), each team a row at a time with
// nv 16-byte packs a thread in registers, the team's partial statistics meeting behind one named barrier a row.
// Against one block a row it launches no block a row and, for the families with column data (RMSNorm's w,
// LayerNorm's w and b), need not read that data again for every row: mode says whether it is read from L2 for
// every row all the same (rowResGlobal, the only mode built for Softmax), staged once a block in shared memory
// (rowResShared) or held in registers (rowResRegisters). ahead says whether a team's next row is loaded before this
// row's stores, and shared where: into a second set of registers, or (shared) into shared memory by cp.async as
// soon as this row has been read from there, so that its loads are in flight during the row's reduction and stores
// too, with no second set of registers.
//
// Measured first in a standalone program (scripts/experiments/resident-columns.cu: the suite's kernels from the
// committed PTX against the same template over the same Ops, every output compared, each kernel timed cold as the
// suite times it), then in TestCUDARowTune on an H100 and an H200 (2026-11-27, driver 580.159.04; pct of the
// suite's copy, H100 / H200, row_res against the family's choice before it):
//
//   - RMSNorm bf16 4096×65536, one team of 1024 threads, w in shared memory: 93.8 / 93.6% against 93.5 / 87.9% for
//     two rows a pass (ring2). Persistence is most of it: w read from L2 for every row gives 94.0 / 89.5%;
//   - RMSNorm fp32 8192×16384, a team of 512 threads, w in shared memory: 95.4 / 95.7% against 98.9 / 91.6% for one
//     block a row. The GPUs disagree; the plan whose slower GPU is faster is taken, the H100 staying at its 95% goal
//     (the standalone program: 94.8–95.3% there);
//   - LayerNorm bf16 8192×16384, a team of 512 threads, 4 packs a thread, w and b in shared memory, the next row
//     ahead: 93.6 / 92.4% against 88.9 / 88.7% for the loop kernel (no longer chosen: the block holding the row
//     beat it once its packs left in one store each, layerNormChoosePlan);
//   - LayerNorm bf16 4096×65536, one team of 1024 threads, w and b read from L2 for every row (the 256 KiB of them
//     do not fit a block's shared memory): 93.0 / 84.3% against 93.9 / 80.3% for one block a row.
//
// Elsewhere the families' plans stayed: LayerNorm fp32 8192×16384 (row_res at best 94.2 / 93.9% with w and b in
// registers, against 98.4 / 92.2%: the H100 would fall below its goal), RMSNorm bf16 and LayerNorm bf16 at 4096
// and 16384 columns where they are held (row_res 2–6 points below on the H200), fp32 rows of 4096 columns (6–12
// points below there), and every row of 4096 columns in the teams of 1024 and 512 threads (23–84%). Softmax bf16
// 4096×65536, which has no column data, ran 82.6–82.9% in the standalone program against 87.3–87.8% for its block
// on an H200.
//
// The next row in shared memory (ahead, shared) came next: a bf16 row of 128 KiB takes a multiprocessor's team of
// 512 threads × 16 packs or 1024 × 8 once, so it had no next row ahead, and its team loaded, then reduced, then
// stored. Measured first in scripts/experiments/shared-ahead.cu, then in TestCUDARowTune (2026-11-27, driver
// 580.159.04; pct of the suite's copy, H100 / H200, against the plan before it):
//
//   - Softmax bf16 4096×65536, one team of 512 threads, 16 packs: 92.9 / 91.8% against 92.9 / 86.8% for one block
//     of 1024 threads a row (no longer chosen: once that block wrote its packs in one store each it ran 98.3 /
//     93.4% against 92.8 / 92.7%, so Softmax takes no row_res plan; its kernels stay built for TestCUDARowTune);
//   - LayerNorm bf16 4096×65536, one team of 1024 threads, w and b from L2: 94.0 / 91.7% against 93.1 / 87.8% for
//     row_res without the next row;
//   - LayerNorm fp32 8192×16384, a team of 512 threads, w and b from L2: 96.1 / 96.0% against 98.3 / 94.3% for one
//     block a row (the slower GPU's figure decides; the H100 stays above its 95% goal).
//
// Not taken: LayerNorm bf16 8192×16384 in 512 threads with w and b staged (93.1 / 91.1% against 93.5 / 92.2% with
// the next row in registers) and 32768×4096 in teams of 4 × 128 (93.5 / 90.2% against 95.3 / 92.6% for the block),
// Softmax at 4096 and 16384 columns (13–94% against 97–100%). A prefetch of the row after the next into L2 cost
// 5–25 points in the standalone program; the 16-bit exponentials of half-exps.cu (scripts/experiments) 0.1–0.4
// points there on the H200, not taken. Nor the cross-entropy over the same template (its Op's context reading the
// row's label, its apply fixing the label's column and writing the loss; TestCUDARowRes passed it on an H200): bf16
// 4096×65536 77.9% against 88.8% for row_dsmem there, fp32 8192×16384 83.8% against 104.3% for the block. Making
// each row's context when its loads are issued, a row ahead (LayerNorm's shift, the label), cost more still
// (LayerNorm bf16 4096×65536 91.7 → 88.1%, the cross-entropy 77.9 → 73.9%), so neither is built.
//
// Nor does a cluster of such teams take the wider rows. row_res_cluster (in the standalone programs only: a row over
// a cluster of 2–16 blocks of one team each, their statistics meeting through distributed shared memory behind
// one cluster barrier a row, the next row ahead) lost on an H200 to every chosen plan (2026-11-27, cold pct-copy of
// the program, two rounds, against the H200 baseline of e5442a2): RMSNorm fp32 1024×262144 84.6–84.8% in 16 × 512
// threads with w staged (59.2–60.0% in 16 × 1024, of which only 7 clusters run at once; ring 86.5%), bf16 79.7–81.0%
// (ring2 85.4%), LayerNorm fp32 4096×65536 84.3–84.4% (ring2e 86.0%), bf16 81.1–81.3% (row_res 87.3%), fp32
// 1024×262144 50.0% (ring 75.2%), bf16 66.6–66.9% (the cluster holding the row 66.5%), and Softmax, with nothing to
// stage, 39.6–67.6% against 71.4–90.8%. Staging the column data was worth 6–19 points in all but RMSNorm fp32 in
// 16 × 1024 threads (within a point there, bound by its 7 clusters). With each block's next slice in shared memory
// (shared-ahead.cu) it lost as well: 62–84% at 65536 and 262144 columns against 75–91% for the rings, but for
// LayerNorm bf16 1024×262144 (72.0–72.3% against 66.5%, far from the goal). What held it back was the barrier
// (its release waits for the loads ahead): with the exchange by st.async instead it beat every chosen plan at rows
// of 128 KiB to 1 MiB (rowXARes, below).

// Where row_res keeps the column data.
const (
	rowResGlobal    = 0
	rowResShared    = 1
	rowResRegisters = 2
)

// rowResBuilt are the configurations cuda/rowres.cuh builds (ROW_RES_DTYPE), each in both dtypes for every family
// with column data: nv, threads (a team), group, mode, ahead and shared set, kind and vec not. The last five load
// the next row into shared memory (ahead, shared), the first two of them also built for the families without
// column data (rowResPlain).
var rowResBuilt = append([]rowPlan{
	{nv: 8, threads: 1024, group: 1, mode: rowResGlobal},
	{nv: 8, threads: 1024, group: 1, mode: rowResShared},
	{nv: 8, threads: 512, group: 1, mode: rowResShared},
	{nv: 8, threads: 512, group: 1, mode: rowResRegisters},
	{nv: 4, threads: 512, group: 1, mode: rowResShared, ahead: true},
	{nv: 8, threads: 256, group: 1, mode: rowResShared, ahead: true},
	{nv: 4, threads: 128, group: 2, mode: rowResRegisters, ahead: true},
	{nv: 8, threads: 64, group: 8, mode: rowResShared, ahead: true},
	{nv: 2, threads: 256, group: 2, mode: rowResShared},
}, append(rowResPlain,
	rowPlan{nv: 8, threads: 512, group: 1, mode: rowResGlobal, ahead: true, shared: true},
	rowPlan{nv: 4, threads: 512, group: 1, mode: rowResShared, ahead: true, shared: true},
	rowPlan{nv: 4, threads: 128, group: 4, mode: rowResShared, ahead: true, shared: true},
)...)

// rowResPlain are the configurations cuda/rowres.cuh builds for every family (ROW_RES_PLAIN_DTYPE): one team a
// block holding a bf16 row of 128 KiB, the next row in shared memory, no column data kept.
var rowResPlain = []rowPlan{
	{nv: 8, threads: 1024, group: 1, mode: rowResGlobal, ahead: true, shared: true},
	{nv: 16, threads: 512, group: 1, mode: rowResGlobal, ahead: true, shared: true},
}

// rowResBuiltFor are the row_res configurations of family rf's _sm90 module: rowResBuilt for the families with
// column data, rowResPlain for those with resPlain, none for the others.
func rowResBuiltFor(rf *rowFamily) []rowPlan {
	switch {
	case rf.columns > 0:
		return rowResBuilt
	case rf.resPlain:
		return rowResPlain
	}
	return nil
}

// rowResPending says why row_res would not be chosen: "" since its kernels passed TestCUDARowRes on an H100 and an
// H200 (2026-11-27: every built configuration, both dtypes, 4096–65536 columns; 299 subtests with the next row in
// shared memory and Softmax's).
const rowResPending = ""

// rowResOn is whether the choosers may pick row_res (the tests turn it off to compare).
var rowResOn = rowResPending == ""

// rowResMaxBytes is the most dynamic shared memory a row_res block stages its column data in (as row_ring's).
const rowResMaxBytes = rowRingMaxBytes

// rowResSmem is the dynamic shared memory a block of plan p (row_res) of family rf takes for case c: with the
// column data in shared memory, each thread's packs of every column vector (16 bytes each; all nv of them where
// the next rows follow, and in a cluster's blocks), and with the next row in shared memory, nv packs of each
// thread of each team.
func rowResSmem(rf *rowFamily, p rowPlan, c Case) int {
	e, n := 16/c.DType.Size(), 0
	next := p.ahead && p.shared
	switch {
	case p.mode == rowResShared && (next || p.cluster > 1):
		n = p.nv * rf.columns * p.threads * 16
	case p.mode == rowResShared:
		n = ceilDiv(ceilDiv(c.Cols, e), p.threads) * rf.columns * p.threads * 16
	}
	if next {
		n += p.group * p.nv * p.threads * 16
	}
	return n
}

// rowResCheck says why plan p (kind rowRes) is not one family rf can run for case c on compute capability cc (""
// where it is): a configuration built for the family (rowResBuiltFor), sm_90, 16-byte packs, a team that covers
// the row, its shared memory within rowResMaxBytes.
func rowResCheck(rf *rowFamily, p rowPlan, c Case, cc int) string {
	q := p
	q.kind, q.vec = 0, false
	built := false
	for _, b := range rowResBuiltFor(rf) {
		built = built || b == q
	}
	e := 16 / c.DType.Size()
	switch {
	case len(rowResBuiltFor(rf)) == 0:
		return "row_res is not built for this family"
	case !built:
		return "not a configuration cuda/rowres.cuh builds"
	case cc < 90:
		return fmt.Sprintf("built for compute capability 9.0 (this GPU: %d)", cc)
	case !p.vec || c.Cols%e != 0:
		return fmt.Sprintf("%d columns do not allow 16-byte accesses", c.Cols)
	case p.threads*p.nv*e < c.Cols:
		return fmt.Sprintf("a team of %d threads × %d does not cover %d columns", p.threads, p.nv*e, c.Cols)
	case rowResSmem(rf, p, c) > rowResMaxBytes:
		return fmt.Sprintf("%d B of column data a block (at most %d)", rowResSmem(rf, p, c), rowResMaxBytes)
	}
	return ""
}

// rowXARes: row_res_cluster (cuda/rowres.cuh), in the _x_sm90a modules of RMSNorm and LayerNorm, which stage their
// column data in shared memory: a row over a cluster of 2–16 blocks of 512 threads, 8 packs a thread in registers, as
// many clusters as the GPU runs at once, each block the same slice of every row its cluster takes. The blocks'
// statistics meet by st.async (rowXA), and each block's slice of the next row is loaded into a second set of registers
// as soon as this row's local statistic is taken, so those loads are in flight through the exchange and the stores.
// With the barriers' exchange (PTX 7.8) it lost everywhere (above: the barrier's release waits for the loads ahead).
// Measured first in scripts/experiments/cluster-resident.cu (NVIDIA H200, 2026-11-27, pct of the copy, cold, two
// rounds): RMSNorm bf16 1024 × 262144 in 8 × 512 97.2–97.3% (row_grid 87.9% in the baseline), fp32 in 16 × 512
// 95.7–95.8% (row_ring 87.1%), LayerNorm bf16 1024 × 262144 in 8 × 512 94.1–94.5% (79.7%), fp32 in 16 × 512 96.8–97.2%
// (83.9%), LayerNorm bf16 4096 × 65536 in 2 × 512 97.1–97.2% (91.3%), fp32 in 4 × 512 96.5–96.7% (88.3%); with the next
// row loaded after the stores or into shared memory 64–91%, and with the column data read from L2 for every row 74–95%.
// Without column data to keep it lost (TestCUDARowTune, H200, the smallest cluster that holds the row): Softmax 84–94%
// against 93–101% for the chosen plans, the cross-entropy (its Op over the same template: the label's column and the
// loss by the thread that holds it) bf16 72–85% against 97–103%, fp32 1024 × 262144 83.3% against 82.8% for row_ring
// and 89.1% for the cluster of 16 (rowXACluster16, of 512 threads then), so neither is built.
const (
	rowXAResThreads = 512
	rowXAResNV      = 8
)

// rowXAResClusters are the cluster sizes built (ROW_RESC_DTYPE).
var rowXAResClusters = []int{2, 4, 8, 16}

// hasXARes is whether family rf's _x_sm90a module has row_res_cluster kernels.
func (rf *rowFamily) hasXARes() bool { return rf.xaRes }

// rowXAResPlan is the row_res_cluster plan of a cluster of cs blocks: the one configuration built (the column data
// staged in shared memory, the next row ahead in registers, the st.async exchange).
func rowXAResPlan(cs int) rowPlan {
	return rowPlan{kind: rowRes, vec: true, nv: rowXAResNV, threads: rowXAResThreads, group: 1, mode: rowResShared,
		ahead: true, xa: true, cluster: cs}
}

// rowXAResCheck says why plan p (kind rowRes, cluster > 1) is not one family rf can run for case c on compute
// capability cc ("" where it is): a configuration built for the family, sm_90 exactly (sm_90a PTX), 16-byte
// packs, a cluster that covers the row, the column data within rowResMaxBytes.
func rowXAResCheck(rf *rowFamily, p rowPlan, c Case, cc int) string {
	e := 16 / c.DType.Size()
	built := false
	for _, cs := range rowXAResClusters {
		built = built || p.cluster == cs
	}
	want := rowXAResPlan(p.cluster)
	switch {
	case !rf.hasXARes():
		return "row_res_cluster is not built for this family"
	case !built || p != want:
		return fmt.Sprintf("not a configuration cuda/rowres.cuh builds (%v)", want)
	case cc != 90:
		return fmt.Sprintf("built for compute capability 9.0 in sm_90a PTX (this GPU: %d)", cc)
	case c.Cols%e != 0:
		return fmt.Sprintf("%d columns do not allow 16-byte accesses", c.Cols)
	case p.cluster*p.threads*p.nv*e < c.Cols:
		return fmt.Sprintf("a cluster of %d × %d threads × %d does not cover %d columns", p.cluster, p.threads, p.nv*e, c.Cols)
	case rowResSmem(rf, p, c) > rowResMaxBytes:
		return fmt.Sprintf("%d B of column data a block (at most %d)", rowResSmem(rf, p, c), rowResMaxBytes)
	}
	return ""
}

// rowXAResPlans lists family rf's row_res_cluster plans that run case c, smallest cluster first.
func rowXAResPlans(rf *rowFamily, c Case) []rowPlan {
	var ps []rowPlan
	for _, cs := range rowXAResClusters {
		p := rowXAResPlan(cs)
		if rowXAResCheck(rf, p, c, 90) == "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// rowXARes is family rf's row_res_cluster plan for case c on compute capability cc: the smallest cluster that
// holds the row.
func rowXARes(rf *rowFamily, c Case, cc int) (rowPlan, bool) {
	ps := rowXAResPlans(rf, c)
	if len(ps) == 0 || cc != 90 {
		return rowPlan{}, false
	}
	return ps[0], true
}

// rowResPlans lists the row_res plans of family rf for case c: every configuration built for it that can run it.
func rowResPlans(rf *rowFamily, c Case) []rowPlan {
	var ps []rowPlan
	for _, b := range rowResBuiltFor(rf) {
		p := b
		p.kind, p.vec = rowRes, true
		if rowResCheck(rf, p, c, 90) == "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// rmsNormRes is RMSNorm's row_res plan where it wins: bf16 rows of 128 KiB (65536 columns) in one team of 1024
// threads and fp32 rows of 64 KiB (16384 columns) in one of 512, 8 packs a thread, w in shared memory.
func rmsNormRes(c Case, cc int) (rowPlan, bool) {
	p := rowPlan{kind: rowRes, vec: true, nv: 8, group: 1, mode: rowResShared}
	switch {
	case c.DType == BF16 && c.Cols*2 == 128<<10:
		p.threads = 1024
	case c.DType == FP32 && c.Cols*4 == 64<<10:
		p.threads = 512
	default:
		return rowPlan{}, false
	}
	return p, rowResCheck(rmsNormRows, p, c, cc) == ""
}

// layerNormRes is LayerNorm's row_res plan where it wins: fp32 rows of 64 KiB (16384 columns) in teams of 512
// threads, 8 packs a thread, and bf16 rows of 128 KiB (65536) in one team of 1024, 8 packs, each with w and b from
// L2 and the next row ahead in shared memory. (bf16 rows of 32 KiB took teams of 512 threads, 4 packs, w and b in
// shared memory, the next row ahead in registers, until the block holding the row wrote its packs in one store
// each: it then beat them, see layerNormChoosePlan.)
func layerNormRes(c Case, cc int) (rowPlan, bool) {
	var p rowPlan
	switch {
	case c.DType == FP32 && c.Cols*4 == 64<<10:
		p = rowPlan{kind: rowRes, vec: true, nv: 8, threads: 512, group: 1, mode: rowResGlobal, ahead: true, shared: true}
	case c.DType == BF16 && c.Cols*2 == 128<<10:
		p = rowPlan{kind: rowRes, vec: true, nv: 8, threads: 1024, group: 1, mode: rowResGlobal, ahead: true, shared: true}
	default:
		return rowPlan{}, false
	}
	return p, rowResCheck(layerNormRows, p, c, cc) == ""
}

// withRowRes is chooser choose, but where plan gives the family's row_res plan of the case (it wins there) and
// rowResOn allows it, that plan.
func withRowRes(choose func(c Case, cc, sms int) rowPlan, plan func(Case, int) (rowPlan, bool)) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if rowResOn {
			if p, ok := plan(c, cc); ok {
				return p
			}
		}
		return choose(c, cc, sms)
	}
}

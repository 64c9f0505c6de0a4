package kernels

import "fmt"

// The row_res plan (sm_90, cuda/rowres.cuh), for the families with column data (RMSNorm's w, LayerNorm's w and
// b): persistent blocks of `group` teams of `threads` threads, as many blocks as the GPU runs at once (capped by
// the rows), each team a row at a time with nv 16-byte packs a thread in registers, the team's partial statistics
// meeting behind one named barrier a row. Against one block a row it launches no block a row and need not read the
// column data again for every row: mode says whether that data is read from L2 for every row all the same
// (rowResGlobal), staged once a block in shared memory (rowResShared) or held in registers (rowResRegisters), and
// ahead whether a team's next row is loaded before this row's stores.
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
//     ahead: 93.6 / 92.4% against 88.9 / 88.7% for the loop kernel;
//   - LayerNorm bf16 4096×65536, one team of 1024 threads, w and b read from L2 for every row (the 256 KiB of them
//     do not fit a block's shared memory): 93.0 / 84.3% against 93.9 / 80.3% for one block a row.
//
// Elsewhere the families' plans stay: LayerNorm fp32 8192×16384 (row_res at best 94.2 / 93.9% with w and b in
// registers, against 98.4 / 92.2%: the H100 would fall below its goal), RMSNorm bf16 and LayerNorm bf16 at 4096
// and 16384 columns where they are held (row_res 2–6 points below on the H200), fp32 rows of 4096 columns (6–12
// points below there), and every row of 4096 columns in the teams of 1024 and 512 threads (23–84%). Softmax bf16 4096×65536, which has no
// column data, ran 82.6–82.9% in the standalone program against 87.3–87.8% for its block on an H200, so the
// families without column data have no row_res kernels.
//
// Nor does a cluster of such teams take the wider rows. row_res_cluster (in the standalone program only: a row over
// a cluster of 2–16 blocks of one team each, their statistics meeting through distributed shared memory behind
// one cluster barrier a row, the next row ahead) lost on an H200 to every chosen plan (2026-11-27, cold pct-copy of
// the program, two rounds, against the H200 baseline of e5442a2): RMSNorm fp32 1024×262144 84.6–84.8% in 16 × 512
// threads with w staged (59.2–60.0% in 16 × 1024, of which only 7 clusters run at once; ring 86.5%), bf16 79.7–81.0%
// (ring2 85.4%), LayerNorm fp32 4096×65536 84.3–84.4% (ring2e 86.0%), bf16 81.1–81.3% (row_res 87.3%), fp32
// 1024×262144 50.0% (ring 75.2%), bf16 66.6–66.9% (the cluster holding the row 66.5%), and Softmax, with nothing to
// stage, 39.6–67.6% against 71.4–90.8%. Staging the column data was worth 6–19 points in all but RMSNorm fp32 in
// 16 × 1024 threads (within a point there, bound by its 7 clusters).

// Where row_res keeps the column data.
const (
	rowResGlobal    = 0
	rowResShared    = 1
	rowResRegisters = 2
)

// rowResBuilt are the configurations cuda/rowres.cuh builds (ROW_RES_DTYPE), each in both dtypes for every family
// with column data: nv, threads (a team), group, mode and ahead set, kind and vec not.
var rowResBuilt = []rowPlan{
	{nv: 8, threads: 1024, group: 1, mode: rowResGlobal},
	{nv: 8, threads: 1024, group: 1, mode: rowResShared},
	{nv: 8, threads: 512, group: 1, mode: rowResShared},
	{nv: 8, threads: 512, group: 1, mode: rowResRegisters},
	{nv: 4, threads: 512, group: 1, mode: rowResShared, ahead: true},
	{nv: 8, threads: 256, group: 1, mode: rowResShared, ahead: true},
	{nv: 4, threads: 128, group: 2, mode: rowResRegisters, ahead: true},
	{nv: 8, threads: 64, group: 8, mode: rowResShared, ahead: true},
	{nv: 2, threads: 256, group: 2, mode: rowResShared},
}

// rowResPending says why row_res would not be chosen: "" since its kernels passed TestCUDARowRes on an H100 and an
// H200 (2026-11-27: every built configuration, both dtypes, both families, 4096–65536 columns).
const rowResPending = ""

// rowResOn is whether the choosers may pick row_res (the tests turn it off to compare).
var rowResOn = rowResPending == ""

// rowResMaxBytes is the most dynamic shared memory a row_res block stages its column data in (as row_ring's).
const rowResMaxBytes = rowRingMaxBytes

// rowResSmem is the dynamic shared memory a block of plan p (row_res) of family rf takes for case c: with the
// column data in shared memory, each thread's packs of every column vector (16 bytes each), else none.
func rowResSmem(rf *rowFamily, p rowPlan, c Case) int {
	if p.mode != rowResShared {
		return 0
	}
	e := 16 / c.DType.Size()
	return ceilDiv(ceilDiv(c.Cols, e), p.threads) * rf.columns * p.threads * 16
}

// rowResCheck says why plan p (kind rowRes) is not one family rf can run for case c on compute capability cc (""
// where it is): a built configuration (rowResBuilt) of a family with column data, sm_90, 16-byte packs, a team that
// covers the row, its shared memory within rowResMaxBytes.
func rowResCheck(rf *rowFamily, p rowPlan, c Case, cc int) string {
	q := p
	q.kind, q.vec = 0, false
	built := false
	for _, b := range rowResBuilt {
		built = built || b == q
	}
	e := 16 / c.DType.Size()
	switch {
	case rf.columns == 0:
		return "row_res is built for the families with column data"
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

// rowResPlans lists the row_res plans of family rf for case c: every built configuration that can run it.
func rowResPlans(rf *rowFamily, c Case) []rowPlan {
	var ps []rowPlan
	for _, b := range rowResBuilt {
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

// layerNormRes is LayerNorm's row_res plan where it wins: bf16 rows of 32 KiB (16384 columns) in teams of 512
// threads, 4 packs a thread, w and b in shared memory, the next row ahead; bf16 rows of 128 KiB (65536) in one team
// of 1024, 8 packs a thread, w and b from L2.
func layerNormRes(c Case, cc int) (rowPlan, bool) {
	var p rowPlan
	switch {
	case c.DType == BF16 && c.Cols*2 == 32<<10:
		p = rowPlan{kind: rowRes, vec: true, nv: 4, threads: 512, group: 1, mode: rowResShared, ahead: true}
	case c.DType == BF16 && c.Cols*2 == 128<<10:
		p = rowPlan{kind: rowRes, vec: true, nv: 8, threads: 1024, group: 1, mode: rowResGlobal}
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

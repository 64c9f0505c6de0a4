package kernels

import "fmt"

// Row plans: how the fused GPU kernels of the five row families (RMSNorm, LayerNorm, Softmax, CrossEntropy,
// FP8Quant scale=row) cover a rows × cols case. A row is reduced to a statistic and then mapped, so the plan's
// question is where the row waits between the two: in one warp's, one block's or one cluster's registers (read
// once), in a cluster's distributed shared memory (row_dsmem, read once), or nowhere (the streaming kernels read
// it twice, the second time mostly from L2). The choice is plain Go over (case, compute capability,
// multiprocessors), one chooser shared by the families, each adjusting only the wide rows it measured otherwise;
// TestRowPlanChoices pins every choice on the CUDA grid and the correctness shapes.

// rowKind is how a fused row kernel covers the rows.
type rowKind uint8

const (
	rowWarp    rowKind = iota // one warp for `rows` rows at once (rows of at most 32·nv accesses)
	rowLanes                  // a team of `lanes` lanes per row, 256/lanes rows a 256-thread block
	rowBlock                  // one block per row, the row in registers
	rowTeam                   // RMSNorm: `team` blocks per row meeting through global memory, all resident
	rowCluster                // sm_90: a thread-block cluster of `cluster` blocks per row, the row in registers
	rowCStream                // sm_90: a cluster of `cluster` blocks per row, each streaming its share twice
	rowLoop                   // one block per row of any width, reading it twice
	rowDSMEM                  // sm_90: a cluster of up to 16 blocks holding the row in distributed shared memory
	rowRing                   // sm_90: persistent clusters of 1–16 blocks, each a ring of chunks in shared memory
	rowRes                    // sm_90: persistent blocks of `group` teams, a team a row in registers (row_res)
	rowGrid                   // sm_90: every block resident, in `groups` groups, each block a slice of its group's rows
)

// rowPlan is one way to run a row kernel: blocks of threads threads, vec: 16-byte accesses (else one element per
// access), nv accesses per thread (warp, lanes, block, team, cluster: the row's share in registers; loop,
// cstream: in flight).
type rowPlan struct {
	kind    rowKind
	rows    int  // warp: rows per warp
	lanes   int  // lanes: lanes per row (1 … 32)
	cluster int  // cluster, cstream, dsmem, ring, res (xa only: rowXARes): blocks per row
	ring    int  // ring: chunks of a block's ring (rowRingChunkBytes each)
	pass    int  // ring: rows a pass, 0 (one: row_ring) or 2 (two: row_ring2, the <prefix>_ring2_ kernels)
	early   bool // ring, two rows a pass: a pass's first column data loaded before the exchange (<prefix>_ring2e_)
	group   int  // res: teams of `threads` threads a block, a row each
	mode    int  // res: where the column data waits (rowResGlobal, rowResShared, rowResRegisters)
	ahead   bool // res: a team's next row loaded before this row's stores
	shared  bool // res, with ahead: that row loaded into shared memory (cp.async), not a second set of registers
	groups  int  // grid: groups of blocks, each taking every groups-th row (ring: rows in a block's ring)
	lag     int  // grid: steps a block makes between publishing a row's partial and merging the row's partials
	lead    int  // block (sm_90, 16-byte packs): each pack's column data loaded lead packs ahead of its store (rowLead)
	xa      bool // cluster (sm_90): the cluster exchange by st.async, from the family's _x_sm90a module (rowXA)
	vec     bool
	nv      int
	threads int
}

// rowFamily is what the shared row code needs of a family: how its kernels are named and where they are.
type rowFamily struct {
	prefix string  // kernel names: <prefix>_<kind>_<dtype>_…
	short  rowKind // rows of up to 32 threads' worth: rowWarp (several rows a warp) or rowLanes (a team a row)
	// block and loop are the words naming the block and loop kernels (RMSNorm's block is a team of one, the
	// cross-entropy's loop a "stream").
	block, loop string
	// sm90All: every fused kernel is also compiled for compute_90 into <module>_sm90 (bf16 rounded two at a
	// time there), and the launcher takes them from it on sm_90; else that module holds the clusters alone.
	sm90All bool
	// ring2: the family's _sm90 module has the row_ring kernels of two rows a pass (<prefix>_ring2_<dtype>_v,
	// 16-byte packs only): the families with column data, whose ring loads it once for both rows.
	ring2 bool
	// columns is how many vectors of column data the family's Op reads (RMSNorm's w: 1; LayerNorm's w and b: 2);
	// the families that have any have the row_res kernels (rowResBuilt) in their _sm90 module.
	columns int
	// resPlain: the family's _sm90 module has the row_res kernels that keep no column data (rowResPlain).
	resPlain bool
	// grid: the family's _sm90 module has the row_grid kernels (<prefix>_grid_<dtype>_v; rowgrid.go).
	grid bool
	// leads: the one-block-a-row kernels of the family's _sm90 module that load the column data ahead (rowLead).
	leads []rowLead
	// xaCluster: the family's cluster kernels (rowCluster) are in its _x_sm90a module too, exchanging by st.async
	// (rowXA).
	xaCluster bool
	// xaRes: the family's _x_sm90a module has row_res_cluster kernels (rowXARes).
	xaRes bool
	// xaCluster16: the family's _x_sm90a module has the fp32 cluster of 16 blocks of 256 threads (rowXACluster16).
	xaCluster16 bool
}

var (
	rmsNormRows = &rowFamily{prefix: "rmsnorm", short: rowWarp, block: "team", loop: "loop", ring2: true, columns: 1, grid: true,
		leads: []rowLead{{BF16, 64, 2}, {BF16, 256, 3}, {FP32, 128, 8}}, xaCluster: true, xaRes: true}
	layerNormRows = &rowFamily{prefix: "layernorm", short: rowWarp, block: "block", loop: "loop", sm90All: true, ring2: true, columns: 2, grid: true,
		leads: []rowLead{{BF16, 64, 4}, {BF16, 256, 3}, {FP32, 128, 8}}, xaCluster: true, xaRes: true}
	softmaxRows      = &rowFamily{prefix: "softmax", short: rowWarp, block: "block", loop: "loop", sm90All: true, resPlain: true, grid: true, xaCluster: true}
	crossEntropyRows = &rowFamily{prefix: "xent", short: rowLanes, block: "block", loop: "stream", sm90All: true, grid: true, xaCluster: true, xaCluster16: true}
	fp8QuantRows     = &rowFamily{prefix: "fp8_row", short: rowLanes, block: "block", loop: "stream", sm90All: true, xaCluster: true}
)

// kernel is plan p's entry point in the family's modules for storage dtype dt.
func (rf *rowFamily) kernel(p rowPlan, dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch p.kind {
	case rowWarp:
		return fmt.Sprintf("%s_warp_%s_%s%dr%d", rf.prefix, d, v, p.nv, p.rows)
	case rowLanes:
		return fmt.Sprintf("%s_team_%s_%s%dl%d", rf.prefix, d, v, p.nv, p.lanes)
	case rowBlock:
		if p.lead > 0 {
			return fmt.Sprintf("%s_blocka_%s_v%dt%da%d", rf.prefix, d, p.nv, p.threads, p.lead)
		}
		return fmt.Sprintf("%s_%s_%s_%s%d", rf.prefix, rf.block, d, v, p.nv)
	case rowTeam:
		return fmt.Sprintf("%s_team_%s_%s%d", rf.prefix, d, v, p.nv)
	case rowCluster:
		return fmt.Sprintf("%s_cluster_%s_v%d_c%d", rf.prefix, d, p.nv, p.cluster)
	case rowCStream:
		return fmt.Sprintf("%s_cstream_%s_c%d", rf.prefix, d, p.cluster)
	case rowDSMEM:
		return fmt.Sprintf("%s_dsmem_%s_%s", rf.prefix, d, v)
	case rowRing:
		if p.pass == 2 && p.early {
			return fmt.Sprintf("%s_ring2e_%s_%s", rf.prefix, d, v)
		}
		if p.pass == 2 {
			return fmt.Sprintf("%s_ring2_%s_%s", rf.prefix, d, v)
		}
		return fmt.Sprintf("%s_ring_%s_%s", rf.prefix, d, v)
	case rowRes:
		if p.cluster > 1 {
			return fmt.Sprintf("%s_resc_%s_v%dt%dc%dm%d", rf.prefix, d, p.nv, p.threads, p.cluster, p.mode)
		}
		suffix, _ := p.resAhead()
		return fmt.Sprintf("%s_res_%s_v%dt%dg%dm%d%s", rf.prefix, d, p.nv, p.threads, p.group, p.mode, suffix)
	case rowGrid:
		return fmt.Sprintf("%s_grid_%s_%s", rf.prefix, d, v)
	}
	return fmt.Sprintf("%s_%s_%s_%s", rf.prefix, rf.loop, d, v)
}

func (p rowPlan) String() string {
	if p.xa {
		q := p
		q.xa = false
		return q.String() + " xa"
	}
	v := map[bool]string{true: "v", false: "s"}[p.vec]
	switch p.kind {
	case rowWarp:
		return fmt.Sprintf("warp %s%d×%d rows", v, p.nv, p.rows)
	case rowLanes:
		return fmt.Sprintf("lanes %s%d×%d", v, p.nv, p.lanes)
	case rowBlock:
		if p.lead > 0 {
			return fmt.Sprintf("block %s%d t=%d a%d", v, p.nv, p.threads, p.lead)
		}
		return fmt.Sprintf("block %s%d t=%d", v, p.nv, p.threads)
	case rowTeam:
		return fmt.Sprintf("team %s%d t=%d", v, p.nv, p.threads)
	case rowCluster:
		return fmt.Sprintf("cluster %d×%d v%d", p.cluster, p.threads, p.nv)
	case rowCStream:
		return fmt.Sprintf("cstream %d×%d", p.cluster, p.threads)
	case rowDSMEM:
		return fmt.Sprintf("dsmem %s %d×%d", v, p.cluster, p.threads)
	case rowRing:
		if p.pass == 2 && p.early {
			return fmt.Sprintf("ring2e %s %d×%d r%d", v, p.cluster, p.threads, p.ring)
		}
		if p.pass == 2 {
			return fmt.Sprintf("ring2 %s %d×%d r%d", v, p.cluster, p.threads, p.ring)
		}
		return fmt.Sprintf("ring %s %d×%d r%d", v, p.cluster, p.threads, p.ring)
	case rowRes:
		_, a := p.resAhead()
		where := fmt.Sprintf("mode %d", p.mode)
		if p.mode >= 0 && p.mode < 3 {
			where = []string{"global", "shared", "registers"}[p.mode]
		}
		if p.cluster > 1 {
			return fmt.Sprintf("res v%d cluster %d×%d %s%s", p.nv, p.cluster, p.threads, where, a)
		}
		return fmt.Sprintf("res v%d %d×%d %s%s", p.nv, p.group, p.threads, where, a)
	case rowGrid:
		return fmt.Sprintf("grid %s %d groups ×%d r%d l%d", v, p.groups, p.threads, p.ring, p.lag)
	}
	return fmt.Sprintf("loop %s t=%d", v, p.threads)
}

// resAhead is how a row_res plan's next row ahead is named: the kernel name's suffix ("p": in registers, "s": in
// shared memory, "": none) and String's words.
func (p rowPlan) resAhead() (suffix, words string) {
	switch {
	case p.ahead && p.shared:
		return "s", " ahead shared"
	case p.ahead:
		return "p", " ahead"
	}
	return "", ""
}

// rowAccess is how a thread reads a row of case c: e elements an access (16 bytes when vec), nv accesses of
// registers a thread (128 bytes; 16 single elements when the columns rule out 16-byte accesses).
func rowAccess(c Case) (vec bool, e, nv int) {
	e = 16 / c.DType.Size()
	if c.Cols%e != 0 {
		return false, 1, 16
	}
	return true, e, 8
}

// rowChoosePlan is the plan every row family starts from: each thread holds up to 128 bytes of a row in
// registers (8 16-byte accesses; 16 elements when the columns do not allow 16-byte accesses): with 64 registers
// a thread, a multiprocessor runs 1024 threads with 128 KiB of loads in flight, about what it takes to keep HBM
// busy. Measured for RMSNorm on an H200 (cuda_test.go's TestCUDATune), in pct of the copy at the same shape:
//
//   - short rows (rf.short): rowWarp, rows of up to 32·8 accesses in one warp, several rows a warp when shorter
//     (98–102%); rowLanes, rows of up to 32·nv accesses in a team of the fewest lanes that hold the row with nv
//     accesses each, so that the shuffles of the row's reduction and its per-row work are shared by as many
//     elements as possible (a whole warp on a 256-column bf16 cross-entropy row spent more instructions on its
//     reduction than on its elements);
//   - few rows (decode, fewer than two per multiprocessor): one block per row, two accesses a thread, so that
//     as many warps as possible issue the row's loads (32×4096: 90–94%, against 59–60% with eight);
//   - rows of up to 1024 threads' worth: one block per row (4096–16384: 92–101%; bf16 65536: 80%).
//
// Wider rows are the family's (wide is true, the plan unset): rmsNormChoosePlan, rowMapChoosePlan, rowStreamChoosePlan.
func rowChoosePlan(rf *rowFamily, c Case, sms int) (p rowPlan, wide bool) {
	vec, e, nv := rowAccess(c)
	switch {
	case rf.short == rowWarp && c.Cols <= 32*8*e:
		n := ceilPow2(ceilDiv(c.Cols, 32*e))
		if !vec {
			return rowPlan{kind: rowWarp, rows: 1, nv: n}, false
		}
		return rowPlan{kind: rowWarp, rows: 8 / n, vec: true, nv: n}, false
	case rf.short == rowLanes && c.Cols <= 32*nv*e:
		return rowPlan{kind: rowLanes, lanes: ceilPow2(ceilDiv(c.Cols, nv*e)), vec: vec, nv: nv}, false
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rowPlan{kind: rowBlock, vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}, false
	case c.Cols <= 1024*nv*e:
		return rowPlan{kind: rowBlock, vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}, false
	}
	return rowPlan{}, true
}

// rowWide reports whether plan p is a wide one-block-a-row plan: 32 16-byte packs a thread, built for Softmax
// fp32 on sm_90 only (softmax_block_f32_v32 in the _sm90 module), in blocks of at most rowBlockMaxThreads, at least
// three a multiprocessor, so that 128 of a thread's 168 registers hold row data (the other block plans hold at most
// 8 packs in 64) and a block merge waits on at most 4 warps: 192 KiB of a multiprocessor's rows in flight where the
// block holding a 64 KiB row in 512 threads keeps 128 KiB. softmaxChoosePlan takes it for fp32 rows of 32–64 KiB.
// The same blocks for RMSNorm, LayerNorm and Softmax bf16 lost on both an H100 and an H200 (TestCUDARowTune, pct of
// the copy at 8192×16384: RMSNorm fp32 80.5 and 71.0% against 99.0 and 91.7% for the chosen plans, LayerNorm fp32
// 63.0 and 53.0% against 98.3 and 92.0%, Softmax bf16 82.8 and 69.3% against 98.1 and 97.6%; at 4096 columns in 32
// threads lower still) and are not built.
func rowWide(p rowPlan) bool { return p.kind == rowBlock && p.vec && p.nv == 32 }

// rowBlockMaxThreads is the most threads a block of plan p (rowBlock; RMSNorm's rowTeam too) may have: 128 for the
// wide plan (rowWide), 1024 for the others.
func rowBlockMaxThreads(p rowPlan) int {
	if rowWide(p) {
		return 128
	}
	return 1024
}

// rowCluster1024 is the cluster of 1024-thread blocks, nv accesses a thread, that holds a row of case c in
// registers, if one of at most 8 blocks does (sm_90, 16-byte accesses).
func rowCluster1024(c Case, cc int) (rowPlan, bool) {
	vec, e, nv := rowAccess(c)
	if !vec || cc < 90 || c.Cols > 8*1024*nv*e {
		return rowPlan{}, false
	}
	return rowPlan{kind: rowCluster, cluster: ceilPow2(ceilDiv(c.Cols, 1024*nv*e)), vec: true, nv: nv, threads: 1024}, true
}

// rowLead is a one-block-a-row kernel of RMSNorm or LayerNorm (sm_90, <prefix>_blocka_<dtype>_v8t<threads>a<lead>,
// rowmap.cuh's row_block_lead) that loads each 16-byte pack's column data lead packs ahead of the pack's store, the
// first lead packs' before the row's statistic, in blocks of exactly threads threads (its launch bounds, which
// leave it the registers the look-ahead takes). The one-block plans of the other kernels load a pack's column
// data just before its store, and since the compiler cannot tell the column vectors from y, behind the previous
// pack's store: a thread's column round trips run in series. Timed in scripts/experiments/column-ahead.cu
// (2026-11-27, driver 580.159.04, two rounds each, the program's cold pct-copy, NVIDIA H200 / NVIDIA H100 80GB
// HBM3, against the plan before):
//
//   - LayerNorm bf16 32768×4096, 64 threads, 4 ahead: 97.5 / 97.3% against 93.0–93.5 / 95.7–95.8%;
//   - LayerNorm bf16 8192×16384, 256 threads, 3 ahead: 96.7 / 97.7% against 94.0–94.6 / 96.2–96.3%;
//   - LayerNorm fp32 32768×4096, 128 threads, all 8 ahead: 101.1–101.5 / 100.2–100.3% against 93.4–94.5 / 98.5–98.8%;
//   - RMSNorm bf16 8192×16384, 256 threads, 3 ahead: 97.9 / 98.4% against 94.5–95.0 / 97.2–97.5% (its team of one);
//   - RMSNorm bf16 32768×4096, 64 threads, 2 ahead: 97.9–98.1 / 97.9% against 96.2–96.6 / 97.1–97.4%;
//   - RMSNorm fp32 32768×4096, 128 threads, all 8 ahead: 100.1–100.2 / 99.8% against 99.8–99.9 / 98.5–99.0%.
//
// The same look-ahead under the 1024-thread bounds spilled (LayerNorm bf16 4096: 85.9–86.3% on the H200); more
// packs ahead than these cost blocks a multiprocessor where the registers run out (LayerNorm bf16 16384, 4 ahead:
// 88.9–89.2% on the H200), fewer left round trips in series. Other block sizes are not built.
type rowLead struct {
	dt            DType
	threads, lead int
}

// leadOf is how many packs ahead the family's look-ahead kernel for dtype dt in blocks of threads threads loads
// its column data, 0 when none is built.
func (rf *rowFamily) leadOf(dt DType, threads int) int {
	for _, l := range rf.leads {
		if l.dt == dt && l.threads == threads {
			return l.lead
		}
	}
	return 0
}

// rowLeadOn: the look-ahead blocks are chosen (TestCUDARowTune turns it off to compare).
var rowLeadOn = true

// withRowLead is choose, except that on sm_90 a one-block-a-row plan of 8 16-byte packs a thread whose block size
// has a look-ahead kernel in family rf (rowLead) takes that kernel.
func withRowLead(rf *rowFamily, choose func(c Case, cc, sms int) rowPlan) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		p := choose(c, cc, sms)
		if rowLeadOn && cc >= 90 && p.kind == rowBlock && p.vec && p.nv == 8 {
			p.lead = rf.leadOf(c.DType, p.threads)
		}
		return p
	}
}

// rowXA: the cluster kernels of the _x_sm90a modules (cuda/<module>_x_sm90a.cu, built by CUDA 12.4: the family's
// .cu with KW_XASYNC, cuda/xasync.cuh), whose blocks send a row's partial statistics by st.async into each other's
// shared memory, each write completing on the receiver's mbarrier, where the cluster kernels of the _sm90 modules
// (PTX 7.8) take two cluster barriers a row, whose release and acquire compile to a GPU-wide memory barrier
// before each arrive and an L1 invalidate after each wait. Measured first in
// scripts/experiments/cluster-exchange.cu (NVIDIA H200, row_cluster over 1024 × 262144, pct of the copy):
// RMSNorm bf16 in 8 × 512 threads 78.3% → 88.2% (96.3% with no exchange at all), LayerNorm bf16 71.7% → 81.0%,
// fp32 in 8 × 1024 61.1% → 69.6%; LayerNorm bf16 4096 × 65536 in 2 × 512 79.6% → 88.9%. The rings (row_ring)
// with the same exchange lost on the H200 (TestCUDARowTune: RMSNorm fp32 1024 × 262144 81.1% against 86.7%,
// CrossEntropy fp32 80.4% against 82.8%, RMSNorm fp32 4096 × 65536 in two rows a pass 87.9% against 93.2%), so
// only the cluster kernels are built there, in every row family.
// The families' row_res_cluster kernels (rowXARes) are only in their _x_sm90a modules, and only with this exchange.
func (rf *rowFamily) hasXA(p rowPlan) bool {
	return p.kind == rowCluster && rf.xaCluster && (p.cluster <= 8 || rf.xaCluster16 && p.cluster == 16 && p.threads == 256 && p.nv == 16) ||
		p.kind == rowRes && p.cluster > 1 && rf.hasXARes()
}

// rowXACluster16 is family rf's cluster of 16 blocks of 256 threads, 16 16-byte packs a thread, exchanging by
// st.async, for fp32 rows of more than 512 KiB up to 1 MiB on sm_90 (xaCluster16: the cross-entropy's
// xent_cluster_f32_v16_c16). Up to 128 registers a thread leave two blocks a multiprocessor, where the cluster of 8
// blocks of 1024 threads that holds the same row runs one. CrossEntropy fp32 1024 × 262144, pct of the copy:
// TestCUDARowTune (2026-11-27) with 512 threads of 8 packs, NVIDIA H100 80GB HBM3 102.1% (row_ring 94.3%), NVIDIA
// H200 89.1% (83.0%); scripts/experiments/xent-merge.cu (2026-11-28, NVIDIA H200, cold) 256 threads of 16 packs
// 92.3–92.4% against 88.8–89.6% for 512 of 8: half the threads, half the warps' pairs to merge a row.
func rowXACluster16(rf *rowFamily, c Case, cc int) (rowPlan, bool) {
	vec, e, _ := rowAccess(c)
	chunk := 256 * 16 * e
	if !rf.xaCluster16 || !vec || cc != 90 || c.DType != FP32 || 16*chunk < c.Cols || 8*chunk >= c.Cols {
		return rowPlan{}, false
	}
	return rowPlan{kind: rowCluster, cluster: 16, vec: true, nv: 16, threads: 256, xa: true}, true
}

// rowXAOn: the _x_sm90a kernels are chosen (TestCUDARowTune turns it off to compare).
var rowXAOn = true

// withRowXA is choose, except on sm_90 (compute capability 9.0 exactly: the _x_sm90a modules are sm_90a PTX, as the
// wgmma modules are) with rowXAOn: where resWins says so (nil: nowhere), family rf's row_res_cluster (rowXARes);
// else where wins says so, the cluster of 8 blocks exchanging by st.async that holds the row (rowXACluster);
// elsewhere, a cluster plan that family rf has in its _x_sm90a module (hasXA) takes that kernel.
func withRowXA(rf *rowFamily, choose func(c Case, cc, sms int) rowPlan, wins, resWins func(Case) bool) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if rowXAOn && cc == 90 && resWins != nil && resWins(c) {
			if p, ok := rowXARes(rf, c, cc); ok {
				return p
			}
		}
		if rowXAOn && cc == 90 && wins != nil && wins(c) {
			if p, ok := rowXACluster(rf, c, cc); ok {
				return p
			}
		}
		p := choose(c, cc, sms)
		if rowXAOn && cc == 90 && rf.hasXA(p) {
			p.xa = true
		}
		return p
	}
}

// rowXACluster is the cluster of 8 blocks, 8 16-byte packs a thread, exchanging by st.async (xa), that holds a
// row of case c on sm_90: blocks of 64–1024 threads (rows of 64 KiB to 1 MiB); where family rf has it
// (rowXACluster16), the cluster of 16 blocks of 256 threads instead.
func rowXACluster(rf *rowFamily, c Case, cc int) (rowPlan, bool) {
	if p, ok := rowXACluster16(rf, c, cc); ok {
		return p, true
	}
	vec, e, nv := rowAccess(c)
	t := ceilPow2(ceilDiv(c.Cols, 8*nv*e))
	if !vec || cc != 90 || t < 64 || t > 1024 {
		return rowPlan{}, false
	}
	return rowPlan{kind: rowCluster, cluster: 8, vec: true, nv: nv, threads: t, xa: true}, true
}

// The rows where rowXACluster beat the plan chosen before on both an H100 and an H200 (TestCUDARowTune, 2026-11-27,
// driver 580.159.04, pct of the suite's copy, NVIDIA H100 80GB HBM3 / NVIDIA H200, against the plan before):
//
//   - 1024 × 262144: LayerNorm bf16 91.5 / 80.5% (cluster of 4 × 1024, the barriers' exchange: 83.8 / 72.7%),
//     Softmax bf16 98.3 / 92.6% (row_grid 91.4 / 74.3%), CrossEntropy bf16 103.2 / 96.9% (row_dsmem 94.5 / 82.8%),
//     FP8Quant fp32 in 8 × 1024 101.1 / 93.2% (row_ring 93.3 / 81.5%), FP8Quant bf16 101.0 / 102.4% (its cluster of
//     8 × 512 with the barriers: 96.3 / 87.2%);
//   - 4096 × 65536: RMSNorm fp32 99.2 / 93.7% (two rows a pass 95.2 / 93.5%), LayerNorm fp32 97.7 / 87.9% (row_grid
//     94.6 / 87.7%), Softmax fp32 99.7 / 101.0% (row_grid 93.8 / 95.2%), Softmax bf16 in 8 × 128 99.1 / 99.5% (one
//     block 98.5 / 93.3%), CrossEntropy fp32 105.1 / 103.7% (row_dsmem 101.5 / 95.6%), bf16 104.8 / 103.0% (one
//     block 103.0 / 93.9%), FP8Quant fp32 102.7 / 105.2%, bf16 100.8 / 103.2% (one block 99.8 / 101.8%).
//
// Where it lost: the fp32 rows of 1 MiB but FP8Quant's (one 1024-thread block a multiprocessor: RMSNorm 90.2 /
// 76.5%, LayerNorm 83.3 / 67.5%, Softmax 55.6 / 44.4%, CrossEntropy 60.0 / 48.1% against 92–97 / 82–92% for their
// rings and row_grid), RMSNorm and LayerNorm bf16 rows of 128 KiB (H200: 86.1 and 86.4% against 93.6 and 89.2% for
// row_res), RMSNorm bf16 rows of 512 KiB (H200: 77.1% against 87.9% for row_grid).
func rmsNormXAWins(c Case) bool { return c.DType == FP32 && c.Cols*4 > 128<<10 && c.Cols*4 <= 256<<10 }

// The rows where row_res_cluster (rowXARes: its smallest cluster that holds the row) beat the plan chosen before on
// both GPUs (TestCUDARowTune, 2026-11-27, driver 580.159.04, pct of the suite's copy, NVIDIA H100 80GB HBM3 /
// NVIDIA H200, against the plan before):
//
//   - RMSNorm: bf16 4096 × 65536 in 2 × 512 95.9 / 97.5% (row_res 93.5 / 93.9%), bf16 1024 × 262144 in 8 × 512
//     94.4 / 97.3% (row_grid 92.5 / 87.8%), fp32 1024 × 262144 in 16 × 512 97.2 / 95.3% (row_ring 95.4 / 86.7%);
//   - LayerNorm: bf16 4096 × 65536 95.3 / 97.0% (row_res 94.1 / 90.7%), bf16 1024 × 262144 93.7 / 93.7% (the
//     xa cluster 91.6 / 79.4%), fp32 1024 × 262144 95.9 / 97.0% (row_grid 92.2 / 83.9%), and fp32 4096 × 65536 in
//     4 × 512, which lost on the H100 but not below its goal, 94.2 / 96.1% (the xa cluster 97.8 / 88.2%).
//
// Where it lost: RMSNorm fp32 4096 × 65536 on the H100 (93.6% against 99.4% for the xa cluster; H200 95.6 against
// 93.8%), every Softmax row (H200: 84–94% against 93–101%), and in a cluster larger than the row needs (idle
// blocks: 10–91%).
func rmsNormXAResWins(c Case) bool {
	b := c.Cols * c.DType.Size()
	return c.DType == BF16 && b > 64<<10 && b <= 512<<10 || c.DType == FP32 && b > 512<<10 && b <= 1<<20
}
func layerNormXAResWins(c Case) bool {
	b := c.Cols * c.DType.Size()
	return c.DType == BF16 && b > 64<<10 && b <= 512<<10 || c.DType == FP32 && b > 128<<10 && b <= 1<<20
}
func layerNormXAWins(c Case) bool {
	return rmsNormXAWins(c) || c.DType == BF16 && c.Cols*2 > 256<<10 && c.Cols*2 <= 512<<10
}
func softmaxXAWins(c Case) bool {
	return rmsNormXAWins(c) || c.DType == BF16 && c.Cols*2 > 64<<10 && c.Cols*2 <= 512<<10
}
func crossEntropyXAWins(c Case) bool {
	return softmaxXAWins(c) || c.DType == FP32 && c.Cols*4 > 512<<10 && c.Cols*4 <= 1<<20
}
func fp8QuantXAWins(c Case) bool {
	return c.Cols*c.DType.Size() > 64<<10 && c.Cols*c.DType.Size() <= 1<<20
}

// rmsNormChoosePlan is rowChoosePlan; wider rows (measured on an H200, pct of the copy): fp32 rows on sm_90
// take a cluster of 2–8 1024-thread blocks (65536: 83%, 262144: 73%); longer still, or elsewhere, a persistent
// team of 256-thread blocks meeting through global memory (bf16 262144: 69%; fp32 262144: 60%, which is why fp32
// takes the cluster).
func rmsNormChoosePlan(c Case, cc, sms int) rowPlan {
	if p, wide := rowChoosePlan(rmsNormRows, c, sms); !wide {
		return p
	}
	if p, ok := rowCluster1024(c, cc); ok && c.DType == FP32 {
		return p
	}
	vec, _, nv := rowAccess(c)
	return rowPlan{kind: rowTeam, vec: vec, nv: nv, threads: 256}
}

// rowMapChoosePlan (LayerNorm, Softmax) is rowChoosePlan; wider rows on sm_90 (16-byte accesses) take a cluster
// of up to 8 blocks, the smallest blocks (at least 256 threads) that cover the row with 8 accesses: several blocks
// a multiprocessor overlap one block's reduction with another's loads (fp32 4096×65536 on an H200: 8×256 78–82%
// of the copy, 2×1024 47–73%); longer still, odd widths past 16384, or no clusters: the loop kernel.
func rowMapChoosePlan(rf *rowFamily, c Case, cc, sms int) rowPlan {
	if p, wide := rowChoosePlan(rf, c, sms); !wide {
		return p
	}
	vec, e, nv := rowAccess(c)
	if vec && cc >= 90 && c.Cols <= 8*1024*nv*e {
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*nv*e)), 256), 1024)
		return rowPlan{kind: rowCluster, cluster: ceilPow2(ceilDiv(c.Cols, t*nv*e)), vec: true, nv: nv, threads: t}
	}
	return rowPlan{kind: rowLoop, vec: vec, nv: 4, threads: 1024}
}

// rowShortBF16 is the plan of LayerNorm, Softmax and FP8Quant for bf16 rows of at most 512 bytes (16-byte
// accesses): a team of lanes a row, twice the fewest that hold the row in 8 accesses each, rather than a warp for
// several rows, whose five rounds of shuffles and per-row work a lane bound these kernels on an H200 (262144×256,
// TestCUDARowTune: LayerNorm 68% → 87% of the copy, Softmax 79% → 91% in the fewest lanes; fp32 rows of 256 and
// bf16 rows of 1024 were within 2% either way and keep the warp). Twice the fewest lanes, each thread holding 4
// of its 8 accesses, were faster still on both GPUs (262144×256, pct of the copy, teams of 8 against 4; H100 two
// runs, H200 one): LayerNorm 93.6 and 93.8% against 90.5 and 90.9% (H100), 91.5% against 87.3% (H200); Softmax
// 94.3 and 94.3% against 92.1 and 92.5%, 92.9% against 90.9%; FP8Quant 91.9 and 91.8% against 90.6 and 90.6%,
// 91.1 and 92.2% against 89.2 and 90.7% (H200, two runs). CrossEntropy keeps the fewest (teams of 8: 96.5% against
// 97.3% on the H100, 86.2% against 95.6% on the H200).
func rowShortBF16(c Case) (rowPlan, bool) {
	if c.DType != BF16 || c.Cols%8 != 0 || c.Cols*2 > 512 {
		return rowPlan{}, false
	}
	return rowPlan{kind: rowLanes, lanes: 2 * max(ceilPow2(ceilDiv(c.Cols, 8*8)), 1), vec: true, nv: 8}, true
}

// layerNormChoosePlan is rowMapChoosePlan's, but for short bf16 rows the team of lanes (rowShortBF16), and for
// bf16 rows that 4 blocks of 1024 threads hold where rowMapChoosePlan takes 8 of 512, those 4 (1024×262144,
// TestCUDARowTune, two runs on an H200: 72.4 and 72.5% of the copy against 69.9 and 70.3%; an H100 83.3% against
// 83.7%). bf16 rows of 8–32 KiB (4096 < cols ≤ 16384) keep the block holding the row: with its packs written in
// one store each (rm_store), 8192×16384 in 256 threads ran 94.0% on an H200 and 96.0 and 96.4% on an H100, against
// 92.3% and 93.1–93.5% for row_res (teams of 512, the next row ahead), which had beaten the block's 84% and 94.4%
// before, as had the loop kernel. On sm_90 row_res (rowres.go) comes first for the bf16 rows of 65536 columns and
// the fp32 rows of 16384.
func layerNormChoosePlan(c Case, cc, sms int) rowPlan {
	if p, ok := rowShortBF16(c); ok {
		return p
	}
	p := rowMapChoosePlan(layerNormRows, c, cc, sms)
	if c.DType == BF16 && p.kind == rowCluster && p.cluster == 8 && p.threads == 512 {
		if q, ok := rowCluster1024(c, cc); ok && q.cluster == 4 {
			return q
		}
	}
	return p
}

// softmaxChoosePlan is rowMapChoosePlan's, but for short bf16 rows the team of lanes (rowShortBF16); for fp32 rows
// of 32–64 KiB on sm_90 (8192 < cols ≤ 16384, where rowMapChoosePlan takes a block of 512 threads) the wide block
// (rowWide: a quarter of the threads, 32 packs each): 8192×16384 at 96.6% of the copy against 94.3% on an H200, 97.8%
// against 97.8 and 97.7% on an H100 (TestCUDARowTune); and where rowMapChoosePlan takes a cluster of blocks of 512
// threads or more (rows past 65536 fp32 or 131072 bf16 elements): a cluster of 8 blocks streaming their share
// twice (cstream), 16 packs a thread. Holding the row, such blocks run one or two to a multiprocessor, and nothing
// overlaps their two exponentials an element with memory traffic; streaming blocks are small (1024×262144 on an
// H200: fp32 70% of the copy against 40% for the cluster of 8×1024; bf16 67% against 61–62%). bf16 rows of 65536
// columns take the block of 1024 threads holding the row (TestCUDARowTune, pct of the copy: H100 98.3%, H200 93.4%,
// against 92.8% and 92.7% for row_res, which had won while the block's packs left in four stores each).
func softmaxChoosePlan(c Case, cc, sms int) rowPlan {
	if p, ok := rowShortBF16(c); ok {
		return p
	}
	p := rowMapChoosePlan(softmaxRows, c, cc, sms)
	if cc >= 90 && c.DType == FP32 && p.kind == rowBlock && p.vec && p.nv == 8 && p.threads == 512 {
		return rowPlan{kind: rowBlock, vec: true, nv: 32, threads: p.threads / 4}
	}
	if p.kind == rowCluster && p.threads >= 512 {
		e := 16 / c.DType.Size()
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*16*e)), 256), 1024)
		return rowPlan{kind: rowCStream, cluster: 8, vec: true, nv: 4, threads: t}
	}
	return p
}

// rowStreamChoosePlan (CrossEntropy, FP8Quant scale=row) is rowChoosePlan; wider rows with 16-byte accesses on
// sm_90 take a cluster of 2–8 1024-thread blocks (fp32 up to 262144 columns, bf16 up to 524288), anything else
// one block of 1024 threads per row reading the row twice (the second time mostly from memory again: correct for
// any row, at about two thirds of the bandwidth).
func rowStreamChoosePlan(rf *rowFamily, c Case, cc, sms int) rowPlan {
	if p, wide := rowChoosePlan(rf, c, sms); !wide {
		return p
	}
	if p, ok := rowCluster1024(c, cc); ok {
		return p
	}
	vec, _, _ := rowAccess(c)
	return rowPlan{kind: rowLoop, vec: vec, nv: 4, threads: 1024}
}

// crossEntropyChoosePlan is rowStreamChoosePlan, except for rows wider than 512 threads' worth on sm_90 (16-byte
// accesses), where clusters of smaller blocks overlap one row's reduction with another's loads. Measured on an
// H200 (TestCUDARowSweep), pct of the 1 GiB copy:
//
//   - fp32: a cluster of 8 blocks (65536: 8 × 256 threads, 87%, against 52% for 2 × 1024 and 84% for 4 × 512);
//     when that takes 1024-thread blocks (262144: 46%), the streaming cluster of 8 × 512 (73%);
//   - bf16: clusters of 512-thread blocks (65536: 2 × 512, 80%, against 63% for one 1024-thread block;
//     262144: 8 × 512, 68%, against 44% for 4 × 1024 and 64% streaming).
//
// The cross-entropy's exponentials (two an element in bf16, whose registers cannot keep e^(x−m)) make its wide
// rows slower than FP8Quant's with the same plans.
//
// bf16 rows of 65536 columns (crossEntropyBlockBF16) take the block of 1024 threads holding the row, since its
// packs leave in one 16-byte store each (nvcc 11.8 had split them into four) and its exponents take one fma:
// TestCUDARowTune at 4096×65536, pct of the suite's copy: H100 103.1% against 100.2% for the cluster of 2 × 512
// and 99.4% for row_dsmem (2 × 256), which had won; H200 93.8% against 93.9% and 90.4%.
func crossEntropyChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || cc < 90 || c.Cols <= 512*8*e || crossEntropyBlockBF16(c) {
		return rowStreamChoosePlan(crossEntropyRows, c, cc, sms)
	}
	if c.DType == FP32 {
		if t := ceilPow2(ceilDiv(c.Cols, 8*8*e)); t <= 512 {
			return rowPlan{kind: rowCluster, cluster: 8, vec: true, nv: 8, threads: max(t, 64)}
		}
		return rowPlan{kind: rowCStream, cluster: 8, vec: true, nv: 8, threads: 512}
	}
	return rowCluster512(c)
}

// crossEntropyBlockBF16 reports whether case c is a bf16 row of 16-byte packs wider than 512 threads' worth that
// one block of 1024 threads holds (8 packs a thread): the cross-entropy's rows of 65536 columns.
func crossEntropyBlockBF16(c Case) bool {
	return c.DType == BF16 && c.Cols%8 == 0 && c.Cols > 512*8*8 && c.Cols <= 1024*8*8
}

// rowCluster512 is a cluster of 512-thread blocks holding the row of case c (16-byte accesses, wider than one
// such block), or beyond 8 of them the streaming cluster of 8 × 512.
func rowCluster512(c Case) rowPlan {
	e := 16 / c.DType.Size()
	if cs := ceilPow2(ceilDiv(c.Cols, 512*8*e)); cs <= 8 {
		return rowPlan{kind: rowCluster, cluster: max(cs, 2), vec: true, nv: 8, threads: 512}
	}
	return rowPlan{kind: rowCStream, cluster: 8, vec: true, nv: 8, threads: 512}
}

// fp8QuantChoosePlan is rowStreamChoosePlan, except for short bf16 rows (the team of lanes of rowShortBF16), and
// for rows wider than 512 threads' worth on sm_90 (16-byte accesses) that one block of 1024 threads does not hold:
// a cluster of 512-thread blocks per row (two blocks a multiprocessor, so that one row's reduction overlaps
// another's loads), and beyond 8 of them a cluster of 8 × 1024 holding the row. Measured on an H200
// (TestCUDARowSweep), pct of the 1 GiB copy: fp32 65536 4 × 512 98% (2 × 1024: 86–90%), 262144 8 × 512 84–85% (4 ×
// 1024: 81%). bf16 rows of 65536 take the block of 1024 threads holding the row (TestCUDARowTune, 4096×65536: H100
// 99.8 and 99.9% against 96.8 and 97.0% for the cluster of 2 × 512, H200 101.9 and 102.5% against 95.8 and 97.4%).
// At fp32 262144 the GPUs disagree (TestCUDARowTune): 8 × 1024 holding the row 84.1% on an H100 and 75.2% on an
// H200, the streaming cluster of 8 × 512 65.4% and 77.8%; the cluster's worst case is the better one.
func fp8QuantChoosePlan(c Case, cc, sms int) rowPlan {
	if p, ok := rowShortBF16(c); ok {
		return p
	}
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || cc < 90 || c.Cols <= 512*8*e || c.DType == BF16 && c.Cols <= 1024*8*e {
		return rowStreamChoosePlan(fp8QuantRows, c, cc, sms)
	}
	if p := rowCluster512(c); p.kind == rowCluster {
		return p
	}
	if p, ok := rowCluster1024(c, cc); ok {
		return p
	}
	return rowCluster512(c)
}

// The plan of a case, per family (<family>PlanFor, which the tests swap and restore to <family>PlanDefault).
var (
	rmsNormPlanDefault = withRowXA(rmsNormRows, withRowGrid(withRowRes(withRowRingPlan(withRowRing(withRowDSMEM(withRowLead(rmsNormRows,
		rmsNormChoosePlan), rmsNormDSMEMWins), rmsNormRingWins), rmsNormRing2), rmsNormRes), rmsNormGridWins), rmsNormXAWins, rmsNormXAResWins)
	layerNormPlanDefault = withRowXA(layerNormRows, withRowGrid(withRowRes(withRowRingPlan(withRowRing(withRowDSMEM(withRowLead(layerNormRows,
		layerNormChoosePlan), nil), layerNormRingWins), layerNormRing2), layerNormRes), layerNormGridWins), layerNormXAWins, layerNormXAResWins)
	softmaxPlanDefault = withRowXA(softmaxRows, withRowGrid(withRowRingPlan(withRowRing(withRowDSMEM(softmaxChoosePlan,
		softmaxDSMEMWins), softmaxRingWins), softmaxRing), softmaxGridWins), softmaxXAWins, nil)
	crossEntropyPlanDefault = withRowXA(crossEntropyRows, withRowRing(withRowDSMEM(crossEntropyChoosePlan, crossEntropyDSMEMWins),
		rowRingWins1MiB), crossEntropyXAWins, nil)
	fp8QuantPlanDefault = withRowXA(fp8QuantRows, withRowRing(withRowDSMEM(fp8QuantChoosePlan, nil), rowRingWins1MiB), fp8QuantXAWins, nil)

	rmsNormPlanFor      = rmsNormPlanDefault
	layerNormPlanFor    = layerNormPlanDefault
	softmaxPlanFor      = softmaxPlanDefault
	crossEntropyPlanFor = crossEntropyPlanDefault
	fp8QuantPlanFor     = fp8QuantPlanDefault
)

// Where row_dsmem beats the family's other plans on both an H100 and an H200 (TestCUDARowTune, pct of the suite's
// copy, row_dsmem in blocks of 256 threads with slices of about 32 KiB, against the family's plan without it):
//
//   - RMSNorm: bf16 rows of 512 KiB (262144 columns: H100 83% against 82%, H200 76% against 68% for the team).
//     At 65536 columns the GPUs disagree (H200: 83% against 80%; H100: 91% against 95% for one block holding the
//     row), and fp32 rows keep the cluster holding them in registers (262144: H100 84% against 71%);
//   - Softmax: rows of 256 KiB and more (fp32 65536: H100 97% against 93%, H200 89% against 82%, though there the
//     ring of 8 × 128 comes first, softmaxRing; fp32 262144: 90% and 80% against 68% and 70% streaming; bf16
//     262144: 84% and 72% against 67% and 67%);
//   - CrossEntropy: rows of 128 KiB and more (H100: fp32 65536 102% against 98%, 262144 90% against 73%, bf16
//     65536 99% against 91%, 262144 94% against 83%; H200: 96%, 77%, 89%, 80% against 88%, 73%, 80%, 68%), except
//     the bf16 rows of 65536 columns, which since the block's packs leave in one store each take the block of 1024
//     threads holding the row (crossEntropyChoosePlan);
//   - LayerNorm and FP8Quant: nowhere (their clusters holding the row, or streaming it twice, are 2–20% faster).
func rmsNormDSMEMWins(c Case) bool { return c.DType == BF16 && c.Cols*c.DType.Size() >= 512<<10 }
func softmaxDSMEMWins(c Case) bool { return c.Cols*c.DType.Size() >= 256<<10 }
func crossEntropyDSMEMWins(c Case) bool {
	return c.Cols*c.DType.Size() >= 128<<10 && !crossEntropyBlockBF16(c)
}

// ceilPow2 is the smallest power of two ≥ n (1 for n ≤ 1).
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// The row_dsmem plan (sm_90): a thread-block cluster of 2–16 blocks per row, each block copying its slice of
// the row into its shared memory (cp.async, no registers held), reducing it, the cluster's partial statistics
// meeting through distributed shared memory, and each block mapping its slice from shared memory to the outputs
// — each element read once from memory and written once, for rows of up to 16 slices (1.5 MiB). It competes
// with every plan for rows no one block holds in registers (team, cluster, cstream, loop), which read a row
// twice or hold it in registers at one or two blocks a multiprocessor; where it wins is the family's (the
// *DSMEMWins functions above). Clusters of more than 8 blocks are non-portable (the kernel's attribute is set at
// launch) and cluster launches take cuLaunchKernelEx (harness/cuda_cluster.go, CUDALaunch.KernelCluster).

// rowDSMEMPending says why row_dsmem would not be chosen: "" since its kernels passed TestCUDARowDSMEM on an
// H200 (461 plans and shapes, every family and dtype).
const rowDSMEMPending = ""

// rowDSMEMOn is whether the choosers may pick row_dsmem (the tests turn it off to compare).
var rowDSMEMOn = rowDSMEMPending == ""

// Sizes of row_dsmem: a block's slice of the row is about rowDSMEMSlice bytes and at most rowDSMEMMaxSlice, in
// blocks of 128–256 threads that copy and read back 16 packs each. Measured on an H100 and an H200
// (TestCUDARowTune, pct of the suite's copy), 16 packs a thread in 64 KiB slices were the fastest or within 2% of
// it at every width and family that takes row_dsmem: CrossEntropy fp32 4096×65536 in 4 × 256 threads 101.7% (H100)
// and 95.6% (H200) against 96.0% and 87.2% for 8 slices of 32 KiB in 256 threads (8 packs each), bf16 in 2 × 256
// 98.6% and 88.7% against 93.1% and 80.4%, Softmax fp32 96.6% and 87.1% against 93.5% and 85.9%; rows of 512 KiB
// and 1 MiB were already cut so (RMSNorm bf16 262144 in 8 × 256: H100 83.6%, 8 × 512 79.3%). Blocks of 1024
// threads were up to 2× slower.
const (
	rowDSMEMSlice     = 64 << 10
	rowDSMEMMaxSlice  = 96 << 10
	rowDSMEMMaxBlocks = 16
	rowDSMEMPacks     = 16 // packs a thread copies
)

// rowDSMEMPlan is the row_dsmem plan of case c on compute capability cc: the fewest blocks (2–16, a power of
// two) whose slices are at most rowDSMEMSlice bytes (more for rows past 16 such slices), in blocks of 128–256
// threads of about rowDSMEMPacks packs each; ok is false where clusters are missing or the row is too long.
func rowDSMEMPlan(c Case, cc int) (p rowPlan, ok bool) {
	if cc < 90 {
		return rowPlan{}, false
	}
	vec, e, _ := rowAccess(c)
	packs, packBytes := ceilDiv(c.Cols, e), e*c.DType.Size()
	cs := min(max(ceilPow2(ceilDiv(packs*packBytes, rowDSMEMSlice)), 2), rowDSMEMMaxBlocks)
	per := ceilDiv(packs, cs) // packs a block
	if per*packBytes > rowDSMEMMaxSlice {
		return rowPlan{}, false
	}
	t := min(max(ceilPow2(ceilDiv(per, rowDSMEMPacks)), 128), 256)
	return rowPlan{kind: rowDSMEM, cluster: cs, vec: vec, threads: t}, true
}

// rowDSMEMBytes is the dynamic shared memory a block of plan p (row_dsmem) takes for case c: its slice.
func rowDSMEMBytes(p rowPlan, c Case) int {
	e := 1
	if p.vec {
		e = 16 / c.DType.Size()
	}
	return ceilDiv(ceilDiv(c.Cols, e), p.cluster) * e * c.DType.Size()
}

// withRowDSMEM is chooser choose, but where wins says row_dsmem is the family's fastest plan for the case (nil:
// nowhere) and rowDSMEMOn allows it, the row_dsmem plan.
func withRowDSMEM(choose func(c Case, cc, sms int) rowPlan, wins func(Case) bool) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if wins != nil && rowDSMEMOn && wins(c) {
			if d, ok := rowDSMEMPlan(c, cc); ok {
				return d
			}
		}
		return choose(c, cc, sms)
	}
}

// The row_ring plan (sm_90, cuda/rowring.cuh): persistent clusters of 1–16 blocks — as many as the GPU runs at
// once, capped by the rows — each cluster taking every nclusters-th row, each block the same slice of each of its
// rows, through a ring of chunks in its shared memory that the loads of the next rows enter while a row is
// reduced, exchanged across the cluster and stored. Each element is read once and written once, and a block's
// next loads are issued as soon as its stores free a chunk, where the one-row-a-cluster plans (cluster, dsmem)
// leave the memory pipe to whichever other block is in another phase; no cluster waits for 8 or 16 free slots in
// one GPC but once. A chunk is threads·K packs, K = rowRingPacks (8 single elements without 16-byte accesses);
// the ring holds at least one row's slice.
//
// Measured on an H100 (TestCUDARowTune, pct of the suite's copy, 2^28 elements): the ring is worth more blocks a
// multiprocessor, not more chunks ahead. A block's phases (reduce, exchange, store) run one after the other and
// each thread loads, reads back and stores its own packs, so its rate is bound by latency, not by the bytes in
// flight: RMSNorm fp32 1024×262144 in clusters of 16 × 256 threads, 64 KiB slices, ran at 95.5% with a ring of
// one slice (three blocks a multiprocessor), 88.4% with 96 KiB (two), 62.5% with 192 KiB (one); in 128-thread
// blocks with 192 KiB 40.4%. Blocks of 512 threads, limited to one a multiprocessor by their registers, were
// slower than 256 everywhere, so the kernels are built for at most 256 threads and three blocks a multiprocessor
// (__launch_bounds__(256, 3): at most 80 registers).

// rowRingPending says why row_ring would not be chosen: "" since its kernels passed TestCUDARowRing on an H100
// (every family and dtype, 16-byte and single-element packs, 1 to 1000 rows of 999 to 262144 columns, clusters of
// 1–16 blocks) and TestCUDARowTune timed them there; both have since passed on H200s too (2026-11-26).
const rowRingPending = ""

// rowRingOn is whether the choosers may pick row_ring (the tests turn it off to compare).
var rowRingOn = rowRingPending == ""

// Sizes of row_ring: blocks of rowRingThreads threads (at most rowRingMaxThreads), rowRingPacks 16-byte packs a
// thread a chunk (16 KiB chunks in 256 threads), a block's slice of a row at most rowRingSlice bytes (three blocks
// a multiprocessor), a ring of at most rowRingMaxBytes (the 227 KiB a block may have, less the kernel's 512 B of
// static shared memory and some slack), up to rowRingMaxBlocks blocks a cluster (above 8 non-portable).
const (
	rowRingThreads    = 256
	rowRingMaxThreads = 256
	rowRingPacks      = 4
	rowRingSlice      = 64 << 10
	rowRingMaxBytes   = 224 << 10
	rowRingMaxBlocks  = 16
)

// rowRingK is the packs a thread holds of each chunk of plan p (the kernels' K).
func rowRingK(p rowPlan) int {
	if !p.vec {
		return 8
	}
	return rowRingPacks
}

// rowRingForm says why ring plan p is none of family rf's ring kernels ("" where it is one): one or two rows a
// pass are built, two only with the family's ring2 kernels and 16-byte packs, early column loads for two.
func rowRingForm(rf *rowFamily, p rowPlan) string {
	switch {
	case p.pass != 0 && p.pass != 2:
		return "only one or two rows a pass are built"
	case p.pass == 2 && (!rf.ring2 || !p.vec):
		return "two rows a pass need the family's ring2 kernels and 16-byte packs"
	case p.early && p.pass != 2:
		return "early column loads are built for two rows a pass"
	}
	return ""
}

// rowRingChunkBytes is the bytes of one chunk of plan p (row_ring) for case c.
func rowRingChunkBytes(p rowPlan, c Case) int {
	e := 1
	if p.vec {
		e = 16 / c.DType.Size()
	}
	return p.threads * rowRingK(p) * e * c.DType.Size()
}

// rowRingSliceBytes is the bytes of a block's slice of a row of case c in plan p (row_ring).
func rowRingSliceBytes(p rowPlan, c Case) int {
	e := 1
	if p.vec {
		e = 16 / c.DType.Size()
	}
	return ceilDiv(ceilDiv(c.Cols, e), p.cluster) * e * c.DType.Size()
}

// rowRingRowChunks is how many chunks of plan p a block's slice of a row of case c takes.
func rowRingRowChunks(p rowPlan, c Case) int {
	e := 1
	if p.vec {
		e = 16 / c.DType.Size()
	}
	per := ceilDiv(ceilDiv(c.Cols, e), p.cluster)
	return ceilDiv(per, p.threads*rowRingK(p))
}

// rowRingSmem is the dynamic shared memory a block of plan p (row_ring) takes for case c: its ring.
func rowRingSmem(p rowPlan, c Case) int { return p.ring * rowRingChunkBytes(p, c) }

// rowsAPass is how many rows a row_ring plan's clusters take at a time (1 or 2).
func (p rowPlan) rowsAPass() int { return max(p.pass, 1) }

// rowRingShape is the row_ring plan of case c in clusters of cs blocks of threads threads, pass rows a pass (1 or
// 2), with a ring of the pass's slices (pass of them) and extra chunks more: ok is false without clusters (cc <
// 90), for blocks of other than 32–256 threads (whole warps), clusters of other than 1–16 blocks, passes of other
// than 1 or 2 rows, two rows a pass without 16-byte packs (the single-element kernels take one), or where the ring
// does not fit rowRingMaxBytes.
func rowRingShape(c Case, cc, cs, threads, extra, pass int) (p rowPlan, ok bool) {
	if cc < 90 || cs < 1 || cs > rowRingMaxBlocks || threads < 32 || threads > rowRingMaxThreads || threads%32 != 0 || extra < 0 ||
		pass < 1 || pass > 2 {
		return rowPlan{}, false
	}
	vec, _, _ := rowAccess(c)
	if pass == 2 && !vec {
		return rowPlan{}, false
	}
	p = rowPlan{kind: rowRing, cluster: cs, vec: vec, threads: threads}
	if pass == 2 {
		p.pass = 2
	}
	p.ring = pass*rowRingRowChunks(p, c) + extra
	if rowRingSmem(p, c) > rowRingMaxBytes {
		return rowPlan{}, false
	}
	return p, true
}

// rowRingPlan is the row_ring plan of case c on compute capability cc: the fewest blocks a cluster (1–16, a power
// of two) whose slices are at most rowRingSlice bytes, rowRingThreads threads, a ring of one row's slice; ok is
// false where clusters are missing or the row is too long.
func rowRingPlan(c Case, cc int) (p rowPlan, ok bool) {
	cs := min(ceilPow2(ceilDiv(c.Cols*c.DType.Size(), rowRingSlice)), rowRingMaxBlocks)
	return rowRingShape(c, cc, cs, rowRingThreads, 0, 1)
}

// rowRing2Slice is the most bytes of a row a block of a two-rows-a-pass plan takes while the cluster can still
// grow (up to 16 blocks): two slices of 32 KiB keep the ring at rowRingSlice, three blocks a multiprocessor.
const rowRing2Slice = rowRingSlice / 2

// rowRingPlan2 is the row_ring plan of two rows a pass (row_ring2) of case c on compute capability cc: the fewest
// blocks a cluster (1–16, a power of two) whose slices are at most rowRing2Slice bytes (more for rows past 16 such
// slices, fp32 rows of 1 MiB: a ring of 128 KiB), rowRingThreads threads, a ring of the pair's two slices; ok is
// false where clusters or 16-byte packs are missing, or the ring does not fit.
func rowRingPlan2(c Case, cc int) (p rowPlan, ok bool) {
	cs := min(ceilPow2(ceilDiv(c.Cols*c.DType.Size(), rowRing2Slice)), rowRingMaxBlocks)
	return rowRingShape(c, cc, cs, rowRingThreads, 0, 2)
}

// Where row_ring (rowRingPlan's: 256 threads, 64 KiB slices, a ring of one slice) beats the family's other plans
// and row_dsmem, in two runs on an H100 (TestCUDARowTune, pct of the suite's copy, 2^28 elements, this plan
// against the family's choice before it):
//
//   - every family, fp32 rows of 1 MiB (262144 columns): RMSNorm 95.4 and 95.2% against 84.3% for the cluster of
//     8 × 1024 holding the row, LayerNorm 87.0 and 86.8% against 74.8 and 74.9%, Softmax 95.4 and 95.3% against
//     90.1% for row_dsmem, CrossEntropy 94.7% against 90.8 and 90.4% for row_dsmem, FP8Quant 92.9 and 92.8%
//     against 84.4 and 83.9% for the cluster;
//   - RMSNorm and Softmax bf16 rows of 512 KiB (262144 columns): 93.0% against 83.3 and 83.4% for row_dsmem, 89.7
//     and 89.4% against 82.2 and 81.9%;
//   - RMSNorm and LayerNorm fp32 rows of 256 KiB (65536 columns): 95.1 and 94.9% against 93.6 and 93.3% for the
//     cluster of 2 × 1024, 91.2 and 91.1% against 90.4 and 90.3% for the cluster of 8 × 256 (these rows now take
//     two rows a pass, rowRing2Wins below).
//
// Elsewhere the families' plans stay: at 16384 columns one block holding the row (98–105%, the ring 88–95%), at
// 65536 the other clusters and row_dsmem (Softmax fp32 96.7% for row_dsmem, the ring 94.4%; CrossEntropy fp32
// 101.6% and 93.4%), and the bf16 LayerNorm, CrossEntropy and FP8Quant rows of 512 KiB (the ring 76.4, 89.8 and
// 94.0% against 80.3, 93.5 and 96.2%). LayerNorm's ring reads its w and b from L2 for every row, two bytes for
// each byte of x, which is where it loses. No H200 came for these runs: the choices are the H100's. (bf16 rows of
// 1 MiB were not timed; CrossEntropy and FP8Quant keep their plans there.)
func rowRingWins1MiB(c Case) bool { return c.DType == FP32 && c.Cols*4 >= 1<<20 }
func rmsNormRingWins(c Case) bool {
	return c.DType == FP32 && c.Cols*4 >= 256<<10 || c.DType == BF16 && c.Cols*2 >= 512<<10
}
func layerNormRingWins(c Case) bool { return c.DType == FP32 && c.Cols*4 >= 256<<10 }
func softmaxRingWins(c Case) bool {
	return rowRingWins1MiB(c) || c.DType == BF16 && c.Cols*2 >= 512<<10
}

// withRowRing is chooser choose, but where wins says row_ring is the family's fastest plan for the case (nil:
// nowhere) and rowRingOn allows it, the row_ring plan — with 16-byte packs only: the single-element kernels
// (odd widths) copy through registers, correct but not pipelined, and were not timed.
func withRowRing(choose func(c Case, cc, sms int) rowPlan, wins func(Case) bool) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if wins != nil && rowRingOn && wins(c) {
			if p, ok := rowRingPlan(c, cc); ok && p.vec {
				return p
			}
		}
		return choose(c, cc, sms)
	}
}

// Where two rows a pass beats the family's choice before it — one row a pass, rowRingPlan's 64 KiB slices in 4 ×
// 256 threads — on both an H100 and an H200 (TestCUDARowTune, pct of the suite's copy, 2^28 elements; H100 two
// runs, H200 two runs): fp32 rows of 256 KiB (4096×65536),
//
//   - LayerNorm in 16 × 128 threads, 16 KiB slices, the first column data loaded early (ring2e): H100 94.5% against
//     91.1 and 91.2%, H200 85.9% against 83.5 and 83.1% (ring2 in rowRingPlan2's 8 × 256: H100 92.3 and 92.2%,
//     H200 87.4 and 87.1%, the better H200 figure but too close to the H100's 92% goal; ring2 in 16 × 128: 94.2
//     and 94.0%, 84.0 and 83.8%): the chunk's w and b, loaded once for two rows, halve the L2 traffic that bounds
//     the one-row ring;
//   - RMSNorm in rowRingPlan2's 8 × 256 threads: H100 95.0 and 95.3% against 94.9 and 94.8%, H200 92.9 and 93.2%
//     against 90.2 and 89.9% (ring2e there: 94.5%, 92.6%).
//
// Elsewhere the families' plans stay. Where the pair's slices would exceed 32 KiB (fp32 rows of 1 MiB: 16 blocks of
// 64 KiB, a ring of 128 KiB and one block a multiprocessor) it loses by 20 points or more (LayerNorm H100 61.6%,
// ring2e 66.0%, against 86.8–87.3%); at 16384 columns one block holding the row stays ahead (LayerNorm fp32 H100
// 98.3% against 92.5% at best), and the bf16 rows do not win on both GPUs: LayerNorm 16384 (H100 90.0 and 90.2%
// against 89.2 and 89.0% for the loop, H200 79.3 and 79.1% against 89.3 and 89.2%), 65536 (H100 88.5 and 87.3%
// against 93.7 and 94.0% for the block holding the row), 262144 (H100 80.6 and 81.1% against 80.6 and 80.1%, H200
// 65.6 and 66.0% against 66.9 and 67.1% for the cluster holding it); RMSNorm 65536 (H200 89.1% against 81.5%,
// H100 93.6% against 95.2 and 95.3%), 262144 (H200 85.5% against 82.8 and 82.4%, H100 92.1 and 91.8% against
// 92.8 and 92.9%) win on the H200 alone, and rmsNormRing2 takes them by its slower-GPU rule. Rows of 512 KiB (fp32
// 131072, not on the grid) were not timed and keep one row a pass.
func rowRing2Wins(c Case) bool { return c.DType == FP32 && c.Cols*4 == 256<<10 }

// rmsNormRing2 is RMSNorm's plan of two rows a pass where it wins: fp32 rows of 256 KiB (rowRing2Wins) and bf16
// rows of 512 KiB in rowRingPlan2's clusters (8 × 256 and 16 × 256), bf16 rows of 128 KiB in twice its blocks, of
// 128 threads (8 × 128, 16 KiB slices). On the bf16 rows the GPUs disagree (TestCUDARowTune, pct of the suite's
// copy, H100 two runs, H200 two): 4096×65536 8 × 128 reads 94.0 and 93.3% on an H100 against 95.2 and 95.0% for one
// block holding the row, and 87.9 and 87.7% on an H200 against 81.1 and 81.8%; 1024×262144 in 16 × 256 reads 91.9
// and 92.0% against 92.8 and 92.8% for row_ring (H100), 85.7 and 85.5% against 82.8 and 82.4% (H200). Where the GPUs
// disagree the plan whose slower GPU is faster is taken, as long as the other stays at its goal (92% at 65536
// columns, 90% at 262144). On sm_90 row_res (rowres.go) now comes first for the bf16 rows of 128 KiB.
func rmsNormRing2(c Case, cc int) (rowPlan, bool) {
	d, ok := rowRingPlan2(c, cc)
	switch {
	case !ok:
		return rowPlan{}, false
	case rowRing2Wins(c) || c.DType == BF16 && c.Cols*2 == 512<<10:
		return d, true
	case c.DType == BF16 && c.Cols*2 == 128<<10:
		return rowRingShape(c, cc, 2*d.cluster, 128, 0, 2)
	}
	return rowPlan{}, false
}

// softmaxRing is Softmax's row_ring plan where it wins in other sizes than rowRingPlan's: fp32 rows of 256 KiB
// (65536 columns) in clusters of 8 × 128 threads, 32 KiB slices and a ring of one slice. The GPUs disagree
// (TestCUDARowTune, pct of the suite's copy): 94.7 and 94.7% on an H100 against 96.6 and 96.6% for row_dsmem in 4 ×
// 256, 90.8 and 90.7% on an H200 against 87.4 and 87.1%; the ring's slower GPU is the faster one and the H100 stays
// above its 92% goal.
func softmaxRing(c Case, cc int) (rowPlan, bool) {
	if c.DType != FP32 || c.Cols*4 != 256<<10 {
		return rowPlan{}, false
	}
	return rowRingShape(c, cc, 8, 128, 0, 1)
}

// layerNormRing2 is LayerNorm's plan of two rows a pass where it wins (rowRing2Wins): twice rowRingPlan2's blocks
// (16 KiB slices) of 128 threads, a ring of the pair's slices, the first column data loaded early (ring2e).
func layerNormRing2(c Case, cc int) (rowPlan, bool) {
	d, ok := rowRingPlan2(c, cc)
	if !rowRing2Wins(c) || !ok {
		return rowPlan{}, false
	}
	p, ok := rowRingShape(c, cc, 2*d.cluster, 128, 0, 2)
	p.early = ok
	return p, ok
}

// withRowRingPlan is chooser choose, but where plan gives the family's own row_ring plan of the case (two rows a
// pass, or other sizes than rowRingPlan's; it wins there) and rowRingOn allows it, that plan (16-byte packs only).
func withRowRingPlan(choose func(c Case, cc, sms int) rowPlan, plan func(Case, int) (rowPlan, bool)) func(c Case, cc, sms int) rowPlan {
	return func(c Case, cc, sms int) rowPlan {
		if rowRingOn {
			if p, ok := plan(c, cc); ok && p.vec {
				return p
			}
		}
		return choose(c, cc, sms)
	}
}

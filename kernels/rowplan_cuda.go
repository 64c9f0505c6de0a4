//go:build cuda

package kernels

import "fmt"

// The CUDA side of the row plans (rowplan.go): every row family's fused launcher records its plan's kernel
// through launchRow, which checks that the plan covers the row and picks the grid and the module. The kernels
// are templates written once — cuda/rowmap.cuh (warp, block, loop, cluster, cstream over a family's Op),
// cuda/rowdsmem.cuh (row_dsmem), cuda/rowring.cuh (row_ring), cuda/rowres.cuh (row_res) and cuda/rowgrid.cuh
// (row_grid) — instantiated in each
// family's module under the names rowFamily.kernel gives.

// rowMapSM90 is whether the launchers of the row families with sm90All, GELU and SwiGLU take their kernels from
// the family's _sm90 module on sm_90 (the same kernels compiled for compute_90: bf16 outputs round with
// cvt.rn.bf16x2, two a instruction, see rm_store in cuda/rowmap.cuh); the sweep turns it off to compare.
var rowMapSM90 = true

// rowMapModule is the module a launch of the family takes its kernels from.
func rowMapModule(l cudaLaunch) string { return rowMapModuleOf(l.Module(), l.CC()) }

// rowMapModuleOf is the module a launch on a GPU of compute capability cc takes family module's kernels from.
func rowMapModuleOf(module string, cc int) string {
	if rowMapSM90 && cc >= 90 {
		return module + "_sm90"
	}
	return module
}

// launchRow records the launch of plan p's kernel of row family rf with args, which every kernel of the family
// takes alike (rows and cols among them). RMSNorm's teams (rowBlock, rowTeam) take more and are launched by
// rmsNormFusedCUDA.
func launchRow(l cudaLaunch, rf *rowFamily, p rowPlan, args ...any) {
	name := rf.kernel(p, l.DType)
	e := 1
	if p.vec {
		e = 16 / l.DType.Size()
		if l.Cols%e != 0 {
			l.Fail(fmt.Errorf("%s: %d columns do not allow 16-byte accesses", name, l.Cols))
			return
		}
	}
	mod := l.Module()
	if rf.sm90All {
		mod = rowMapModule(l)
	}
	switch p.kind {
	case rowCluster, rowCStream, rowDSMEM, rowRing:
		if l.CC() < 90 || !p.vec && p.kind != rowDSMEM && p.kind != rowRing {
			l.Fail(fmt.Errorf("%s: clusters need compute capability 9.0 (this GPU: %d) and 16-byte accesses", name, l.CC()))
			return
		}
		if int64(l.Rows)*int64(p.cluster) >= 1<<31 {
			l.Fail(fmt.Errorf("%s: %d rows × a cluster of %d", name, l.Rows, p.cluster))
			return
		}
		mod = l.Module() + "_sm90"
	}
	if p.xa {
		if l.CC() != 90 || !rf.hasXA(p) {
			l.Fail(fmt.Errorf("%s: plan %v: the st.async exchange is built for the cluster kernels of some families, "+
				"in sm_90a modules: compute capability 9.0 (this GPU: %d)", name, p, l.CC()))
			return
		}
		mod = l.Module() + "_x_sm90a"
	}
	const block = 256 // warp and lanes plans
	switch p.kind {
	case rowWarp:
		if 32*p.nv*e < l.Cols {
			l.Fail(fmt.Errorf("%s: a warp × %d does not cover %d columns", name, p.nv*e, l.Cols))
			return
		}
		l.KernelIn(mod, name, ceilDiv(l.Rows, block/32*p.rows), block, args...)
	case rowLanes:
		if p.lanes*p.nv*e < l.Cols {
			l.Fail(fmt.Errorf("%s: %d lanes × %d do not cover %d columns", name, p.lanes, p.nv*e, l.Cols))
			return
		}
		l.KernelIn(mod, name, ceilDiv(l.Rows, block/p.lanes), block, args...)
	case rowBlock:
		if p.threads*p.nv*e < l.Cols {
			l.Fail(fmt.Errorf("%s: %d threads × %d do not cover %d columns", name, p.threads, p.nv*e, l.Cols))
			return
		}
		if p.threads > rowBlockMaxThreads(p) {
			l.Fail(fmt.Errorf("%s: blocks of %d threads (built for at most %d)", name, p.threads, rowBlockMaxThreads(p)))
			return
		}
		if p.lead > 0 && (!p.vec || rf.leadOf(l.DType, p.threads) != p.lead) {
			l.Fail(fmt.Errorf("%s: plan %v: no such look-ahead kernel is built", name, p))
			return
		}
		if rowWide(p) || p.lead > 0 {
			if l.CC() < 90 {
				l.Fail(fmt.Errorf("%s: built for compute capability 9.0 (this GPU: %d)", name, l.CC()))
				return
			}
			mod = l.Module() + "_sm90"
		}
		l.KernelIn(mod, name, l.Rows, p.threads, args...)
	case rowCluster:
		if p.cluster*p.threads*p.nv*e < l.Cols {
			l.Fail(fmt.Errorf("%s: %d × %d threads × %d do not cover %d columns", name, p.cluster, p.threads, p.nv*e, l.Cols))
			return
		}
		if p.cluster > 8 { // a non-portable size (rowXACluster16), given at launch
			l.KernelCluster(mod, name, l.Rows*p.cluster, p.threads, p.cluster, 0, args...)
			return
		}
		l.KernelIn(mod, name, l.Rows*p.cluster, p.threads, args...)
	case rowCStream:
		l.KernelIn(mod, name, l.Rows*p.cluster, p.threads, args...)
	case rowDSMEM:
		if p.cluster < 2 || p.cluster > rowDSMEMMaxBlocks {
			l.Fail(fmt.Errorf("%s: clusters of %d blocks (2 … %d)", name, p.cluster, rowDSMEMMaxBlocks))
			return
		}
		l.KernelCluster(mod, name, l.Rows*p.cluster, p.threads, p.cluster, rowDSMEMBytes(p, l.Case), args...)
	case rowRing:
		smem, pass := rowRingSmem(p, l.Case), p.rowsAPass()
		if why := rowRingForm(rf, p); why != "" {
			l.Fail(fmt.Errorf("%s: plan %v: %s", name, p, why))
			return
		}
		if p.cluster < 1 || p.cluster > rowRingMaxBlocks || p.threads < 32 || p.threads > rowRingMaxThreads ||
			p.ring < pass*rowRingRowChunks(p, l.Case) || smem > rowRingMaxBytes {
			l.Fail(fmt.Errorf("%s: plan %v: clusters of 1 … %d blocks of 32 … %d threads, a ring of at least a pass's "+
				"slices (%d chunks) in at most %d B (this one: %d B)", name, p, rowRingMaxBlocks, rowRingMaxThreads,
				pass*rowRingRowChunks(p, l.Case), rowRingMaxBytes, smem))
			return
		}
		launchPersistent(l, mod, name, p, smem, ceilDiv(l.Rows, pass), args...) // at most one cluster a pass (of one or two rows)
	case rowRes:
		if p.cluster > 1 { // row_res_cluster (rowXARes), from the _x_sm90a module (p.xa, above)
			if why := rowXAResCheck(rf, p, l.Case, l.CC()); why != "" {
				l.Fail(fmt.Errorf("%s: plan %v: %s", name, p, why))
				return
			}
			launchPersistent(l, mod, name, p, rowResSmem(rf, p, l.Case), l.Rows, args...) // at most one cluster a row
			return
		}
		if why := rowResCheck(rf, p, l.Case, l.CC()); why != "" {
			l.Fail(fmt.Errorf("%s: plan %v: %s", name, p, why))
			return
		}
		// Persistent: as many blocks as the GPU runs at once, at most one a group of rows.
		mod, smem := l.Module()+"_sm90", rowResSmem(rf, p, l.Case)
		grid := min(l.ResidentTMA(mod, name, p.threads*p.group, 1, smem), ceilDiv(l.Rows, p.group))
		if l.Err() != nil {
			return
		}
		if grid < 1 {
			l.Fail(fmt.Errorf("%s: no block of %d threads with %d B of shared memory fits this GPU", name, p.threads*p.group, smem))
			return
		}
		l.KernelCluster(mod, name, grid, p.threads*p.group, 1, smem, args...)
	case rowGrid:
		if !rf.grid {
			l.Fail(fmt.Errorf("%s: row_grid is not built for this family", name))
			return
		}
		if l.CC() < 90 {
			l.Fail(fmt.Errorf("%s: built for compute capability 9.0 (this GPU: %d)", name, l.CC()))
			return
		}
		// Every block resident: the most whole groups of the blocks the GPU holds at once, each with its slots
		// (rows × a group's blocks) and the launch counters, zeroed once (tags tell launches apart after that).
		mod, smem := l.Module()+"_sm90", rowGridSmem(p)
		resident := l.ResidentTMA(mod, name, p.threads, 1, smem)
		if l.Err() != nil {
			return
		}
		if why := rowGridCheck(p, l.Case, l.CC(), resident); why != "" {
			l.Fail(fmt.Errorf("%s: plan %v: %s", name, p, why))
			return
		}
		blocks, per := rowGridBlocks(p, resident)
		slots := l.Alloc(int64(l.Rows)*int64(per)*rowGridSlotBytes, true)
		ctl := l.Alloc(rowGridCtlBytes, true)
		l.KernelCooperative(mod, name, blocks, p.threads, smem, append(append([]any{}, args...), p.groups, p.lag, slots, ctl)...)
	case rowLoop:
		l.KernelIn(mod, name, l.Rows, p.threads, args...)
	default:
		l.Fail(fmt.Errorf("%s: %v is not a plan of this family", name, p))
	}
}

// launchPersistent launches kernel name of module mod as a persistent grid of plan p's clusters (p.cluster blocks
// of p.threads threads, smem bytes of shared memory each): as many clusters as the GPU runs at once, at most limit;
// the kernels loop over their rows. A GPU that fits none fails the launch.
func launchPersistent(l cudaLaunch, mod, name string, p rowPlan, smem, limit int, args ...any) {
	ncl := min(l.ResidentTMA(mod, name, p.threads, p.cluster, smem)/p.cluster, limit)
	if l.Err() != nil {
		return
	}
	if ncl < 1 {
		l.Fail(fmt.Errorf("%s: no cluster of %d blocks × %d threads with %d B of shared memory each fits this GPU",
			name, p.cluster, p.threads, smem))
		return
	}
	l.KernelCluster(mod, name, ncl*p.cluster, p.threads, p.cluster, smem, args...)
}

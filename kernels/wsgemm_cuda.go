//go:build cuda

package kernels

// cuda/ptx/wsgemm_sm90a.ptx comes from the Hopper toolchain: its go:generate line is in sm90a_generate.go.

import (
	"fmt"
	"math"

	"gorgonia.org/cu"

	"github.com/kernelwatch/kernelwatch/harness"
)

// wsModule is the wgmma GEMM's module. Its name is not the GEMM family's ("gemm"), so the family's Load does
// not load it with the mma.sync kernels: the launcher's first use loads it (in Prepare, outside any timing),
// on compute capability 9.0 only.
const wsModule = "wsgemm_sm90a"

// wsGEMM records one launch of plan p's kernel with epilogue act (cuda/wsgemm_sm90a.cu; "" none, "gelu" or
// "swiglu" the FFN's FC1: wsPlan.kernelAct): y[m, n] = act(x[m, k] · w[n, k]ᵀ), for swiglu y = silu(x·wᵀ) ⊙
// (x·wuᵀ), w and wu each [n, k] read in boxes of bn/2 rows (wu is nil otherwise). The
// tensor maps read x and w in k-tiles of 64 (128 bytes, the 128-byte swizzle's row), boxes of 128 rows of x
// and bn rows of w — half of the shared operand's box where a cluster pair splits its load — and read zeros
// past M, N and K. The grid is persistent: as many blocks (clusters) as the GPU holds at once, at most one
// per work unit.
func (l cudaLaunch) wsGEMM(p wsPlan, act string, x, w, wu, y *harness.DeviceBuffer, m, n, k int) {
	if l.Err() != nil {
		return
	}
	name := p.kernelAct(act)
	if !gemmUsesWGMMA(l.CC(), true) {
		l.Fail(fmt.Errorf("%s: wgmma needs compute capability 9.0 (sm_90a), this GPU is %d.%d: %w",
			name, l.CC()/10, l.CC()%10, ErrNotImplemented))
		return
	}
	if err := mmaCheckDims(m, n, k); err != nil {
		l.Fail(fmt.Errorf("%s: %w", name, err))
		return
	}
	if act != "" && p.cluster > 1 {
		l.Fail(fmt.Errorf("%s: the %s epilogue has no cluster kernels (wsFFNPlans)", name, act))
		return
	}
	if (act == "swiglu") != (wu != nil) {
		l.Fail(fmt.Errorf("%s: a second weight (W_up) goes with the swiglu epilogue and only with it", name))
		return
	}
	if m > math.MaxInt32-2*wsBM || n > math.MaxInt32-2*p.bn {
		l.Fail(fmt.Errorf("%s: %d × %d outputs: tensor-map coordinates are 32-bit", name, m, n))
		return
	}
	boxX, boxW := wsBM, p.bn
	switch {
	case p.cluster > 1 && p.share == 'b':
		boxW /= 2
	case p.cluster > 1:
		boxX /= 2
	case act == "swiglu":
		boxW /= 2
	}
	tmx := l.TensorMap(harness.TensorMap2D{Ptr: x, Rows: m, Cols: k, RowBytes: 2 * int64(k), BoxRows: boxX, BoxCols: wsBK, Swizzle128: true})
	tmw := l.TensorMap(harness.TensorMap2D{Ptr: w, Rows: n, Cols: k, RowBytes: 2 * int64(k), BoxRows: boxW, BoxCols: wsBK, Swizzle128: true})
	maps := []harness.TensorMap{tmx, tmw}
	if wu != nil {
		maps = append(maps, l.TensorMap(harness.TensorMap2D{Ptr: wu, Rows: n, Cols: k, RowBytes: 2 * int64(k), BoxRows: boxW, BoxCols: wsBK, Swizzle128: true}))
	}
	if p.st && (p.cluster > 1 || p.bn%64 != 0) {
		l.Fail(fmt.Errorf("%s: the store kernels are single blocks of tiles a multiple of 64 wide", name))
		return
	}
	resident := l.ResidentTMA(wsModule, name, wsThreads, p.cluster, p.smem())
	if l.Err() != nil {
		return
	}
	if !p.st {
		grid := min(p.unitsAct(m, n, act), resident/p.cluster) * p.cluster
		l.KernelTMA(wsModule, name, grid, wsThreads, p.cluster, p.smem(), maps, y, m, n, k, p.group)
		return
	}
	// The store kernels: the third map is W_up's (swiglu) or w's in boxes of the split last wave's narrow
	// tiles (w's own when there is none); y's map in 64 × 64 boxes when its rows are whole 16-byte units
	// at a 16-byte aligned address (the copy engine's rule), else the epilogue stores from registers and the
	// map, all zeros, is not read.
	tail, split, grid := p.wsTailSplit(m, n, k, resident, act)
	if wu == nil {
		tmn := tmw
		if split > 1 && !p.ksplit {
			tmn = l.TensorMap(harness.TensorMap2D{Ptr: w, Rows: n, Cols: k, RowBytes: 2 * int64(k), BoxRows: p.bn / split, BoxCols: wsBK, Swizzle128: true})
		}
		maps = append(maps, tmn)
	}
	var tmy harness.TensorMap
	tstore := n%8 == 0 && uint64(y.Ptr())%16 == 0
	if tstore {
		tmy = l.TensorMap(harness.TensorMap2D{Ptr: y, Rows: m, Cols: n, RowBytes: 2 * int64(n), BoxRows: 64, BoxCols: 64, Swizzle128: true})
	}
	maps = append(maps, tmy)
	// A split along K: the parts' fp32 slots, and the tail tiles' counters, cleared once here (the last part
	// of each tile sets its counter back to zero).
	var ws, cnt cu.DevicePtr
	if split > 1 && p.ksplit {
		ws = l.Alloc(p.wsWorkspace(tail, split), false)
		cnt = l.Alloc(4*int64(tail), true)
	}
	l.KernelTMA(wsModule, name, grid, wsThreads, 1, p.smem(), maps, y, m, n, k, p.group, tail, split, b2i(tstore),
		b2i(p.ksplit), ws, cnt)
}

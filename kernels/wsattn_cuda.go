//go:build cuda

package kernels

// cuda/ptx/wsattn_sm90a.ptx comes from the Hopper toolchain: its go:generate line is in sm90a_generate.go.

import (
	"fmt"
	"math"
	"slices"

	"github.com/kernelwatch/kernelwatch/harness"
)

// wsAttnModule is the wgmma attention's module, a name of its own (not "attention_sm90a"), so that the
// family's Load does not load it with the mma.sync kernels: the launcher's first use loads it (in Prepare,
// outside any timing), on compute capability 9.0 only.
const wsAttnModule = "wsattn_sm90a"

// wsAttention records one launch of plan p's kernel for the case's mask: O = attention(Q, K, V), each
// (batch·heads, t, d) bf16. The tensor maps read them as (d, t, batch·heads) in boxes of 64 columns (the
// 128-byte swizzle's row) × p.bm query rows (Q) or p.bn key rows (K, V), rows past t as zeros; one block per
// p.bm queries of a (batch, head).
func (l cudaLaunch) wsAttention(p wsAttnPlan, q, k, v, o *harness.DeviceBuffer) {
	if l.Err() != nil {
		return
	}
	nbh, nt, d := int64(l.Dims[0])*int64(l.Dims[1]), int64(l.Dims[2]), l.Dims[3]
	name := p.kernel(l.Variant)
	if !slices.Contains(p.masks(), l.Variant) {
		l.Fail(fmt.Errorf("%s: the module has no such kernel (plan %v holds masks %v): %w", name, p, p.masks(), ErrNotImplemented))
		return
	}
	if !attentionUsesWGMMA(l.CC(), d, true) || p.d != d {
		l.Fail(fmt.Errorf("%s: needs compute capability 9.0 (sm_90a) and head dim %d; this GPU is %d.%d, the head dim %d: %w",
			name, p.d, l.CC()/10, l.CC()%10, d, ErrNotImplemented))
		return
	}
	blocks := nbh * int64(ceilDiv(int(nt), p.bm))
	if blocks >= 1<<31 || nt > math.MaxInt32-int64(p.bm) || nbh > math.MaxInt32 {
		l.Fail(fmt.Errorf("%s: %d × %d queries: too many blocks or tensor-map coordinates past 32 bits", name, nbh, nt))
		return
	}
	tm := func(b *harness.DeviceBuffer, rows int) harness.TensorMap {
		return l.TensorMap3D(harness.TensorMap3D{Ptr: b, Planes: int(nbh), Rows: int(nt), Cols: d, RowBytes: 2 * int64(d),
			PlaneBytes: 2 * int64(d) * nt, BoxRows: rows, BoxCols: 64, Swizzle128: true})
	}
	maps := []harness.TensorMap{tm(q, p.bm), tm(k, p.bn), tm(v, p.bn)}
	l.KernelTMA(wsAttnModule, name, int(blocks), p.threads(), 1, p.smem(), maps, o, nbh, nt, attentionScaleLog2(d))
}

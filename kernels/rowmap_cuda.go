//go:build cuda

package kernels

import "fmt"

// The fused CUDA kernels of the reduce-then-map row families (LayerNorm, Softmax) are one set of templates,
// cuda/rowmap.cuh, instantiated in each family's module under the same names: <prefix>_warp_*, _block_*, _loop_*
// and, in <module>_sm90, _cluster_*. rowMapPlan picks one per case, as rmsNormPlan does for RMSNorm.

// rowMapKind is how a fused row kernel covers the rows.
type rowMapKind uint8

const (
	rowMapWarp    rowMapKind = iota // one warp for `rows` rows at once
	rowMapBlock                     // one block per row, the row in registers
	rowMapCluster                   // sm_90: a thread-block cluster of `cluster` blocks per row, the row in registers
	rowMapLoop                      // one block per row of any width, reading it twice
	rowMapCStream                   // sm_90: a cluster of `cluster` blocks per row, each streaming its share twice
)

// rowMapSM90 is whether the launchers of LayerNorm, Softmax, GELU and SwiGLU take their kernels from the
// family's _sm90 module on sm_90 (the same kernels compiled for compute_90: bf16 outputs round with
// cvt.rn.bf16x2, two a instruction, see rm_store in cuda/rowmap.cuh); the sweep turns it off to compare.
var rowMapSM90 = true

// rowMapModule is the module a launch of the family takes its kernels from.
func rowMapModule(l *cudaLaunch) string {
	if rowMapSM90 && l.cc() >= 90 {
		return l.module + "_sm90"
	}
	return l.module
}

// rowMapPlan is one way to run a row kernel: blocks of threads threads, vec: 16-byte accesses (else one element
// per access), nv accesses per thread (warp, block, cluster: the row's share in registers; loop: in flight).
type rowMapPlan struct {
	kind    rowMapKind
	rows    int // warp: rows per warp
	cluster int // cluster: blocks per row
	vec     bool
	nv      int
	threads int
}

// rowMapChoosePlan is rmsNormChoosePlan's choice (measured for RMSNorm on an H200, see there), the persistent
// team replaced by the loop kernel where no plan holds the row in registers:
//
//   - rows of up to 32·8 accesses: one warp, several rows a warp when shorter;
//   - few rows (fewer than two per multiprocessor): one block per row, two accesses a thread;
//   - rows of up to 1024 threads' worth: one block per row, eight accesses a thread (16 single elements when
//     the columns do not allow 16-byte accesses);
//   - longer rows on sm_90 (16-byte accesses): a cluster of up to 8 blocks, the smallest blocks (at least 256
//     threads) that cover the row with 8: several blocks a multiprocessor overlap one block's reduction with
//     another's loads (fp32 4096×65536 on an H200: 8×256 78–82% of the copy, 2×1024 47–73%);
//   - longer still, odd widths past 16384, or no clusters: the loop kernel.
//
// The families adjust it where they measured otherwise (layerNormChoosePlan, softmaxChoosePlan).
func rowMapChoosePlan(c Case, cc, sms int) rowMapPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*8*e:
		n := ceilPow2(ceilDiv(c.Cols, 32*e))
		if !vec {
			return rowMapPlan{kind: rowMapWarp, rows: 1, nv: n}
		}
		return rowMapPlan{kind: rowMapWarp, rows: 8 / n, vec: true, nv: n}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rowMapPlan{kind: rowMapBlock, vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rowMapPlan{kind: rowMapBlock, vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.Cols <= 8*1024*nv*e:
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*nv*e)), 256), 1024)
		return rowMapPlan{kind: rowMapCluster, cluster: ceilPow2(ceilDiv(c.Cols, t*nv*e)), vec: true, nv: nv, threads: t}
	}
	return rowMapPlan{kind: rowMapLoop, vec: vec, nv: 4, threads: 1024}
}

// kernel is the plan's kernel name in the family's modules.
func (p rowMapPlan) kernel(prefix string, dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch p.kind {
	case rowMapWarp:
		return fmt.Sprintf("%s_warp_%s_%s%dr%d", prefix, d, v, p.nv, p.rows)
	case rowMapBlock:
		return fmt.Sprintf("%s_block_%s_%s%d", prefix, d, v, p.nv)
	case rowMapCluster:
		return fmt.Sprintf("%s_cluster_%s_v%d_c%d", prefix, d, p.nv, p.cluster)
	case rowMapCStream:
		return fmt.Sprintf("%s_cstream_%s_c%d", prefix, d, p.cluster)
	}
	return fmt.Sprintf("%s_loop_%s_%s", prefix, d, v)
}

func (p rowMapPlan) String() string {
	v := map[bool]string{true: "v", false: "s"}[p.vec]
	switch p.kind {
	case rowMapWarp:
		return fmt.Sprintf("warp %s%d×%d rows", v, p.nv, p.rows)
	case rowMapBlock:
		return fmt.Sprintf("block %s%d t=%d", v, p.nv, p.threads)
	case rowMapCluster:
		return fmt.Sprintf("cluster %d×%d v%d", p.cluster, p.threads, p.nv)
	case rowMapCStream:
		return fmt.Sprintf("cstream %d×%d", p.cluster, p.threads)
	}
	return fmt.Sprintf("loop %s t=%d", v, p.threads)
}

// rowMapLaunch records the launch of plan p's kernel of the family's module (kernels prefix_*) with args, which
// every kernel of the family takes alike.
func rowMapLaunch(l *cudaLaunch, prefix string, p rowMapPlan, args ...any) {
	name := p.kernel(prefix, l.DType)
	e := 1
	if p.vec {
		e = 16 / l.DType.Size()
		if l.Cols%e != 0 {
			l.fail(fmt.Errorf("%s: %d columns do not allow 16-byte accesses", name, l.Cols))
			return
		}
	}
	switch p.kind {
	case rowMapWarp:
		const block = 256
		if 32*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: a warp × %d does not cover %d columns", name, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(rowMapModule(l), name, ceilDiv(l.Rows, block/32*p.rows), block, args...)
	case rowMapBlock:
		if p.threads*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: %d threads × %d do not cover %d columns", name, p.threads, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(rowMapModule(l), name, l.Rows, p.threads, args...)
	case rowMapCluster, rowMapCStream:
		if l.cc() < 90 || !p.vec {
			l.fail(fmt.Errorf("%s: clusters need compute capability 9.0 (this GPU: %d) and 16-byte accesses", name, l.cc()))
			return
		}
		if p.kind == rowMapCluster && p.cluster*p.threads*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: %d × %d threads × %d do not cover %d columns", name, p.cluster, p.threads, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(l.module+"_sm90", name, l.Rows*p.cluster, p.threads, args...)
	default:
		l.kernelIn(rowMapModule(l), name, l.Rows, p.threads, args...)
	}
}

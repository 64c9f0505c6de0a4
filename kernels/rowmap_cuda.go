//go:build cuda

package kernels

import "fmt"

// The fused CUDA kernels of the reduce-then-map row families (LayerNorm, Softmax) are one set of templates,
// cuda/rowmap.cuh, instantiated in each family's module under the same names: <prefix>_warp_*, _block_*, _loop_*
// and, in <module>_sm90, _cluster_*. rowMapPlan picks one per case, as rmsNormPlan does for RMSNorm.

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

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/crossentropy.ptx cuda/crossentropy.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/crossentropy_sm90.ptx cuda/crossentropy.cu

import "fmt"

func init() {
	registerCUDA(CrossEntropyFamily, "crossentropy", crossEntropyFusedCUDA, crossEntropyNaiveCUDA)
}

// rowFusedModule is the module a fused launcher takes its kernels from: <module>_sm90 on compute capability 9.0
// and later (the same kernels compiled for sm_90, plus the clusters), else <module>.
func (l *cudaLaunch) rowFusedModule() string {
	if l.cc() >= 90 {
		return l.module + "_sm90"
	}
	return l.module
}

// launchRowPlan records the launch of plan p's kernel with args (each kernel takes …, rows, cols last).
func (l *cudaLaunch) launchRowPlan(p rowPlan, prefix string, args ...any) {
	name := p.kernel(prefix, l.DType)
	mod := l.rowFusedModule()
	args = append(args, l.Rows, l.Cols)
	e := 1
	if p.vec {
		e = 16 / l.DType.Size()
	}
	switch {
	case p.lanes > 0:
		const block = 256
		if p.lanes*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: %d lanes × %d do not cover %d columns", name, p.lanes, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(mod, name, ceilDiv(l.Rows, block/p.lanes), block, args...)
	case p.stream && p.cluster > 0:
		if int64(l.Rows)*int64(p.cluster) >= 1<<31 {
			l.fail(fmt.Errorf("%s: %d rows × a cluster of %d", name, l.Rows, p.cluster))
			return
		}
		l.kernelIn(l.module+"_sm90", name, l.Rows*p.cluster, p.threads, args...)
	case p.cluster > 0:
		if p.cluster*p.threads*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: %d × %d threads × %d do not cover %d columns", name, p.cluster, p.threads, p.nv*e, l.Cols))
			return
		}
		if int64(l.Rows)*int64(p.cluster) >= 1<<31 {
			l.fail(fmt.Errorf("%s: %d rows × a cluster of %d", name, l.Rows, p.cluster))
			return
		}
		l.kernelIn(l.module+"_sm90", name, l.Rows*p.cluster, p.threads, args...)
	case p.stream:
		l.kernelIn(mod, name, l.Rows, p.threads, args...)
	default:
		if p.threads*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("%s: %d threads × %d do not cover %d columns", name, p.threads, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(mod, name, l.Rows, p.threads, args...)
	}
}

// crossEntropyFusedCUDA: loss and dlogits in one pass over the logits (cuda/crossentropy.cu).
func crossEntropyFusedCUDA(l *cudaLaunch) {
	if l.Rows >= 1<<31 {
		l.fail(fmt.Errorf("crossentropy: %d rows", l.Rows))
		return
	}
	p := crossEntropyPlanFor(l.Case, l.cc(), l.sms())
	l.launchRowPlan(p, "xent", l.in[0], l.in[1], l.out[0], l.out[1])
}

// crossEntropyNaiveCUDA is the CPU's eager chain (crossEntropyNaive): max → x − max → exp → sum → log →
// log-softmax → gather (nll_loss), and for the gradient exp/sum → subtract the one-hot → zero ignored rows.
func crossEntropyNaiveCUDA(l *cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	labels := l.in[1]
	x := l.upcast(l.in[0].dense(cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	xs := l.bin(opSub, x, devPerRow(m), rows, cols)
	e := l.un(opExp, xs, rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	logS := l.un(opLog, devDense(s, 1), rows, 1)
	logp := l.bin(opSub, xs, devPerRow(logS.t), rows, cols)
	const block = 256
	l.kernel("xent_naive_loss", ceilDiv(rows, block), block, l.out[0], logp.t.ptr, labels, rows, cols)
	p := l.bin(opDiv, e, devPerRow(s), rows, cols)
	mask := l.tmpF32(rows)
	l.kernel("xent_naive_onehot", ceilDiv(rows, block), block, p.t.ptr, mask.ptr, labels, rows, cols)
	l.binary(opMul, l.out[1].dense(cols), p, devPerRow(mask), rows, cols)
}

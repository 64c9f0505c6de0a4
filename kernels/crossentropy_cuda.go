//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/crossentropy.ptx cuda/crossentropy.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/crossentropy_sm90.ptx cuda/crossentropy.cu

import "fmt"

func init() {
	registerCUDA(CrossEntropyFamily, "crossentropy", crossEntropyFusedCUDA, crossEntropyNaiveCUDA)
}

// rowPlan is how a fused row kernel (cuda/crossentropy.cu, the scale=row kernels of cuda/fp8quant.cu) covers
// the rows, after rmsNormPlan: a team of `lanes` lanes per row (256/lanes rows a block), one thread-block
// cluster of `cluster` blocks per row (sm_90), one block per row holding it in registers, or one block per row
// reading it twice (stream); blocks of threads threads, vec: 16-byte accesses (else one element per access),
// nv accesses a thread.
type rowPlan struct {
	lanes   int  // lanes per row (1 … 32); 0: not a team plan
	cluster int  // blocks per cluster; 0: not a cluster kernel
	stream  bool // read the row twice; with cluster > 0, a cluster per row streaming slices (sm_90, vec)
	vec     bool
	nv      int
	threads int
}

// rowChoosePlan gives each thread up to 128 bytes of a row in registers (8 16-byte accesses; 16 elements when
// the columns rule out 16-byte accesses), as rmsNormChoosePlan does:
//
//   - rows of up to 32·8 accesses (32·16 elements without 16-byte accesses): a team of the fewest lanes that
//     hold the row with 8 accesses (16 elements) each, so that the shuffles of the row's reduction and its
//     per-row work are shared by as many elements as possible (a whole warp on a 256-column bf16 row spent more
//     instructions on its reduction than on its elements);
//   - few rows (fewer than two per multiprocessor): one block per row, two accesses a thread, so that many
//     warps issue the row's loads;
//   - rows of up to 1024 threads' worth: one block per row;
//   - longer rows with 16-byte accesses on sm_90: a cluster of 2–8 1024-thread blocks (fp32 up to 262144
//     columns, bf16 up to 524288);
//   - anything else: one block of 1024 threads per row, reading the row twice (the second time mostly from
//     memory again: correct for any row, at about two thirds of the bandwidth).
func rowChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*nv*e:
		return rowPlan{lanes: ceilPow2(ceilDiv(c.Cols, nv*e)), vec: vec, nv: nv}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rowPlan{vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rowPlan{vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.Cols <= 8*1024*nv*e:
		return rowPlan{cluster: ceilPow2(ceilDiv(c.Cols, 1024*nv*e)), vec: true, nv: nv, threads: 1024}
	}
	return rowPlan{stream: true, vec: vec, nv: 4, threads: 1024}
}

// kernel is the plan's entry point among prefix_{team,block,cluster,stream}_{f32,bf16}_… (xent, fp8_row).
func (p rowPlan) kernel(prefix string, dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch {
	case p.lanes > 0:
		return fmt.Sprintf("%s_team_%s_%s%dl%d", prefix, d, v, p.nv, p.lanes)
	case p.stream && p.cluster > 0:
		return fmt.Sprintf("%s_cstream_%s_c%d", prefix, d, p.cluster)
	case p.cluster > 0:
		return fmt.Sprintf("%s_cluster_%s_v%d_c%d", prefix, d, p.nv, p.cluster)
	case p.stream:
		return fmt.Sprintf("%s_stream_%s_%s", prefix, d, v)
	}
	return fmt.Sprintf("%s_block_%s_%s%d", prefix, d, v, p.nv)
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

// crossEntropyPlanFor picks the plan of a case; the tests swap it.
var crossEntropyPlanFor = crossEntropyChoosePlan

// crossEntropyChoosePlan is rowChoosePlan, except for rows wider than 512 threads' worth on sm_90 (16-byte
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
func crossEntropyChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || cc < 90 || c.Cols <= 512*8*e {
		return rowChoosePlan(c, cc, sms)
	}
	if c.DType == FP32 {
		if t := ceilPow2(ceilDiv(c.Cols, 8*8*e)); t <= 512 {
			return rowPlan{cluster: 8, vec: true, nv: 8, threads: max(t, 64)}
		}
		return rowPlan{stream: true, cluster: 8, vec: true, nv: 8, threads: 512}
	}
	if cs := ceilPow2(ceilDiv(c.Cols, 512*8*e)); cs <= 8 {
		return rowPlan{cluster: max(cs, 2), vec: true, nv: 8, threads: 512}
	}
	return rowPlan{stream: true, cluster: 8, vec: true, nv: 8, threads: 512}
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

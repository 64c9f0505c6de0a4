//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/softmax.ptx cuda/softmax.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/softmax_sm90.ptx cuda/softmax.cu

func init() { registerCUDA(SoftmaxFamily, "softmax", softmaxFusedCUDA, softmaxNaiveCUDA) }

// softmaxPlanFor picks the plan of a case; the tests swap it.
var softmaxPlanFor = softmaxChoosePlan

// softmaxChoosePlan is rowMapChoosePlan's, but where that takes a cluster of blocks of 512 threads or more
// (rows past 65536 fp32 or 131072 bf16 elements): a cluster of 8 blocks streaming their share twice (cstream),
// 16 packs a thread. Holding the row, such blocks run one or two to a multiprocessor, and nothing overlaps
// their two exponentials an element with memory traffic; streaming blocks are small (1024×262144 on an H200:
// fp32 70% of the copy against 40% for the cluster of 8×1024; bf16 67% against 61–62%).
func softmaxChoosePlan(c Case, cc, sms int) rowMapPlan {
	p := rowMapChoosePlan(c, cc, sms)
	if p.kind == rowMapCluster && p.threads >= 512 {
		e := 16 / c.DType.Size()
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*16*e)), 256), 1024)
		return rowMapPlan{kind: rowMapCStream, cluster: 8, vec: true, nv: 4, threads: t}
	}
	return p
}

// softmaxFusedCUDA runs one kernel of cuda/softmax.cu: the row read once, (max, Σ e^(x−max)) reduced in one
// round, the output computed from registers.
func softmaxFusedCUDA(l *cudaLaunch) {
	p := softmaxPlanFor(l.Case, l.cc(), l.sms())
	rowMapLaunch(l, "softmax", p, l.in[0], l.out[0], l.Rows, l.Cols)
}

// softmaxNaiveCUDA: max → x − max → exp → sum → divide, the CPU's chain (softmaxNaive).
func softmaxNaiveCUDA(l *cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(l.in[0].dense(cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	e := l.un(opExp, l.bin(opSub, x, devPerRow(m), rows, cols), rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	l.binary(opDiv, l.out[0].dense(cols), e, devPerRow(s), rows, cols)
}

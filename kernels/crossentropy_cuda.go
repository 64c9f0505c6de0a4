//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/crossentropy.ptx cuda/crossentropy.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/crossentropy_sm90.ptx cuda/crossentropy.cu

import "fmt"

func init() {
	registerCUDA(CrossEntropyFamily, "crossentropy", crossEntropyFusedCUDA, crossEntropyNaiveCUDA)
}

// crossEntropyFusedCUDA: loss and dlogits in one pass over the logits (cuda/crossentropy.cu).
func crossEntropyFusedCUDA(l *cudaLaunch) {
	if l.Rows >= 1<<31 {
		l.fail(fmt.Errorf("crossentropy: %d rows", l.Rows))
		return
	}
	p := crossEntropyPlanFor(l.Case, l.cc(), l.sms())
	launchRow(l, crossEntropyRows, p, l.in[0], l.in[1], l.out[0], l.out[1], l.Rows, l.Cols)
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

//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/crossentropy.ptx cuda/crossentropy.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/crossentropy_sm90.ptx cuda/crossentropy.cu

import "fmt"

func init() {
	registerCUDA(CrossEntropyFamily, "crossentropy", crossEntropyFusedCUDA, crossEntropyNaiveCUDA)
}

// crossEntropyFusedCUDA: loss and dlogits in one pass over the logits (cuda/crossentropy.cu).
func crossEntropyFusedCUDA(l cudaLaunch) {
	if l.Rows >= 1<<31 {
		l.Fail(fmt.Errorf("crossentropy: %d rows", l.Rows))
		return
	}
	p := crossEntropyPlanFor(l.Case, l.CC(), l.SMs())
	launchRow(l, crossEntropyRows, p, l.In[0], l.In[1], l.Out[0], l.Out[1], l.Rows, l.Cols)
}

// crossEntropyNaiveCUDA is the CPU's eager chain (crossEntropyNaive): max → x − max → exp → sum → log →
// log-softmax → gather (nll_loss), and for the gradient exp/sum → subtract the one-hot → zero ignored rows.
func crossEntropyNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	labels := l.In[1]
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	xs := l.bin(opSub, x, devPerRow(m), rows, cols)
	e := l.un(opExp, xs, rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	logS := l.un(opLog, devDense(s, 1), rows, 1)
	logp := l.bin(opSub, xs, devPerRow(logS.t), rows, cols)
	const block = 256
	l.Kernel("xent_naive_loss", ceilDiv(rows, block), block, l.Out[0], logp.t.ptr, labels, rows, cols)
	p := l.bin(opDiv, e, devPerRow(s), rows, cols)
	mask := l.tmpF32(rows)
	l.Kernel("xent_naive_onehot", ceilDiv(rows, block), block, p.t.ptr, mask.ptr, labels, rows, cols)
	l.binary(opMul, denseOf(l.Out[1], cols), p, devPerRow(mask), rows, cols)
}

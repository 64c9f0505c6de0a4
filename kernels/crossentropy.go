package kernels

import (
	"math"
)

// CrossEntropyFamily computes, for logits [rows, vocab = cols] and integer labels [rows], the loss per row
// (logsumexp − logit of the label; 0 for an IgnoreIndex row) and dlogits = softmax − onehot(label) (a zero row
// for an IgnoreIndex row), in one launch.
var CrossEntropyFamily = &Family{
	Name: "CrossEntropy",
	Inputs: []Operand{
		{Name: "logits", Len: matrixLen, Gen: normal(0, 2)},
		{Name: "labels", DType: Int32, Len: rowsLen, Gen: Dist{Kind: Labels}},
	},
	Outputs:   []Operand{{Name: "loss", DType: FP32, Len: rowsLen}, {Name: "dlogits", Len: matrixLen}},
	Reference: crossEntropyRef,
}

func init() { registerCPU(CrossEntropyFamily, crossEntropyFused, crossEntropyNaive) }

func crossEntropyRef(c Case, in [][]float64) [][]float64 {
	x, labels := in[0], in[1]
	loss, dl := make([]float64, c.Rows), make([]float64, len(x))
	for r := range c.Rows {
		label := int(labels[r])
		if label == IgnoreIndex {
			continue
		}
		row, d := x[r*c.Cols:(r+1)*c.Cols], dl[r*c.Cols:(r+1)*c.Cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - m)
		}
		lse := m + math.Log(s)
		loss[r] = lse - row[label]
		for j, v := range row {
			d[j] = math.Exp(v - lse)
		}
		d[label]--
	}
	return [][]float64{loss, dl}
}

// crossEntropyFused writes dlogits with softmaxRow (one read of the logits from memory); the loss needs only
// the row's maximum, its log-sum and the label's logit.
func crossEntropyFused(l cpuLaunch) {
	x, labels, loss, dl, cols := actOf(l.In[0]), l.In[1].I32, l.Out[0].F32, actOf(l.Out[1]), l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		var tx, td [tile]float32
		for r := r0; r < r1; r++ {
			base, label := r*cols, int(labels[r])
			if label == IgnoreIndex {
				loss[r] = 0
				for c0 := 0; c0 < cols; c0 += tile {
					d := dl.dst(base+c0, min(tile, cols-c0), &td)
					clear(d)
					dl.store(base+c0, d)
				}
				continue
			}
			// loss = logsumexp − x[label], kept relative to the row maximum: x − m is exact, whereas m + log s
			// rounded to float32 would lose log s's low bits when the logits are large.
			m, logS := softmaxRow(x, dl, base, cols, label, &tx, &td)
			loss[r] = (m - x.at(base+label)) + logS
		}
	})
}

// crossEntropyNaive is the eager chain: max → x − max → exp → sum → log → log-softmax → gather (nll loss),
// and for the gradient: exp/sum → subtract one-hot → zero ignored rows.
func crossEntropyNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	labels := l.In[1].I32
	x := l.upcast(dense(actOf(l.In[0]), cols), rows, cols)
	m := l.red(opMax, x, rows, cols, cols)
	xs := l.bin(opSub, x, perRow(m), rows, cols)
	e := l.un(opExp, xs, rows, cols)
	s := l.red(opSum, e, rows, cols, cols)
	logS := l.un(opLog, dense(act{f32: s}, 1), rows, 1)
	logp := l.bin(opSub, xs, perRow(logS.t.f32), rows, cols)
	// nll_loss: gather the label's log-probability, 0 for ignored rows.
	loss := l.Out[0].F32
	l.Parallel(rows, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			loss[r] = 0
			if lb := int(labels[r]); lb != IgnoreIndex {
				loss[r] = -logp.t.f32[r*cols+lb]
			}
		}
	})
	p := l.bin(opDiv, e, perRow(s), rows, cols)
	// grad[arange, labels] -= 1, and a per-row mask that zeroes ignored rows.
	mask := l.ScratchF32(rows)
	l.Parallel(rows, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			mask[r] = 0
			if lb := int(labels[r]); lb != IgnoreIndex {
				p.t.f32[r*cols+lb]--
				mask[r] = 1
			}
		}
	})
	l.binary(opMul, dense(actOf(l.Out[1]), cols), p, perRow(mask), rows, cols)
}

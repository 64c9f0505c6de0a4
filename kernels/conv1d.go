package kernels

import "fmt"

// Conv1DFamily is a causal depthwise conv1d with resets, as in Mamba blocks and the RL suite's conv layers:
// x (batch, t, d), weight (d, k), bias (d), resets (batch, t);
//
//	y[b,t,c] = bias[c] + Σ_{j<k} weight[c,j] · x[b, t−(k−1)+j, c]
//
// over the inputs at or after t = 0 and at or after the last reset at or before t (sequence.go). The variant
// resets=none has no mask at all (a plain causal conv, what cuDNN offers), so that the pair resets=none /
// resets=0.1 shows what honouring resets costs.
var Conv1DFamily = &Family{
	Name:       "Conv1D",
	DimKeys:    []string{"batch", "t", "d", "k"},
	VariantKey: "resets",
	Variants:   []string{"none", fmt.Sprint(seqResetRate)},
	Grid: map[string][][]int{
		"cpu": {{4, 256, 256, 4}, {16, 128, 64, 2}},
		// cuda: an RL batch (256 episodes of 1024 steps, 2^26 elements), short RL sequences with k = 2, and one
		// 60 FPS frame of a batch-1 Mamba-sized block with k = 3 (benchmarks.yaml: budget).
		"cuda": {{256, 1024, 256, 4}, {256, 128, 256, 2}, {1, 2048, 1536, 3}},
		// test: k = 2, 3, 4; channels that are and are not multiples of a 16-byte vector; sequences that are
		// not multiples of a tile; one step.
		"test": {{2, 37, 20, 4}, {3, 100, 64, 3}, {1, 300, 9, 2}, {2, 1, 8, 4}, {1, 129, 136, 4}},
	},
	Inputs: []Operand{
		{Name: "x", Len: seqLen, Gen: normal(0, 1)},
		{Name: "weight", Len: func(c Case) int { return c.Dims[2] * c.Dims[3] }, Gen: normal(0, 0.5)},
		{Name: "bias", Len: func(c Case) int { return c.Dims[2] }, Gen: normal(0, 0.5)},
		resetsOperand(conv1dMaskLen),
	},
	Outputs:   []Operand{{Name: "y", Len: seqLen}},
	Reference: conv1dRef,
}

func init() { registerCPU(Conv1DFamily, conv1dFused, conv1dNaive) }

// conv1dMaskLen is the reset mask's length: none in the variant without resets.
func conv1dMaskLen(c Case) int {
	if c.Variant == "none" {
		return 0
	}
	return seqMaskLen(c)
}

func conv1dRef(c Case, in [][]float64) [][]float64 {
	x, w, bias, resets := in[0], in[1], in[2], in[3]
	nb, nt, nc, k := c.Dims[0], c.Dims[1], c.Dims[2], c.Dims[3]
	y := make([]float64, len(x))
	for b := range nb {
		start := 0 // the first input the outputs from t on may see
		for t := range nt {
			if len(resets) > 0 && resets[b*nt+t] != 0 {
				start = t
			}
			for ch := range nc {
				acc := bias[ch]
				for j := range k {
					if tau := t - (k - 1) + j; tau >= start {
						acc += w[ch*k+j] * x[(b*nt+tau)*nc+ch]
					}
				}
				y[(b*nt+t)*nc+ch] = acc
			}
		}
	}
	return [][]float64{y}
}

// conv1dFirst is the first input step that output (b, t) sees: t−(k−1), or later after a reset or at the start.
func conv1dFirst(resets []int32, nt, b, t, k int) int {
	first := max(t-(k-1), 0)
	if resets != nil {
		for s := t; s > first; s-- {
			if resets[b*nt+s] != 0 {
				return s
			}
		}
	}
	return first
}

// conv1dFused computes each output row from the input rows in its window, one pass over (batch, t) rows, a
// tile of channels at a time; the weights are widened once per Run, tap by tap (the stand-in for registers).
func conv1dFused(l cpuLaunch) {
	x, w, bias, y := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[2]), actOf(l.Out[0])
	var resets []int32 // nil: no resets
	if len(l.In[3].I32) > 0 {
		resets = l.In[3].I32
	}
	nt, nc, k := l.Dims[1], l.Dims[2], l.Dims[3]
	taps := make([]float32, (k+1)*nc) // taps[j·nc + c] = weight[c, j]; the last row is the bias
	for c := range nc {
		for j := range k {
			taps[j*nc+c] = w.at(c*k + j)
		}
		taps[k*nc+c] = bias.at(c)
	}
	l.Parallel(l.Dims[0]*nt, func(r0, r1 int) {
		var tx, ty [tile]float32
		for r := r0; r < r1; r++ {
			b, t := r/nt, r%nt
			first := conv1dFirst(resets, nt, b, t, k)
			for c0 := 0; c0 < nc; c0 += tile {
				n := min(tile, nc-c0)
				ys := y.dst(r*nc+c0, n, &ty)
				copy(ys, taps[k*nc+c0:k*nc+c0+n])
				for tau := first; tau <= t; tau++ {
					xs := x.load((b*nt+tau)*nc+c0, n, &tx)
					ws := taps[(k-1-(t-tau))*nc+c0:][:n]
					for i, v := range xs {
						ys[i] += ws[i] * v
					}
				}
				y.store(r*nc+c0, ys)
			}
		}
	})
}

// conv1dNaive is the eager chain: age = steps since the last reset (a cumulative max over the mask), acc =
// bias broadcast, then for each shift s < k one masked shifted multiply-add acc += [age ≥ s]·w[:, k−1−s]·x[t−s],
// then y = acc rounded to the storage dtype. Every pass has its own fp32 intermediate or updates acc.
func conv1dNaive(l cpuLaunch) {
	nb, nt, nc, k := l.Dims[0], l.Dims[1], l.Dims[2], l.Dims[3]
	rows := nb * nt
	var age []float32 // nil: no resets, the age is t itself
	if resets := l.In[3].I32; len(resets) > 0 {
		age = l.ScratchF32(rows)
		l.Parallel(nb, func(b0, b1 int) {
			for b := b0; b < b1; b++ {
				last := 0
				for t := range nt {
					if resets[b*nt+t] != 0 {
						last = t
					}
					age[b*nt+t] = float32(t - last)
				}
			}
		})
	}
	acc := l.un(opCopy, perCol(actOf(l.In[2])), rows, nc)
	x, w := actOf(l.In[0]), actOf(l.In[1])
	for s := range k {
		l.Parallel(rows, func(r0, r1 int) {
			for r := r0; r < r1; r++ {
				t := r % nt
				a := float32(t)
				if age != nil {
					a = age[r]
				}
				if a < float32(s) {
					continue
				}
				for ch := range nc {
					acc.t.f32[r*nc+ch] += w.at(ch*k+k-1-s) * x.at((r-s)*nc+ch)
				}
			}
		})
	}
	l.unary(opCopy, dense(actOf(l.Out[0]), nc), acc, rows, nc)
}

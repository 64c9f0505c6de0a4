package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// recurrentFamilies are the families with per-timestep resets.
var recurrentFamilies = []*Family{SelectiveScanFamily, LSTMFamily, SLSTMFamily, MLSTMFamily}

// resetPattern sets row b's reset flags (t steps) to one of five patterns, by b mod 5: none; at t = 0 only;
// three consecutive steps in the middle; the last step only; every step with probability 1/4.
func resetPattern(r *rand.Rand, b int, flags []float32) {
	clear(flags)
	nt := len(flags)
	switch b % 5 {
	case 1:
		flags[0] = 1
	case 2:
		for t := nt / 3; t < min(nt/3+3, nt); t++ {
			flags[t] = 1
		}
	case 3:
		flags[nt-1] = 1
	case 4:
		for t := range flags {
			if r.IntN(4) == 0 {
				flags[t] = 1
			}
		}
	}
}

// seqResetPatterns generates a [batch, t] reset operand with resetPattern per row; t is the index of the time
// dimension in Case.Dims.
func seqResetPatterns(t int) harness.Generator {
	return func(r *rand.Rand, c Case, dst []float32) {
		nt := c.Dims[t]
		for b := 0; b*nt < len(dst); b++ {
			resetPattern(r, b, dst[b*nt:(b+1)*nt])
		}
	}
}

// seqParams are the recurrent families' operands that have no batch or time axis (weights).
var seqParams = map[string]bool{"a_log": true, "dskip": true, "w_ih": true, "w_hh": true, "bias": true, "r": true}

// seqTimeDim is the index of the time dimension of each recurrent family's Dims.
var seqTimeDim = map[string]int{"SelectiveScan": 1, "LSTM": 1, "SLSTM": 2, "MLSTM": 2}

// TestRecurrentResets checks every recurrent family on every backend with the reset patterns of resetPattern —
// none, at the first step, consecutive, at the last step, random — over lengths that are not multiples of
// the kernels' time chunks (the families' "test" grids).
func TestRecurrentResets(t *testing.T) {
	harness.ForEachCase(t, recurrentFamilies, nil, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
		harness.Check(t, be, f, c, impl, map[string]harness.Generator{"resets": seqResetPatterns(seqTimeDim[f.Name])})
	})
}

// seqHeadsFirst names the recurrent families whose tensors put the heads before time ([batch, heads, t, …]);
// the others are [batch, t, …].
var seqHeadsFirst = map[string]bool{"MLSTM": true}

// TestRecurrentResetsMatter checks the references themselves: a reset makes a row's outputs from that step on
// independent of everything before it, and without it they depend on it. Two rows get the same inputs from
// step r on and different ones before; with a reset at r (in both rows) their outputs from r on must be
// equal, and without one they must differ.
func TestRecurrentResetsMatter(t *testing.T) {
	for _, f := range recurrentFamilies {
		c := Case{DType: FP32, Dims: f.Grid["test"][0]}
		nb, nt := c.Dims[0], c.Dims[seqTimeDim[f.Name]]
		outer := 1
		if seqHeadsFirst[f.Name] {
			outer = c.Dims[1]
		}
		const rr = 5
		for _, reset := range []bool{true, false} {
			rng := rand.New(rand.NewPCG(harness.CaseSeed(t), 0))
			in := make([][]float64, len(f.Inputs))
			for i, o := range f.Inputs {
				host := make([]float32, o.Len(c))
				o.Gen.Sample(rng, c, host)
				if o.Name == "resets" {
					clear(host)
					if reset {
						host[rr], host[nt+rr] = 1, 1
					}
				}
				in[i] = make([]float64, len(host))
				for j, v := range host {
					in[i][j] = float64(v)
				}
				// Copy row 0 into row 1 from step rr on, in every operand with batch and time axes.
				if !seqParams[o.Name] && o.Name != "resets" {
					seqEach(in[i], nb, nt, outer, rr, func(i0, i1 int) { in[i][i1] = in[i][i0] })
				}
			}
			out := f.Reference(c, in)[0]
			same := true
			seqEach(out, nb, nt, outer, rr, func(i0, i1 int) { same = same && out[i0] == out[i1] })
			if same != reset {
				t.Errorf("%s: reset %v: outputs of rows 0 and 1 after step %d equal: %v", f.Name, reset, rr, same)
			}
		}
	}
}

// seqEach calls fn(i0, i1) for the indices of the elements of rows 0 and 1 at steps ≥ from in x, a tensor of nb
// rows, each of outer blocks of nt steps.
func seqEach(x []float64, nb, nt, outer, from int, fn func(i0, i1 int)) {
	row := len(x) / nb
	per := row / (outer * nt) // elements a step
	for i := range row {
		if (i/per)%nt >= from {
			fn(i, row+i)
		}
	}
}

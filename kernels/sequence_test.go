package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// resetPatterns are the reset masks every sequence family is checked with, besides the random 10% of its
// declaration: none; one at t = 0; consecutive resets mid-sequence and one on the last step; every step.
var resetPatterns = map[string]harness.Generator{
	"none":  func(_ *rand.Rand, _ Case, dst []float32) { clear(dst) },
	"first": func(_ *rand.Rand, c Case, dst []float32) { resetsAt(c, dst, func(t, _ int) bool { return t == 0 }) },
	"runs": func(_ *rand.Rand, c Case, dst []float32) {
		resetsAt(c, dst, func(t, nt int) bool { return t >= nt/3 && t < nt/3+3 || t == nt-1 })
	},
	"every": func(_ *rand.Rand, c Case, dst []float32) { resetsAt(c, dst, func(int, int) bool { return true }) },
}

// resetsAt fills a (batch, seq) mask with 1 where reset(t, seq) holds.
func resetsAt(c Case, dst []float32, reset func(t, nt int) bool) {
	nt := c.Dims[1]
	for i := range dst {
		dst[i] = 0
		if reset(i%nt, nt) {
			dst[i] = 1
		}
	}
}

// testResetPatterns checks family f (its test grid) on every backend with each reset pattern.
func testResetPatterns(t *testing.T, f *Family) {
	for name, pattern := range resetPatterns {
		t.Run(name, func(t *testing.T) {
			harness.ForEachCase(t, []*Family{f}, nil, func(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) {
				harness.Check(t, be, f, c, impl, map[string]harness.Generator{"resets": pattern})
			})
		})
	}
}

// testResetCutsHistory checks what a reset means, on every backend and impl, besides the reference: with a reset
// at step cut of every sequence, redrawing each (batch, seq, width) input at the steps before cut leaves every
// output at or after cut bit for bit unchanged, and changes some output before it. The family's inputs named in
// seqInputs are (batch, seq, width) tensors; its outputs are too.
func testResetCutsHistory(t *testing.T, f *Family, c Case, cut int, seqInputs ...string) {
	nt, width := c.Dims[1], seqLen(c)/seqMaskLen(c)
	rng := rand.New(rand.NewPCG(harness.CaseSeed(t), 3))
	host := make([][]float32, len(f.Inputs))
	for i, o := range f.Inputs {
		host[i] = make([]float32, o.Len(c))
		o.Gen.Sample(rng, c, host[i])
		if o.Name == "resets" {
			resetsAt(c, host[i], func(t, _ int) bool { return t == cut || t < cut && rng.IntN(4) == 0 })
		}
	}
	redrawn := make([][]float32, len(host))
	for i, o := range f.Inputs {
		redrawn[i] = slices.Clone(host[i])
		if !slices.Contains(seqInputs, o.Name) {
			continue
		}
		fresh := make([]float32, len(host[i]))
		o.Gen.Sample(rng, c, fresh)
		for r := range seqMaskLen(c) {
			if r%nt < cut {
				copy(redrawn[i][r*width:(r+1)*width], fresh[r*width:(r+1)*width])
			}
		}
	}
	fixed := func(inputs [][]float32) map[string]harness.Generator {
		gens := map[string]harness.Generator{}
		for i, o := range f.Inputs {
			gens[o.Name] = func(_ *rand.Rand, _ Case, dst []float32) { copy(dst, inputs[i]) }
		}
		return gens
	}
	for name, be := range harness.Backends() {
		for _, impl := range Impls {
			t.Run(fmt.Sprintf("%s/%s/%s", name, f.BenchName(c, impl), impl), func(t *testing.T) {
				a := harness.Check(t, be, f, c, impl, fixed(host)).Got
				b := harness.Check(t, be, f, c, impl, fixed(redrawn)).Got
				changed := false
				for o := range a {
					for i := range a[o] {
						if i/width%nt < cut {
							changed = changed || a[o][i] != b[o][i]
						} else if a[o][i] != b[o][i] {
							t.Fatalf("output %s[%d] (step %d, reset at %d) moved from %v to %v when earlier inputs changed",
								f.Outputs[o].Name, i, i/width%nt, cut, a[o][i], b[o][i])
						}
					}
				}
				if !changed {
					t.Error("no output before the reset changed with the inputs")
				}
			})
		}
	}
}

// TestNaiveStepChainsBenched: a naive chain of one launch per step is benchmarked on every device kind, and never
// beyond 1024 steps.
func TestNaiveStepChainsBenched(t *testing.T) {
	for _, f := range []*Family{LinearRecurrenceFamily, RTUFamily} {
		for _, kind := range []string{"cpu", "cuda"} {
			n := 0
			for _, c := range f.CasesOn(kind, nil) {
				if f.Skip(c, Naive) == "" {
					n++
					if c.Dims[1] > 1024 {
						t.Errorf("%s: naive benchmarked at %v", f.Name, c.Dims)
					}
				}
				if f.Skip(c, Fused) != "" {
					t.Errorf("%s: fused not benchmarked at %v", f.Name, c.Dims)
				}
			}
			if n == 0 {
				t.Errorf("%s: naive not benchmarked on %s", f.Name, kind)
			}
		}
	}
}

package kernels

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestLinearRecurrenceResets checks the recurrence against its reference with no resets, a reset at t = 0,
// consecutive resets and one on the last step, and a reset at every step (where h = b ⊙ x).
func TestLinearRecurrenceResets(t *testing.T) { testResetPatterns(t, LinearRecurrenceFamily) }

// TestLinearRecurrenceResetCutsHistory: a reset drops the state, so no earlier input reaches later outputs.
func TestLinearRecurrenceResetCutsHistory(t *testing.T) {
	for _, v := range LinearRecurrenceFamily.Variants {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Dims: []int{3, 300, 40}, Variant: v}
			testResetCutsHistory(t, LinearRecurrenceFamily, c, 150, "a", "b", "x")
		}
	}
}

// longMemory draws decays of modulus in [0.999, 1) — about a thousand steps of memory, so a state crosses
// many of a chunked scan's tiles — as (r cos θ, r sin θ) pairs, θ within ±0.01 (slow rotations).
func longMemory(r *rand.Rand, _ Case, dst []float32) {
	for i := 0; i < len(dst); i += 2 {
		radius, th := 0.999+0.001*r.Float64(), 2*math.Pi*(0.5+0.005*(2*r.Float64()-1))-math.Pi
		re, im := float32(radius*math.Cos(th)), float32(radius*math.Sin(th))
		dst[i] = re
		if i+1 < len(dst) {
			dst[i+1] = im
		}
	}
}

// rareResets marks about one step in 20000.
func rareResets(r *rand.Rand, _ Case, dst []float32) {
	for i := range dst {
		dst[i] = 0
		if r.IntN(20000) == 0 {
			dst[i] = 1
		}
	}
}

// TestLinearRecurrenceLong runs the fused implementations at T = 65536 with long memory (decays of modulus
// ≥ 0.999, resets about every 20000 steps), against the float64 reference, at the default tolerances. The
// bound holds for the fp32 state because the recurrence is well conditioned: a rounding error of relative size
// u = 2⁻²⁴ made at one step decays like the state itself, so the errors add up as a random walk over the
// memory length M = 1/(1 − |a|) and the relative error of h is about u·√(M/2) ≈ 1.3e-6 at |a| = 0.999 (bf16:
// the output's own rounding, 2⁻⁹, dominates). Decays closer to 1 would need a bound growing like √M.
func TestLinearRecurrenceLong(t *testing.T) {
	for name, be := range harness.Backends() {
		for _, v := range LinearRecurrenceFamily.Variants {
			for _, dt := range StorageDTypes {
				c := Case{DType: dt, Dims: []int{1, 65536, 8}, Variant: v}
				t.Run(name+"/"+LinearRecurrenceFamily.BenchName(c, Fused), func(t *testing.T) {
					harness.Check(t, be, LinearRecurrenceFamily, c, Fused, map[string]harness.Generator{"a": longMemory, "resets": rareResets})
				})
			}
		}
	}
}

// linRecHeinsen computes the recurrence in log space (Heinsen, "Efficient parallelization of a ubiquitous
// sequential computation", 2023), independently of linRecRef: within each stretch between resets,
//
//	h_t = exp(a*_t) · Σ_{k ≤ t} exp(log u_k − a*_k),  a*_t = Σ_{j ≤ t} log a_j (from the stretch's second step),
//
// with u = b ⊙ x and complex logarithms (negative reals have phase π), the sum a running log-sum-exp: a
// maximum m of the real parts and the sum of exp(z − m). It never multiplies a state by a decay.
func linRecHeinsen(c Case, in [][]float64) []float64 {
	a, b, x, resets := in[0], in[1], in[2], in[3]
	nb, nt, nd := c.Dims[0], c.Dims[1], c.Dims[2]
	cplx := c.Variant == "complex"
	step := 1
	if cplx {
		step = 2
	}
	at := func(v []float64, i int) complex128 {
		if cplx {
			return complex(v[i], v[i+1])
		}
		return complex(v[i], 0)
	}
	h := make([]float64, len(x))
	for bb := range nb {
		for d := 0; d < nd; d += step {
			var astar, sum complex128
			m := math.Inf(-1)
			for t := range nt {
				i := (bb*nt+t)*nd + d
				if t == 0 || resets[bb*nt+t] != 0 {
					astar, sum, m = 0, 0, math.Inf(-1)
				} else {
					astar += cmplx.Log(at(a, i))
				}
				if u := at(b, i) * at(x, i); u != 0 {
					z := cmplx.Log(u) - astar
					if real(z) > m {
						sum *= cmplx.Exp(complex(m-real(z), 0))
						m = real(z)
					}
					sum += cmplx.Exp(z - complex(m, 0))
				}
				v := cmplx.Exp(astar+complex(m, 0)) * sum
				if m == math.Inf(-1) {
					v = 0
				}
				h[i] = real(v)
				if cplx {
					h[i+1] = imag(v)
				}
			}
		}
	}
	return h
}

// TestLinearRecurrenceHeinsen holds the float64 sequential reference to the log-space form at T = 65536, with
// the declared decays (modulus 0.9–1: exp(−a*) reaches e^3400, which only the log-sum-exp survives), with long
// memory, with resets and without.
func TestLinearRecurrenceHeinsen(t *testing.T) {
	f := LinearRecurrenceFamily
	for _, v := range f.Variants {
		for _, gens := range []map[string]harness.Generator{
			nil, {"a": longMemory}, {"a": longMemory, "resets": rareResets}, {"resets": resetPatterns["none"]},
		} {
			c := Case{DType: FP32, Dims: []int{1, 65536, 4}, Variant: v}
			rng := rand.New(rand.NewPCG(harness.CaseSeed(t), uint64(len(gens))))
			in := make([][]float64, len(f.Inputs))
			for k, o := range f.Inputs {
				host := make([]float32, o.Len(c))
				if g := gens[o.Name]; g != nil {
					g(rng, c, host)
				} else {
					o.Gen.Sample(rng, c, host)
				}
				in[k] = make([]float64, len(host))
				for i, x := range host {
					in[k][i] = float64(x)
				}
			}
			want := f.Reference(c, in)[0]
			if err := harness.RelL2Within(linRecHeinsen(c, in), want, 1e-9); err != nil {
				t.Errorf("%s, %d generators replaced: log-space form against the sequential reference: %v", v, len(gens), err)
			}
		}
	}
}

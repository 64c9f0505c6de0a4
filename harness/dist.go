package harness

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Dist is the distribution an input is drawn from, declared once per operand so that it can be drawn two ways:
//
//   - Sample: host values from a math/rand source — what the correctness tests use, fresh every run, uploaded
//     and compared with the float64 reference;
//   - Backend.Fill: in place, by the backend, from the counter-based generator below — what the benchmarks use,
//     so that no input of up to 1 GiB is generated on the host and copied to the device. Element i of a fill
//     is a pure function of (seed, i): the same on every backend, in any order, in parallel.
//
// A distribution with only a Host function (Custom) cannot be filled in place; the harness samples and uploads
// it (small tables only).
type Dist struct {
	Kind     DistKind
	Mean, SD float64 // Normal
	Lo, Hi   float64 // Uniform; Polar: the radius
	P        float64 // Bernoulli
	// Host fills host values for Kind Custom.
	Host Generator
}

// Generator fills an input's host values (before rounding to its dtype) for case c from r: a Custom
// distribution's Host, or a test's replacement for an input's distribution (CheckCase).
type Generator = func(r *rand.Rand, c Case, dst []float32)

// DistKind names a Dist's family.
type DistKind int

// The distributions an input can be declared with.
const (
	Custom  DistKind = iota // Dist.Host only
	Normal                  // N(Mean, SD²)
	Labels                  // class labels of a cross-entropy row: uniform in [0, cols), about 1 in 8 IgnoreIndex
	RoPECos                 // a [rows, 64] RoPE table: cos((start + row) · 10000^(−2i/128)), start in [0, 4096)
	RoPESin                 // the same with sin
)

// The distributions of the sequence families' inputs.
const (
	Uniform   DistKind = RoPESin + 1 + iota // uniform on [Lo, Hi) (Hi itself by rounding to float32)
	Bernoulli                               // 1 with probability P, else 0 (a sequence's reset mask)
	Polar                                   // (r cos θ, r sin θ) pairs, r uniform on [Lo, Hi), θ on [−π, π)
)

// IgnoreIndex is the label of a Labels row that takes no part in the loss (PyTorch's ignore_index default).
const IgnoreIndex = -100

// RoPEHeadDim is the head dimension of the RoPE tables (RoPECos, RoPESin): 64 angles a position.
const RoPEHeadDim = 128

// Sample fills dst with fresh host values from r.
func (d Dist) Sample(r *rand.Rand, c Case, dst []float32) {
	switch d.Kind {
	case Normal:
		sampleNormal(r, d.Mean, d.SD, dst)
	case Labels:
		for i := range dst {
			if r.IntN(8) == 0 {
				dst[i] = IgnoreIndex
			} else {
				dst[i] = float32(r.IntN(c.Cols))
			}
		}
	case RoPECos, RoPESin:
		ropeTable(d.Kind, r.IntN(4096), dst)
	case Uniform:
		for i := range dst {
			dst[i] = float32(d.Lo + (d.Hi-d.Lo)*r.Float64())
		}
	case Bernoulli:
		for i := range dst {
			dst[i] = 0
			if r.Float64() < d.P {
				dst[i] = 1
			}
		}
	case Polar:
		for i := 0; i < len(dst); i += 2 {
			re, im := polarPair(d.Lo+(d.Hi-d.Lo)*r.Float64(), r.Float64())
			dst[i] = re
			if i+1 < len(dst) {
				dst[i+1] = im
			}
		}
	default:
		d.Host(r, c, dst)
	}
}

// polarPair is radius·(cos θ, sin θ) with θ = 2π·u − π.
func polarPair(radius, u float64) (re, im float32) {
	th := float64(2*math.Pi*u) - math.Pi // not fused, as on the device
	return float32(radius * math.Cos(th)), float32(radius * math.Sin(th))
}

// InPlace reports whether a backend can fill d itself (every kind but Custom).
func (d Dist) InPlace() bool { return d.Kind != Custom }

// sampleNormal draws N(mean, sd²) values. Large tensors are filled in parallel, in chunks with their own
// generators seeded from r, so the data stay a pure function of r.
func sampleNormal(r *rand.Rand, mean, sd float64, dst []float32) {
	const chunk = 1 << 20
	seeds := make([]uint64, (len(dst)+chunk-1)/chunk)
	for i := range seeds {
		seeds[i] = r.Uint64()
	}
	parallelChunks(len(dst), chunk, func(k, lo, hi int) {
		g := rand.New(rand.NewPCG(seeds[k], uint64(k)))
		for i := lo; i < hi; i++ {
			dst[i] = float32(mean + sd*g.NormFloat64())
		}
	})
}

// ropeTable fills a [rows, 64] table with f(position · 10000^(−2i/128)), positions from start.
func ropeTable(kind DistKind, start int, dst []float32) {
	const half = RoPEHeadDim / 2
	f := math.Cos
	if kind == RoPESin {
		f = math.Sin
	}
	for t := range len(dst) / half { // a table of tokens rows: the RoPE family's rows, a layer's t
		for i := range half {
			dst[t*half+i] = float32(f(float64(start+t) * math.Pow(10000, -2*float64(i)/RoPEHeadDim)))
		}
	}
}

// The counter-based generator (the CUDA twin is cuda/fill.cu, which must agree with this file):
//
//	h(seed, i) = SplitMix64's output for counter i: mix64(seed + (i+1)·0x9E3779B97F4A7C15)
//
// SplitMix64 is counter-based by construction (each output is a bijective mix of seed + counter), passes
// BigCrush, and costs a few integer multiplies, so a fill runs at memory speed on either backend.
// Normal values use Box–Muller on two 24-bit uniforms of h: u1 = (h>>40 + 1)/2²⁴ ∈ (0, 1] (exact in float32,
// so both sides take the same logarithm), u2 = (h>>16 mod 2²⁴)/2²⁴, z = √(−2 ln u1) · cos(2π u2), so |z| ≤ 5.8. Labels: IgnoreIndex when h>>61 is 0 (1 in 8), else
// (h mod 2³²) mod cols. RoPE tables take their start position, mix64(seed) mod 4096, and compute in float64.
// Uniform: lo + (hi − lo)·u with u = (h>>40)/2²⁴, in float64, rounded once (exactly the same on the device).
// Bernoulli: 1 when h>>11 < ⌊P·2⁵³⌋ (bernoulliThreshold). Polar: pair j = elements 2j, 2j+1 from h(seed, j):
// radius lo + (hi − lo)·(h>>40)/2²⁴, θ = 2π·((h>>16) mod 2²⁴)/2²⁴ − π, each element computed in float64.
const fillGamma = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// fillHash is h(seed, i).
func fillHash(seed uint64, i int) uint64 { return mix64(seed + uint64(i+1)*fillGamma) }

// fillNormal is element i of a Normal fill, as float32 arithmetic on the device computes it up to rounding.
func fillNormal(seed uint64, i int, mean, sd float64) float32 {
	h := fillHash(seed, i)
	u1 := (float64(h>>40) + 1) / (1 << 24)
	u2 := float64((h>>16)&0xFFFFFF) / (1 << 24)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return float32(mean + sd*z)
}

// fillLabel is element i of a Labels fill.
func fillLabel(seed uint64, i, cols int) float32 {
	h := fillHash(seed, i)
	if h>>61 == 0 {
		return IgnoreIndex
	}
	return float32(uint64(uint32(h)) % uint64(cols))
}

// fillUnit is the 24-bit uniform (h>>40)/2²⁴ ∈ [0, 1) and fillUniform lo + (hi − lo)·u, rounded once to float32
// (the float64 conversion keeps the product from being fused into the addition, as on the device).
func fillUnit(h uint64) float64 { return float64(h>>40) / (1 << 24) }

func fillUniform(seed uint64, i int, lo, hi float64) float32 {
	return float32(lo + float64((hi-lo)*fillUnit(fillHash(seed, i))))
}

// bernoulliThreshold is ⌊p·2⁵³⌋: a Bernoulli fill element is 1 when h>>11 is below it.
func bernoulliThreshold(p float64) uint64 { return uint64(math.Ldexp(max(0, min(p, 1)), 53)) }

// ropeStart is the start position of a RoPE table fill.
func ropeStart(seed uint64) int { return int(mix64(seed) % 4096) }

// FillHost fills dst (host values, before rounding to the operand's dtype) the way Backend.Fill fills device
// memory: the reference the CUDA fill is tested against, and the CPU backend's Fill.
func (d Dist) FillHost(c Case, seed uint64, dst []float32) {
	switch d.Kind {
	case Normal:
		parallelChunks(len(dst), 1<<16, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = fillNormal(seed, i, d.Mean, d.SD)
			}
		})
	case Labels:
		for i := range dst {
			dst[i] = fillLabel(seed, i, c.Cols)
		}
	case RoPECos, RoPESin:
		ropeTable(d.Kind, ropeStart(seed), dst)
	case Uniform:
		parallelChunks(len(dst), 1<<16, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = fillUniform(seed, i, d.Lo, d.Hi)
			}
		})
	case Bernoulli:
		th := bernoulliThreshold(d.P)
		for i := range dst {
			dst[i] = 0
			if fillHash(seed, i)>>11 < th {
				dst[i] = 1
			}
		}
	case Polar:
		parallelChunks(len(dst), 1<<16, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				h := fillHash(seed, i/2)
				re, im := polarPair(d.Lo+float64((d.Hi-d.Lo)*fillUnit(h)), float64((h>>16)&0xFFFFFF)/(1<<24))
				dst[i] = re
				if i%2 == 1 {
					dst[i] = im
				}
			}
		})
	default:
		panic("harness: FillHost of a Custom distribution")
	}
}

// parallelChunks calls f(k, lo, hi) for the k-th chunk [lo, hi) of n elements, on up to GOMAXPROCS goroutines.
func parallelChunks(n, chunk int, f func(k, lo, hi int)) {
	if n == 0 {
		return // an empty operand (an input a variant does not use)
	}
	if n <= chunk {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for k := 0; k*chunk < n; k++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(k, k*chunk, min((k+1)*chunk, n))
		}()
	}
	wg.Wait()
}

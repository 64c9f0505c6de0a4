// Package synth generates synthetic benchmark suites with known truth, in
// the Go benchmark format, to test the comparator's error rates end to end:
// an A/A suite (identical distributions on both sides) must almost never
// fail the gate, and injected regressions must be found.
//
// The noise model follows what benchmark timings look like: log-normal
// multiplicative noise with a per-benchmark coefficient of variation drawn
// from [CVMin, CVMax], plus a fraction of one-sided outliers (a sample
// slowed by up to OutlierMax, as from an interrupt or a cold cache). Each
// benchmark reports three units: sec/op (noisy), B/s derived from the same
// time (so perfectly anti-correlated with it, like a real bandwidth figure)
// and B/op, which is exact.
package synth

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
)

// Suite describes a synthetic suite.
type Suite struct {
	Benchmarks  int     // number of benchmarks
	Samples     int     // samples per side
	CVMin       float64 // smallest coefficient of variation, e.g. 0.005
	CVMax       float64 // largest, e.g. 0.03
	OutlierRate float64 // fraction of samples that are outliers, e.g. 0.05
	OutlierMax  float64 // outliers are slower by U(0, OutlierMax), e.g. 0.30
	Seed        uint64
}

// Default is the suite of the comparator's acceptance tests: 100
// benchmarks × 3 units × 10 samples, CV 0.5–3%, 5% outliers up to +30%.
func Default(seed uint64) Suite {
	return Suite{Benchmarks: 100, Samples: 10, CVMin: 0.005, CVMax: 0.03, OutlierRate: 0.05, OutlierMax: 0.30, Seed: seed}
}

// Effect changes one benchmark on the current side.
type Effect struct {
	// Time multiplies the current side's time (1.12 = 12% slower); 0 means 1.
	Time float64
	// Rate multiplies only the current side's B/s figure (0.88 = a 12%
	// bandwidth drop with unchanged time); 0 means 1.
	Rate float64
}

// Name returns the name of benchmark i.
func Name(i int) string {
	return fmt.Sprintf("Kernel%d/dtype=fp32/rows=%d/cols=%d/impl=fused", i/8, 1<<(8+i%8), 4096)
}

// bench is one synthetic benchmark: its true time in seconds, coefficient
// of variation and bytes per op.
type bench struct{ t, cv, bytes float64 }

// benches draws the suite's benchmarks from rng.
func (s Suite) benches(rng *rand.Rand) []bench {
	benches := make([]bench, s.Benchmarks)
	for i := range benches {
		benches[i] = bench{
			t:     1e-6 * math.Exp(rng.Float64()*8), // 1 µs … 3 ms
			cv:    s.CVMin + rng.Float64()*(s.CVMax-s.CVMin),
			bytes: float64(int64(1) << (10 + rng.IntN(20))),
		}
	}
	return benches
}

// sample is one noisy time of b: log-normal noise of b's CV, and with
// probability OutlierRate slower by up to OutlierMax.
func (s Suite) sample(rng *rand.Rand, b bench) float64 {
	t := b.t * math.Exp(rng.NormFloat64()*b.cv)
	if rng.Float64() < s.OutlierRate {
		t *= 1 + rng.Float64()*s.OutlierMax
	}
	return t
}

// Stream draws a suite's samples one at a time, each from a generator of
// its own seeded by the suite's seed, the benchmark, the side and the
// round, so the samples a benchmark gets do not depend on how many rounds
// the others got: what tests of sampling some benchmarks for more rounds
// than others need. Its benchmarks are those Generate draws for the same
// Suite.
type Stream struct {
	s       Suite
	benches []bench
	effects map[int]Effect
}

// Stream returns the suite's sample stream, with effects applied to the
// current side's time of the benchmarks they are keyed by (Effect.Rate is
// ignored: a stream draws times only).
func (s Suite) Stream(effects map[int]Effect) *Stream {
	return &Stream{s: s, benches: s.benches(rand.New(rand.NewPCG(s.Seed, 0x6b65726e656c))), effects: effects}
}

// Time returns benchmark i's time in seconds on side 0 (baseline) or 1
// (current) in round k.
func (st *Stream) Time(i, side, k int) float64 {
	rng := rand.New(rand.NewPCG(st.s.Seed^0x73747265616d, uint64(i)<<33|uint64(k)<<1|uint64(side&1)))
	t := st.s.sample(rng, st.benches[i])
	if e, ok := st.effects[i]; ok && side == 1 && e.Time != 0 {
		t *= e.Time
	}
	return t
}

// Generate returns the baseline and current result files of the suite, with
// effects applied to the benchmarks they are keyed by.
func (s Suite) Generate(effects map[int]Effect) (base, cur []byte) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x6b65726e656c))
	benches := s.benches(rng)
	header := "goos: linux\ngoarch: amd64\npkg: example.com/kernels\nclass: cpu-amd64-synthetic\n" +
		"Unit B/s better=higher\nUnit B/op assume=exact\n"
	var b, c bytes.Buffer
	b.WriteString(header + "commit: base\n")
	c.WriteString(header + "commit: head\n")
	for round := 0; round < s.Samples; round++ {
		for side, w := range []*bytes.Buffer{&b, &c} {
			for i, bn := range benches {
				t := s.sample(rng, bn)
				rate := 1.0
				if e, ok := effects[i]; ok && side == 1 {
					if e.Time != 0 {
						t *= e.Time
					}
					if e.Rate != 0 {
						rate = e.Rate
					}
				}
				bps := bn.bytes / t * rate
				fmt.Fprintf(w, "Benchmark%s-8\t%d\t%.6g ns/op\t%.6g MB/s\t%d B/op\n",
					Name(i), 1000, t*1e9, bps/1e6, int64(bn.bytes/16))
			}
		}
	}
	return b.Bytes(), c.Bytes()
}

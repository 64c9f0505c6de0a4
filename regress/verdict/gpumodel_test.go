package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// gpuCheckModel is a whole-suite GPU check in the shape of the real one (benchmarks.yaml's GPU rules, the
// suite's 370 benchmarks): half fused (gate fail), half naive (gate warn), each with ns/op, GB/s and pct-copy
// derived from it sample by sample, and p99-ns (warn) with its own noise; 10 processes a side, log-normal
// process-to-process noise: 0.2% for fused kernels, 1.5% for naive chains, decodeCV for the ten launch-bound
// decode shapes. Benchmark 0, a decode fused kernel, is slowed by shift.
func gpuCheckModel(t *testing.T, seed uint64, decodeCV, shift float64) *report.Report {
	const yaml = "version: 1\ndefaults: {threshold: 1.5%}\n" +
		"units:\n  p99-ns: {better: lower, gate: warn}\n  GB/s: {better: higher}\n  pct-copy: {better: higher}\n" +
		"rules:\n  - match: \"*/impl=naive\"\n    gate: warn\n"
	rng := rand.New(rand.NewPCG(seed, 7))
	draw := func(mean, cv float64) []float64 {
		v := make([]float64, 10)
		for j := range v {
			v[j] = mean * math.Exp(cv*rng.NormFloat64())
		}
		return v
	}
	gbps := func(ns float64) float64 { return 1e6 / ns }
	pct := func(ns float64) float64 { return 100 * gbps(ns) / 3000 }
	var series []*group.Series
	for i := range 370 {
		impl, cv := "fused", 0.002
		if i >= 185 {
			impl, cv = "naive", 0.015
		} else if i < 10 {
			cv = decodeCV
		}
		f := 1.0
		if i == 0 {
			f = shift
		}
		name := fmt.Sprintf("K%d/impl=%s", i%185, impl)
		b, c := draw(1000, cv), draw(1000*f, cv)
		series = append(series,
			&group.Series{Name: name, Unit: "sec/op", Base: b, Cur: c},
			&group.Series{Name: name, Unit: "GB/s", Base: mapped(b, gbps), Cur: mapped(c, gbps)},
			&group.Series{Name: name, Unit: "pct-copy", Base: mapped(b, pct), Cur: mapped(c, pct)},
			&group.Series{Name: name, Unit: "p99-ns", Base: draw(1100, 3*cv), Cur: draw(1100, 3*cv)})
	}
	return judge(t, yaml, "", series...)
}

// TestGPUCheckModel holds the correction to what issue 10 asks of a whole-suite GPU check, on the model above.
// With the decode shapes' measured spread (cold medians of a whole-suite A/A on an H100 moved by at most 1.08%
// between processes: a process CV of about 0.9%) identical code fails at most 1 check in 20 and a +3% slowdown
// of one decode kernel is found in at least 19 of 20; at a CV of 1.3% (what a +3.04% slowdown's p = 0.012 in
// a real check suggests) it is still found in 18 of 20. Before the correction ran per gate and counted derived
// units once, this model found it in 130 of 200 checks at 1.3% (now 197; identical code then failed 1 and now
// 8 of 200 checks at that spread, 0 at 0.9%).
func TestGPUCheckModel(t *testing.T) {
	const checks = 20
	for _, tc := range []struct {
		cv           float64
		maxAA, minUp int
	}{{0.009, 1, 19}, {0.013, checks, 18}} {
		aaFail, found := 0, 0
		for s := range uint64(checks) {
			if tc.maxAA < checks && gpuCheckModel(t, s, tc.cv, 1).Verdict == report.Fail {
				aaFail++
			}
			for _, c := range gpuCheckModel(t, 1000+s, tc.cv, 1.03).Comparisons {
				if c.Name == "K0/impl=fused" && c.Unit == "sec/op" && c.Verdict == report.Regression {
					found++
				}
			}
		}
		t.Logf("decode CV %.1f%%: identical code failing %d / %d checks; +3%% decode slowdown found in %d / %d",
			100*tc.cv, aaFail, checks, found, checks)
		if aaFail > tc.maxAA || found < tc.minUp {
			t.Errorf("decode CV %.1f%%: identical code failing %d / %d checks (want ≤ %d); +3%% found %d (want ≥ %d)",
				100*tc.cv, aaFail, checks, tc.maxAA, found, tc.minUp)
		}
	}
}

// mapped returns f of every value: a unit derived sample by sample from another.
func mapped(v []float64, f func(float64) float64) []float64 {
	o := make([]float64, len(v))
	for j, x := range v {
		o[j] = f(x)
	}
	return o
}

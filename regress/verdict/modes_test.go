package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// gpuRules judges like benchmarks.yaml's largest GPU shapes: 0.5%.
const gpuRules = "version: 1\ndefaults: {threshold: 0.5%}\n"

// mixed returns nLow processes around low and nHigh around high, each
// with a ±0.2% spread, interleaved as processes would come.
func mixed(low float64, nLow int, high float64, nHigh int) []float64 {
	var out []float64
	for i := 0; i < nLow; i++ {
		out = append(out, low*(1+0.002*math.Sin(float64(i)*1.7)))
	}
	for i := 0; i < nHigh; i++ {
		out = append(out, high*(1+0.002*math.Sin(float64(i)*2.3)))
	}
	return out
}

// TestTwoModeVerdicts covers the two-mode rules on RoPE-shaped data: every
// process at 720 or 837 µs.
func TestTwoModeVerdicts(t *testing.T) {
	const fast, slow = 720e-6, 837e-6
	for _, tc := range []struct {
		name      string
		base, cur []float64
		verdict   string
		more      bool   // WantsMoreRounds
		warning   string // in the comparison's warnings
		bN, cN    [2]int // the modes' sizes (0: no modes on that side)
	}{
		{"mix towards the slow mode", mixed(fast, 8, slow, 2), mixed(fast, 2, slow, 8), report.Unchanged, false,
			"only because the mix changed (2 + 8 processes against 8 + 2)", [2]int{8, 2}, [2]int{2, 8}},
		{"mix towards the fast mode", mixed(fast, 2, slow, 8), mixed(fast, 8, slow, 2), report.Unchanged, false,
			"only because the mix changed", [2]int{2, 8}, [2]int{8, 2}},
		{"same modes, smaller mix change", mixed(fast, 5, slow, 5), mixed(fast, 3, slow, 7), report.Unchanged, false,
			"both sides fall in the same two modes", [2]int{5, 5}, [2]int{3, 7}},
		{"a lone fast process is a visit", mixed(fast, 8, slow, 2), mixed(fast, 1, slow, 9), report.Unchanged, false,
			"only because the mix changed (1 + 9 processes against 8 + 2)", [2]int{8, 2}, [2]int{1, 9}},
		{"the slow mode moved +3%", mixed(fast, 5, slow, 5), mixed(fast, 5, slow*1.03, 5), report.Regression, false,
			"the upper +3.00% (threshold 0.5%): judged by the modes", [2]int{5, 5}, [2]int{5, 5}},
		{"modes faster, mix slower", mixed(fast, 7, slow, 3), mixed(fast*0.98, 2, slow*0.98, 8), report.Improvement, false,
			"judged by the modes", [2]int{7, 3}, [2]int{2, 8}},
		{"modes apart", mixed(fast, 5, slow, 5), mixed(fast*0.97, 5, slow*1.03, 5), report.Inconclusive, false,
			"one mode is worse, the other better", [2]int{5, 5}, [2]int{5, 5}},
		{"only the baseline in two modes", mixed(fast, 5, slow, 5), mixed(slow, 0, slow, 10), report.Inconclusive, false,
			"none of the current's 10 processes is in the lower mode, which the baseline's mix (5 of 10) would give with probability 0.00098: the mix differs", [2]int{5, 5}, [2]int{}},
		{"only the current in two modes", mixed(fast, 10, slow, 0), mixed(fast, 3, slow, 7), report.Inconclusive, false,
			"only the current falls in two modes (3 + 7 processes)", [2]int{}, [2]int{3, 7}},
		{"only the current, median unmoved", mixed(fast, 10, slow, 0), mixed(fast, 6, slow, 4), report.Unchanged, false,
			"", [2]int{}, [2]int{6, 4}},
		{"one mode, slower than both", mixed(fast, 5, slow, 5), mixed(slow*1.2, 10, slow, 0), report.Regression, false,
			"", [2]int{5, 5}, [2]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &group.Series{Name: "RoPE/dtype=bf16/rows=1024/cols=262144/heads=2048/impl=fused", Unit: "sec/op", Base: tc.base, Cur: tc.cur}
			r := judge(t, gpuRules, "", s)
			c := only(t, r)
			if c.Verdict != tc.verdict {
				t.Errorf("verdict %s (delta %+.2f%%, p %.3g), want %s; warnings %q", c.Verdict, 100*float64(c.Delta), float64(c.P), tc.verdict, c.Warnings)
			}
			if got := WantsMoreRounds(&c); got != tc.more {
				t.Errorf("WantsMoreRounds = %v, want %v", got, tc.more)
			}
			if tc.warning != "" && !strings.Contains(strings.Join(c.Warnings, "\n"), tc.warning) {
				t.Errorf("warnings %q, want one containing %q", c.Warnings, tc.warning)
			}
			for side, want := range map[*report.Summary][2]int{c.Baseline: tc.bN, c.Current: tc.cN} {
				var got [2]int
				if len(side.Modes) == 2 {
					got = [2]int{side.Modes[0].N, side.Modes[1].N}
				}
				if got != want {
					t.Errorf("modes %+v, want sizes %v", side.Modes, want)
				}
			}
		})
	}
}

// TestTwoModesStayOutOfTheFamily: a change only in the mix cannot change a
// verdict, so under floor-holm it does not join (and dilute) the corrected
// family, like a change below the threshold.
func TestTwoModesStayOutOfTheFamily(t *testing.T) {
	s := &group.Series{Name: "RoPE", Unit: "sec/op", Base: mixed(720e-6, 5, 837e-6, 5), Cur: mixed(720e-6, 2, 837e-6, 8)}
	c := only(t, judge(t, gpuRules, "", s))
	if c.PAdjusted.Valid() {
		t.Errorf("mix-only comparison in the corrected family: p_adjusted %v", float64(c.PAdjusted))
	}
	if !c.P.Valid() || float64(c.Delta) < 0.05 {
		t.Errorf("p %v, delta %v: the medians should still differ and be tested", float64(c.P), float64(c.Delta))
	}
}

// TestUnimodalSidesHaveNoModes: ordinary noise gives no modes and no
// two-mode warning, so the rules above never touch it.
func TestUnimodalSidesHaveNoModes(t *testing.T) {
	for _, s := range []*group.Series{
		{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.2, 10)},
		{Name: "B", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)},
	} {
		c := only(t, judge(t, gpuRules, "", s))
		if c.Baseline.Modes != nil || c.Current.Modes != nil || WantsMoreRounds(&c) {
			t.Errorf("%s: modes %+v / %+v on unimodal samples", s.Name, c.Baseline.Modes, c.Current.Modes)
		}
	}
}

// TestWantsMoreRounds: with few processes, a one-mode side that has not yet
// visited the other side's second mode may still do so: more rounds would
// settle it, and the warning says how many.
func TestWantsMoreRounds(t *testing.T) {
	const fast, slow = 720e-6, 837e-6
	s := &group.Series{Name: "RoPE", Unit: "sec/op", Base: mixed(fast, 2, slow, 2), Cur: mixed(slow, 0, slow, 4)}
	c := only(t, judge(t, "version: 1\ndefaults: {threshold: 0.5%, min_samples: 4}\n", "", s))
	if c.Verdict != report.Inconclusive || !WantsMoreRounds(&c) {
		t.Errorf("2 + 2 against 4: %s, wants more rounds %v; want inconclusive and more rounds", c.Verdict, WantsMoreRounds(&c))
	}
	if want := "if the current visits that mode as often as the baseline (2 of 4), 1 more process would show one with 95% probability — more rounds wanted"; !strings.Contains(strings.Join(c.Warnings, " "), want) {
		t.Errorf("warnings %q, want %q", c.Warnings, want)
	}
	// The same counts seen from a report read back: gate off wants nothing.
	c.Gate = report.GateOff
	if WantsMoreRounds(&c) {
		t.Error("an ungated comparison wants more rounds")
	}
}

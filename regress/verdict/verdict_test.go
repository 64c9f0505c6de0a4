package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// noisy returns n samples around v with a ±0.5% spread.
func noisy(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.005*math.Sin(float64(i)*1.7))
	}
	return out
}

func judge(t *testing.T, yaml string, class string, series ...*group.Series) *report.Report {
	t.Helper()
	cfg := config.Default()
	if yaml != "" {
		var err error
		if cfg, err = config.Parse([]byte(yaml), "test.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	g := &group.Grouping{Series: series, BaseConfig: map[string]string{}, CurConfig: map[string]string{}}
	if class != "" {
		g.BaseConfig["class"], g.CurConfig["class"] = class, class
	}
	r := Judge(g, Options{Config: cfg})
	if err := r.Validate(); err != nil {
		t.Fatalf("invalid report: %v", err)
	}
	return r
}

func only(t *testing.T, r *report.Report) report.Comparison {
	t.Helper()
	if len(r.Comparisons) != 1 {
		t.Fatalf("%d comparisons", len(r.Comparisons))
	}
	return r.Comparisons[0]
}

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name        string
		yaml, class string
		s           group.Series
		verdict     string
		report      string
	}{
		{"slower time", "", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.2, 10)}, report.Regression, report.Fail},
		{"faster time", "", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(0.8, 10)}, report.Improvement, report.Pass},
		{"below threshold", "", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.03, 10)}, report.Unchanged, report.Pass},
		{"bandwidth drop", "", "", group.Series{Name: "A", Unit: "B/s", Base: noisy(100, 10), Cur: noisy(85, 10)}, report.Regression, report.Fail},
		{"bandwidth gain", "", "", group.Series{Name: "A", Unit: "GB/s", Base: noisy(100, 10), Cur: noisy(120, 10)}, report.Improvement, report.Pass},
		{"pct-copy drop", "", "", group.Series{Name: "A", Unit: "pct-copy", Base: noisy(95, 10), Cur: noisy(80, 10)}, report.Regression, report.Fail},
		{"too few samples", "", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 3), Cur: noisy(2, 3)}, report.Inconclusive, report.Inconclusive},
		{"rule threshold", "version: 1\nrules:\n  - match: \"A\"\n    threshold: 25%\n", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.2, 10)}, report.Unchanged, report.Pass},
		{"warn gate", "version: 1\nrules:\n  - match: \"*/impl=naive\"\n    gate: warn\n", "", group.Series{Name: "K/impl=naive", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.2, 10)}, report.Regression, report.Pass},
		{"class rule applies", "version: 1\nrules:\n  - match: \"*\"\n    class: \"gpu-*\"\n    threshold: 1%\n", "gpu-nvidia-h100", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.03, 10)}, report.Regression, report.Fail},
		{"class rule skipped", "version: 1\nrules:\n  - match: \"*\"\n    class: \"gpu-*\"\n    threshold: 1%\n", "cpu-amd64-x", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.03, 10)}, report.Unchanged, report.Pass},
		{"exact within tolerance", "version: 1\ndefaults: {tolerance: 2%}\nunits:\n  scratch-B: {assume: exact}\n", "", group.Series{Name: "A", Unit: "scratch-B", Base: []float64{100, 100}, Cur: []float64{101, 101}}, report.Unchanged, report.Pass},
		{"exact beyond tolerance", "version: 1\nunits:\n  scratch-B: {assume: exact}\n", "", group.Series{Name: "A", Unit: "scratch-B", Base: []float64{100}, Cur: []float64{101}}, report.Regression, report.Fail},
		{"budget missed without baseline", "version: 1\nrules:\n  - match: \"LSTM/*\"\n    budget: 16.67ms\n", "", group.Series{Name: "LSTM/batch=1", Unit: "sec/op", Cur: noisy(0.020, 10)}, report.OverBudget, report.Fail},
		{"budget met without baseline", "version: 1\nrules:\n  - match: \"LSTM/*\"\n    budget: 16.67ms\n", "", group.Series{Name: "LSTM/batch=1", Unit: "sec/op", Cur: noisy(0.010, 10)}, report.Added, report.Pass},
		{"bandwidth budget missed", "version: 1\nrules:\n  - match: \"*\"\n    budget: 2.5TB/s\n", "", group.Series{Name: "Copy", Unit: "GB/s", Base: noisy(2400, 10), Cur: noisy(2400, 10)}, report.OverBudget, report.Fail},
		{"removed", "", "", group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10)}, report.Removed, report.NoData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			r := judge(t, tc.yaml, tc.class, &s)
			c := only(t, r)
			if c.Verdict != tc.verdict || r.Verdict != tc.report {
				t.Errorf("verdict %s / report %s, want %s / %s (delta %+.3f p=%v adj=%v warnings %v)",
					c.Verdict, r.Verdict, tc.verdict, tc.report, float64(c.Delta), float64(c.P), float64(c.PAdjusted), c.Warnings)
			}
		})
	}
}

// TestReportInconclusive checks the report's verdict when gated
// comparisons go unjudged: none judged is inconclusive (an exact unit judged
// beside them does not make it pass), some judged keeps the verdict and
// says how many were not, and a failure still fails.
func TestReportInconclusive(t *testing.T) {
	exact := "version: 1\nunits:\n  scratch-B: {assume: exact}\n"
	tests := []struct {
		name     string
		yaml     string
		series   []*group.Series
		verdict  string
		unjudged *report.Unjudged
	}{
		{"none judged", "", []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 2), Cur: noisy(1, 2)},
			{Name: "B", Unit: "sec/op", Base: noisy(1, 3), Cur: noisy(1, 2)},
		}, report.Inconclusive, &report.Unjudged{Count: 2, Of: 2, NeedSamples: 6, HaveSamples: 2}},
		{"an exact unit beside them", exact, []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 2), Cur: noisy(1, 2)},
			{Name: "A", Unit: "scratch-B", Base: []float64{64, 64}, Cur: []float64{64, 64}},
		}, report.Inconclusive, &report.Unjudged{Count: 1, Of: 1, NeedSamples: 6, HaveSamples: 2}},
		{"some judged", "", []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)},
			{Name: "B", Unit: "sec/op", Base: noisy(1, 4), Cur: noisy(1, 5)},
		}, report.Pass, &report.Unjudged{Count: 1, Of: 2, NeedSamples: 6, HaveSamples: 4}},
		{"a rule's min_samples", "version: 1\nrules:\n  - match: B\n    min_samples: 8\n", []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 2), Cur: noisy(1, 2)},
			{Name: "B", Unit: "sec/op", Base: noisy(1, 7), Cur: noisy(1, 7)},
		}, report.Inconclusive, &report.Unjudged{Count: 2, Of: 2, NeedSamples: 8, HaveSamples: 2}},
		{"a failure still fails", exact, []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 2), Cur: noisy(1, 2)},
			{Name: "A", Unit: "scratch-B", Base: []float64{64, 64}, Cur: []float64{128, 128}},
		}, report.Fail, &report.Unjudged{Count: 1, Of: 1, NeedSamples: 6, HaveSamples: 2}},
		{"only warn-gated unjudged", "version: 1\ndefaults: {gate: warn}\n", []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 2), Cur: noisy(1, 2)},
		}, report.Pass, nil},
		{"two modes moved apart", gpuRules, []*group.Series{
			{Name: "RoPE/impl=fused", Unit: "sec/op", Base: mixed(720e-6, 5, 837e-6, 5), Cur: mixed(720e-6*0.97, 5, 837e-6*1.03, 5)},
		}, report.Inconclusive, &report.Unjudged{Count: 1, Of: 1}},
		{"all judged", "", []*group.Series{
			{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)},
		}, report.Pass, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := judge(t, tc.yaml, "", tc.series...)
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", r.Verdict, tc.verdict)
			}
			if (r.Unjudged == nil) != (tc.unjudged == nil) || r.Unjudged != nil && *r.Unjudged != *tc.unjudged {
				t.Errorf("unjudged %+v, want %+v", r.Unjudged, tc.unjudged)
			}
			if want := map[string]int{report.Inconclusive: 3}[r.Verdict]; want != 0 && r.ExitCode() != want {
				t.Errorf("exit code %d, want %d", r.ExitCode(), want)
			}
		})
	}
}

func TestInconclusiveSaysHowManySamples(t *testing.T) {
	r := judge(t, "", "", &group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 3), Cur: noisy(2, 3)})
	c := only(t, r)
	if !strings.Contains(strings.Join(c.Warnings, ";"), "need ≥ 6 samples per side") {
		t.Errorf("warnings %v do not say how many samples are needed", c.Warnings)
	}
	// With many gated comparisons beyond the floor, 6 samples cannot
	// survive the correction: the verdict says so instead of "unchanged".
	var series []*group.Series
	for i := 0; i < 400; i++ {
		series = append(series, &group.Series{Name: "B" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Unit: "sec/op", Base: noisy(1, 6), Cur: noisy(1.5, 6)})
	}
	r = judge(t, "", "", series...)
	c = r.Comparisons[0]
	if c.Verdict != report.Inconclusive || !strings.Contains(strings.Join(c.Warnings, ";"), "after the correction") {
		t.Errorf("400 comparisons × 6 samples: verdict %s, warnings %v", c.Verdict, c.Warnings)
	}
}

func TestUnknownDirectionIsNotGated(t *testing.T) {
	r := judge(t, "", "", &group.Series{Name: "A", Unit: "widgets", Base: noisy(1, 10), Cur: noisy(5, 10)})
	c := only(t, r)
	if c.Gate != report.GateOff || c.Better != report.Unknown || r.Verdict != report.Pass {
		t.Errorf("gate %s better %s report %s", c.Gate, c.Better, r.Verdict)
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "widgets") {
		t.Errorf("no warning names the unit: %v", r.Warnings)
	}
}

func TestPAdjustedIsNullOutsideFamily(t *testing.T) {
	r := judge(t, "", "",
		&group.Series{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.2, 10)},
		&group.Series{Name: "B", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1.0, 10)})
	if !r.Comparisons[0].PAdjusted.Valid() {
		t.Error("A passes the floor: it needs an adjusted p")
	}
	if r.Comparisons[1].PAdjusted.Valid() {
		t.Error("B is below the floor: floor-holm leaves it out of the family")
	}
}

func TestDefaultDirection(t *testing.T) {
	for unit, want := range map[string]string{
		"sec/op": report.Lower, "B/op": report.Lower, "allocs/op": report.Lower, "p99-sec": report.Lower,
		"B/s": report.Higher, "GB/s": report.Higher, "TFLOP/s": report.Higher, "pct-copy": report.Higher,
		"rel-err": report.Unknown, "widgets": report.Unknown,
	} {
		if got := DefaultDirection(unit); got != want {
			t.Errorf("DefaultDirection(%q) = %s, want %s", unit, got, want)
		}
	}
}

func TestFailedBenchmarks(t *testing.T) {
	g := &group.Grouping{
		Series: []*group.Series{
			{Name: "A/x=1", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)},
			{Name: "A/x=1", Unit: "B/s", Base: noisy(1, 10), Cur: noisy(1, 10)},
			{Name: "A/x=2", Unit: "sec/op", Base: noisy(1, 10)},
			{Name: "AB", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)},
			{Name: "N/impl=naive", Unit: "sec/op", Base: noisy(1, 10)},
		},
		BaseConfig: map[string]string{}, CurConfig: map[string]string{},
	}
	cfg, err := config.Parse([]byte("version: 1\nrules:\n  - match: \"*/impl=naive\"\n    gate: warn\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := Judge(g, Options{Config: cfg, Failed: []Failure{
		{Name: "A", Side: SideCurrent, Message: "panic: boom"},
		{Name: "N/impl=naive", Side: SideCurrent, Message: "x_test.go:3: broken"},
		{Name: "Gone", Side: SideBaseline, Message: "exit status 2"},
		{Name: "Gone", Side: SideCurrent, Message: "exit status 2"},
	}})
	if err := r.Validate(); err != nil {
		t.Fatalf("invalid report: %v", err)
	}
	want := map[string]string{"A/x=1": report.Failed, "A/x=2": report.Failed, "AB": report.Unchanged, "N/impl=naive": report.Failed, "Gone": report.Failed}
	for _, c := range r.Comparisons {
		if c.Verdict != want[c.Name] {
			t.Errorf("%s %s: verdict %s, want %s", c.Name, c.Unit, c.Verdict, want[c.Name])
		}
		if c.Verdict == report.Failed && !strings.HasPrefix(c.Warnings[0], "current: ") && !strings.HasPrefix(c.Warnings[0], "baseline: ") {
			t.Errorf("%s: first warning %q does not name the side", c.Name, c.Warnings[0])
		}
		if c.Name == "Gone" && (c.Baseline == nil || c.Current == nil || c.Baseline.N != 0 || len(c.Warnings) != 2) {
			t.Errorf("Gone: want empty summaries on both sides and two messages, got %+v", c)
		}
		if c.Name == "N/impl=naive" && (c.Gate != report.GateWarn || c.Fails()) {
			t.Errorf("a failure under a warn gate must not fail the report: %+v", c)
		}
	}
	if r.Counts.Failed != 5 || r.Verdict != report.Fail {
		t.Errorf("counts %+v verdict %s, want 5 failed and fail", r.Counts, r.Verdict)
	}

	// A gated failure fails the report even when nothing else compared.
	g = &group.Grouping{BaseConfig: map[string]string{}, CurConfig: map[string]string{}}
	r = Judge(g, Options{Failed: []Failure{{Name: "X", Side: SideCurrent, Message: "panic"}}})
	if r.Verdict != report.Fail || r.ExitCode() != 1 {
		t.Errorf("only a failure: verdict %s, want fail", r.Verdict)
	}
}

func TestRoundsFollowValues(t *testing.T) {
	g := &group.Grouping{
		Series: []*group.Series{{Name: "A", Unit: "sec/op",
			Base: []float64{3, 1, 2, 5, 4, 6}, BaseRounds: []int{0, 1, 2, 3, 4, 5},
			Cur: []float64{3, 1, 2, 5, 4, 6}}},
		BaseConfig: map[string]string{}, CurConfig: map[string]string{},
	}
	c := Judge(g, Options{}).Comparisons[0]
	if got := c.Baseline.Rounds; len(got) != 6 || got[0] != 1 || got[1] != 2 || got[2] != 0 || got[5] != 5 {
		t.Errorf("baseline rounds %v for values %v, want [1 2 0 4 3 5]", got, c.Baseline.Values)
	}
	if c.Current.Rounds != nil {
		t.Errorf("current rounds %v, want none", c.Current.Rounds)
	}
}

// TestWarnOnlyComparisonsDoNotDilute checks that the correction runs per gate: a fail-gated +3.8% regression
// whose samples overlap (U-test p ≈ 0.014, the GPU's 1.5% threshold) stays a regression however many warn-only
// comparisons (naive impls, past their threshold as noisy naive chains often are) pass the effect floor beside
// it — in one family of 41 it would be corrected to ≈ 0.57 and pass the gate, as a +3% decode slowdown did in
// a whole-suite GPU check (p 0.012, p_adjusted 1).
func TestWarnOnlyComparisonsDoNotDilute(t *testing.T) {
	const yaml = "version: 1\ndefaults: {threshold: 1.5%}\nrules:\n  - match: \"*/impl=naive\"\n    gate: warn\n"
	base := []float64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}
	cur := []float64{104, 105, 106, 107, 108, 109, 110, 111, 112, 113} // +3.8% median, overlapping
	series := []*group.Series{{Name: "K/impl=fused", Unit: "sec/op", Base: base, Cur: cur}}
	for i := range 40 {
		series = append(series, &group.Series{Name: fmt.Sprintf("K%d/impl=naive", i), Unit: "sec/op",
			Base: base, Cur: cur})
	}
	r := judge(t, yaml, "", series...)
	var fused report.Comparison
	warnAdj := map[float64]int{}
	for _, c := range r.Comparisons {
		if c.Name == "K/impl=fused" {
			fused = c
		} else {
			warnAdj[math.Round(float64(c.PAdjusted)*1e6)/1e6]++
		}
	}
	if fused.Verdict != report.Regression || r.Verdict != report.Fail {
		t.Errorf("fused: verdict %s (p %v, p_adjusted %v), report %s; want a regression failing the gate",
			fused.Verdict, fused.P, fused.PAdjusted, r.Verdict)
	}
	if float64(fused.PAdjusted) != float64(fused.P) {
		t.Errorf("fused p_adjusted %v, want its p %v: alone in the fail family", fused.PAdjusted, fused.P)
	}
	// The 40 warn-only comparisons are one family of 40 among themselves.
	for adj := range warnAdj {
		if want := math.Min(1, 40*float64(fused.P)); math.Abs(adj-want) > 1e-6 {
			t.Errorf("warn p_adjusted %v, want 40 × p = %v", adj, want)
		}
	}
}

// TestDerivedUnitsAreOneHypothesis checks that a benchmark's GB/s and pct-copy, computed sample by sample from
// its time, count once in the correction with the time they derive from, while another benchmark with the same
// samples, and a unit of the same benchmark whose samples are ordered otherwise, each count apart.
func TestDerivedUnitsAreOneHypothesis(t *testing.T) {
	const yaml = "version: 1\ndefaults: {threshold: 1.5%}\nunits:\n  p99-ns: {better: lower}\n"
	base := []float64{100, 101, 102, 103, 104, 105, 106, 107, 108, 109}
	cur := []float64{104, 105, 106, 107, 108, 109, 110, 111, 112, 113}
	gbps := func(ns float64) float64 { return 4096 / ns }
	pct := func(ns float64) float64 { return 100 * gbps(ns) / 30 }
	tail := []float64{130, 101, 140, 103, 150, 105, 160, 107, 170, 109} // p99: another order
	series := []*group.Series{
		{Name: "K", Unit: "sec/op", Base: base, Cur: cur},
		{Name: "K", Unit: "GB/s", Base: mapped(base, gbps), Cur: mapped(cur, gbps)},
		{Name: "K", Unit: "pct-copy", Base: mapped(base, pct), Cur: mapped(cur, pct)},
	}
	r := judge(t, yaml, "", series...)
	for _, c := range r.Comparisons {
		if float64(c.PAdjusted) != float64(c.P) || c.Verdict != report.Regression {
			t.Errorf("%s: p %v, p_adjusted %v, verdict %s; want one hypothesis, p_adjusted = p, a regression",
				c.Unit, c.P, c.PAdjusted, c.Verdict)
		}
	}
	series = append(series, &group.Series{Name: "L", Unit: "sec/op", Base: base, Cur: cur},
		&group.Series{Name: "K", Unit: "p99-ns", Base: base, Cur: tail})
	r = judge(t, yaml, "", series...)
	// Three hypotheses past the floor — K's time with its derived units, L's time, K's p99 — so Holm's
	// step-down over their three p values gives every comparison its adjusted p.
	byUnit := map[string]report.Comparison{}
	for _, c := range r.Comparisons {
		byUnit[c.Name+" "+c.Unit] = c
	}
	ps := []float64{float64(byUnit["K sec/op"].P), float64(byUnit["L sec/op"].P), float64(byUnit["K p99-ns"].P)}
	holm := func(i int) float64 { // Holm's adjusted p of ps[i], ties kept in order
		order := []int{0, 1, 2}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
		run := 0.0
		for rank, j := range order {
			run = math.Max(run, math.Min(1, float64(3-rank)*ps[j]))
			if j == i {
				return run
			}
		}
		return math.NaN()
	}
	for name, i := range map[string]int{"K sec/op": 0, "K GB/s": 0, "K pct-copy": 0, "L sec/op": 1, "K p99-ns": 2} {
		if got := float64(byUnit[name].PAdjusted); !(math.Abs(got-holm(i)) <= 1e-12) {
			t.Errorf("%s: p_adjusted %v, want %v (Holm over 3 hypotheses, p %v)", name, got, holm(i), ps)
		}
	}
}

// TestUnstableGate checks what a noise file does to the gate: a benchmark
// whose calibrated floor (K × p99) exceeds noise.UnstableLimit is marked
// unstable and gated as defaults.unstable says — warn when unset, so even a
// doubling is reported without failing; fail or off when set — while a
// stable benchmark keeps its fail gate, judged by the larger of the
// configured threshold and its floor.
func TestUnstableGate(t *testing.T) {
	base := noisy(100, 10)
	nf := &noise.File{Schema: noise.Schema, Class: "cpu-x", K: noise.K, Rounds: 20, Entries: []noise.Entry{
		{Name: "Wild", Unit: "sec/op", Rounds: 20, P99: 0.8},   // floor 40%: unstable
		{Name: "Steady", Unit: "sec/op", Rounds: 20, P99: 0.2}, // floor 10%
	}}
	series := func() []*group.Series {
		return []*group.Series{
			{Name: "Wild", Unit: "sec/op", Base: base, Cur: noisy(200, 10)},         // +100%
			{Name: "Steady", Unit: "sec/op", Base: base, Cur: noisy(107, 10)},       // +7%: below its 10% floor
			{Name: "Plain", Unit: "sec/op", Base: base, Cur: noisy(107, 10)},        // +7%, no noise entry: 5% applies
			{Name: "Steady", Unit: "B/op", Base: noisy(64, 10), Cur: noisy(64, 10)}, // not in the file
		}
	}
	for _, tc := range []struct {
		yaml     string
		wildGate string
		verdict  string
	}{
		{"", report.GateWarn, report.Fail}, // Plain's +7% still fails
		{"version: 1\ndefaults: {unstable: fail}\n", report.GateFail, report.Fail},
		{"version: 1\ndefaults: {unstable: off}\n", report.GateOff, report.Fail},
	} {
		cfg := config.Default()
		if tc.yaml != "" {
			var err error
			if cfg, err = config.Parse([]byte(tc.yaml), "test.yaml"); err != nil {
				t.Fatal(err)
			}
		}
		g := &group.Grouping{Series: series(), BaseConfig: map[string]string{"class": "cpu-x"}, CurConfig: map[string]string{"class": "cpu-x"}}
		r := Judge(g, Options{Config: cfg, Noise: nf, NoiseFile: "baselines/cpu-x.noise.json"})
		if err := r.Validate(); err != nil {
			t.Fatalf("invalid report: %v", err)
		}
		by := map[string]report.Comparison{}
		for _, c := range r.Comparisons {
			by[c.Name+" "+c.Unit] = c
		}
		wild, steady, plain := by["Wild sec/op"], by["Steady sec/op"], by["Plain sec/op"]
		if !wild.Unstable || wild.Gate != tc.wildGate || wild.Verdict != report.Regression || wild.ThresholdFrom != "noise" || wild.Threshold != 0.4 {
			t.Errorf("%q: Wild unstable %v gate %s verdict %s threshold %v from %q; want unstable, gate %s, a regression at the 40%% floor",
				tc.yaml, wild.Unstable, wild.Gate, wild.Verdict, wild.Threshold, wild.ThresholdFrom, tc.wildGate)
		}
		if (tc.wildGate != report.GateFail) != strings.Contains(strings.Join(wild.Warnings, " "), "unstable") {
			t.Errorf("%q: Wild warnings %q", tc.yaml, wild.Warnings)
		}
		if wild.Fails() != (tc.wildGate == report.GateFail) {
			t.Errorf("%q: Wild fails the gate: %v", tc.yaml, wild.Fails())
		}
		if steady.Unstable || steady.Gate != report.GateFail || steady.Threshold != 0.1 || steady.ThresholdFrom != "noise" ||
			steady.ConfiguredThreshold == nil || *steady.ConfiguredThreshold != 0.05 || steady.Verdict != report.Unchanged {
			t.Errorf("%q: Steady %+v; want gate fail, threshold 10%% from noise (configured 5%%), unchanged", tc.yaml, steady)
		}
		if plain.ThresholdFrom != "" || plain.Threshold != 0.05 || plain.Verdict != report.Regression {
			t.Errorf("%q: Plain threshold %v from %q, verdict %s; want the configured 5%% and a regression", tc.yaml, plain.Threshold, plain.ThresholdFrom, plain.Verdict)
		}
		if r.Verdict != tc.verdict || r.Settings.NoiseFile != "baselines/cpu-x.noise.json" || r.Settings.NoiseK != noise.K {
			t.Errorf("%q: report %s, settings %+v", tc.yaml, r.Verdict, r.Settings)
		}
	}
}

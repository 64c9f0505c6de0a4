package verdict

import (
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// TestCrossHostFloors: a stored check judges each comparison by its
// cross-host floor where that is above the threshold, and a family whose
// normalized unit is steadier across hosts gates on it, its raw units only
// warning.
func TestCrossHostFloors(t *testing.T) {
	cfg, err := config.Parse([]byte("version: 1\ndefaults: {threshold: 0.5%}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	floors := &noise.Floors{Schema: noise.FloorsSchema, Class: "gpu-x", Entries: []noise.FloorEntry{
		// Moved 2% between hosts: a 1.5% slowdown is within it.
		{Name: "Attention", Unit: "sec/op", Floor: 0.02, From: "family"},
		// RMSNorm gates on pct-copy: its time only warns.
		{Name: "RMSNorm", Unit: "sec/op", Floor: 0.004, From: "family", Gate: "warn", GatedBy: "pct-copy"},
		{Name: "RMSNorm", Unit: "pct-copy", Floor: 0.003, From: "family"},
	}}
	series := func() []*group.Series {
		return []*group.Series{
			{Name: "Attention", Unit: "sec/op", Base: noisy(1e-3, 10), Cur: noisy(1.015e-3, 10)},
			{Name: "RMSNorm", Unit: "sec/op", Base: noisy(1e-4, 10), Cur: noisy(1.02e-4, 10)}, // the host is slower…
			{Name: "RMSNorm", Unit: "pct-copy", Base: noisy(95, 10), Cur: noisy(94.95, 10)},   // …and so is its copy
		}
	}
	byName := func(r *report.Report) map[string]report.Comparison {
		out := map[string]report.Comparison{}
		for _, c := range r.Comparisons {
			out[c.Name+" "+c.Unit] = c
		}
		return out
	}
	grouping := func() *group.Grouping {
		return &group.Grouping{Series: series(), BaseConfig: map[string]string{"class": "gpu-x"}, CurConfig: map[string]string{"class": "gpu-x"}}
	}
	// Without floors, both time comparisons fail.
	r := Judge(grouping(), Options{Config: cfg})
	if c := byName(r); r.Verdict != report.Fail || c["Attention sec/op"].Verdict != report.Regression || c["RMSNorm sec/op"].Verdict != report.Regression {
		t.Fatalf("without floors: %s, %+v", r.Verdict, c)
	}
	r = Judge(grouping(), Options{Config: cfg, Floors: floors, FloorsFile: "baselines/gpu-x.floors.json"})
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	c := byName(r)
	if a := c["Attention sec/op"]; a.Verdict != report.Unchanged || a.Threshold != 0.02 || a.ThresholdFrom != "hosts" || a.ConfiguredThreshold == nil || *a.ConfiguredThreshold != 0.005 {
		t.Errorf("Attention: %s at threshold %v from %q (configured %v), want unchanged at the 2%% floor", a.Verdict, a.Threshold, a.ThresholdFrom, a.ConfiguredThreshold)
	}
	if n := c["RMSNorm sec/op"]; n.Verdict != report.Regression || n.Gate != report.GateWarn || !strings.Contains(strings.Join(n.Warnings, " "), "gated on pct-copy") {
		t.Errorf("RMSNorm sec/op: %s, gate %s, warnings %q: want a regression that only warns, gated on pct-copy", n.Verdict, n.Gate, n.Warnings)
	}
	if p := c["RMSNorm pct-copy"]; p.Verdict != report.Unchanged || p.Gate != report.GateFail {
		t.Errorf("RMSNorm pct-copy: %s, gate %s", p.Verdict, p.Gate)
	}
	if r.Verdict != report.Pass || r.Settings.FloorsFile != "baselines/gpu-x.floors.json" {
		t.Errorf("report %s, floors file %q: want a pass that names the floors", r.Verdict, r.Settings.FloorsFile)
	}
}

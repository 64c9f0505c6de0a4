package render

import (
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

func TestCostsLine(t *testing.T) {
	c := &report.Costs{WallSeconds: 432, Phases: []report.Phase{
		{Name: "build", Seconds: 12}, {Name: "warm-up", Seconds: 60}, {Name: "timed launches", Seconds: 300}, {Name: "L2 flushes", Seconds: 58}, {Name: "other", Seconds: 1}, {Name: "regress itself", Seconds: 1},
	}}
	want := "timed launches 69% of 7m12s (warm-up 14%, L2 flushes 13%, build 3%)"
	if got := CostsLine(c); got != want {
		t.Errorf("CostsLine =\n%q, want\n%q", got, want)
	}
	if got := CostsLine(nil); got != "" {
		t.Errorf("CostsLine(nil) = %q", got)
	}
	if got := CostsLine(&report.Costs{Phases: []report.Phase{{Name: "timed launches", Seconds: 0}}}); got != "" {
		t.Errorf("CostsLine of nothing = %q", got)
	}
}

package render

import (
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

func TestCostsLine(t *testing.T) {
	c := &report.Costs{WallSeconds: 432, Phases: []report.Phase{
		{"build", 12}, {"warm-up", 60}, {"timed launches", 300}, {"L2 flushes", 58}, {"other", 1}, {"regress itself", 1},
	}}
	want := "timed launches 69% of 7m12s (warm-up 14%, L2 flushes 13%, build 3%)"
	if got := CostsLine(c); got != want {
		t.Errorf("CostsLine =\n%q, want\n%q", got, want)
	}
	if got := CostsLine(nil); got != "" {
		t.Errorf("CostsLine(nil) = %q", got)
	}
	if got := CostsLine(&report.Costs{Phases: []report.Phase{{"timed launches", 0}}}); got != "" {
		t.Errorf("CostsLine of nothing = %q", got)
	}
}

package render

import (
	"os"
	"path/filepath"
	"strings"
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

// TestCostsLineGolden keeps the time lines of three kinds of run in
// testdata/costs.golden: a check of a plain Go module (its suite accounts
// for nothing: no launches, flushes or contexts to speak of), a CPU run of
// the kernel suite, and a GPU check.
func TestCostsLineGolden(t *testing.T) {
	runs := []struct {
		name  string
		costs report.Costs
	}{
		{"plain Go module, CPU check", report.Costs{WallSeconds: 4.2, Phases: []report.Phase{
			{Name: "build", Seconds: 0.8}, {Name: "test binaries", Seconds: 3.2}, {Name: "regress itself", Seconds: 0.2}}}},
		{"kernel suite, CPU run", report.Costs{WallSeconds: 14, Phases: []report.Phase{
			{Name: "build", Seconds: 1}, {Name: "process start and exit", Seconds: 0.3}, {Name: "context and modules", Seconds: 0},
			{Name: "copy reference", Seconds: 3.5}, {Name: "inputs", Seconds: 2.8}, {Name: "warm-up", Seconds: 3.4},
			{Name: "L2 flushes", Seconds: 0}, {Name: "timed launches", Seconds: 2.2}, {Name: "launch gaps", Seconds: 0.01},
			{Name: "other", Seconds: 0.7}, {Name: "regress itself", Seconds: 0.1}}}},
		{"kernel suite, GPU check", report.Costs{WallSeconds: 432, Phases: []report.Phase{
			{Name: "build", Seconds: 12}, {Name: "process start and exit", Seconds: 9}, {Name: "context and modules", Seconds: 20},
			{Name: "copy reference", Seconds: 15}, {Name: "inputs", Seconds: 10}, {Name: "warm-up", Seconds: 60},
			{Name: "L2 flushes", Seconds: 58}, {Name: "timed launches", Seconds: 240}, {Name: "launch gaps", Seconds: 6},
			{Name: "other", Seconds: 1}, {Name: "regress itself", Seconds: 1}}}},
	}
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(r.name + ":\ntime: " + CostsLine(&r.costs) + "\n")
	}
	got := b.String()
	for _, gpu := range []string{"launch", "L2", "context", "flush"} {
		if first, _, _ := strings.Cut(got, "\nkernel suite"); strings.Contains(first, gpu) {
			t.Errorf("the plain module's time line names a GPU phase (%s):\n%s", gpu, first)
		}
	}
	path := filepath.Join("testdata", "costs.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./regress/render -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

// TestTextHasNoTimeLine: the report on standard output leaves the time line
// to the command's standard error.
func TestTextHasNoTimeLine(t *testing.T) {
	r := passReport(t)
	r.Costs = &report.Costs{WallSeconds: 4, Phases: []report.Phase{{Name: "test binaries", Seconds: 4}}}
	var b strings.Builder
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "time:") {
		t.Errorf("the text report holds a time line:\n%s", b.String())
	}
}

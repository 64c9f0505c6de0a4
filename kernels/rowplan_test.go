package kernels

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateRowPlans = flag.Bool("kernels.update-rowplans", false, "rewrite testdata/rowplans.golden from the row plan choosers")

// rowPlanChoices lists, one line per case, the fused kernel and block size each row family's plan chooser
// picks on an sm_80 GPU with 108 multiprocessors and an sm_90 one with 132, over the suite's CUDA grid and the
// correctness tests' shapes.
func rowPlanChoices() string {
	type chooser struct {
		f    *Family
		pick func(c Case, cc, sms int) string
	}
	choosers := []chooser{
		{RMSNormFamily, func(c Case, cc, sms int) string {
			p := rmsNormChoosePlan(c, cc, sms)
			return fmt.Sprintf("%s t=%d", p.kernel(c.DType), p.threads)
		}},
		{LayerNormFamily, func(c Case, cc, sms int) string {
			p := layerNormChoosePlan(c, cc, sms)
			return fmt.Sprintf("%s t=%d", p.kernel("layernorm", c.DType), p.threads)
		}},
		{SoftmaxFamily, func(c Case, cc, sms int) string {
			p := softmaxChoosePlan(c, cc, sms)
			return fmt.Sprintf("%s t=%d", p.kernel("softmax", c.DType), p.threads)
		}},
		{CrossEntropyFamily, func(c Case, cc, sms int) string {
			p := crossEntropyChoosePlan(c, cc, sms)
			return fmt.Sprintf("%s t=%d", p.kernel("xent", c.DType), p.threads)
		}},
		{FP8QuantFamily, func(c Case, cc, sms int) string {
			p := fp8QuantChoosePlan(c, cc, sms)
			return fmt.Sprintf("%s t=%d", p.kernel("fp8_row", c.DType), p.threads)
		}},
	}
	var b strings.Builder
	for _, gpu := range []struct{ cc, sms int }{{80, 108}, {90, 132}} {
		for _, ch := range choosers {
			cases := append(ch.f.CasesOn("cuda", Grids["cuda"]), ch.f.CasesOn("test", testShapes)...)
			for _, c := range cases {
				if c.Variant == "block128" {
					continue // FP8Quant's per-block scales have no row plan
				}
				fmt.Fprintf(&b, "cc=%d %s %s %s\n", gpu.cc, ch.f.Name, ch.f.BenchName(c, Fused), ch.pick(c, gpu.cc, gpu.sms))
			}
		}
	}
	return b.String()
}

// TestRowPlanChoices pins the plans the row families choose today for every case of the CUDA grid and of the
// correctness tests, on sm_80 and sm_90: a change to the plan code that changes a GPU-verified choice fails here
// (go test ./kernels/ -run TestRowPlanChoices -kernels.update-rowplans rewrites the file when a choice is meant
// to change, with the GPU measurement that says why).
func TestRowPlanChoices(t *testing.T) {
	const golden = "testdata/rowplans.golden"
	got := rowPlanChoices()
	if *updateRowPlans {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./kernels/ -run TestRowPlanChoices -kernels.update-rowplans writes it)", err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%s has %d lines, the choosers give %d", golden, len(wl), len(gl))
	}
	bad := 0
	for i := range wl {
		if wl[i] != gl[i] {
			if bad++; bad <= 10 {
				t.Errorf("%s:%d: pinned %q, chosen %q", golden, i+1, wl[i], gl[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("… %d choices differ in all", bad)
	}
}

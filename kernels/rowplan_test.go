package kernels

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var updateRowPlans = flag.Bool("kernels.update-rowplans", false, "rewrite testdata/rowplans.golden from the row plan choosers")

// rowPlanChoices lists, one line per case, the fused kernel, block size and cluster each row family's plan chooser
// picks on an sm_80 GPU with 108 multiprocessors and an sm_90 one with 132, over the suite's CUDA grid and the
// correctness tests' shapes.
func rowPlanChoices() string {
	pick := func(rf *rowFamily, plan func(c Case, cc, sms int) rowPlan, c Case, cc, sms int) string {
		p := plan(c, cc, sms)
		if p.cluster > 0 {
			return fmt.Sprintf("%s t=%d c=%d", rf.kernel(p, c.DType), p.threads, p.cluster)
		}
		return fmt.Sprintf("%s t=%d", rf.kernel(p, c.DType), p.threads)
	}
	choosers := []struct {
		f    *Family
		rows *rowFamily
		plan *func(c Case, cc, sms int) rowPlan
	}{
		{RMSNormFamily, rmsNormRows, &rmsNormPlanFor},
		{LayerNormFamily, layerNormRows, &layerNormPlanFor},
		{SoftmaxFamily, softmaxRows, &softmaxPlanFor},
		{CrossEntropyFamily, crossEntropyRows, &crossEntropyPlanFor},
		{FP8QuantFamily, fp8QuantRows, &fp8QuantPlanFor},
	}
	var b strings.Builder
	for _, gpu := range []struct{ cc, sms int }{{80, 108}, {90, 132}} {
		for _, ch := range choosers {
			cases := append(ch.f.CasesOn("cuda", harness.Grids["cuda"]), ch.f.CasesOn("test", testShapes)...)
			for _, c := range cases {
				if c.Variant == "block128" {
					continue // FP8Quant's per-block scales have no row plan
				}
				fmt.Fprintf(&b, "cc=%d %s %s %s\n", gpu.cc, ch.f.Name, ch.f.BenchName(c, Fused), pick(ch.rows, *ch.plan, c, gpu.cc, gpu.sms))
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

// TestRowDSMEMChoice checks where row_dsmem is chosen: never when switched off, never before sm_90, and on sm_90
// for exactly the cases of the CUDA grid and the correctness shapes where the family measured it fastest (its
// *DSMEMWins), with a cluster of 2–16 blocks whose slices cover the row and fit the shared memory limit.
func TestRowDSMEMChoice(t *testing.T) {
	defer func(on bool) { rowDSMEMOn = on }(rowDSMEMOn)
	plans := map[*Family]func(Case, int, int) rowPlan{RMSNormFamily: rmsNormPlanFor, LayerNormFamily: layerNormPlanFor,
		SoftmaxFamily: softmaxPlanFor, CrossEntropyFamily: crossEntropyPlanFor, FP8QuantFamily: fp8QuantPlanFor}
	wins := map[*Family]func(Case) bool{RMSNormFamily: rmsNormDSMEMWins, SoftmaxFamily: softmaxDSMEMWins,
		CrossEntropyFamily: crossEntropyDSMEMWins}
	chosen := 0
	for _, on := range []bool{false, true} {
		rowDSMEMOn = on
		for f, plan := range plans {
			for _, c := range append(f.CasesOn("cuda", harness.Grids["cuda"]), f.CasesOn("test", testShapes)...) {
				if c.Variant == "block128" {
					continue
				}
				for _, cc := range []int{80, 90} {
					p := plan(c, cc, 132)
					w := wins[f]
					if want := on && cc >= 90 && w != nil && w(c); (p.kind == rowDSMEM) != want {
						t.Errorf("%s %s cc=%d dsmem on=%v: chose %v", f.Name, f.BenchName(c, Fused), cc, on, p)
						continue
					}
					if p.kind != rowDSMEM {
						continue
					}
					chosen++
					slice := rowDSMEMBytes(p, c)
					if p.cluster < 2 || p.cluster > rowDSMEMMaxBlocks || p.cluster&(p.cluster-1) != 0 ||
						p.cluster*slice < c.Cols*c.DType.Size() || slice > rowDSMEMMaxSlice ||
						p.threads < 128 || p.threads > 1024 || p.vec != (c.Cols%(16/c.DType.Size()) == 0) {
						t.Errorf("%s %s: %v with %d B slices", f.Name, f.BenchName(c, Fused), p, slice)
					}
				}
			}
		}
	}
	if chosen == 0 {
		t.Error("row_dsmem was never chosen")
	}
}

//go:build cuda

package kernels

import (
	"fmt"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestCUDARowDSMEM checks the row_dsmem kernels of every row family (rowdsmem.cuh) against the float64
// reference, outputs poisoned before each run (checkCase): the plan rowDSMEMPlan picks and clusters of 2, 4, 8
// and 16 blocks of 128 and 1024 threads wherever a slice fits, on rows of 65536 and 262144 columns, odd widths
// (single-element packs), and rows so short that some blocks of a cluster hold nothing, whether or not the families
// choose row_dsmem for the case.
func TestCUDARowDSMEM(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("row_dsmem needs thread-block clusters (compute capability 9.0; this GPU: %d.%d)", be.CC()/10, be.CC()%10)
	}
	shapes := []Shape{{Rows: 3, Cols: 65536}, {Rows: 2, Cols: 262144}, {Rows: 3, Cols: 65537}, {Rows: 2, Cols: 20001}, {Rows: 5, Cols: 1000}, {Rows: 3, Cols: 20}, {Rows: 1, Cols: 262143}}
	checkRowPlans(t, be, shapes, func(_ *rowFamily, c Case, _ int) []rowPlan { return rowDSMEMPlans(c) },
		func(p rowPlan) string { return fmt.Sprintf("c=%d/t=%d", p.cluster, p.threads) })
}

// checkRowPlans checks, for each row family and storage dtype, every plan plans(rf, c, i) lists for the case c of
// shapes[i] against the float64 reference (harness.CheckCase: outputs poisoned before each run), the family's plan
// hook swapped to the plan, in subtests named <family>/<case>/<kernel>/name(p); the hooks are restored after.
func checkRowPlans(t *testing.T, be *harness.CUDA, shapes []Shape, plans func(rf *rowFamily, c Case, i int) []rowPlan,
	name func(rowPlan) string) {
	swaps := []struct {
		f    *Family
		plan *func(Case, int, int) rowPlan
		rows *rowFamily
	}{
		{RMSNormFamily, &rmsNormPlanFor, rmsNormRows},
		{LayerNormFamily, &layerNormPlanFor, layerNormRows},
		{SoftmaxFamily, &softmaxPlanFor, softmaxRows},
		{CrossEntropyFamily, &crossEntropyPlanFor, crossEntropyRows},
		{FP8QuantFamily, &fp8QuantPlanFor, fp8QuantRows},
	}
	for _, sw := range swaps {
		defer func(def func(Case, int, int) rowPlan, p *func(Case, int, int) rowPlan) { *p = def }(*sw.plan, sw.plan)
		for _, dt := range StorageDTypes {
			for i, s := range shapes {
				c := Case{DType: dt, Shape: s}
				var gens map[string]harness.Generator
				switch sw.f {
				case FP8QuantFamily:
					c.Variant = "row"
				case CrossEntropyFamily:
					gens = map[string]harness.Generator{"labels": someIgnored}
				}
				for _, p := range plans(sw.rows, c, i) {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", sw.f.Name, sw.f.BenchName(c, Fused), sw.rows.kernel(p, dt), name(p)), func(t *testing.T) {
						*sw.plan = func(Case, int, int) rowPlan { return p }
						if _, err := harness.CheckCase(be, sw.f, c, Fused, harness.CaseSeed(t), gens); err != nil {
							t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
						}
					})
				}
			}
		}
	}
}

// rowDSMEMPlans lists the row_dsmem plans TestCUDARowDSMEM runs for case c: rowDSMEMPlan's, and clusters of
// 2–16 blocks of 128 and 1024 threads whose slices fit rowDSMEMMaxSlice.
func rowDSMEMPlans(c Case) []rowPlan {
	var ps []rowPlan
	if p, ok := rowDSMEMPlan(c, 90); ok {
		ps = append(ps, p)
	}
	vec, _, _ := rowAccess(c)
	for _, cs := range []int{2, 4, 8, 16} {
		for _, threads := range []int{128, 1024} {
			p := rowPlan{kind: rowDSMEM, cluster: cs, vec: vec, threads: threads}
			if rowDSMEMBytes(p, c) <= rowDSMEMMaxSlice && (len(ps) == 0 || p != ps[0]) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

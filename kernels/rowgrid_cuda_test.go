//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDARowGrid checks the row_grid kernels (rowgrid.cuh) of the row families that have them (rowFamily.grid: all
// but FP8Quant) against the float64 reference, outputs poisoned before each of CheckCase's two runs (so the second
// launch must tell its slots from the first's by their tags), whether or not the families choose row_grid
// (rowGridPending): both dtypes, 16-byte packs, rows of 4096 to 262144 columns and row counts below and above the
// groups (1, 3, 129, 1000), so that groups take different numbers of rows, some none, and 20008 columns (an odd
// number of bf16 packs: a last block's slice shorter than the others). The plans are rowGridPlans': rowGridPlan's
// and, on the shapes marked all, groups of twice and four times its blocks (smaller slices, more partials to merge)
// and the ring and lag variants the kernels allow. Subtests are named <family>/<case>/<kernel>/g=…/r=…/l=….
func TestCUDARowGrid(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("row_grid needs compute capability 9.0 (this GPU: %d.%d)", be.CC()/10, be.CC()%10)
	}
	shapes := []struct {
		s   Shape
		all bool
	}{
		{Shape{Rows: 129, Cols: 4096}, false}, {Shape{Rows: 1000, Cols: 16384}, false}, {Shape{Rows: 3, Cols: 65536}, true},
		{Shape{Rows: 129, Cols: 65536}, false}, {Shape{Rows: 3, Cols: 262144}, true}, {Shape{Rows: 1, Cols: 262144}, false},
		{Shape{Rows: 33, Cols: 20008}, true},
	}
	ss := make([]Shape, len(shapes))
	for i, s := range shapes {
		ss[i] = s.s
	}
	sms := be.Device().Workers
	checkRowPlans(t, be, ss, func(rf *rowFamily, c Case, i int) []rowPlan {
		if !rf.grid {
			return nil
		}
		ps := rowGridPlans(c, sms, shapes[i].all)
		if len(ps) == 0 {
			t.Errorf("%v rows=%d cols=%d: no row_grid plan", c.DType, c.Rows, c.Cols)
		}
		return ps
	}, func(p rowPlan) string { return fmt.Sprintf("g=%d/r=%d/l=%d", p.groups, p.ring, p.lag) })
}

// rowGridPlans lists the row_grid plans TestCUDARowGrid (and, with all, TestCUDARowTune) runs for case c on a GPU
// of sms multiprocessors: rowGridPlan's first; with all, also groups of half and a quarter as many (their blocks'
// slices a half and a quarter as long), and rings and lags the kernels allow (lag 3 and 4, a ring of lag + 3 and
// of rowGridRing rows), where the GPU runs them.
func rowGridPlans(c Case, sms int, all bool) []rowPlan {
	def, ok := rowGridPlan(c, 90, sms)
	if !ok {
		return nil
	}
	ps := []rowPlan{def}
	if !all {
		return ps
	}
	seen := map[rowPlan]bool{def: true}
	for _, g := range []int{def.groups, def.groups / 2, def.groups / 4} {
		for _, lag := range []int{rowGridMinLag, rowGridMinLag + 1} {
			for _, ring := range []int{lag + 3, rowGridRing} {
				p := def
				p.groups, p.lag, p.ring = g, lag, ring
				if !seen[p] && rowGridCheck(p, c, 90, sms) == "" {
					seen[p] = true
					ps = append(ps, p)
				}
			}
		}
	}
	return ps
}

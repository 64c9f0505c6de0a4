//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDARowRing checks the row_ring kernels of every row family (rowring.cuh) against the float64 reference,
// outputs poisoned before each run (CheckCase), whether or not the families choose row_ring (rowRingPending):
// both dtypes, 16-byte and single-element packs (odd widths), rows of 4096 to 262144 columns and row counts
// that are not multiples of the clusters the GPU runs at once (1, 3, 129, 1000), so that clusters take different
// numbers of rows and the ring wraps in the middle of a row (rings a chunk or three longer than a row's slice).
// The plans are rowRingPlans': rowRingPlan's (a ring of one row's slice: each chunk's slot is refilled with the
// next row's chunk of the same index), and on the shapes marked all the variants it lists. Subtests are named
// <family>/…, so that -test.run 'TestCUDARowRing$/RMSNorm|LayerNorm' runs some families.
func TestCUDARowRing(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("row_ring needs compute capability 9.0 (this GPU: %d.%d)", be.CC()/10, be.CC()%10)
	}
	shapes := []struct {
		s   Shape
		all bool // every plan of rowRingPlans, else rowRingPlan's alone
	}{
		{Shape{Rows: 129, Cols: 4096}, true}, {Shape{Rows: 1000, Cols: 4096}, false}, {Shape{Rows: 1, Cols: 4096}, false},
		{Shape{Rows: 129, Cols: 16384}, false}, {Shape{Rows: 3, Cols: 65536}, true}, {Shape{Rows: 129, Cols: 65536}, false},
		{Shape{Rows: 3, Cols: 262144}, false}, {Shape{Rows: 1, Cols: 262144}, false},
		{Shape{Rows: 33, Cols: 20001}, true}, {Shape{Rows: 3, Cols: 65537}, false}, {Shape{Rows: 1000, Cols: 999}, false},
		{Shape{Rows: 3, Cols: 262143}, false},
	}
	ss := make([]Shape, len(shapes))
	for i, s := range shapes {
		ss[i] = s.s
	}
	checkRowPlans(t, be, ss, func(c Case, i int) []rowPlan {
		ps := rowRingPlans(c, false)
		if len(ps) == 0 {
			t.Errorf("%v rows=%d cols=%d: no row_ring plan", c.DType, c.Rows, c.Cols)
		}
		if !shapes[i].all && len(ps) > 1 {
			ps = ps[:1]
		}
		return ps
	}, func(p rowPlan) string { return fmt.Sprintf("c=%d/t=%d/r=%d", p.cluster, p.threads, p.ring) })
}

// rowRingPlans lists the row_ring plans that TestCUDARowRing (tune false) and TestCUDARowTune (tune) run for case c,
// rowRingPlan's first. For the test: clusters of 1–16 blocks, blocks of 64 and 128 threads, and rings one and
// three chunks longer than a row's slice. For the tune: clusters of half, once and twice rowRingPlan's blocks, in
// blocks of 128 and 256 threads, with rings of a row's slice and one or two chunks more.
func rowRingPlans(c Case, tune bool) []rowPlan {
	var ps []rowPlan
	seen := map[rowPlan]bool{}
	add := func(p rowPlan, ok bool) {
		if ok && !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	def, ok := rowRingPlan(c, 90)
	if !ok {
		return nil
	}
	add(def, ok)
	if !tune {
		for _, cs := range []int{1, 2, 4, 8, 16} {
			add(rowRingShape(c, 90, cs, def.threads, 0))
		}
		for _, th := range []int{64, 128} {
			add(rowRingShape(c, 90, def.cluster, th, 0))
		}
		add(rowRingShape(c, 90, def.cluster, def.threads, 1))
		add(rowRingShape(c, 90, def.cluster, def.threads, 3))
		return ps
	}
	for _, cs := range []int{def.cluster / 2, def.cluster, def.cluster * 2} {
		for _, th := range []int{128, 256} {
			for extra := 0; extra <= 2; extra++ {
				add(rowRingShape(c, 90, cs, th, extra))
			}
		}
	}
	return ps
}

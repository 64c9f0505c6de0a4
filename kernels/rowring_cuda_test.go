//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDARowRing checks the row_ring kernels of every row family (rowring.cuh) against the float64 reference,
// outputs poisoned before each run (CheckCase), whether or not the families choose row_ring (rowRingPending):
// both dtypes, 16-byte and single-element packs (odd widths), rows of 4096 to 262144 columns and row counts
// that are not multiples of the clusters the GPU runs at once (1, 3, 33, 129, 1000), so that clusters take
// different numbers of rows and the ring wraps in the middle of a row (rings a chunk or three longer than a row's
// slice), and, for the families with two rows a pass (rowFamily.ring2, 16-byte packs), the row_ring2 kernels on
// the same shapes: an odd row count leaves one cluster a last pass of one row, and 20008 columns (an odd number of
// 16-byte packs in bf16) slices that end mid-chunk. The plans are rowRingPlans': rowRingPlan's and rowRingPlan2's
// (a ring of one row's slice, or of a pair's two: each chunk's slot is refilled with the next pass's chunk of the
// same index) and LayerNorm's chosen plan of two rows a pass, and on the shapes marked all the variants it lists. Subtests are named
// <family>/<case>/<kernel>/…, so that -test.run 'TestCUDARowRing$/RMSNorm|LayerNorm/////_ring2_' runs the two-row
// kernels of some families.
func TestCUDARowRing(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("row_ring needs compute capability 9.0 (this GPU: %d.%d)", be.CC()/10, be.CC()%10)
	}
	shapes := []struct {
		s   Shape
		all bool // every plan of rowRingPlans, else rowRingPlan's and rowRingPlan2's (also early) alone
	}{
		{Shape{Rows: 129, Cols: 4096}, true}, {Shape{Rows: 1000, Cols: 4096}, false}, {Shape{Rows: 1, Cols: 4096}, false},
		{Shape{Rows: 129, Cols: 16384}, false}, {Shape{Rows: 3, Cols: 65536}, true}, {Shape{Rows: 129, Cols: 65536}, false},
		{Shape{Rows: 3, Cols: 262144}, false}, {Shape{Rows: 1, Cols: 262144}, false},
		{Shape{Rows: 33, Cols: 20001}, true}, {Shape{Rows: 3, Cols: 65537}, false}, {Shape{Rows: 1000, Cols: 999}, false},
		{Shape{Rows: 3, Cols: 262143}, false}, {Shape{Rows: 33, Cols: 20008}, true},
	}
	ss := make([]Shape, len(shapes))
	for i, s := range shapes {
		ss[i] = s.s
	}
	checkRowPlans(t, be, ss, func(rf *rowFamily, c Case, i int) []rowPlan {
		ps := rowRingPlans(rf, c, false)
		if len(ps) == 0 {
			t.Errorf("%v rows=%d cols=%d: no row_ring plan", c.DType, c.Rows, c.Cols)
		}
		if shapes[i].all {
			return ps
		}
		var first []rowPlan
		d1, _ := rowRingPlan(c, 90)
		d2, _ := rowRingPlan2(c, 90)
		d2e := d2
		d2e.early = true
		ln2, _ := layerNormRing2(c, 90)
		for _, p := range ps {
			if p == d1 || p == d2 || p == d2e || rf == layerNormRows && p == ln2 && p.pass == 2 {
				first = append(first, p)
			}
		}
		return first
	}, func(p rowPlan) string { return fmt.Sprintf("c=%d/t=%d/r=%d", p.cluster, p.threads, p.ring) })
}

// rowRingPlans lists the row_ring plans of family rf that TestCUDARowRing (tune false) and TestCUDARowTune (tune)
// run for case c: rowRingPlan's first, then the other plans of one row a pass, then, where the family has two
// rows a pass (rf.ring2, 16-byte packs), rowRingPlan2's and the others of two. For the test: clusters of 1–16
// blocks, blocks of 64 and 128 threads, and rings one and three chunks longer than a pass's slices. For the tune,
// one row a pass: clusters of half, once and twice rowRingPlan's blocks, in blocks of 128 and 256 threads, with
// rings of a row's slice and one or two chunks more; two rows a pass: the clusters whose slices are 16–32 KiB
// (rowRingPlan2's where none is), blocks of 128 and 256 threads, rings of the pair's slices and one chunk more,
// and the early column loads (ring2e) with the pair's slices. The test runs ring2e on rowRingPlan2's plan, with
// and without a chunk more.
func rowRingPlans(rf *rowFamily, c Case, tune bool) []rowPlan {
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
	def2, ok2 := rowRingPlan2(c, 90)
	ok2 = ok2 && rf.ring2
	if !tune {
		for _, pass := range []int{1, 2} {
			d := def
			if pass == 2 {
				if !ok2 {
					break
				}
				d = def2
				add(d, true)
				e := d
				e.early = true
				add(e, true)
				if p, ok := rowRingShape(c, 90, d.cluster, d.threads, 1, 2); ok {
					p.early = true
					add(p, ok)
				}
				if rf == layerNormRows { // LayerNorm's chosen plan of two rows a pass, where it has one
					add(layerNormRing2(c, 90))
				}
			}
			for _, cs := range []int{1, 2, 4, 8, 16} {
				add(rowRingShape(c, 90, cs, d.threads, 0, pass))
			}
			for _, th := range []int{64, 128} {
				add(rowRingShape(c, 90, d.cluster, th, 0, pass))
			}
			add(rowRingShape(c, 90, d.cluster, d.threads, 1, pass))
			add(rowRingShape(c, 90, d.cluster, d.threads, 3, pass))
		}
		return ps
	}
	for _, cs := range []int{def.cluster / 2, def.cluster, def.cluster * 2} {
		for _, th := range []int{128, 256} {
			for extra := 0; extra <= 2; extra++ {
				add(rowRingShape(c, 90, cs, th, extra, 1))
			}
		}
	}
	if !ok2 {
		return ps
	}
	var clusters []int
	for cs := 1; cs <= rowRingMaxBlocks; cs *= 2 {
		if slice := rowRingSliceBytes(rowPlan{kind: rowRing, cluster: cs, vec: true}, c); slice >= 16<<10 && slice <= 32<<10 {
			clusters = append(clusters, cs)
		}
	}
	if len(clusters) == 0 {
		clusters = []int{def2.cluster}
	}
	for _, cs := range clusters {
		for _, th := range []int{128, 256} {
			for extra := 0; extra <= 1; extra++ {
				add(rowRingShape(c, 90, cs, th, extra, 2))
			}
			if p, ok := rowRingShape(c, 90, cs, th, 0, 2); ok {
				p.early = true
				add(p, ok)
			}
		}
	}
	return ps
}

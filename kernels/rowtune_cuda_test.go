//go:build cuda

package kernels

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// rowTuneFamilies, from KW_ROW_TUNE, narrows TestCUDARowTune to the comma-separated families it names ("": all).
var rowTuneFamilies = os.Getenv("KW_ROW_TUNE")

// rowTuneCols, from KW_ROW_COLS, narrows TestCUDARowTune to the comma-separated column counts it names ("": all).
var rowTuneCols = os.Getenv("KW_ROW_COLS")

// rowTuneRingOnly, from KW_ROW_PLANS=ring, narrows TestCUDARowTune's plans to the family's choices (with and
// without row_dsmem and row_ring) and the row_ring plans; KW_ROW_PLANS=ring2 further to rowRingPlan's and the
// plans of two rows a pass; KW_ROW_PLANS=grid to the choices with and without row_grid and the row_grid plans.
var (
	rowTuneRingOnly  = os.Getenv("KW_ROW_PLANS") == "ring" || rowTuneRing2Only
	rowTuneRing2Only = os.Getenv("KW_ROW_PLANS") == "ring2"
	rowTuneGridOnly  = os.Getenv("KW_ROW_PLANS") == "grid"
)

// TestCUDARowTune (with -kernels.tune) times, for the five row families on every cuda-grid shape of more than 64
// rows, the plan the family picks (marked *) and those it picks without row_grid, without row_ring and row_res too
// and without row_dsmem and the look-ahead blocks (rowLead) either, the chosen plan's kernel from the _sm90 module where
// the _x_sm90a module has it too (rowXA) and the _x_sm90a twin of every plan below that has one, every plan its test enumerator lists with 16-byte accesses, the row_grid plans
// (rowGridPlans with its variants, rows of 16384 columns and more), the row_dsmem plans in blocks of 128–1024
// threads, the row_res plans (rowResPlans: RMSNorm, LayerNorm and Softmax, rows of 4096 columns and more) and the
// row_ring plans (rowRingPlans, rows of 4096 columns and more; two rows a pass for RMSNorm and LayerNorm), each as
// the benchmarks time it (the suite's cold-L2 policy, median of 15 launches) on the benchmarks' inputs, and prints
// each as µs, pct of the suite's copy (the benchmarks' pct-copy) and pct of the copy at the same shape.
// KW_ROW_TUNE=RMSNorm,Softmax narrows the families, KW_ROW_COLS=65536,262144 the shapes, KW_ROW_PLANS=ring (or
// ring2, or grid) the plans.
func TestCUDARowTune(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	s := harness.NewSuite(be, nil)
	suiteCopy, err := s.MeasureCopy()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("rowtune: %s (cc %d, %d SMs), suite copy %.1f GB/s\n", be.Device().Name, be.CC(), be.Device().Workers, suiteCopy)
	on, ringOn, resOn, gridOn := rowDSMEMOn, rowRingOn, rowResOn, rowGridOn
	defer func() {
		rowDSMEMOn, rowRingOn, rowResOn, rowGridOn, rowLeadOn, rowXAOn = on, ringOn, resOn, gridOn, true, true
	}()
	timeIt := func(l harness.Launch) (float64, error) {
		if _, err := be.Time(l, 3, s.Policy.Timing); err != nil {
			return 0, err
		}
		ns, err := be.Time(l, 15, s.Policy.Timing)
		if err != nil {
			return 0, err
		}
		return harness.Median(ns), nil
	}
	type fam struct {
		f     *Family
		plan  *func(Case, int, int) rowPlan
		rows  *rowFamily
		plans func(Case, int) []rowPlan
	}
	fams := []fam{
		{RMSNormFamily, &rmsNormPlanFor, rmsNormRows, rmsNormPlans},
		{LayerNormFamily, &layerNormPlanFor, layerNormRows, layerNormPlans},
		{SoftmaxFamily, &softmaxPlanFor, softmaxRows, softmaxPlans},
		{CrossEntropyFamily, &crossEntropyPlanFor, crossEntropyRows, rowPlans},
		{FP8QuantFamily, &fp8QuantPlanFor, fp8QuantRows, rowPlans},
	}
	for _, fm := range fams {
		if rowTuneFamilies != "" && !strings.Contains(","+rowTuneFamilies+",", ","+fm.f.Name+",") {
			continue
		}
		def := *fm.plan
		for _, dt := range StorageDTypes {
			for _, sh := range harness.Grids["cuda"] {
				if sh.Rows <= 64 || rowTuneCols != "" && !strings.Contains(","+rowTuneCols+",", fmt.Sprintf(",%d,", sh.Cols)) {
					continue
				}
				c := Case{DType: dt, Shape: sh}
				if fm.f == FP8QuantFamily {
					c.Variant = "row"
				}
				st, err := s.Buffers(fm.f, c, nil)
				if err != nil {
					t.Fatal(err)
				}
				dst, err := be.Alloc(dt, sh.Rows*sh.Cols)
				if err != nil {
					t.Fatal(err)
				}
				cp, err := be.Prepare(CopyFamily, Fused, Case{DType: dt, Shape: sh}, st.In[:1], []harness.Buffer{dst})
				if err != nil {
					t.Fatal(err)
				}
				cns, err := timeIt(cp)
				cp.Release()
				if err != nil {
					t.Fatal(err)
				}
				bytes := float64(fm.f.MinBytes(c))
				rowDSMEMOn, rowRingOn, rowResOn, rowGridOn, rowLeadOn, rowXAOn = false, false, false, false, false, false
				base := def(c, be.CC(), be.Device().Workers)
				rowDSMEMOn, rowLeadOn = true, true
				withD := def(c, be.CC(), be.Device().Workers)
				rowRingOn, rowResOn = true, resOn
				noGrid := def(c, be.CC(), be.Device().Workers)
				rowGridOn = gridOn
				withGrid := def(c, be.CC(), be.Device().Workers)
				rowXAOn = true
				chosen := def(c, be.CC(), be.Device().Workers)
				fmt.Printf("rowtune %-12s %s | copy %7.1f µs | default %v | with dsmem %v | with ring and res %v | with grid %v | with xa (chosen) %v\n",
					fm.f.Name, fm.f.BenchName(c, Fused), cns/1e3, base, withD, noGrid, withGrid, chosen)
				seen := map[rowPlan]bool{}
				try := []rowPlan{chosen, withGrid, noGrid, base, withD}
				if rowTuneGridOnly {
					try = []rowPlan{chosen, withGrid, noGrid}
				}
				if !rowTuneRingOnly && !rowTuneGridOnly {
					try = append(try, fm.plans(c, be.CC())...)
				}
				if sh.Cols >= 16384 && fm.rows.grid {
					try = append(try, rowGridPlans(c, be.Device().Workers, true)...)
				}
				for _, p := range rowDSMEMPlans(c) {
					if sh.Cols < 16384 || rowTuneRingOnly || rowTuneGridOnly { // slices of a few KiB: 5–75% of the copy on an H200
						break
					}
					for _, th := range []int{128, 256, 512, 1024} {
						q := p
						q.threads = th
						try = append(try, q)
					}
				}
				if sh.Cols >= 4096 && !rowTuneGridOnly {
					try = append(try, rowResPlans(fm.rows, c)...)
					for i, p := range rowRingPlans(fm.rows, c, true) {
						if !rowTuneRing2Only || i == 0 || p.pass == 2 {
							try = append(try, p)
						}
					}
				}
				if sh.Cols >= 16384 && be.CC() == 90 {
					try = append(try, rowXAResPlans(fm.rows, c)...)
					if p, ok := rowXACluster16(fm.rows, c, be.CC()); ok {
						try = append(try, p)
					}
				}
				try = rowXATwins(fm.rows, try, be.CC())
				for _, p := range try {
					if seen[p] || !p.vec && c.Cols%(16/dt.Size()) == 0 {
						continue
					}
					seen[p] = true
					if p.kind == rowDSMEM && rowDSMEMBytes(p, c) > rowDSMEMMaxSlice {
						continue
					}
					*fm.plan = func(Case, int, int) rowPlan { return p }
					l, err := be.Prepare(fm.f, Fused, c, st.In, st.Out)
					tag := " "
					if p == chosen {
						tag = "*"
					}
					if err != nil {
						fmt.Printf("rowtune   %s %-34s %-22v %v\n", tag, fm.rows.kernel(p, dt), p, err)
						continue
					}
					ns, err := timeIt(l)
					l.Release()
					if err != nil {
						fmt.Printf("rowtune   %s %-34s %-22v %v\n", tag, fm.rows.kernel(p, dt), p, err)
						continue
					}
					fmt.Printf("rowtune   %s %-34s %-22v %9.1f µs %5.1f%% copy %5.1f%% same-shape\n", tag, fm.rows.kernel(p, dt), p,
						ns/1e3, 100*bytes/ns/suiteCopy, 100*bytes/ns/(float64(CopyFamily.MinBytes(Case{DType: dt, Shape: sh}))/cns))
				}
				*fm.plan = def
				be.Free(dst)
				st.Release()
			}
		}
	}
}

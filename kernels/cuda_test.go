//go:build cuda

package kernels

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var tuneFlag = flag.Bool("kernels.tune", false, "TestCUDATune: time every RMSNorm plan on the cuda grid and print a table")

func cudaBackend(t *testing.T) *harness.CUDA {
	t.Helper()
	be, ok := harness.Backends()["cuda"].(*harness.CUDA)
	if !ok {
		t.Fatal("no cuda backend open")
	}
	return be
}

// rowAccessElems is the elements of one access to a row of case c (a 16-byte vector if vec, else one), and
// whether whole vectors tile the row.
func rowAccessElems(c Case, vec bool) (int, bool) {
	if !vec {
		return 1, true
	}
	e := 16 / c.DType.Size()
	return e, c.Cols%e == 0
}

// rowWarpPlans lists the warp plans (nv accesses a lane; vectorized, a warp takes 8/nv rows) whose warp covers a row
// of c without leaving half of its lanes idle.
func rowWarpPlans(c Case, vec bool) []rowPlan {
	e, _ := rowAccessElems(c, vec)
	var ps []rowPlan
	for _, nv := range []int{1, 2, 4, 8} {
		if c.Cols <= 32*nv*e && (nv == 1 || c.Cols > 16*nv*e) {
			rows := 1
			if vec {
				rows = 8 / nv
			}
			ps = append(ps, rowPlan{kind: rowWarp, rows: rows, vec: vec, nv: nv})
		}
	}
	return ps
}

// rowWidePlans lists the wide one-block-a-row plans (rowWide: 32 16-byte packs a thread, sm_90, Softmax fp32 only)
// whose block, of at least a warp and at most rowBlockMaxThreads, covers a row of c without leaving half of its
// threads idle.
func rowWidePlans(c Case, cc int) []rowPlan {
	e, ok := rowAccessElems(c, true)
	if !ok || cc < 90 || c.DType != FP32 {
		return nil
	}
	t := max(ceilPow2(ceilDiv(c.Cols, 32*e)), 32)
	p := rowPlan{kind: rowBlock, vec: true, nv: 32, threads: t}
	if t > rowBlockMaxThreads(p) || c.Cols <= t/2*32*e {
		return nil
	}
	return []rowPlan{p}
}

// rowXATwins is ps followed by the twin (xa) of each of its plans that family rf builds in its _x_sm90a module
// (rowFamily.hasXA), on a GPU of compute capability 9.0 (sm_90a PTX).
func rowXATwins(rf *rowFamily, ps []rowPlan, cc int) []rowPlan {
	if cc != 90 {
		return ps
	}
	for _, p := range ps[:len(ps):len(ps)] {
		if !p.xa && rf.hasXA(p) {
			p.xa = true
			ps = append(ps, p)
		}
	}
	return ps
}

// rowLeadPlans lists the look-ahead block plans of family rf (rowLead) whose block covers a row of case c on a GPU
// of compute capability cc (sm_90, 16-byte packs).
func rowLeadPlans(rf *rowFamily, c Case, cc int) []rowPlan {
	e, ok := rowAccessElems(c, true)
	if !ok || cc < 90 {
		return nil
	}
	var ps []rowPlan
	for _, l := range rf.leads {
		if l.dt == c.DType && l.threads*8*e >= c.Cols {
			ps = append(ps, rowPlan{kind: rowBlock, vec: true, nv: 8, threads: l.threads, lead: l.lead})
		}
	}
	return ps
}

// rmsNormPlans lists the plans that can run case c on a GPU of compute capability cc: every kernel of the
// modules, in every block size that covers a row without leaving whole blocks idle, the look-ahead blocks and the
// clusters' _x_sm90a twins.
func rmsNormPlans(c Case, cc int) []rowPlan {
	ps := rowLeadPlans(rmsNormRows, c, cc)
	for _, vec := range []bool{true, false} {
		e, ok := rowAccessElems(c, vec)
		if !ok {
			continue
		}
		ps = append(ps, rowWarpPlans(c, vec)...)
		nvs := []int{2, 4, 8}
		if !vec {
			nvs = []int{4, 8, 16}
		}
		for _, nv := range nvs {
			for _, threads := range []int{64, 128, 256, 512, 1024} {
				if chunk := threads * nv * e; chunk < 2*c.Cols && c.Cols/chunk <= 512 {
					ps = append(ps, rowPlan{kind: rowTeam, vec: vec, nv: nv, threads: threads})
				}
			}
		}
		if vec && cc >= 90 {
			for _, cs := range []int{2, 4, 8} {
				for _, threads := range []int{64, 128, 256, 512, 1024} {
					if chunk := threads * 8 * e; cs*chunk >= c.Cols && (cs-1)*chunk < c.Cols {
						ps = append(ps, rowPlan{kind: rowCluster, cluster: cs, vec: true, nv: 8, threads: threads})
					}
				}
			}
		}
	}
	return rowXATwins(rmsNormRows, ps, cc)
}

// TestCUDARMSNormPlans checks every fused RMSNorm kernel and block size, teams of up to 512 blocks and clusters
// included, against the reference (TestKernels checks only the plans rmsNormChoosePlan picks).
func TestCUDARMSNormPlans(t *testing.T) {
	be := cudaBackend(t)
	defer func() { rmsNormPlanFor = rmsNormPlanDefault }()
	for _, dt := range StorageDTypes {
		for _, s := range []Shape{{Rows: 3, Cols: 4096}, {Rows: 5, Cols: 1000}, {Rows: 2, Cols: 65536}, {Rows: 3, Cols: 20001}, {Rows: 9, Cols: 256}, {Rows: 19, Cols: 64}, {Rows: 2, Cols: 262144}, {Rows: 3, Cols: 12288}} {
			c := Case{DType: dt, Shape: s}
			for _, p := range rmsNormPlans(c, be.CC()) {
				t.Run(fmt.Sprintf("%s/%v/t=%d", RMSNormFamily.BenchName(c, Fused), rmsNormRows.kernel(p, dt), p.threads), func(t *testing.T) {
					rmsNormPlanFor = func(Case, int, int) rowPlan { return p }
					if _, err := harness.CheckCase(be, RMSNormFamily, c, Fused, harness.CaseSeed(t), nil); err != nil {
						t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
					}
				})
			}
		}
	}
}

// TestCUDATune times every RMSNorm plan, the copy and the naive chain on the cuda grid (with -kernels.tune).
func TestCUDATune(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	defer func() { rmsNormPlanFor = rmsNormPlanDefault }()
	s := harness.NewSuite(be, nil)
	cold := s.Policy.Timing
	fill := func(seed uint64) func(_ *rand.Rand, _ Case, dst []float32) {
		return func(_ *rand.Rand, _ Case, dst []float32) {
			x := seed | 1
			for i := range dst {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				dst[i] = float32(int64(x>>40)-1<<23) / (1 << 22) // uniform in [-2, 2)
			}
		}
	}
	gbps := func(f *Family, c Case, l harness.Launch, timing harness.Timing) (float64, float64) {
		if _, err := be.Time(l, 5, timing); err != nil {
			t.Fatal(err)
		}
		ns, err := be.Time(l, 30, timing)
		if err != nil {
			t.Fatal(err)
		}
		return float64(f.MinBytes(c)) / harness.Median(ns), harness.Median(ns)
	}
	for _, dt := range StorageDTypes {
		for _, shape := range harness.Grids["cuda"] {
			c := Case{DType: dt, Shape: shape}
			st, err := s.Buffers(RMSNormFamily, c, fill(uint64(shape.Rows)))
			if err != nil {
				t.Fatal(err)
			}
			// The copy of x into y, at the same shape.
			cp, err := be.Prepare(CopyFamily, Fused, c, st.In[:1], st.Out)
			if err != nil {
				t.Fatal(err)
			}
			cg, cns := gbps(CopyFamily, c, cp, cold)
			_, chot := gbps(CopyFamily, c, cp, harness.Timing{})
			cp.Release()
			cp, err = be.Prepare(CopyFamily, Naive, c, st.In[:1], st.Out)
			if err != nil {
				t.Fatal(err)
			}
			cgn, _ := gbps(CopyFamily, c, cp, cold)
			cp.Release()
			line := fmt.Sprintf("%s copy %.0f GB/s (%.1f µs, hot %.1f µs; naive copy %.0f GB/s)",
				RMSNormFamily.BenchName(c, ""), cg, cns/1e3, chot/1e3, cgn)
			nl, err := be.Prepare(RMSNormFamily, Naive, c, st.In, st.Out)
			if err != nil {
				t.Fatal(err)
			}
			ng, nns := gbps(RMSNormFamily, c, nl, cold)
			nl.Release()
			line += fmt.Sprintf(" | naive %.0f GB/s (%.1f µs)", ng, nns/1e3)
			def := rmsNormChoosePlan(c, be.CC(), be.Device().Workers)
			for _, p := range rmsNormPlans(c, be.CC()) {
				if !p.vec && def.vec {
					continue
				}
				rmsNormPlanFor = func(Case, int, int) rowPlan { return p }
				l, err := be.Prepare(RMSNormFamily, Fused, c, st.In, st.Out)
				if err != nil {
					line += fmt.Sprintf("\n    %-24s t=%-4d %v", rmsNormRows.kernel(p, dt), p.threads, err)
					continue
				}
				g, ns := gbps(RMSNormFamily, c, l, cold)
				_, hot := gbps(RMSNormFamily, c, l, harness.Timing{})
				l.Release()
				mark := ""
				if p == def {
					mark = " <- default"
				}
				line += fmt.Sprintf("\n    %-24s t=%-4d %5.0f GB/s %5.1f%% copy  %8.1f µs (hot %8.1f)  %4.1fx naive%s",
					rmsNormRows.kernel(p, dt), p.threads, g, 100*g/cg, ns/1e3, hot/1e3, nns/ns, mark)
			}
			rmsNormPlanFor = rmsNormPlanDefault
			st.Release()
			fmt.Println(line)
		}
	}
}

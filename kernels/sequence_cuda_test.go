//go:build cuda

package kernels

import (
	"fmt"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// testPlans checks family f's fused kernel in every plan plans(c) lists, for each case of its test grid (and
// extra), on the cuda backend: TestKernels checks only the plans the family picks. planFor is the family's plan
// hook (<family>PlanFor), restored afterwards.
func testPlans[P any](t *testing.T, f *Family, extra []Case, plans func(Case) []P, planFor *func(Case) P) {
	be := cudaBackend(t)
	use := swapPlan(t, planFor)
	for _, c := range append(f.CasesOn("test", nil), extra...) {
		for _, p := range plans(c) {
			t.Run(fmt.Sprintf("%s/%+v", f.BenchName(c, Fused), p), func(t *testing.T) {
				use(p)
				if _, err := harness.CheckCase(be, f, c, Fused, harness.CaseSeed(t), nil); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
			})
		}
	}
}

// swapPlan returns a function that makes *planFor pick a given plan, and restores *planFor when t ends.
func swapPlan[P any](t *testing.T, planFor *func(Case) P) func(P) {
	def := *planFor
	t.Cleanup(func() { *planFor = def })
	return func(p P) { *planFor = func(Case) P { return p } }
}

// tunePlans (with -kernels.tune) times family f's fused kernel in every plan plans(c) lists, and its naive chain
// where the benchmarks run it, at each case of the cuda grid, cold (the GPU policy), and prints GB/s, the share
// of the copy measured in the same process, the time and the speedup over naive; planFor is the family's plan
// hook (<family>PlanFor), restored afterwards.
func tunePlans[P comparable](t *testing.T, f *Family, plans func(Case) []P, planFor *func(Case) P) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	def := *planFor
	use := swapPlan(t, planFor)
	s := harness.NewSuite(be, nil)
	copyGBps, err := s.MeasureCopy()
	if err != nil {
		t.Fatal(err)
	}
	timeOf := func(l harness.Launch) float64 {
		if _, err := be.Time(l, 5, s.Policy.Timing); err != nil {
			t.Fatal(err)
		}
		ns, err := be.Time(l, 20, s.Policy.Timing)
		if err != nil {
			t.Fatal(err)
		}
		return harness.Median(ns)
	}
	for _, c := range f.CasesOn("cuda", nil) {
		st, err := s.Buffers(f, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s/%s (copy %.0f GB/s)", f.Name, f.BenchName(c, ""), copyGBps)
		naive := 0.0
		if f.Skip == nil || f.Skip(c, Naive) == "" {
			l, err := be.Prepare(f, Naive, c, st.In, st.Out)
			if err != nil {
				t.Fatal(err)
			}
			naive = timeOf(l)
			l.Release()
			line += fmt.Sprintf(" naive %.1f µs", naive/1e3)
		}
		for _, p := range plans(c) {
			use(p)
			l, err := be.Prepare(f, Fused, c, st.In, st.Out)
			if err != nil {
				line += fmt.Sprintf("\n    %+v: %v", p, err)
				continue
			}
			ns := timeOf(l)
			l.Release()
			gbps := float64(f.MinBytes(c)) / ns
			line += fmt.Sprintf("\n    %-24v %6.0f GB/s %5.1f%% copy %10.1f µs", fmt.Sprintf("%+v", p), gbps, 100*gbps/copyGBps, ns/1e3)
			if naive > 0 {
				line += fmt.Sprintf(" %6.1f× naive", naive/ns)
			}
			if p == def(c) {
				line += " <- default"
			}
		}
		st.Release()
		fmt.Println(line)
	}
}

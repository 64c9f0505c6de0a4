//go:build cuda

package kernels

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var wsPlansFlag = flag.String("kernels.wsplans", "", "TestCUDAWGMMAGEMM, TestCUDAGEMMTune: only these wgmma GEMM kernels "+
	"(comma-separated names, such as wsgemm_bf16_128x256_c2b, or their plan strings with /g<group> and /t<tail width>)")

// wsTestPlans is wsPlans, narrowed by -kernels.wsplans.
func wsTestPlans(t *testing.T) []wsPlan {
	if *wsPlansFlag == "" {
		return wsPlans
	}
	var ps []wsPlan
	for _, name := range strings.Split(*wsPlansFlag, ",") {
		found := false
		for _, p := range wsPlans {
			for _, g := range []int{p.group, 4, 16, 32} {
				q := p
				q.group = g
				if name == q.kernel() && g == p.group && p.tail == 0 && !p.ksplit || name == q.String() {
					ps, found = append(ps, q), true
				}
			}
		}
		if !found {
			t.Fatalf("-kernels.wsplans: no kernel %q (have %v)", name, wsPlans)
		}
	}
	return ps
}

// hopper skips a test of the wgmma GEMM on any GPU but compute capability 9.0.
func hopper(t *testing.T, be *harness.CUDA) {
	t.Helper()
	if !gemmUsesWGMMA(be.CC(), true) {
		t.Skipf("the wgmma GEMM needs compute capability 9.0 (sm_90a); this GPU is %d.%d", be.CC()/10, be.CC()%10)
	}
}

// TestCUDAWGMMAGEMM checks every kernel of the wgmma GEMM (wsPlans) and the plan wsChoosePlan picks against the
// float64 reference, outputs poisoned before each run (CheckCase), on the GEMM family's test shapes (M, N not
// multiples of any tile, K of 8 but not 64, one row) and on shapes with partial tiles over many k-tiles,
// an odd number of tile rows and columns (a cluster pair's second tile past the edge), more tiles than
// the persistent grid has blocks, and (on 132 multiprocessors) last waves that the store plans' tail widths
// split: all of a grid's tiles (1200 × 1040, 300 × 1000) or those past whole waves (2200 × 2100). For the ragged shapes it also checks that nothing is written past y, and
// for each plan that the launch runs the wgmma kernel, not the mma.sync one. It runs whether or not
// -kernels.pending is set: it is how the wgmma GEMM stops being pending (wgmmaGEMMPending).
func TestCUDAWGMMAGEMM(t *testing.T) {
	be := cudaBackend(t)
	hopper(t, be)
	defOn, defPlan := wgmmaGEMMOn, wsPlanFor
	t.Cleanup(func() { wgmmaGEMMOn, wsPlanFor = defOn, defPlan })
	wgmmaGEMMOn = true
	cases := append(GEMMFamily.CasesOn("test", nil),
		Case{DType: BF16, Dims: []int{517, 389, 1032}}, Case{DType: BF16, Dims: []int{128, 256, 32}},
		Case{DType: BF16, Dims: []int{300, 1000, 200}}, Case{DType: BF16, Dims: []int{1200, 1040, 72}},
		Case{DType: BF16, Dims: []int{2200, 2100, 72}})
	type plan struct {
		name string
		pick func(m, n, sms int) wsPlan
	}
	plans := []plan{{"default", wsChoosePlan}}
	for _, p := range wsTestPlans(t) {
		plans = append(plans, plan{p.String(), func(int, int, int) wsPlan { return p }})
	}
	for _, p := range plans {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%s", p.name, GEMMFamily.BenchName(c, Fused)), func(t *testing.T) {
				wsPlanFor = p.pick
				want := p.pick(c.Dims[0], c.Dims[1], be.Device().Workers).kernel()
				if _, err := harness.CheckCase(be, GEMMFamily, c, Fused, harness.CaseSeed(t), nil); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
				wsCheckBounds(t, be, c, want)
			})
		}
	}
}

// wsCheckBounds runs case c's fused GEMM on all-ones inputs (onesRun) and fails when the launch's kernel is not
// want or when y is not k everywhere.
func wsCheckBounds(t *testing.T, be *harness.CUDA, c Case, want string) {
	t.Helper()
	names, y := onesRun(t, be, GEMMFamily, c)
	if len(names) != 1 || names[0] != want {
		t.Fatalf("launches %v, want one %s", names, want)
	}
	k := c.Dims[2]
	for i, v := range y {
		if v != float32(harness.F32FromBF16(harness.BF16FromF32(float32(k)))) {
			t.Fatalf("y[%d] = %v with all-ones inputs, want %d", i, v, k)
		}
	}
}

// onesRun prepares case c of family f, fused, with every input all ones and its one output the first elements
// of a buffer 4096 elements longer, all poisoned; fails when a kernel of the launch spills or when an element
// past the output changed; and returns the launch's kernels and the output.
func onesRun(t *testing.T, be *harness.CUDA, f *Family, c Case) (names []string, out []float32) {
	t.Helper()
	const pad = 4096
	var bufs []harness.Buffer
	defer func() {
		for _, b := range bufs {
			be.Free(b)
		}
	}()
	alloc := func(n int) *harness.DeviceBuffer {
		b, err := be.Alloc(BF16, n)
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
		return b.(*harness.DeviceBuffer)
	}
	var in []harness.Buffer
	for _, o := range f.Inputs {
		b := alloc(o.Len(c))
		ones := make([]float32, b.Len())
		for i := range ones {
			ones[i] = 1
		}
		if err := be.Upload(b, ones); err != nil {
			t.Fatal(err)
		}
		in = append(in, b)
	}
	n := f.Outputs[0].Len(c)
	all := alloc(n + pad)
	if err := be.Poison(all); err != nil {
		t.Fatal(err)
	}
	l, err := be.Prepare(f, Fused, c, in, []harness.Buffer{all.View(0, n)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ks, err := l.(*harness.CUDALaunch).Kernels()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		names = append(names, k.Name)
		if k.LocalBytes != 0 {
			t.Errorf("%s: %d B of local memory a thread (spills)", k.Name, k.LocalBytes)
		}
	}
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n+pad)
	if err := be.Download(all, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got[n:] {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("%v wrote element %d = %v of the output, past its %d", names, n+i, v, n)
		}
	}
	return names, got[:n]
}

// TestCUDAGEMMTune (with -kernels.tune) times, on each GEMM shape of the cuda grid, the verified mma.sync
// kernel, every wgmma kernel (wsPlans, and the default tiles with other raster groups) and cuBLASLt on the
// same buffers, under the suite's GPU policy (cold L2), interleaved (tuneTimes), and prints TFLOP/s and each
// one's share of cuBLASLt's rate, with the kernel's grid and registers a thread. The default plan
// (wsChoosePlan) is marked.
func TestCUDAGEMMTune(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	defOn, defPlan := wgmmaGEMMOn, wsPlanFor
	t.Cleanup(func() { wgmmaGEMMOn, wsPlanFor = defOn, defPlan })
	s := harness.NewSuite(be, nil)
	lib, vendorErr := be.VendorGEMM()
	fmt.Printf("device: %s (cc %d.%d, %d SMs); cublaslt: %s%v\n", be.Device().Name, be.CC()/10, be.CC()%10,
		be.Device().Workers, lib, vendorErr)
	for _, c := range GEMMFamily.CasesOn("cuda", nil) {
		m, n, k := c.Dims[0], c.Dims[1], c.Dims[2]
		st, err := s.Buffers(GEMMFamily, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		tf := func(ns float64) float64 { return GEMMFamily.Flops(c) / ns / 1e3 }
		type row struct {
			name string
			l    harness.Launch
			info string
		}
		var rows []row
		var failed []string
		if vendorErr == nil {
			l, err := be.VendorGEMMLaunch(m, n, k, st.In[0], st.In[1], st.Out[0])
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{"cuBLASLt", l, ""})
		}
		add := func(name string, on bool, p wsPlan) {
			wgmmaGEMMOn = on
			wsPlanFor = func(int, int, int) wsPlan { return p }
			l, err := be.Prepare(GEMMFamily, Fused, c, st.In, st.Out)
			if err != nil {
				failed = append(failed, fmt.Sprintf("    %-34s %v", name, err))
				return
			}
			ks, err := l.(*harness.CUDALaunch).Kernels()
			if err != nil {
				t.Fatal(err)
			}
			info := fmt.Sprintf("  grid %4d, %3d registers", ks[0].Grid, ks[0].Registers)
			if on && p == wsChoosePlan(m, n, be.Device().Workers) {
				info += "  <- default"
			}
			rows = append(rows, row{name, l, info})
		}
		add("mma.sync (gemm_bf16, verified)", false, wsPlan{})
		if gemmUsesWGMMA(be.CC(), true) {
			plans := wsTestPlans(t)
			if *wsPlansFlag == "" {
				def := wsChoosePlan(m, n, be.Device().Workers)
				for _, g := range []int{4, 16, 32} {
					q := def
					q.group = g
					plans = append(plans, q)
				}
				if !slices.Contains(plans, def) {
					plans = append(plans, def)
				}
			}
			for _, p := range plans {
				add(p.String(), true, p)
			}
		}
		var ls []harness.Launch
		for _, r := range rows {
			ls = append(ls, r.l)
		}
		ns := tuneTimes(t, be, s, ls)
		lines := []string{GEMMFamily.BenchName(c, Fused)}
		var ref float64
		for i, r := range rows {
			v := tf(ns[i])
			if r.name == "cuBLASLt" {
				ref = v
			}
			line := fmt.Sprintf("    %-34s %6.1f TFLOP/s%s", r.name, v, r.info)
			if ref > 0 && r.name != "cuBLASLt" {
				line += fmt.Sprintf("  %5.1f%% cuBLASLt", 100*v/ref)
			}
			lines = append(lines, line)
			r.l.Release()
		}
		st.Release()
		fmt.Println(strings.Join(append(lines, failed...), "\n"))
	}
}

// tuneRounds is how many times tuneTimes times each launch, 5 runs at a time.
const tuneRounds = 5

// tuneTimes times each launch under the suite's GPU policy, interleaved: after 3 warm-up runs of each, tuneRounds
// rounds each time every launch in turn (5 runs, their median), so that a drift of the GPU's clock over the
// test (an FFN table's last rows ran about 10% slower than its first on an H200, the same kernels) falls on
// every launch alike. It returns the median of each launch's round medians, in ns.
func tuneTimes(t *testing.T, be *harness.CUDA, s *harness.Suite, ls []harness.Launch) []float64 {
	t.Helper()
	for _, l := range ls {
		if _, err := be.Time(l, 3, s.Policy.Timing); err != nil {
			t.Fatal(err)
		}
	}
	per := make([][]float64, len(ls))
	for range tuneRounds {
		for i, l := range ls {
			ns, err := be.Time(l, 5, s.Policy.Timing)
			if err != nil {
				t.Fatal(err)
			}
			per[i] = append(per[i], harness.Median(ns))
		}
	}
	med := make([]float64, len(ls))
	for i, p := range per {
		med[i] = harness.Median(p)
	}
	return med
}

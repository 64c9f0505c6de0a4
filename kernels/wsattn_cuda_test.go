//go:build cuda

package kernels

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var wsAttnFlag = flag.String("kernels.wsattn", "", "TestCUDAWGMMAAttention, TestCUDAAttentionTune: only these wgmma "+
	"attention kernels (comma-separated plan names, such as wsattn_d128_m128_n176_s2_pp)")

var soakFlag = flag.Duration("kernels.soak", 0, "TestCUDAAttentionTune: before timing a kernel, run it back to back "+
	"this long, so that it is timed at the clocks of a GPU under sustained load (as late in a whole-suite run), "+
	"not of an idle one")

// wsAttnTestPlans is wsAttnPlans, narrowed by -kernels.wsattn.
func wsAttnTestPlans(t *testing.T) []wsAttnPlan {
	if *wsAttnFlag == "" {
		return wsAttnPlans
	}
	var ps []wsAttnPlan
	for _, name := range strings.Split(*wsAttnFlag, ",") {
		found := false
		for _, p := range wsAttnPlans {
			if p.String() == name {
				ps, found = append(ps, p), true
			}
		}
		if !found {
			t.Fatalf("-kernels.wsattn: no kernel %q (have %v)", name, wsAttnPlans)
		}
	}
	return ps
}

// TestCUDAWGMMAAttention checks every kernel of the wgmma attention (wsAttnPlans, both masks) and the plan
// wsAttnChoose picks against the float64 reference with the family's tolerance, outputs poisoned before each
// run (CheckCase), on the family's test shapes of the kernel's head dim (one query, 60, 64, 65, 127, 129:
// ragged query and key tiles) and on longer ones (t = 1000 and 777: many key tiles, so that each stage of the
// K and V rings is refilled and its barriers change phase, and, causal, tiles both below and across the
// diagonal). For each it checks that the launch runs the wgmma kernel, without spills, and that nothing is
// written past O. It runs on compute capability 9.0 whether or not -kernels.pending is set: it is how the
// wgmma attention stops being pending (wgmmaAttnPending).
func TestCUDAWGMMAAttention(t *testing.T) {
	be := cudaBackend(t)
	if !attentionUsesWGMMA(be.CC(), 128, true) {
		t.Skipf("the wgmma attention needs compute capability 9.0 (sm_90a); this GPU is %d.%d", be.CC()/10, be.CC()%10)
	}
	defOn, defPlan := wgmmaAttnOn, wsAttnPlanFor
	t.Cleanup(func() { wgmmaAttnOn, wsAttnPlanFor = defOn, defPlan })
	wgmmaAttnOn = true
	cases := AttentionFamily.CasesOn("test", nil)
	for _, dims := range [][]int{{1, 2, 1000, 128}, {2, 1, 777, 64}} {
		for _, mask := range AttentionFamily.Variants {
			cases = append(cases, Case{DType: BF16, Dims: dims, Variant: mask})
		}
	}
	type plan struct {
		name string
		pick func(d int, mask string) wsAttnPlan
	}
	plans := []plan{{"default", wsAttnChoose}}
	for _, p := range wsAttnTestPlans(t) {
		plans = append(plans, plan{p.String(), func(int, string) wsAttnPlan { return p }})
	}
	for _, p := range plans {
		for _, c := range cases {
			d := c.Dims[3]
			want := p.pick(d, c.Variant)
			if want.d != d || !slices.Contains(want.masks(), c.Variant) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", p.name, AttentionFamily.BenchName(c, Fused)), func(t *testing.T) {
				wsAttnPlanFor = p.pick
				if _, err := harness.CheckCase(be, AttentionFamily, c, Fused, harness.CaseSeed(t), nil); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
				wsAttnCheckBounds(t, be, c, want.kernel(c.Variant))
			})
		}
	}
}

// wsAttnCheckBounds runs case c's fused attention on all-ones Q, K and V (onesRun), so every output is 1, and
// fails when the launch's kernel is not want or when an output is not 1.
func wsAttnCheckBounds(t *testing.T, be *harness.CUDA, c Case, want string) {
	t.Helper()
	names, o := onesRun(t, be, AttentionFamily, c)
	if len(names) != 1 || names[0] != want {
		t.Fatalf("launches %v, want one %s", names, want)
	}
	for i, v := range o {
		if v != 1 {
			t.Fatalf("o[%d] = %v with all-ones inputs, want 1", i, v)
		}
	}
}

// TestCUDAAttentionTune (with -kernels.tune) times, on each shape of the family's cuda grid and both masks, the
// verified mma.sync kernel and every wgmma kernel of the shape's head dim (wsAttnPlans, or those of
// -kernels.wsattn, in its order, repeats included) on the same buffers, under the suite's GPU policy (cold L2; after
// -kernels.soak of back-to-back launches, if set), and prints TFLOP/s (as
// attentionFlops counts them: causal is half) with each kernel's grid and registers a thread. The default
// plan (wsAttnChoose) is marked.
func TestCUDAAttentionTune(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	if be.CC() < 80 {
		t.Skipf("attention needs compute capability 8.0, this GPU is %d.%d", be.CC()/10, be.CC()%10)
	}
	defOn, defPlan := wgmmaAttnOn, wsAttnPlanFor
	t.Cleanup(func() { wgmmaAttnOn, wsAttnPlanFor = defOn, defPlan })
	s := harness.NewSuite(be, nil)
	fmt.Printf("device: %s (cc %d.%d, %d SMs)\n", be.Device().Name, be.CC()/10, be.CC()%10, be.Device().Workers)
	timeIt := func(l harness.Launch) float64 {
		if _, err := be.Time(l, 3, s.Policy.Timing); err != nil {
			t.Fatal(err)
		}
		if *soakFlag > 0 { // the launches that fill -kernels.soak, back to back, in one sample
			one, err := be.Time(l, 1, harness.Timing{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := be.Time(l, 1, harness.Timing{Repeat: max(1, int(float64(soakFlag.Nanoseconds())/one[0]))}); err != nil {
				t.Fatal(err)
			}
		}
		ns, err := be.Time(l, 15, s.Policy.Timing)
		if err != nil {
			t.Fatal(err)
		}
		return harness.Median(ns)
	}
	for _, c := range AttentionFamily.CasesOn("cuda", nil) {
		if c.Dims[2] < 1024 {
			continue // the launch-bound 60-step sequences say nothing about the kernels' rates
		}
		d := c.Dims[3]
		st, err := s.Buffers(AttentionFamily, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		tf := func(ns float64) float64 { return AttentionFamily.Flops(c) / ns / 1e3 }
		lines := []string{AttentionFamily.BenchName(c, Fused)}
		row := func(name string, on bool, p wsAttnPlan) {
			wgmmaAttnOn = on
			wsAttnPlanFor = func(int, string) wsAttnPlan { return p }
			l, err := be.Prepare(AttentionFamily, Fused, c, st.In, st.Out)
			if err != nil {
				lines = append(lines, fmt.Sprintf("    %-34s %v", name, err))
				return
			}
			ks, err := l.(*harness.CUDALaunch).Kernels()
			if err != nil {
				t.Fatal(err)
			}
			r := tf(timeIt(l))
			l.Release()
			line := fmt.Sprintf("    %-34s %6.1f TFLOP/s  grid %6d, %3d registers, %d B local", name, r, ks[0].Grid,
				ks[0].Registers, ks[0].LocalBytes)
			if on && p == wsAttnChoose(d, c.Variant) {
				line += "  <- default"
			}
			lines = append(lines, line)
		}
		row("mma.sync (attention_fused, verified)", false, wsAttnPlan{})
		if attentionUsesWGMMA(be.CC(), d, true) {
			for _, p := range wsAttnTestPlans(t) {
				if p.d == d && slices.Contains(p.masks(), c.Variant) {
					row(p.String(), true, p)
				}
			}
		}
		st.Release()
		fmt.Println(strings.Join(lines, "\n"))
	}
}

// TestCUDAAttentionMMASync checks the mma.sync attention kernels (cuda/attention.cu), which every GPU but
// compute capability 9.0 runs, against the float64 reference on the family's test shapes and on longer ones,
// with the wgmma switch off, so that a Hopper GPU keeps testing the path that A100s, L4s and RTX cards take.
func TestCUDAAttentionMMASync(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 80 {
		t.Skipf("attention needs compute capability 8.0, this GPU is %d.%d", be.CC()/10, be.CC()%10)
	}
	defOn := wgmmaAttnOn
	t.Cleanup(func() { wgmmaAttnOn = defOn })
	wgmmaAttnOn = false
	cases := AttentionFamily.CasesOn("test", nil)
	for _, dims := range [][]int{{1, 2, 1000, 128}, {2, 1, 777, 64}} {
		for _, mask := range AttentionFamily.Variants {
			cases = append(cases, Case{DType: BF16, Dims: dims, Variant: mask})
		}
	}
	for _, c := range cases {
		if attentionUsesWGMMA(be.CC(), c.Dims[3], wgmmaAttnOn) {
			t.Fatalf("%s: the wgmma kernel with the switch off", AttentionFamily.BenchName(c, Fused))
		}
		t.Run(AttentionFamily.BenchName(c, Fused), func(t *testing.T) {
			if _, err := harness.CheckCase(be, AttentionFamily, c, Fused, harness.CaseSeed(t), nil); err != nil {
				t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
			}
		})
	}
}

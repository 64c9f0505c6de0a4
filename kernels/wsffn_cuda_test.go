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

// TestCUDAWGMMAFFN checks the FFN's wgmma plans — FC1 on wsgemm_<act>_* with the activation in its epilogue
// (swiglu: gate and up half tiles), FC2 on the plain wgmma GEMM — against the float64 reference, outputs
// poisoned before each run (CheckCase), on the FFN family's test shapes (one token; tokens, hidden and
// intermediate sizes that are multiples of no tile) and shapes of several tiles each way, for every FC1 plan
// of the act (wsFFNPlans) and the default. For each it checks that
// the launch runs the two wgmma kernels, without spills, and that nothing is written past y. It also checks
// that with the switch off the launcher keeps the mma.sync kernels. It runs whether or not
// -kernels.pending is set: it is how the wgmma FFN stops being pending (wgmmaFFNPending).
func TestCUDAWGMMAFFN(t *testing.T) {
	be := cudaBackend(t)
	hopper(t, be)
	defOn, defPlan := wgmmaFFNOn, wsFFNPlanFor
	t.Cleanup(func() { wgmmaFFNOn, wsFFNPlanFor = defOn, defPlan })
	cases := FFNFamily.CasesOn("test", nil)
	for _, act := range wsFFNActs {
		cases = append(cases, Case{DType: BF16, Dims: []int{300, 264, 1032}, Variant: act},
			Case{DType: BF16, Dims: []int{517, 1040, 200}, Variant: act})
	}
	type plan struct {
		name string
		pick func(m, n, sms int, act string) wsPlan
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("off/%s", FFNFamily.BenchName(c, Fused)), func(t *testing.T) {
			wgmmaFFNOn, wsFFNPlanFor = false, wsChooseFFNPlan
			ffnCheckKernels(t, be, c, nil)
		})
		plans := []plan{{"default", wsChooseFFNPlan}}
		for _, p := range wsFFNPlans[c.Variant] {
			plans = append(plans, plan{p.String(), func(int, int, int, string) wsPlan { return p }})
		}
		for _, p := range plans {
			t.Run(fmt.Sprintf("%s/%s", p.name, FFNFamily.BenchName(c, Fused)), func(t *testing.T) {
				wgmmaFFNOn, wsFFNPlanFor = true, p.pick
				sms := be.Device().Workers
				t1, hd, it := c.Dims[0], c.Dims[1], c.Dims[2]
				want := []string{p.pick(t1, it, sms, c.Variant).kernelAct(c.Variant), wsPlanFor(t1, hd, sms).kernel()}
				if _, err := harness.CheckCase(be, FFNFamily, c, Fused, harness.CaseSeed(t), nil); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
				ffnCheckKernels(t, be, c, want)
			})
		}
	}
}

// ffnCheckKernels runs case c's fused FFN on all-ones inputs (onesRun) and fails when its launches are not the
// kernels want (nil: the mma.sync ones of cuda/ffn.cu, ffn_fc1_<act>_* then ffn_linear_*) or when y is not what
// all-ones inputs give (gelu: every h is gelu(hidden), whole numbers that bf16 holds).
func ffnCheckKernels(t *testing.T, be *harness.CUDA, c Case, want []string) {
	t.Helper()
	hd, it := c.Dims[1], c.Dims[2]
	names, y := onesRun(t, be, FFNFamily, c)
	if want == nil {
		if len(names) != 2 || !strings.HasPrefix(names[0], "ffn_fc1_"+c.Variant+"_") || !strings.HasPrefix(names[1], "ffn_linear_") {
			t.Fatalf("launches %v, want the mma.sync ffn_fc1_%s_* and ffn_linear_*", names, c.Variant)
		}
	} else if !slices.Equal(names, want) {
		t.Fatalf("launches %v, want %v", names, want)
	}
	var h float32 // every element of h
	if c.Variant == "gelu" {
		h = roundBF16(geluTanh32(float32(hd)))
	} else {
		h = roundBF16(float32(hd) * sigmoid32(float32(hd)) * float32(hd))
	}
	wantY := roundBF16(float32(it) * h)
	for i, v := range y {
		if v != wantY {
			t.Fatalf("y[%d] = %v with all-ones inputs, want %v (h = %v)", i, v, wantY, h)
		}
	}
}

var ffnTokensFlag = flag.String("kernels.ffntokens", "", "TestCUDAFFNTune: only the cuda grid's shapes of these token counts (comma-separated)")

// TestCUDAFFNTune (with -kernels.tune) times, on each FFN shape of the cuda grid (-kernels.ffntokens narrows
// it), cuBLASLt's GEMMs of the FFN (ffnVendorGEMMs, each timed alone, the medians summed: pct-cublas's
// reference), the verified mma.sync FFN, and the wgmma FFN with its default plans, with each FC1 plan of the
// act (wsFFNPlans, FC2 the default) and with each FC2 plan (wsPlans, FC1 the default), under the suite's GPU
// policy (cold L2), interleaved (tuneTimes), and prints TFLOP/s and each one's share of cuBLASLt's rate.
func TestCUDAFFNTune(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	defOn, defFC1, defFC2 := wgmmaFFNOn, wsFFNPlanFor, wsPlanFor
	t.Cleanup(func() { wgmmaFFNOn, wsFFNPlanFor, wsPlanFor = defOn, defFC1, defFC2 })
	s := harness.NewSuite(be, nil)
	lib, vendorErr := be.VendorGEMM()
	fmt.Printf("device: %s (cc %d.%d, %d SMs); cublaslt: %s%v\n", be.Device().Name, be.CC()/10, be.CC()%10,
		be.Device().Workers, lib, vendorErr)
	sms := be.Device().Workers
	for _, c := range FFNFamily.CasesOn("cuda", nil) {
		if FFNFamily.Skip(c, Fused) != "" {
			continue
		}
		tk, hd, it := c.Dims[0], c.Dims[1], c.Dims[2]
		if *ffnTokensFlag != "" && !slices.Contains(strings.Split(*ffnTokensFlag, ","), fmt.Sprint(tk)) {
			continue
		}
		st, err := s.Buffers(FFNFamily, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		tf := func(ns float64) float64 { return FFNFamily.Flops(c) / ns / 1e3 }
		var ls []harness.Launch // cuBLASLt's GEMMs first (vendors of them), then names' FFNs
		vendors := 0
		var h harness.Buffer
		if vendorErr == nil {
			if h, err = be.Alloc(BF16, tk*it); err != nil {
				t.Fatal(err)
			}
			type gemm struct {
				m, n, k int
				x, w, y harness.Buffer
			}
			gemms := []gemm{{tk, it, hd, st.In[0], st.In[1], h}}
			if c.Variant == "swiglu" {
				gemms = append(gemms, gemm{tk, it, hd, st.In[0], st.In[2], h})
			}
			gemms = append(gemms, gemm{tk, hd, it, h, st.In[3], st.Out[0]})
			for _, g := range gemms {
				l, err := be.VendorGEMMLaunch(g.m, g.n, g.k, g.x, g.w, g.y)
				if err != nil {
					t.Fatal(err)
				}
				ls = append(ls, l)
			}
			vendors = len(ls)
		}
		var names, failed []string
		add := func(name string, on bool, fc1, fc2 wsPlan) {
			wgmmaFFNOn = on
			wsFFNPlanFor = func(int, int, int, string) wsPlan { return fc1 }
			wsPlanFor = func(int, int, int) wsPlan { return fc2 }
			l, err := be.Prepare(FFNFamily, Fused, c, st.In, st.Out)
			if err != nil {
				failed = append(failed, fmt.Sprintf("    %-52s %v", name, err))
				return
			}
			ls, names = append(ls, l), append(names, name)
		}
		def1, def2 := wsChooseFFNPlan(tk, it, sms, c.Variant), wsChoosePlan(tk, hd, sms)
		add("mma.sync (ffn_fc1, ffn_linear, verified)", false, def1, def2)
		if gemmUsesWGMMA(be.CC(), true) {
			add(fmt.Sprintf("default: fc1 %v, fc2 %v", def1, def2), true, def1, def2)
			for _, p := range wsFFNPlans[c.Variant] {
				if p != def1 {
					add(fmt.Sprintf("fc1 %v", p), true, p, def2)
				}
			}
			for _, p := range wsPlans {
				if p != def2 && p.cluster == 1 {
					add(fmt.Sprintf("fc2 %v", p), true, def1, p)
				}
			}
		}
		ns := tuneTimes(t, be, s, ls)
		lines := []string{FFNFamily.BenchName(c, Fused)}
		var ref float64
		if vendors > 0 {
			var sum float64
			for _, v := range ns[:vendors] {
				sum += v
			}
			ref = tf(sum)
			lines = append(lines, fmt.Sprintf("    %-52s %6.1f TFLOP/s", "cuBLASLt (its GEMMs)", ref))
		}
		for i, name := range names {
			r := tf(ns[vendors+i])
			line := fmt.Sprintf("    %-52s %6.1f TFLOP/s", name, r)
			if ref > 0 {
				line += fmt.Sprintf("  %5.1f%% cuBLASLt", 100*r/ref)
			}
			lines = append(lines, line)
		}
		for _, l := range ls {
			l.Release()
		}
		if h != nil {
			be.Free(h)
		}
		st.Release()
		fmt.Println(strings.Join(append(lines, failed...), "\n"))
	}
}

package kernels

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestFFNUsesWGMMA checks when the FFN's launcher takes the wgmma kernels (FC1 with the activation in its
// epilogue, FC2 plain): gelu and swiglu on compute capability 9.0 with the pending switch on, and nowhere
// else — not with the switch off (the verified mma.sync FFN), not for an act without an epilogue, not on 8.9 or
// 10.0 (sm_90a code does not run there).
func TestFFNUsesWGMMA(t *testing.T) {
	for _, tc := range []struct {
		cc   int
		act  string
		on   bool
		want bool
	}{
		{90, "gelu", true, true}, {90, "gelu", false, false}, {90, "swiglu", true, true}, {90, "swiglu", false, false},
		{90, "", true, false}, {90, "relu", true, false}, {89, "gelu", true, false}, {89, "swiglu", true, false},
		{80, "gelu", true, false}, {100, "gelu", true, false}, {120, "gelu", true, false},
	} {
		if got := ffnUsesWGMMA(tc.cc, tc.act, tc.on); got != tc.want {
			t.Errorf("ffnUsesWGMMA(%d, %q, %v) = %v, want %v", tc.cc, tc.act, tc.on, got, tc.want)
		}
	}
	// Verified on a GPU (TestCUDAWGMMAFFN on an H200): not pending, on whether or not the run asks for pending
	// code.
	if wgmmaFFNPending != "" || !wgmmaFFNOn {
		t.Errorf("wgmmaFFNPending %q, wgmmaFFNOn %v with -kernels.pending=%v: the wgmma FFN passed on a GPU and is on",
			wgmmaFFNPending, wgmmaFFNOn, harness.RunPending())
	}
}

// TestWSFFNPlansMatchModule holds the FFN's wgmma plans to the module: for each epilogue (wsFFNActs) and plan
// (wsFFNPlans), a single block, the kernel is a WS_KERNEL_<ACT> of cuda/wsgemm_sm90a.cu and an entry of its PTX,
// and each such macro line is a plan; swiglu's half tiles are whole 8-row swizzle groups (which also puts the
// up accumulators bn/4 registers after the gate's); every plan the GEMM chooser may pick (wsWidths) has a gelu
// kernel.
func TestWSFFNPlansMatchModule(t *testing.T) {
	src, err := os.ReadFile("cuda/wsgemm_sm90a.cu")
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := os.ReadFile("cuda/ptx/wsgemm_sm90a.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, act := range wsFFNActs {
		var inSource []string
		for _, m := range regexp.MustCompile(`(?m)^WS_KERNEL_`+strings.ToUpper(act)+`\((\d+)\)`).FindAllStringSubmatch(string(src), -1) {
			inSource = append(inSource, "wsgemm_"+act+"_bf16_128x"+m[1]+"_c1")
		}
		for _, m := range regexp.MustCompile(`(?m)^WS_KERNEL_ST\(`+act+`_, WS_ACT_`+strings.ToUpper(act)+`, (\d+)\)`).FindAllStringSubmatch(string(src), -1) {
			inSource = append(inSource, "wsgemm_"+act+"_bf16_128x"+m[1]+"_c1_st")
		}
		var planned []string
		if len(wsFFNPlans[act]) == 0 {
			t.Errorf("no plans for act %s (wsFFNPlans)", act)
		}
		for _, p := range wsFFNPlans[act] {
			name := p.kernelAct(act)
			planned = append(planned, name)
			if p.cluster != 1 {
				t.Errorf("plan %v: the %s epilogue has single-block kernels only", p, act)
			}
			if act == "swiglu" && p.tail != 0 {
				t.Errorf("plan %v: swiglu's tiles are not split (wsTailSplit)", p)
			}
			if act == "swiglu" && (p.bn/2)%8 != 0 {
				t.Errorf("plan %v: swiglu's half tile of %d rows is not whole swizzle groups", p, p.bn/2)
			}
			if !slices.Contains(inSource, name) {
				t.Errorf("plan %v: no WS_KERNEL_%s for %s in cuda/wsgemm_sm90a.cu", p, strings.ToUpper(act), name)
			}
			if !regexp.MustCompile(`\.entry ` + name + `\(`).Match(ptx) {
				t.Errorf("plan %v: no .entry %s in the PTX (scripts/hopper-ptx.sh)", p, name)
			}
		}
		for _, name := range inSource {
			if !slices.Contains(planned, name) {
				t.Errorf("%s is in no plan (wsFFNPlans)", name)
			}
		}
	}
	for _, p := range wsWidths {
		if !slices.Contains(wsFFNPlans["gelu"], p) {
			t.Errorf("the GEMM chooser's %v has no gelu kernel (wsFFNPlans)", p)
		}
	}
}

// TestWSChooseFFNPlan checks FC1's plan on 132 multiprocessors: gelu's is the GEMM's (its tiles write bn
// columns); swiglu's tiles write bn/2 columns, so its choice counts tiles of half width: at 2048 × 11008, 86
// tiles of 128 columns (bn 256) a row of tiles make 11 waves of 256 where 115 of 96 (bn 192, storing from
// registers) make 14 of 192 (2816 against 2688 / (0.91 · 0.98) = 3014; H100: 98.4% of cuBLASLt's rate against
// 94.7%), and at 512 and 4096 tokens the 256-column store kernel is cheapest too; one token takes the
// narrowest. Never 232 for swiglu.
func TestWSChooseFFNPlan(t *testing.T) {
	st := func(bn, tail int) wsPlan { return wsPlan{bn, 1, 0, wsDefaultGroup, true, tail, false} }
	for _, tc := range []struct {
		m, n int
		act  string
		want wsPlan
	}{
		{2048, 11008, "swiglu", st(256, 0)}, {4096, 11008, "swiglu", st(256, 0)},
		{1, 8, "swiglu", st(128, 0)}, {512, 11008, "swiglu", st(256, 0)},
		{2048, 16384, "gelu", wsChoosePlan(2048, 16384, 132)}, {2048, 11008, "gelu", st(256, 64)},
		{4096, 16384, "gelu", st(256, 64)},
	} {
		got := wsChooseFFNPlan(tc.m, tc.n, 132, tc.act)
		if got != tc.want {
			t.Errorf("wsChooseFFNPlan(%d, %d, 132, %s) = %v, want %v", tc.m, tc.n, tc.act, got, tc.want)
		}
	}
	for _, m := range []int{1, 37, 130, 512, 2048, 4096} {
		for _, n := range []int{8, 136, 200, 4096, 11008, 16384} {
			if p := wsChooseFFNPlan(m, n, 132, "swiglu"); !slices.Contains(wsFFNPlans["swiglu"], p) {
				t.Errorf("wsChooseFFNPlan(%d, %d, 132, swiglu) = %v, not a swiglu kernel", m, n, p)
			}
		}
	}
}

// TestWSUnitsSwiGLU checks that a swiglu tile covers bn/2 output columns: the persistent grid and the tile
// order count tiles of that width, as the kernel (WS_ACT_SWIGLU's ON) does.
func TestWSUnitsSwiGLU(t *testing.T) {
	p := wsPlan{256, 1, 0, wsDefaultGroup, false, 0, false}
	if got, want := p.unitsAct(300, 11008, "swiglu"), 3*86; got != want {
		t.Errorf("units of swiglu 300 × 11008 at bn 256: %d, want %d", got, want)
	}
	if got, want := p.unitsAct(300, 11008, "gelu"), 3*43; got != want {
		t.Errorf("units of gelu 300 × 11008 at bn 256: %d, want %d", got, want)
	}
}

// TestWSGELUIsMMAGELU holds the wgmma epilogue's GELU (ws_gelu, cuda/wsgemm_sm90a.cu) to the mma.sync FFN's
// (mma_gelu, harness/cuda/mma.cuh) statement for statement, so both FFN paths round the same values to bf16.
func TestWSGELUIsMMAGELU(t *testing.T) {
	body := func(file, fn string) string {
		t.Helper()
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?s)float ` + fn + `\(float x\) \{(.*?)\n\}`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s: no float %s(float x)", file, fn)
		}
		return strings.Join(strings.Fields(string(m[1])), " ")
	}
	ws, mma := body("cuda/wsgemm_sm90a.cu", "ws_gelu"), body("../harness/cuda/mma.cuh", "mma_gelu")
	if ws != mma {
		t.Errorf("ws_gelu is\n\t%s\nmma_gelu is\n\t%s", ws, mma)
	}
}

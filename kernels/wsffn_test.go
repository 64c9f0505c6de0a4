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
// epilogue, FC2 plain): the gelu variant on compute capability 9.0 with the pending switch on, and nowhere
// else — not with the switch off (the verified mma.sync FFN), not for swiglu (no wgmma epilogue yet), not on
// 8.9 or 10.0 (sm_90a code does not run there).
func TestFFNUsesWGMMA(t *testing.T) {
	for _, tc := range []struct {
		cc   int
		act  string
		on   bool
		want bool
	}{
		{90, "gelu", true, true}, {90, "gelu", false, false}, {90, "swiglu", true, false}, {90, "", true, false},
		{89, "gelu", true, false}, {80, "gelu", true, false}, {100, "gelu", true, false}, {120, "gelu", true, false},
	} {
		if got := ffnUsesWGMMA(tc.cc, tc.act, tc.on); got != tc.want {
			t.Errorf("ffnUsesWGMMA(%d, %q, %v) = %v, want %v", tc.cc, tc.act, tc.on, got, tc.want)
		}
	}
	// Not yet run on a GPU: pending, and on only where the run asks for pending code (TestMain).
	if wgmmaFFNPending == "" || wgmmaFFNOn != harness.RunPending() {
		t.Errorf("wgmmaFFNPending %q, wgmmaFFNOn %v with -kernels.pending=%v: the wgmma FFN has not run on a GPU",
			wgmmaFFNPending, wgmmaFFNOn, harness.RunPending())
	}
}

// TestWSFFNPlansMatchModule holds the FFN's wgmma plans to the module: for each epilogue (wsFFNActs) and plan
// (wsFFNPlans), a single block, the kernel is a WS_KERNEL_<ACT> of cuda/wsgemm_sm90a.cu and an entry of its PTX,
// and each such macro line is a plan; every plan the chooser may pick (wsWidths) is one of them, so FC1 always
// finds its kernel.
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
		var planned []string
		for _, p := range wsFFNPlans {
			name := p.kernelAct(act)
			planned = append(planned, name)
			if p.cluster != 1 {
				t.Errorf("plan %v: the %s epilogue has single-block kernels only", p, act)
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
		for _, p := range wsWidths {
			if !slices.Contains(wsFFNPlans, p) {
				t.Errorf("the chooser's %v has no %s kernel (wsFFNPlans)", p, act)
			}
		}
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

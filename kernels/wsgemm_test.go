package kernels

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// TestGEMMUsesWGMMA checks when the GEMM family's launcher takes the wgmma kernels: on compute capability 9.0
// with the pending switch on, and nowhere else — not with the switch off (the verified mma.sync kernel), not
// on 8.9 or 10.0 (sm_90a code does not run there).
func TestGEMMUsesWGMMA(t *testing.T) {
	for _, tc := range []struct {
		cc   int
		on   bool
		want bool
	}{{90, true, true}, {90, false, false}, {89, true, false}, {80, true, false}, {100, true, false}, {120, true, false}} {
		if got := gemmUsesWGMMA(tc.cc, tc.on); got != tc.want {
			t.Errorf("gemmUsesWGMMA(%d, %v) = %v, want %v", tc.cc, tc.on, got, tc.want)
		}
	}
}

// TestWSChoosePlan checks the wgmma GEMM's plan on 132 multiprocessors (H100 SXM, H200): the widest tiles where
// the last wave is full anyway, 232 columns where 11008 columns of 256 leave most of a sixth wave idle (48
// tiles of 232 fill six waves of 132 blocks), the narrow tiles for problems that fill less than one wave, and
// never a cluster (they ran no faster on an H200).
func TestWSChoosePlan(t *testing.T) {
	for _, tc := range []struct {
		m, n, sms int
		want      wsPlan
	}{
		{4096, 4096, 132, wsPlan{256, 1, 0, wsDefaultGroup}},
		{2048, 4096, 132, wsPlan{256, 1, 0, wsDefaultGroup}},
		{2048, 11008, 132, wsPlan{232, 1, 0, wsDefaultGroup}},
		{1, 8, 132, wsPlan{128, 1, 0, wsDefaultGroup}},
		{130, 200, 132, wsPlan{128, 1, 0, wsDefaultGroup}},
		{512, 1024, 132, wsPlan{128, 1, 0, wsDefaultGroup}},
		// H100 PCIe: 512 tiles of 256 are 4.5 waves of 114 blocks (5 × 256), 1024 of 128 are 8.98 (9 × 128).
		{4096, 4096, 114, wsPlan{128, 1, 0, wsDefaultGroup}},
	} {
		if got := wsChoosePlan(tc.m, tc.n, tc.sms); got != tc.want {
			t.Errorf("wsChoosePlan(%d, %d, %d) = %v, want %v", tc.m, tc.n, tc.sms, got, tc.want)
		}
	}
}

// TestWSPlansMatchModule holds wsPlans to the module: each plan's kernel is a WS_KERNEL of
// cuda/wsgemm_sm90a.cu and an entry of its PTX, and each WS_KERNEL is a plan; each plan's shared memory fits a
// block on compute capability 9.0 with the static kilobyte beside it, in at least 4 stages; a cluster pair
// splits its shared operand on whole 8-row swizzle groups.
func TestWSPlansMatchModule(t *testing.T) {
	src, err := os.ReadFile("cuda/wsgemm_sm90a.cu")
	if err != nil {
		t.Fatal(err)
	}
	ptx, err := os.ReadFile("cuda/ptx/wsgemm_sm90a.ptx")
	if err != nil {
		t.Fatal(err)
	}
	var inSource []string
	for _, m := range regexp.MustCompile(`(?m)^WS_KERNEL\((\d+), (\d), (\w?), (true|false)\)`).FindAllStringSubmatch(string(src), -1) {
		inSource = append(inSource, "wsgemm_bf16_128x"+m[1]+"_c"+m[2]+m[3])
	}
	var planned []string
	for _, p := range wsPlans {
		name := p.kernel()
		planned = append(planned, name)
		if !slices.Contains(inSource, name) {
			t.Errorf("plan %v: no WS_KERNEL for %s in cuda/wsgemm_sm90a.cu", p, name)
		}
		if !regexp.MustCompile(`\.entry ` + name + `\(`).Match(ptx) {
			t.Errorf("plan %v: no .entry %s in the PTX (scripts/hopper-ptx.sh)", p, name)
		}
		if p.smem()+wsSmemStatic > wsSmemLimit || p.stages() < 4 {
			t.Errorf("plan %v: %d stages, %d B of dynamic shared memory", p, p.stages(), p.smem())
		}
		half := wsBM / 2
		if p.share == 'b' {
			half = p.bn / 2
		}
		if p.cluster > 1 && half%8 != 0 {
			t.Errorf("plan %v: a pair splits its shared operand at row %d, inside a swizzle group", p, half)
		}
	}
	for _, name := range inSource {
		if !slices.Contains(planned, name) {
			t.Errorf("WS_KERNEL %s is in no plan (wsPlans)", name)
		}
	}
	for _, p := range wsWidths {
		if !slices.Contains(wsPlans, p) {
			t.Errorf("the chooser's %v is not a kernel (wsPlans)", p)
		}
	}
}

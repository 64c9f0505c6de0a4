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

// TestWSChoosePlan checks the wgmma GEMM's plan on 132 multiprocessors (H100 SXM, H200): the 256-column store
// kernel at the cuda grid's shapes — 2048 × 11008 with its last 28 tiles split into 112 of 64 columns (5 × 256
// + 1.8 × 64 column-waves, against 6 × 232 / 0.91 for the 232-column kernel and (7 × 192 + 1.8 × 64) / 0.98 for
// the 192-column store kernel) —, the same where one wave is more than the problem (its tiles split into
// narrow ones), and never a cluster (they ran no faster on an H200) or a split along K (slower than narrow
// tiles).
func TestWSChoosePlan(t *testing.T) {
	st := func(bn int) wsPlan { return wsPlan{bn, 1, 0, wsDefaultGroup, true, 64, false} }
	for _, tc := range []struct {
		m, n, sms int
		want      wsPlan
	}{
		{4096, 4096, 132, st(256)},
		{2048, 4096, 132, st(256)},
		{2048, 11008, 132, st(256)},
		{1, 8, 132, st(256)},
		{130, 200, 132, st(256)},
		{512, 1024, 132, st(256)},
		// 4096 × 16384: 2048 tiles of 256 are 15 waves and 68 (too many to split) = 16 × 256; 2752 of 192 are 20
		// waves and 112 (too many) = 21 × 192 / 0.98, a little more (H100: 95.6% of cuBLASLt's rate against
		// 94.5% for the FFN's FC1 there).
		{4096, 16384, 132, st(256)},
		// 512 × 11008: 172 tiles of 256, a wave and 40 split in two (256 + 128), ties with 232 of 192 (2 × 192):
		// the wider.
		{512, 11008, 132, st(256)},
		// H100 PCIe: 512 tiles of 256 are 4 waves of 114 blocks and 56 split in two (4 × 256 + 128).
		{4096, 4096, 114, st(256)},
	} {
		if got := wsChoosePlan(tc.m, tc.n, tc.sms); got != tc.want {
			t.Errorf("wsChoosePlan(%d, %d, %d) = %v, want %v", tc.m, tc.n, tc.sms, got, tc.want)
		}
	}
}

// TestWSPlansMatchModule holds wsPlans to the module: each plan's kernel is a WS_KERNEL (or, for a store plan,
// WS_KERNEL_ST) of cuda/wsgemm_sm90a.cu and an entry of its PTX, and each such line is a plan; store plans are
// single blocks of whole 64-column boxes whose tail widths are the kernel's narrow main loops (64, 128); each plan's shared memory fits a
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
	for _, m := range regexp.MustCompile(`(?m)^WS_KERNEL_ST\(, WS_ACT_NONE, (\d+)\)`).FindAllStringSubmatch(string(src), -1) {
		inSource = append(inSource, "wsgemm_bf16_128x"+m[1]+"_c1_st")
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
		if p.st && (p.cluster != 1 || p.bn%64 != 0) {
			t.Errorf("plan %v: a store kernel is a single block of whole 64-column boxes", p)
		}
		if p.ksplit && (!p.st || p.tail != 0) {
			t.Errorf("plan %v: a split along K is a store plan's, and not with a tail width", p)
		}
		if p.tail != 0 && (!p.st || p.tail != 64 && p.tail != 128 || p.tail >= p.bn || p.bn%p.tail != 0) {
			t.Errorf("plan %v: a tail width is 64 or 128 (the kernel's narrow main loops), of a wider store tile it divides", p)
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

// TestWSTailSplit holds the split of the last wave to what the kernel can run and where it pays: only store
// plans with a tail width, never swiglu, only a partial last wave whose narrow tiles fit one wave; the launch's
// grid covers every unit or every block.
func TestWSTailSplit(t *testing.T) {
	st256 := func(tail int) wsPlan { return wsPlan{256, 1, 0, wsDefaultGroup, true, tail, false} }
	kst256 := wsPlan{256, 1, 0, wsDefaultGroup, true, 0, true}
	for _, tc := range []struct {
		p                 wsPlan
		m, n, blocks      int
		act               string
		tail, split, grid int
	}{
		// 2048 × 11008: 16 × 43 = 688 tiles of 256, 5 waves of 132 and 28 tiles: 112 tiles of 64.
		{st256(64), 2048, 11008, 132, "", 28, 4, 132},
		{st256(128), 2048, 11008, 132, "", 28, 2, 132},
		{st256(64), 2048, 11008, 132, "gelu", 28, 4, 132},
		// 4096²: 512 tiles, the last wave 116: no room to split it.
		{st256(64), 4096, 4096, 132, "", 0, 1, 132},
		// Fewer tiles than blocks: all of them are the last wave (512 × 4096: 64 tiles → 128 of 128).
		{st256(128), 512, 4096, 132, "", 64, 2, 128},
		{st256(64), 512, 4096, 132, "", 64, 2, 128}, // tiles of 128 where those of 64 would not fit one wave
		// Whole waves: nothing to split.
		{st256(64), 128, 256 * 132, 132, "", 0, 1, 132},
		// Not a store plan, no tail width, swiglu: never.
		{wsPlan{256, 1, 0, wsDefaultGroup, false, 64, false}, 2048, 11008, 132, "", 0, 1, 132},
		{st256(0), 2048, 11008, 132, "", 0, 1, 132},
		{st256(64), 2048, 22016, 132, "swiglu", 0, 1, 132},
		{wsPlan{192, 1, 0, wsDefaultGroup, true, 64, false}, 300, 1000, 132, "", 18, 3, 54},
		// Along K: as many parts as the idle blocks allow, at most 4 (2048 × 11008: 28 tiles, 4 parts), swiglu
		// too (512 × 2048 of swiglu's 128-column tiles: 64 tiles, 2 parts; 512 × 11008: 344 tiles, the last
		// wave's 80 → no room).
		{kst256, 2048, 11008, 132, "", 28, 4, 132},
		{kst256, 512, 4096, 132, "", 64, 2, 128},
		{kst256, 512, 2048, 132, "swiglu", 64, 2, 128},
		{kst256, 512, 11008, 132, "swiglu", 0, 1, 132},
		{kst256, 128, 256, 132, "", 1, 4, 4},
		{kst256, 4096, 4096, 132, "", 0, 1, 132},
	} {
		tail, split, grid := tc.p.wsTailSplit(tc.m, tc.n, 4096, tc.blocks, tc.act)
		if tail != tc.tail || split != tc.split || grid != tc.grid {
			t.Errorf("%v.wsTailSplit(%d, %d, %d, %q) = (%d, %d, %d), want (%d, %d, %d)", tc.p, tc.m, tc.n, tc.blocks, tc.act,
				tail, split, grid, tc.tail, tc.split, tc.grid)
		}
	}
}

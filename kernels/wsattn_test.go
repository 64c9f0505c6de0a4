package kernels

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestAttentionUsesWGMMA holds the choice between the wgmma and the mma.sync attention kernels: wgmma on
// compute capability 9.0 with the switch on, at the head dims the module has, and nowhere else; and the switch
// on by default once the kernels are verified (wgmmaAttnPending ""), only under -kernels.pending before.
func TestAttentionUsesWGMMA(t *testing.T) {
	for _, tc := range []struct {
		cc, d int
		on    bool
		want  bool
	}{
		{90, 128, true, true}, {90, 64, true, true}, {90, 96, true, false}, {90, 128, false, false},
		{89, 128, true, false}, {80, 64, true, false}, {100, 128, true, false}, {120, 64, true, false},
	} {
		if got := attentionUsesWGMMA(tc.cc, tc.d, tc.on); got != tc.want {
			t.Errorf("attentionUsesWGMMA(cc %d, d %d, on %v) = %v, want %v", tc.cc, tc.d, tc.on, got, tc.want)
		}
	}
	// Pending, the switch is on only where the run asks for pending code (TestMain); verified, always.
	if want := wgmmaAttnPending == "" || harness.RunPending(); wgmmaAttnOn != want {
		t.Errorf("wgmmaAttnPending %q, wgmmaAttnOn %v with -kernels.pending=%v, want %v", wgmmaAttnPending, wgmmaAttnOn,
			harness.RunPending(), want)
	}
}

// TestWSAttnPlans: every plan fits a block's shared memory, has query tiles of whole warpgroups and key tiles
// of whole 16-key k-steps whose 64-column chunks are whole 1024-byte swizzle periods, boxes the copy engine
// takes (at most 256 rows), and the chooser picks, for each head dim of the
// family's grids and each mask, a plan the module holds of that head dim.
func TestWSAttnPlans(t *testing.T) {
	for _, p := range wsAttnPlans {
		if p.smem() > wsAttnSmemLimit || p.stages < 2 || p.bn%16 != 0 || p.bn*128%1024 != 0 || p.bn > 256 || p.bm%64 != 0 ||
			p.bm > 256 || p.threads() > 1024 {
			t.Errorf("%v: %d B of shared memory (limit %d), %d queries and %d keys a tile", p, p.smem(), wsAttnSmemLimit,
				p.bm, p.bn)
		}
		if !slices.Contains([]string{"plain", "ov", "pp"}, p.form) {
			t.Errorf("%v: form %q", p, p.form)
		}
	}
	for _, grid := range []string{"test", "cuda"} {
		for _, c := range AttentionFamily.CasesOn(grid, nil) {
			d := c.Dims[3]
			p := wsAttnChoose(d, c.Variant)
			if p.d != d || !slices.Contains(wsAttnPlans, p) {
				t.Errorf("wsAttnChoose(%d, %s) = %v: not a kernel of the module for d = %d", d, c.Variant, p, d)
			}
		}
	}
	for _, tc := range []struct {
		p    wsAttnPlan
		want string
	}{
		{wsAttnPlan{128, 128, 176, 2, "pp", wsAttnOpts{}}, "wsattn_d128_m128_n176_s2_pp_causal"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{emu: 4}}, "wsattn_d64_m256_n128_s2_plain_e4_causal"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{desc: true}}, "wsattn_d64_m256_n128_s2_plain_dc_none"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{emu: 2, desc: true}}, "wsattn_d64_m256_n128_s2_plain_e2_dc_none"},
	} {
		if got := tc.p.kernel(tc.want[strings.LastIndex(tc.want, "_")+1:]); got != tc.want {
			t.Errorf("kernel name %q, want %q", got, tc.want)
		}
	}
}

// TestWSAttnVariants: every variant is one the .cu builds (emu of 16), no kernel is listed twice, every plan's
// kernels (both masks) are entries of the committed PTX and no entry lacks a plan, and the default d = 64 plan's
// variant is the zero one while wsAttnD64Pending holds it back and wsAttnD64Opts once not.
func TestWSAttnVariants(t *testing.T) {
	for _, p := range wsAttnPlans {
		if p.opts.emu < 0 || p.opts.emu > 16 {
			t.Errorf("%v: %d of 16 exponentials on the polynomial", p, p.opts.emu)
		}
	}
	ptx, err := os.ReadFile("cuda/ptx/wsattn_sm90a.ptx")
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`).FindAllStringSubmatch(string(ptx), -1) {
		entries[m[1]] = true
	}
	seen := map[string]bool{}
	for _, p := range wsAttnPlans {
		for _, mask := range AttentionFamily.Variants {
			name := p.kernel(mask)
			if !entries[name] {
				t.Errorf("%v: no entry %s in cuda/ptx/wsattn_sm90a.ptx", p, name)
			}
			if seen[name] {
				t.Errorf("%v: kernel %s listed twice", p, name)
			}
			seen[name] = true
		}
	}
	for name := range entries {
		if !seen[name] {
			t.Errorf("cuda/ptx/wsattn_sm90a.ptx: entry %s has no plan in wsAttnPlans", name)
		}
	}
	want := wsAttnOpts{}
	if wsAttnD64On {
		want = wsAttnD64Opts
	}
	for _, mask := range AttentionFamily.Variants {
		if got := wsAttnChoose(64, mask); got.opts != want || !slices.Contains(wsAttnPlans, got) {
			t.Errorf("wsAttnChoose(64, %s) = %v with wsAttnD64On %v (pending %q), want variant %q", mask, got,
				wsAttnD64On, wsAttnD64Pending, want)
		}
	}
	if wsAttnD64On != (wsAttnD64Pending == "" || harness.RunPending()) {
		t.Errorf("wsAttnD64Pending %q, wsAttnD64On %v with -kernels.pending=%v", wsAttnD64Pending, wsAttnD64On,
			harness.RunPending())
	}
}

// wsAttnExp2PolyBound is the maximum relative error claimed for wa_exp2_poly (cuda/wsattn_sm90a.cu) over the x
// whose results are normal numbers: the minimax polynomial's 7.5e-5 plus float32 rounding.
const wsAttnExp2PolyBound = 8e-5

// wsAttnExp2PolyCoefs reads the polynomial (WA_EXP2_P3_<k>, lowest degree first) from the .cu.
func wsAttnExp2PolyCoefs(t *testing.T, src string) []float32 {
	t.Helper()
	c := make([]float32, 4)
	for k := range c {
		re := regexp.MustCompile(fmt.Sprintf(`(?m)^#define WA_EXP2_P3_%d ([-+0-9.eE]+)f$`, k))
		m := re.FindAllStringSubmatch(src, -1)
		if len(m) != 1 {
			t.Fatalf("cuda/wsattn_sm90a.cu: %d definitions of WA_EXP2_P3_%d, want 1", len(m), k)
		}
		v, err := strconv.ParseFloat(m[0][1], 32)
		if err != nil {
			t.Fatalf("cuda/wsattn_sm90a.cu: WA_EXP2_P3_%d: %v", k, err)
		}
		c[k] = float32(v)
	}
	return c
}

// wsAttnExp2Poly is wa_exp2_poly in float32 arithmetic, step for step: the clamp, t = 1.5·2^23 + ⌊x⌋ (the .cu's
// add rounding toward −∞, exact), f = x − (t − 1.5·2^23), Horner with fused multiply-adds, t << 23 added to p's
// bits and the sum's integer max with 0.
func wsAttnExp2Poly(x float32, c []float32) float32 {
	x = max(x, -128)
	tm := 12582912 + float32(math.Floor(float64(x)))
	f := x - (tm - 12582912)
	p := c[len(c)-1]
	for k := len(c) - 2; k >= 0; k-- {
		p = float32(math.FMA(float64(p), float64(f), float64(c[k])))
	}
	bits := int32(math.Float32bits(p)) + int32(math.Float32bits(tm))<<23
	return math.Float32frombits(uint32(max(bits, 0)))
}

// TestWSAttnExp2Poly holds the softmax's polynomial 2^x, with the constants of cuda/wsattn_sm90a.cu, to its claimed
// relative error against math.Exp2 over x ∈ [−125, 0] (every 2^−14, and the float32s of [−1, 0] every 2^−8 of
// the way); between −127 and −125 (denormal results) to 2^−125 absolute; and to exactly 0 below −127 and at −∞,
// the mask's, as ex2.approx.ftz gives. The error also has to reach half the bound somewhere, so that a bound
// loosened to hide a wrong constant shows.
func TestWSAttnExp2Poly(t *testing.T) {
	src, err := os.ReadFile("cuda/wsattn_sm90a.cu")
	if err != nil {
		t.Fatal(err)
	}
	c := wsAttnExp2PolyCoefs(t, string(src))
	worst, worstX := 0.0, float32(0)
	check := func(x float32) {
		got, want := float64(wsAttnExp2Poly(x, c)), math.Exp2(float64(x))
		switch {
		case x >= -125:
			if r := math.Abs(got/want - 1); r > worst {
				worst, worstX = r, x
			}
		case x >= -127:
			if math.Abs(got-want) > 0x1p-125 {
				t.Errorf("2^%v = %g, want %g within 2^-125", x, got, want)
			}
		case got != 0:
			t.Errorf("2^%v = %g, want 0", x, got)
		}
	}
	for k := 0; k <= 127<<14; k++ {
		check(-float32(k) / (1 << 14))
	}
	for b := math.Float32bits(-1); b > math.Float32bits(-0x1p-30); b -= 1 << 8 {
		check(math.Float32frombits(b))
	}
	for _, x := range []float32{-127.5, -128, -129, -1000, float32(math.Inf(-1))} {
		check(x)
	}
	t.Logf("max relative error %.3g at x = %v (bound %.3g)", worst, worstX, wsAttnExp2PolyBound)
	if worst > wsAttnExp2PolyBound || worst < wsAttnExp2PolyBound/2 {
		t.Errorf("max relative error %.3g at x = %v, want within [%.3g, %.3g]", worst, worstX, wsAttnExp2PolyBound/2,
			wsAttnExp2PolyBound)
	}
}

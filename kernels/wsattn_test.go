package kernels

import (
	"os"
	"regexp"
	"slices"
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
			if p.d != d || !slices.Contains(wsAttnPlans, p) || !slices.Contains(p.masks(), c.Variant) {
				t.Errorf("wsAttnChoose(%d, %s) = %v: not a kernel of the module for d = %d", d, c.Variant, p, d)
			}
		}
	}
	for _, tc := range []struct {
		p    wsAttnPlan
		want string
	}{
		{wsAttnPlan{128, 128, 176, 2, "pp", wsAttnOpts{}}, "wsattn_d128_m128_n176_s2_pp_causal"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{desc: true}}, "wsattn_d64_m256_n128_s2_plain_dc_none"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{desc: true}}, "wsattn_d64_m256_n128_s2_plain_dc_causal"},
		{wsAttnPlan{128, 128, 176, 2, "plain", wsAttnOpts{lastrel: true}}, "wsattn_d128_m128_n176_s2_plain_lr_none"},
		{wsAttnPlan{64, 256, 128, 2, "plain", wsAttnOpts{desc: true, lastrel: true}}, "wsattn_d64_m256_n128_s2_plain_dc_lr_none"},
	} {
		if got := tc.p.kernel(tc.want[strings.LastIndex(tc.want, "_")+1:]); got != tc.want {
			t.Errorf("kernel name %q, want %q", got, tc.want)
		}
	}
}

// TestWSAttnVariants: no kernel is listed twice, every plan's kernels (both masks) are entries of the committed PTX
// and no entry lacks a plan, and the default d = 64 plan's variant is the zero one while wsAttnD64Pending holds it
// back and wsAttnD64Opts once not.
func TestWSAttnVariants(t *testing.T) {
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
		for _, mask := range p.masks() {
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
	for _, mask := range AttentionFamily.Variants {
		want := wsAttnOpts{}
		if wsAttnD64On && mask == "causal" {
			want = wsAttnD64Opts
		} else if wsAttnD64On {
			want = wsAttnD64NoneOpts
			want.lazy = wsAttnLazyOn
		}
		if got := wsAttnChoose(64, mask); got.opts != want || !slices.Contains(wsAttnPlans, got) {
			t.Errorf("wsAttnChoose(64, %s) = %v with wsAttnD64On %v (pending %q), want variant %q", mask, got,
				wsAttnD64On, wsAttnD64Pending, want)
		}
	}
	// The lazy rescale: in every default plan but causal d = 64's once wsAttnLazyOn, and each such plan a kernel of
	// the module, whether or not it is on.
	on := wsAttnLazyOn
	defer func() { wsAttnLazyOn = on }()
	for _, lazy := range []bool{false, true} {
		wsAttnLazyOn = lazy
		for _, d := range []int{64, 128} {
			for _, mask := range AttentionFamily.Variants {
				got := wsAttnChoose(d, mask)
				if want := lazy && (d == 128 || wsAttnD64On && mask != "causal"); got.opts.lazy != want ||
					!slices.Contains(wsAttnPlans, got) || !slices.Contains(got.masks(), mask) {
					t.Errorf("wsAttnChoose(%d, %s) with wsAttnLazyOn %v = %v: lazy %v, want %v, and a kernel for the mask",
						d, mask, lazy, got, got.opts.lazy, want)
				}
			}
		}
	}
	wsAttnLazyOn = on
	if wsAttnLazyOn != (wsAttnLazyPending == "" || harness.RunPending()) {
		t.Errorf("wsAttnLazyPending %q, wsAttnLazyOn %v with -kernels.pending=%v", wsAttnLazyPending, wsAttnLazyOn,
			harness.RunPending())
	}
	if wsAttnD64On != (wsAttnD64Pending == "" || harness.RunPending()) {
		t.Errorf("wsAttnD64Pending %q, wsAttnD64On %v with -kernels.pending=%v", wsAttnD64Pending, wsAttnD64On,
			harness.RunPending())
	}
}

package kernels

import (
	"slices"
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
	if got, want := (wsAttnPlan{128, 128, 176, 2, "pp"}).kernel("causal"), "wsattn_d128_m128_n176_s2_pp_causal"; got != want {
		t.Errorf("kernel name %q, want %q", got, want)
	}
}

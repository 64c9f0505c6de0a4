package harness

import (
	"math"
	"strings"
	"testing"
)

// TestMMAPeak checks the peak table's arithmetic: SMs × clock × FLOP/clk/SM, NVIDIA's published figures at
// their clocks, and no figure for a device the table does not know.
func TestMMAPeak(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cc, sms, khz  int
		want          float64 // TFLOP/s
		wantInHowText string
	}{
		{"A100", 80, 108, 1410000, 311.9, "108 SMs × 1410 MHz × 2048"},
		{"H100 SXM", 90, 132, 1830000, 989.4, "132 SMs × 1830 MHz × 4096"},
		{"H100 PCIe", 90, 114, 1620000, 756.4, "114 SMs"},
		{"H200 at its reported boost clock", 90, 132, 1980000, 1070.5, "1980 MHz"},
	} {
		got, how := mmaPeak(tc.cc, tc.sms, tc.khz)
		if math.Abs(got-tc.want) > 0.05 || !strings.Contains(how, tc.wantInHowText) {
			t.Errorf("%s: mmaPeak = %.2f (%s), want %.1f (… %s …)", tc.name, got, how, tc.want, tc.wantInHowText)
		}
	}
	for _, cc := range []int{75, 86, 89} {
		if got, how := mmaPeak(cc, 100, 1500000); got != 0 || how != "" {
			t.Errorf("sm_%d: mmaPeak = %v (%s), want none", cc, got, how)
		}
	}
	if got, _ := mmaPeak(90, 0, 1830000); got != 0 {
		t.Errorf("no SMs: mmaPeak = %v", got)
	}
	// The probe's FLOP count: 10 blocks of 8 warps, 100 rounds of the chains, 4096 FLOP an mma.
	if got, want := mmaProbeFlops(10, 256, 100), 10.0*8*100*mmaProbeChains*4096; got != want {
		t.Errorf("mmaProbeFlops = %v, want %v", got, want)
	}
}

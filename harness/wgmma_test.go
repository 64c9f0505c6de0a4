package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/group"
)

// fakeWGMMA is a CPU backend that claims a wgmma probe, for the config line Start prints.
type fakeWGMMA struct {
	Backend
	tflops float64
	err    error
	ran    *bool
}

func (f fakeWGMMA) MeasureWGMMA() (float64, error) {
	*f.ran = true
	return f.tflops, f.err
}

// TestStartPrintsWGMMA checks the wgmma-tflops config line: the rate, "none" with the reason on a device
// without wgmma, any other failure stops the run; while the probe is pending (wgmmaPending) a run that does not
// ask for pending code neither runs it nor prints the line.
func TestStartPrintsWGMMA(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	defer func(old string) { wgmmaPending = old }(wgmmaPending)
	for _, tc := range []struct {
		pending, runPending bool
		tflops              float64
		err                 error
		want                string // the line, "" for none
		wantErr, wantRan    bool
	}{
		{false, false, 701.25, nil, "wgmma-tflops: 701.2\n", false, true},
		{true, true, 701.25, nil, "wgmma-tflops: 701.2\n", false, true},
		{true, false, 701.25, nil, "", false, false},
		{false, false, 0, fmt.Errorf("compute capability 8.0 has no wgmma: %w", ErrNotImplemented),
			"wgmma-tflops: none (compute capability 8.0 has no wgmma: not implemented on this backend)\n", false, true},
		{false, false, 0, errors.New("launch failed"), "", true, true},
	} {
		wgmmaPending = ""
		if tc.pending {
			wgmmaPending = "not yet run on a GPU"
		}
		var out strings.Builder
		ran := false
		s := NewSuite(fakeWGMMA{cpu, tc.tflops, tc.err, &ran}, &out)
		s.Policy.CopyBytes, s.Policy.CopySamples = 1<<20, 1
		s.RunPending = tc.runPending
		err := s.Start()
		got := out.String()
		switch {
		case (err != nil) != tc.wantErr || ran != tc.wantRan:
			t.Errorf("%+v: err %v, probe ran %v", tc, err, ran)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%+v: output\n%s\nwant it to contain %q", tc, got, tc.want)
		case tc.want == "" && strings.Contains(got, "wgmma-"):
			t.Errorf("%+v: output\n%s\nwant no wgmma line", tc, got)
		}
		if s.copy != nil {
			s.copy.Release()
		}
	}
	// Measured afresh by each process, the line must be a run key, not the benchmarks' configuration.
	if !slices.Contains(group.RunKeys, "wgmma-tflops") {
		t.Error("wgmma-tflops is not one of regress's run keys (group.RunKeys)")
	}
}

func TestWGMMAProbeFlops(t *testing.T) {
	// One block of 2 warpgroups, one round of 8 m64n256k16: 2·8·2·64·256·16 FLOP.
	if got, want := wgmmaProbeFlops(1, 1), float64(2*8*2*64*256*16); got != want {
		t.Errorf("wgmmaProbeFlops(1, 1) = %v, want %v", got, want)
	}
	if got, want := wgmmaProbeFlops(132, 4096), 132*4096*wgmmaProbeFlops(1, 1); got != want {
		t.Errorf("wgmmaProbeFlops(132, 4096) = %v, want %v", got, want)
	}
}

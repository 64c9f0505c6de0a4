package harness

import (
	"errors"
	"fmt"
	"time"
)

// The Hopper tensor-core yardstick, wgmma-tflops: on compute capability 9.0 only wgmma (an sm_90a instruction)
// reaches the tensor cores' rated dense bf16 rate; the mma.sync that mma-tflops measures, and that the suite's
// tensor-core kernels use, runs well below it. Printed beside mma-tflops, so that a reader sees both what the
// suite's kernels can reach and what the chip can. pct-mma stays against mma-tflops: the yardstick of the
// instruction the kernels use.

// wgmmaPending, while set, keeps Suite.Start from running the wgmma probe unless the run asks for pending GPU
// code (Suite.RunPending), as Family.Pending does for a family: "" since TestCUDAWGMMAProbe passed on an H100
// and an H200 (976–987 TFLOP/s dense bf16, against 640 for mma.sync and a table peak of 1070).
var wgmmaPending = ""

// The probe's shape (cuda/mma_sm90a.cu): WGMMA_PROBE_WARPGROUPS warpgroups a block, WGMMA_PROBE_BATCH
// wgmma.m64n256k16 a round.
const (
	wgmmaProbeWarpgroups = 2
	wgmmaProbeBatch      = 8
)

// wgmmaProbeFlops is the work of one launch of the wgmma probe: warpgroups × iters × batch × one m64n256k16
// (2·64·256·16).
func wgmmaProbeFlops(blocks, iters int) float64 {
	return float64(blocks) * wgmmaProbeWarpgroups * float64(iters) * wgmmaProbeBatch * 2 * 64 * 256 * 16
}

// wgmmaProber is a backend that can measure its tensor cores through wgmma: MeasureWGMMA times a kernel that
// does nothing but dense bf16 wgmma with fp32 accumulation from shared memory and returns TFLOP/s, or an error
// wrapping ErrNotImplemented where the device has no wgmma (anything but compute capability 9.0).
type wgmmaProber interface {
	MeasureWGMMA() (float64, error)
}

// startWGMMA prints the wgmma-tflops config line of Suite.Start: the rate, or "none (why)" on a device without
// wgmma; nothing while the probe is pending and the run does not ask for pending code, or on a backend without
// a probe.
func (s *Suite) startWGMMA() error {
	p, ok := s.Backend.(wgmmaProber)
	if !ok || (wgmmaPending != "" && !s.RunPending) {
		return nil
	}
	start := time.Now()
	tf, err := p.MeasureWGMMA()
	s.Costs.charge(&s.Costs.Copy, start)
	switch {
	case err == nil:
		fmt.Fprintf(s.Out, "wgmma-tflops: %.1f\n", tf)
	case errors.Is(err, ErrNotImplemented):
		fmt.Fprintf(s.Out, "wgmma-tflops: none (%v)\n", err)
	default:
		return err
	}
	return nil
}

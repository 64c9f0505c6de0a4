//go:build cuda

package harness

//go:generate nvcc -ptx -arch=compute_80 -o cuda/ptx/mma_sm80.ptx cuda/mma.cu

import (
	"fmt"
	"slices"
	"unsafe"

	"gorgonia.org/cu"
)

// The probe's launch: 256-thread blocks, as many as the GPU holds at once (one full wave), each warp
// mmaProbeIters rounds of its chains — about 4.5e12 FLOP, a few milliseconds on an H100 — timed mmaProbeRuns
// times after two warm-up launches.
const (
	mmaProbeThreads = 256
	mmaProbeIters   = 8192
	mmaProbeRuns    = 5
)

// MeasureMMA implements mmaProber: the median rate of the probe kernel (cuda/mma.cu) in TFLOP/s.
func (c *CUDA) MeasureMMA() (float64, error) {
	if c.cc < 80 {
		return 0, fmt.Errorf("harness: cuda: compute capability %d.%d has no bf16 mma.sync (sm_80 and later): %w",
			c.cc/10, c.cc%10, ErrNotImplemented)
	}
	var tflops float64
	err := c.do(func() error {
		fn, err := c.function("mma_sm80", "mma_probe")
		if err != nil {
			return err
		}
		per, err := fn.MaxActiveBlocksPerMultiProcessor(mmaProbeThreads, 0)
		if err != nil {
			return fmt.Errorf("occupancy of mma_probe: %w", err)
		}
		blocks := max(per, 1) * c.dev.Workers
		out, err := cu.MemAlloc(int64(blocks * mmaProbeThreads * 4))
		if err != nil {
			return fmt.Errorf("mma probe buffer: %w", err)
		}
		defer cu.MemFree(out)
		args := []uint64{uint64(out), mmaProbeIters}
		params := []unsafe.Pointer{unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1])}
		launch := func() error {
			return fn.Launch(blocks, 1, 1, mmaProbeThreads, 1, 1, 0, c.stream, params)
		}
		for range 2 {
			if err := launch(); err != nil {
				return fmt.Errorf("mma probe: %w", err)
			}
		}
		ms := make([]float64, mmaProbeRuns)
		for i := range ms {
			start, end := c.events[0], c.events[1]
			if err := start.Record(c.stream); err != nil {
				return fmt.Errorf("mma probe event: %w", err)
			}
			if err := launch(); err != nil {
				return fmt.Errorf("mma probe: %w", err)
			}
			if err := end.Record(c.stream); err != nil {
				return fmt.Errorf("mma probe event: %w", err)
			}
			if err := c.stream.Synchronize(); err != nil {
				return fmt.Errorf("mma probe: %w", err)
			}
			if ms[i], err = start.Elapsed(end); err != nil {
				return fmt.Errorf("mma probe elapsed time: %w", err)
			}
		}
		slices.Sort(ms)
		tflops = mmaProbeFlops(blocks, mmaProbeThreads, mmaProbeIters) / (ms[len(ms)/2] * 1e-3) / 1e12
		return nil
	})
	return tflops, err
}

// PeakMMA implements mmaProber: mmaPeak with the GPU's multiprocessor count and its clock rate as the driver
// reports it (CU_DEVICE_ATTRIBUTE_CLOCK_RATE: the maximum boost clock, which can be above the clock of
// NVIDIA's published peak — 1980 against 1830 MHz on an H100 SXM).
func (c *CUDA) PeakMMA() (float64, string) {
	var khz int
	if err := c.do(func() error {
		dev, err := cu.CurrentDevice()
		if err == nil {
			khz, err = dev.Attribute(cu.ClockRate)
		}
		return err
	}); err != nil {
		return 0, ""
	}
	return mmaPeak(c.cc, c.dev.Workers, khz)
}

//go:build cuda

package harness

// cuda/ptx/mma_sm90a.ptx comes from the Hopper toolchain: its go:generate line is in sm90a_generate.go.

import (
	"fmt"
	"slices"
	"unsafe"

	"gorgonia.org/cu"
)

// The wgmma probe's launch: blocks of wgmmaProbeWarpgroups warpgroups, as many as the GPU holds at once (one
// full wave), each warpgroup wgmmaProbeIters rounds — about 4.5e12 FLOP on 132 multiprocessors, a few
// milliseconds at the H100's rated 989 TFLOP/s — timed mmaProbeRuns times after two warm-up launches.
const wgmmaProbeIters = 4096

// MeasureWGMMA implements wgmmaProber: the median rate of the wgmma probe (cuda/mma_sm90a.cu) in TFLOP/s, on
// compute capability 9.0 only.
func (c *CUDA) MeasureWGMMA() (float64, error) {
	if c.cc != 90 {
		return 0, fmt.Errorf("harness: cuda: compute capability %d.%d has no wgmma (sm_90a: exactly 9.0): %w",
			c.cc/10, c.cc%10, ErrNotImplemented)
	}
	var tflops float64
	err := c.do(func() error {
		threads := 128 * wgmmaProbeWarpgroups
		ms, blocks, err := c.timeProbe("mma_sm90a", "wgmma_probe", threads, wgmmaProbeIters)
		if err != nil {
			return err
		}
		tflops = wgmmaProbeFlops(blocks, wgmmaProbeIters) / (ms * 1e-3) / 1e12
		return nil
	})
	return tflops, err
}

// timeProbe launches probe kernel name of module (parameters: a float output of one word per thread, the
// iteration count) on one full wave of threads-thread blocks, twice to warm up and then mmaProbeRuns times
// between events, on the context thread; it returns the median launch time in milliseconds and the block count.
func (c *CUDA) timeProbe(module, name string, threads, iters int) (float64, int, error) {
	fn, err := c.function(module, name)
	if err != nil {
		return 0, 0, err
	}
	per, err := fn.MaxActiveBlocksPerMultiProcessor(threads, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("occupancy of %s: %w", name, err)
	}
	blocks := max(per, 1) * c.dev.Workers
	out, err := cu.MemAlloc(int64(blocks * threads * 4))
	if err != nil {
		return 0, 0, fmt.Errorf("%s buffer: %w", name, err)
	}
	defer cu.MemFree(out)
	args := []uint64{uint64(out), uint64(iters)}
	params := []unsafe.Pointer{unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1])}
	launch := func() error {
		if err := fn.Launch(blocks, 1, 1, threads, 1, 1, 0, c.stream, params); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	for range 2 {
		if err := launch(); err != nil {
			return 0, 0, err
		}
	}
	ms := make([]float64, mmaProbeRuns)
	for i := range ms {
		start, end := c.events[0], c.events[1]
		if err := start.Record(c.stream); err != nil {
			return 0, 0, fmt.Errorf("%s event: %w", name, err)
		}
		if err := launch(); err != nil {
			return 0, 0, err
		}
		if err := end.Record(c.stream); err != nil {
			return 0, 0, fmt.Errorf("%s event: %w", name, err)
		}
		if err := c.stream.Synchronize(); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", name, err)
		}
		if ms[i], err = start.Elapsed(end); err != nil {
			return 0, 0, fmt.Errorf("%s elapsed time: %w", name, err)
		}
	}
	slices.Sort(ms)
	return ms[len(ms)/2], blocks, nil
}

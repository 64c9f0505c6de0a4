//go:build cuda

package harness

import (
	"fmt"
	"os"

	"gorgonia.org/cu"
)

// openArena reserves the arena (placement.go): all device memory that is free once the context, the timing state
// and the flush buffer exist, less cudaArenaReserve. It runs on the context thread before any module loads.
// When the reservation fails (another process holds the memory), the run goes on with the driver's placement
// and says so on stderr: its figures are then exposed to the placement effects the arena exists to remove.
func (c *CUDA) openArena() error {
	if !cudaArenaOn {
		return nil
	}
	if cudaArenaSkew < 0 || cudaArenaSkew%256 != 0 {
		return fmt.Errorf("harness: cuda: arena skew %d is not a non-negative multiple of 256", cudaArenaSkew)
	}
	free, _, err := cu.MemInfo()
	if err != nil {
		return fmt.Errorf("harness: cuda: free memory: %w", err)
	}
	size := free - cudaArenaReserve(free)
	if size <= cudaArenaSkew+arenaAlign {
		fmt.Fprintf(os.Stderr, "harness: cuda: %d B free, too little for an arena: buffers placed by the driver\n", free)
		return nil
	}
	p, err := cu.MemAlloc(size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness: cuda: arena of %d B refused (%v): buffers placed by the driver\n", size, err)
		return nil
	}
	c.arenaMem, c.arenaBase = p, p+cu.DevicePtr(cudaArenaSkew)
	c.arena = placement{size: size - cudaArenaSkew}
	return nil
}

// devAlloc returns n bytes of device memory for a buffer or scratch: the next block of the arena, or the
// driver's allocation when there is no arena or the block does not fit (warned once per run). Context thread.
func (c *CUDA) devAlloc(n int64) (cu.DevicePtr, error) {
	if c.arenaMem != 0 {
		if off, ok := c.arena.place(n); ok {
			return c.arenaBase + cu.DevicePtr(off), nil
		}
		if !c.spilled {
			c.spilled = true
			fmt.Fprintf(os.Stderr, "harness: cuda: %d B do not fit in the arena (%d B): placed by the driver from here on\n", n, c.arena.size)
		}
	}
	return cu.MemAlloc(max(n, 1))
}

// devFree releases memory from devAlloc. An arena block is reused by the next allocation at once, so the
// stream's work is waited for first: no queued launch may still read or write it. Context thread.
func (c *CUDA) devFree(p cu.DevicePtr) error {
	if c.arenaMem != 0 && p >= c.arenaBase && p < c.arenaBase+cu.DevicePtr(c.arena.size) {
		if err := c.idle(); err != nil {
			return err
		}
		if !c.arena.release(int64(p - c.arenaBase)) {
			return fmt.Errorf("harness: cuda: %#x is not a live arena block", uint64(p))
		}
		return nil
	}
	return cu.MemFree(p)
}

package harness

// placement places a run's device buffers so that where a benchmark's memory lies depends on that benchmark alone.
//
// Why: measured on an H100 (2026-11-26), a change confined to one family's CUDA module moved the fused SwiGLU FFN
// at 512 tokens by +6.4% in every process, and the same FFN case took 485, 493 or 514 µs depending on which other
// families had run before it in the process. The driver's allocator hands out addresses (and the physical pages
// behind them) that depend on every allocation and module load before, so a benchmark's buffers land somewhere
// else when anything earlier in the process changes; the kernel's speed follows its placement.
//
// The cure is to take placement away from history: the CUDA backend reserves one large range of device memory
// when it opens, before any family's module loads, and places every buffer and every launcher's scratch in it as
// a stack. A case's buffers are freed when the case ends, so the stack returns to where it was, and the next
// case starts at the same offset whatever ran before it: the copy reference's buffers (allocated first, kept for
// the run) sit at the bottom, and each case above them in its own fixed order. Other families' cases, their
// modules and their sizes change nothing below or inside a case's range.
//
// placement is the bookkeeping only (offsets, no memory), so that it can be tested without a GPU. Blocks are
// aligned to arenaAlign, the GPU's large-page size, which is what the driver gives large allocations too.
type placement struct {
	size   int64
	top    int64        // end of the highest live block
	blocks []placeBlock // in address order; a freed block stays until every block above it is freed too
}

type placeBlock struct {
	off, n int64
	freed  bool
}

// arenaAlign is the alignment of every block: 2 MiB, the GPU's large page.
const arenaAlign = 2 << 20

// place returns the offset of a new block of n bytes on top of the stack, or false when it does not fit.
func (a *placement) place(n int64) (int64, bool) {
	off := (a.top + arenaAlign - 1) / arenaAlign * arenaAlign
	n = max(n, 1)
	if off+n > a.size || off+n < off {
		return 0, false
	}
	a.blocks = append(a.blocks, placeBlock{off: off, n: n})
	a.top = off + n
	return off, true
}

// release frees the block at offset off and reports whether there was one. Blocks are popped from the top as
// soon as they and everything above them are free, so a case that frees its buffers in any order leaves the
// stack where it found it.
func (a *placement) release(off int64) bool {
	for i := len(a.blocks) - 1; i >= 0; i-- {
		if a.blocks[i].off == off && !a.blocks[i].freed {
			a.blocks[i].freed = true
			for len(a.blocks) > 0 && a.blocks[len(a.blocks)-1].freed {
				a.blocks = a.blocks[:len(a.blocks)-1]
			}
			a.top = 0
			if k := len(a.blocks); k > 0 {
				a.top = a.blocks[k-1].off + a.blocks[k-1].n
			}
			return true
		}
	}
	return false
}

// live is the number of blocks not yet popped (freed ones under a live one included).
func (a *placement) live() int { return len(a.blocks) }

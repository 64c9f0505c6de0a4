//go:build cuda

package harness

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/fill.ptx cuda/fill.cu

import (
	"fmt"
	"math"
	"unsafe"
)

// Fill implements Backend: one grid-stride launch of cuda/fill.cu's generator for d, on the backend's
// stream, finished before Fill returns. It writes exactly what Dist.FillHost computes, rounded to the
// buffer's dtype, up to float32 rounding of the normal's log and cosine.
func (c *CUDA) Fill(dst Buffer, d Dist, cs Case, seed uint64) error {
	b, err := deviceBuf(dst, -1)
	if err != nil || b.n == 0 {
		return err
	}
	var name string
	var args []uint64
	n := uint64(b.n)
	switch {
	case d.Kind == Normal && (b.dt == FP32 || b.dt == BF16):
		name, args = "fill_normal", []uint64{uint64(b.ptr), n, uint64(b.dt), seed, math.Float64bits(d.Mean), math.Float64bits(d.SD)}
	case d.Kind == Labels && b.dt == Int32 && cs.Cols > 0:
		name, args = "fill_labels", []uint64{uint64(b.ptr), n, uint64(cs.Cols), seed}
	case (d.Kind == RoPECos || d.Kind == RoPESin) && b.dt == FP32 && b.n%(RoPEHeadDim/2) == 0:
		which := uint64(0)
		if d.Kind == RoPESin {
			which = 1
		}
		name, args = "fill_rope", []uint64{uint64(b.ptr), uint64(b.n / (RoPEHeadDim / 2)), which, seed}
	case (d.Kind == Uniform || d.Kind == Polar) && (b.dt == FP32 || b.dt == BF16):
		name = map[DistKind]string{Uniform: "fill_uniform", Polar: "fill_polar"}[d.Kind]
		args = []uint64{uint64(b.ptr), n, uint64(b.dt), seed, math.Float64bits(d.Lo), math.Float64bits(d.Hi)}
	case d.Kind == Bernoulli && b.dt == Int32:
		name, args = "fill_bernoulli", []uint64{uint64(b.ptr), n, seed, bernoulliThreshold(d.P)}
	default:
		return fmt.Errorf("harness: cuda cannot fill %d×%v from distribution kind %d", b.n, b.dt, d.Kind)
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	const block = 256
	grid := max(1, min(ceilDiv(b.n, block), 32*c.dev.Workers))
	return c.do(func() error {
		fn, err := c.function("fill", name)
		if err != nil {
			return err
		}
		if err := fn.Launch(grid, 1, 1, block, 1, 1, 0, c.stream, params); err != nil {
			return fmt.Errorf("harness: cuda %s: %w", name, err)
		}
		if err := c.stream.Synchronize(); err != nil {
			return fmt.Errorf("harness: cuda %s: %w", name, err)
		}
		return nil
	})
}

package kernels

import "github.com/kernelwatch/kernelwatch/harness"

// The suite's CPU code receives the harness's launch (harness.RegisterCPU), wrapped in cpuLaunch only so that
// the suite's own helpers — the eager ops of the naive chains (eager.go), the composites' (compose.go), the
// tiled GEMM (gemm.go) — can be its methods. A cpuLaunch is a value: wrapping costs nothing per launch.
type cpuLaunch struct{ *harness.CPULaunch }

// cpuBuffer is the CPU backend's buffer: the elements in a Go slice of the dtype's storage type.
type cpuBuffer = harness.HostBuffer

// registerCPU registers family f's fused and naive CPU code with the harness (nil: none).
func registerCPU(f *Family, fused, naive func(cpuLaunch)) {
	for impl, run := range map[Impl]func(cpuLaunch){Fused: fused, Naive: naive} {
		if run != nil {
			harness.RegisterCPU(f, impl, func(l *harness.CPULaunch) { run(cpuLaunch{l}) })
		}
	}
}

// tile is how many elements a CPU kernel holds in a local array at a time, the stand-in for a GPU thread
// block's registers: bf16 data is widened tile by tile and never as a whole row.
const tile = 256

// act is an activation tensor in its storage dtype: exactly one of f32 and b16 is in use.
type act struct {
	f32 []float32
	b16 []uint16
}

// actOf is buffer b as an activation tensor, the view kernels compute through.
func actOf(b *cpuBuffer) act { return act{f32: b.F32, b16: b.U16} }

// load returns elements [off, off+n) as float32: the tensor itself for fp32, widened into buf for bf16.
func (a act) load(off, n int, buf *[tile]float32) []float32 {
	if a.b16 == nil {
		return a.f32[off : off+n]
	}
	d := buf[:n]
	for i, h := range a.b16[off : off+n] {
		d[i] = harness.F32FromBF16(h)
	}
	return d
}

// at returns element i as float32.
func (a act) at(i int) float32 {
	if a.b16 == nil {
		return a.f32[i]
	}
	return harness.F32FromBF16(a.b16[i])
}

// dst returns where to compute elements [off, off+n): the tensor itself for fp32, buf for bf16; store then
// rounds buf into the tensor.
func (a act) dst(off, n int, buf *[tile]float32) []float32 {
	if a.b16 == nil {
		return a.f32[off : off+n]
	}
	return buf[:n]
}

// store completes a dst: for bf16 it rounds v into elements [off, off+len(v)); for fp32 v is already in place.
func (a act) store(off int, v []float32) {
	if a.b16 == nil {
		return
	}
	d := a.b16[off : off+len(v)]
	for i, x := range v {
		d[i] = harness.BF16FromF32(x)
	}
}

package harness

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Backend runs kernels on one device. It provides mechanisms only — memory, launches, a clock; what to run is a
// Family's declaration and how to measure is the harness's Policy. The CPU backend (cpu.go) is always built; the
// CUDA backend is built with the cuda tag. A backend registers itself with registerBackend from an init function
// and registers its implementation of each family in its own table, keyed by Family.Name.
type Backend interface {
	// Device describes the hardware for the run's config lines and picks the harness policy and shape grid.
	Device() Device
	// Alloc returns a buffer of n elements of dtype dt in device memory. Its contents are unspecified.
	Alloc(dt DType, n int) (Buffer, error)
	// Free releases a buffer from Alloc.
	Free(Buffer)
	// Upload rounds host values to dst's dtype and stores them; len(host) must equal dst.Len(). Int32 buffers take
	// integral values (exact below 2^24).
	Upload(dst Buffer, host []float32) error
	// Download converts src's elements to float32 (exactly: every storage format widens losslessly, e4m3 as its
	// code's value, unscaled); len(host) must equal src.Len(). It sees the results of every launch run before it.
	Download(src Buffer, host []float32) error
	// Fill fills an input buffer in place from distribution d's counter-based generator (Dist.FillHost gives
	// the same values on the host), for case c and seed, rounded to the buffer's dtype; d must be InPlace.
	Fill(dst Buffer, d Dist, c Case, seed uint64) error
	// Poison sets every byte of buf to 0xFF, which is NaN in fp32, bf16 and e4m3, so a correctness test finds any
	// element a kernel leaves unwritten.
	Poison(buf Buffer) error
	// Implements reports whether the backend has code for impl of family f. Tests and benchmarks skip what it
	// lacks (a backend may be added a family at a time); Prepare fails on it with ErrNotImplemented.
	Implements(f *Family, impl Impl) bool
	// Prepare binds one implementation of family f to buffers for case c: in and out follow f.Inputs and
	// f.Outputs and have the lengths and dtypes those declare. It fails when the backend lacks the family or impl.
	Prepare(f *Family, impl Impl, c Case, in, out []Buffer) (Launch, error)
	// Time runs l n times with the cache treatment t asks for and returns each launch's duration in nanoseconds,
	// measured around that launch alone (CPU: the wall clock; GPU: a pair of events).
	Time(l Launch, n int, t Timing) ([]float64, error)
	// Close releases the device.
	Close() error
}

// ErrNotImplemented is what Prepare's error wraps when the backend has no code for the family or impl asked for.
var ErrNotImplemented = errors.New("not implemented on this backend")

// Buffer is a backend's device memory holding Len elements of one DType.
type Buffer interface {
	DType() DType
	Len() int
}

// Launch is one (family, impl) bound to its buffers, ready to run any number of times.
type Launch interface {
	// Run executes the kernel once; its outputs are visible to the next Download.
	Run() error
	// ScratchBytes is the memory one Run allocates beyond its inputs and outputs (an eager chain's
	// intermediates; a fused kernel should need little or none). It is a property of the implementation and
	// the case, not of timing.
	ScratchBytes() int64
	// Release frees what Prepare and Run allocated; the Launch must not be used afterwards.
	Release()
}

// Timing is the cache treatment of timed launches; the harness chooses it, the backend carries it out.
type Timing struct {
	// FlushBytes, when positive, makes the backend overwrite a buffer of this many bytes before each timed
	// launch, so that the launch finds none of its data in cache ("cold"). Zero times back-to-back ("hot").
	FlushBytes int64
	// Repeat, when above 1, makes each sample the mean of Repeat back-to-back launches timed together (one
	// event pair on a GPU), with no flush between them: the hot figure of a kernel too short to time alone.
	Repeat int
}

// Device describes the hardware a backend runs on: what the config lines of a result file say.
type Device struct {
	Kind   string // "cpu" or "cuda": the device config line, the harness policy and the shape grid
	Class  string // hardware class: cpu-<goarch>-<model slug> or gpu-<vendor>-<model slug> (design §2)
	Name   string // the processor's model name
	Driver string // GPU driver version; empty on the CPU
	// CacheBytes is the size of the last cache level in front of memory (L2 on a GPU, the last-level cache on
	// a CPU); 0 when unknown. The harness sizes cache flushes from it.
	CacheBytes int64
	Workers    int // parallel workers a launch uses (CPU goroutines; SMs on a GPU)
	// Timer is what the CPU backend's samples measure (TimerProcessCPU or TimerWall), printed as the
	// cpu-timer config line; empty on a GPU, whose launches are timed by events.
	Timer string
}

// ConfigLines returns the device's benchfmt configuration lines: device and class, plus gpu and gpu-driver on
// GPUs (on the CPU, go test prints the model itself as "cpu:") and cpu-timer on the CPU, since its ns/op is
// CPU time or wall time as the timer says.
func (d Device) ConfigLines() []string {
	lines := []string{"device: " + d.Kind}
	if d.Timer != "" {
		lines = append(lines, "cpu-timer: "+d.Timer)
	}
	if d.Kind != "cpu" {
		lines = append(lines, "gpu: "+d.Name)
		if d.Driver != "" {
			lines = append(lines, "gpu-driver: "+d.Driver)
		}
	}
	return append(lines, "class: "+d.Class)
}

// backendEntry is one registered backend constructor.
type backendEntry struct {
	name string
	rank int
	open func() (Backend, error)
}

var backends []backendEntry

// registerBackend makes a backend available to openBackend under name; among those built in, "auto" opens the one
// with the highest rank (the CPU has rank 0, so any accelerator backend built in is preferred).
func registerBackend(name string, rank int, open func() (Backend, error)) {
	backends = append(backends, backendEntry{name, rank, open})
	sort.SliceStable(backends, func(i, j int) bool { return backends[i].rank > backends[j].rank })
}

// BackendNames lists the registered backends, preferred first.
func BackendNames() []string {
	names := make([]string, len(backends))
	for i, e := range backends {
		names[i] = e.name
	}
	return names
}

// resolveBackend returns the registered name that name selects: itself, or for "auto" or "" the preferred one.
func resolveBackend(name string) (string, error) {
	e, err := lookupBackend(name)
	return e.name, err
}

// openBackend opens the backend that name selects (see resolveBackend).
func openBackend(name string) (Backend, error) {
	e, err := lookupBackend(name)
	if err != nil {
		return nil, err
	}
	return e.open()
}

func lookupBackend(name string) (backendEntry, error) {
	for _, e := range backends {
		if name == "" || name == "auto" || name == e.name {
			return e, nil
		}
	}
	return backendEntry{}, fmt.Errorf("harness: no backend %q in this build (have %s)", name,
		strings.Join(BackendNames(), ", "))
}

// unwrapBuffers turns a launch's input and output Buffers into a backend's own buffer type with conv
// (cpuBuf, cudaBuf), failing on a buffer of another backend.
func unwrapBuffers[T any](in, out []Buffer, conv func(Buffer, int) (T, error)) (ins, outs []T, err error) {
	for _, side := range []struct {
		bufs []Buffer
		dst  *[]T
	}{{in, &ins}, {out, &outs}} {
		for _, b := range side.bufs {
			t, err := conv(b, -1)
			if err != nil {
				return nil, nil, err
			}
			*side.dst = append(*side.dst, t)
		}
	}
	return ins, outs, nil
}

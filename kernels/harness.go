package kernels

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// Policy is how a run measures: every benchmark of a device kind is timed the same way, and nothing about
// timing is decided anywhere else.
type Policy struct {
	// Warmup is how long a case's launch runs untimed before its first sample (at least 3 launches).
	Warmup time.Duration
	// Timing is the cache treatment of each timed launch.
	Timing Timing
	// CopyBytes is the size of the buffer the copy-bandwidth reference (copy-gbps) is measured on, CopySamples
	// how many timed copies its median is taken over.
	CopyBytes   int64
	CopySamples int
	// HealthTolerance is how far a later copy measurement may drift from the run's first before run-health
	// says degraded (0.03: 3%).
	HealthTolerance float64
}

// PolicyFor returns the measurement policy of a device.
//
// GPU (design §7): cold L2 for every launch — a flush of max(2 × L2, 128 MiB) — and 200 ms of warm-up; copy
// measured on 1 GiB.
//
// CPU: hot, back-to-back launches and 20 ms of warm-up per case. The CPU grid is sized so the whole suite runs
// in under a minute, so its tensors (1–8 MiB) live in L2/L3 and a flush would cost more than the launch it
// precedes; the CPU numbers compare implementations, not DRAM. copy-gbps is still measured out of cache, on
// 256 MiB, so pct-copy above 100 on the CPU means "faster than a DRAM-bound copy", which cached data can be.
func PolicyFor(d Device) Policy {
	if d.Kind == "cpu" {
		return Policy{Warmup: 20 * time.Millisecond, CopyBytes: 256 << 20, CopySamples: 7, HealthTolerance: 0.03}
	}
	return Policy{
		Warmup:          200 * time.Millisecond,
		Timing:          Timing{FlushBytes: max(2*d.CacheBytes, 128<<20)},
		CopyBytes:       1 << 30,
		CopySamples:     20,
		HealthTolerance: 0.03,
	}
}

// Suite is one benchmark run on one backend: the device, its policy and grid, and the copy bandwidth every
// benchmark is judged against. TestMain makes one, calls Start before the benchmarks and Finish after them;
// each Benchmark function calls Bench with its family.
type Suite struct {
	Backend  Backend
	Device   Device
	Policy   Policy
	Grid     []Shape
	CopyGBps float64 // measured by Start
	Out      io.Writer

	copy *caseState // the copy-bandwidth buffers, from the first MeasureCopy to Finish
}

// NewSuite returns the suite for a backend, with the policy and grid of its device kind, printing to out.
func NewSuite(be Backend, out io.Writer) *Suite {
	d := be.Device()
	return &Suite{Backend: be, Device: d, Policy: PolicyFor(d), Grid: Grids[d.Kind], Out: out}
}

// unitLines declare the direction of the suite's own metrics (design §2); ns/op is the go test default.
var unitLines = []string{
	"Unit GB/s better=higher",
	"Unit pct-copy better=higher",
	"Unit p99-ns better=lower",
	"Unit scratch-B better=lower assume=exact",
}

// Start measures the copy bandwidth and prints the run's config and Unit lines; call it before any benchmark.
func (s *Suite) Start() error {
	gbps, err := s.MeasureCopy()
	if err != nil {
		return err
	}
	s.CopyGBps = gbps
	for _, l := range s.Device.ConfigLines() {
		fmt.Fprintln(s.Out, l)
	}
	fmt.Fprintf(s.Out, "copy-gbps: %.1f\n", gbps)
	for _, l := range unitLines {
		fmt.Fprintln(s.Out, l)
	}
	return nil
}

// Finish measures the copy bandwidth again, prints copy-gbps-end and the whole run's run-health, and frees
// the copy buffers. Coming
// after the last result, these lines are attached to no result by a benchfmt reader; they are the file's
// summary for people and tools that read the file whole. The run-health that comparisons see is the one
// checkHealth prints before each family.
func (s *Suite) Finish() error {
	gbps, err := s.MeasureCopy()
	if s.copy != nil {
		s.copy.release()
		s.copy = nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "copy-gbps-end: %.1f\n", gbps)
	fmt.Fprintf(s.Out, "run-health: %s\n", RunHealth(s.CopyGBps, gbps, s.Policy.HealthTolerance))
	return nil
}

// checkHealth measures the copy again and prints run-health, comparing it with the copy at the start of the
// run, as a config line that applies to the results after it.
//
// Why before every family: a benchfmt reader attaches config lines only to the results that follow them, so a
// single check printed at the end would reach no result, and one printed before the last family would leave
// the earlier families unmarked. Checked before each family, every result carries the state of the machine
// up to the start of its family; what happens during the last family is in Finish's summary only. (Two
// copies back to back at the start would measure the copy's own noise, not drift.)
func (s *Suite) checkHealth() error {
	gbps, err := s.MeasureCopy()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "run-health: %s\n", RunHealth(s.CopyGBps, gbps, s.Policy.HealthTolerance))
	return nil
}

// RunHealth is "ok" when the copy bandwidths at the start and the end of a run differ by at most tol
// (relative to the start), else "degraded".
func RunHealth(start, end, tol float64) string {
	if math.Abs(end-start) <= tol*start {
		return "ok"
	}
	return "degraded"
}

// MeasureCopy times the suite's own copy kernel (CopyFamily, fused, fp32) on Policy.CopyBytes and returns its
// median bandwidth in GB/s, counting the bytes read and written. The buffers are allocated on the first call
// and kept until Finish, so that every measurement of a run copies the same, already-mapped memory.
func (s *Suite) MeasureCopy() (float64, error) {
	if s.copy == nil {
		const cols = 4096
		c := Case{DType: FP32, Shape: Shape{Rows: int(max(1, s.Policy.CopyBytes/4/cols)), Cols: cols}}
		// A copy's speed does not depend on the values, so the source is filled on the device (every byte
		// 0xFF) rather than generated on the host and uploaded, which every run would pay for 1 GiB.
		st, err := s.alloc(CopyFamily, c, func(_ Operand, buf Buffer) error { return s.Backend.Poison(buf) })
		if err != nil {
			return 0, err
		}
		s.copy = st
		// Collect now: a collection started by these large allocations (host memory on the CPU backend) would
		// otherwise run concurrently with the timed copies and take a share of the cores.
		runtime.GC()
		l, err := st.launch(Fused)
		if err == nil { // first touch of the pages, clocks up
			_, err = s.Backend.Time(l, 2, s.Policy.Timing)
		}
		if err != nil {
			return 0, err
		}
	}
	l, err := s.copy.launch(Fused)
	if err != nil {
		return 0, err
	}
	ns, err := s.Backend.Time(l, s.Policy.CopySamples, s.Policy.Timing)
	if err != nil {
		return 0, err
	}
	return float64(CopyFamily.MinBytes(s.copy.c)) / median(ns), nil
}

// Bench prints the run-health config line (checkHealth), then sweeps family f over the suite's grid: one
// sub-benchmark per case and impl, named as in design §2. A case's buffers are set up once, on its first
// selected sub-benchmark, shared by its impls, and freed after.
func (s *Suite) Bench(b *testing.B, f *Family) {
	if s == nil || s.CopyGBps == 0 {
		b.Fatal("kernels: no suite: TestMain did not Start one")
	}
	if !s.Backend.Implements(f, Fused) && !s.Backend.Implements(f, Naive) {
		b.Skipf("kernels: %s: %s", f.Name, ErrNotImplemented)
	}
	if err := s.checkHealth(); err != nil {
		b.Fatal(err)
	}
	for _, c := range f.Cases(s.Grid) {
		var st *caseState
		for _, impl := range Impls {
			b.Run(f.BenchName(c, impl), func(b *testing.B) {
				if !s.Backend.Implements(f, impl) {
					b.Skipf("kernels: %s %s: %s", f.Name, impl, ErrNotImplemented)
				}
				if st == nil {
					var err error
					if st, err = s.prepare(f, c, nil); err != nil {
						b.Fatal(err)
					}
				}
				l, err := st.launch(impl)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.measure(b, f, c, l, st.warm[impl]); err != nil {
					b.Fatal(err)
				}
				st.warm[impl] = true
			})
		}
		if st != nil {
			st.release()
		}
	}
}

// measure warms l up (unless this case and impl already ran in this process), takes b.N samples and reports
// the metrics: ns/op (median), p99-ns, GB/s (MinBytes / median), pct-copy and scratch-B.
func (s *Suite) measure(b *testing.B, f *Family, c Case, l Launch, warm bool) error {
	if !warm {
		start := time.Now()
		for n := 3; ; n *= 2 {
			if _, err := s.Backend.Time(l, n, s.Policy.Timing); err != nil {
				return err
			}
			if time.Since(start) >= s.Policy.Warmup {
				break
			}
		}
	}
	b.ResetTimer()
	ns, err := s.Backend.Time(l, b.N, s.Policy.Timing)
	b.StopTimer()
	if err != nil {
		return err
	}
	med := median(ns)
	gbps := float64(f.MinBytes(c)) / med
	b.ReportMetric(med, "ns/op")
	b.ReportMetric(percentile(ns, 0.99), "p99-ns")
	b.ReportMetric(gbps, "GB/s")
	b.ReportMetric(100*gbps/s.CopyGBps, "pct-copy")
	b.ReportMetric(float64(l.ScratchBytes()), "scratch-B")
	return nil
}

// caseState is one case's buffers on the device and a launch per impl.
type caseState struct {
	s        *Suite
	f        *Family
	c        Case
	in, out  []Buffer
	launches map[Impl]Launch
	warm     map[Impl]bool
}

// prepare allocates and fills a case's inputs (with gen for every input when non-nil, else each operand's own
// generator, seeded from the case so that runs see the same data) and allocates its outputs.
func (s *Suite) prepare(f *Family, c Case, gen func(*rand.Rand, Case, []float32)) (*caseState, error) {
	h := fnv.New64a()
	fmt.Fprint(h, f.Name, f.BenchName(c, ""))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x6b65726e656c73))
	return s.alloc(f, c, func(o Operand, buf Buffer) error {
		host := make([]float32, buf.Len())
		g := gen
		if g == nil {
			g = o.Gen
		}
		g(rng, c, host)
		return s.Backend.Upload(buf, host)
	})
}

// alloc allocates a case's buffers, filling each input with fill, in the order of f.Inputs.
func (s *Suite) alloc(f *Family, c Case, fill func(Operand, Buffer) error) (*caseState, error) {
	st := &caseState{s: s, f: f, c: c, launches: map[Impl]Launch{}, warm: map[Impl]bool{}}
	for _, o := range f.Inputs {
		buf, err := s.Backend.Alloc(o.Type(c), o.Len(c))
		if err == nil {
			st.in = append(st.in, buf)
			err = fill(o, buf)
		}
		if err != nil {
			st.release()
			return nil, err
		}
	}
	for _, o := range f.Outputs {
		buf, err := s.Backend.Alloc(o.Type(c), o.Len(c))
		if err != nil {
			st.release()
			return nil, err
		}
		st.out = append(st.out, buf)
	}
	return st, nil
}

// launch returns the case's launch for impl, preparing it on first use.
func (st *caseState) launch(impl Impl) (Launch, error) {
	if l, ok := st.launches[impl]; ok {
		return l, nil
	}
	l, err := st.s.Backend.Prepare(st.f, impl, st.c, st.in, st.out)
	if err != nil {
		return nil, err
	}
	st.launches[impl] = l
	return l, nil
}

func (st *caseState) release() {
	for _, l := range st.launches {
		l.Release()
	}
	for _, b := range append(st.in, st.out...) {
		st.s.Backend.Free(b)
	}
}

// median is the middle sample (the mean of the two middle ones for an even count).
func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank p-quantile of x: the smallest sample with at least p of the samples at or below it.
func percentile(x []float64, p float64) float64 {
	s := slices.Sorted(slices.Values(x))
	k := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

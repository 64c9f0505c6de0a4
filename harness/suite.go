package harness

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/perf/benchmath"
)

// Policy is how a run measures: every benchmark of a device kind is timed the same way, and nothing about
// timing is decided anywhere else.
type Policy struct {
	// Warm-up, before a case's first sample in a process: launches one at a time until two consecutive ones
	// agree within WarmupSteady (relative), at least WarmupMin of them, or until WarmupMax has passed.
	WarmupMin    int
	WarmupSteady float64
	WarmupMax    time.Duration
	// Timing is the cache treatment of each timed launch.
	Timing Timing
	// Adaptive sampling (see PolicyFor): when Adaptive and -benchtime is 1x, a sample takes launches until
	// the median's confidence interval (Confidence, order statistics) has a relative half-width of at most
	// TargetCI, with at least MinLaunches launches and MinTimed of summed launch time, and at most
	// MaxLaunches launches or MaxTime of wall time. Otherwise a sample is exactly b.N launches.
	Adaptive                 bool
	TargetCI, Confidence     float64
	MinLaunches, MaxLaunches int
	MinTimed, MaxTime        time.Duration
	// Hot figure: a case whose cold median is under HotBelow is also timed hot, as HotSamples batches of
	// HotRepeat back-to-back launches between one event pair, and reports their median as hot-ns.
	HotBelow              time.Duration
	HotSamples, HotRepeat int
	// CopyBytes is the size of the buffer the copy-bandwidth reference (copy-gbps) is measured on, CopySamples
	// how many timed copies its median is taken over.
	CopyBytes   int64
	CopySamples int
	// HealthTolerance is how far a later copy measurement may drift from the run's first before run-health
	// says degraded (0.03: 3%).
	HealthTolerance float64
	// HealthEvery is how old the last copy measurement may be for a family's run-health line to reuse it
	// instead of copying again; 0 measures before every family.
	HealthEvery time.Duration
}

// PolicyFor returns the measurement policy of a device.
//
// GPU (design §7): cold L2 for every timed launch — a flush of max(2 × L2, 128 MiB) — each launch timed by
// its own pair of events, launches queued in batches and released together so that no host latency falls
// inside a sample. One result line is one sample, and its iteration count is the number of launches its
// median (ns/op) was taken over:
//
//   - warm-up: launches until two consecutive ones agree within 2% (at least 3, at most 200 ms) — what the
//     first launch pays (first touch of fresh buffers, module code) is over after it, and the clocks are up
//     from the copy reference;
//   - adaptive sampling, in the spirit of nvbench's stopping criterion: at least 10 launches and 5 ms of
//     launch time, then more (the count doubling) until the 95% confidence interval of the median, from order
//     statistics (benchmath's AssumeNothing), is within ±0.5% of it; at most 300 launches or 250 ms. A
//     kernel that stops at the cap is noisier than 0.5% (the launch-bound decode shapes: their hot figure
//     is the steady one), and its line says how many launches it took. With -benchtime Nx (N > 1) a sample
//     is exactly N launches instead, as go test means it;
//   - kernels under 20 µs (decode shapes: launch-bound, a few percent apart between processes when cold)
//     also get hot-ns: the median over 21 batches of the mean of 50 back-to-back launches (no flush, queued
//     before they start, so the GPU runs them without host gaps, as a CUDA graph would);
//     benchmarks.yaml gates them on whichever figure is steadier;
//   - copy measured on 1 GiB, 20 copies.
//
// Measured on an H100 (2026-11-25, the whole suite of 280 benchmarks in one process): 14.8 s with 3-launch
// warm-up groups, 2 ms and 2000 launches; the decode shapes hit the launch cap, and their flushes and
// queueing were a third of the process — hence 300 launches.
//
// CPU: hot, back-to-back launches, b.N of them (go test's -benchtime decides), and warm-up until steady as
// above, at most 20 ms per case. The CPU grid is sized so the whole suite runs in under a minute, so its
// tensors (1–8 MiB) live in L2/L3 and a flush would cost more than the launch it precedes; the CPU numbers
// compare implementations, not DRAM. copy-gbps is still measured out of cache, on 256 MiB, so pct-copy above
// 100 on the CPU means "faster than a DRAM-bound copy", which cached data can be. A CPU launch is timed by the
// process's CPU time, not the wall clock, wherever the system has that clock (CPU.SetTimer, the cpu-timer
// config line): on a shared runner the wall clock counts the time other processes hold the cores.
func PolicyFor(d Device) Policy {
	if d.Kind == "cpu" {
		return Policy{WarmupMin: 3, WarmupSteady: 0.02, WarmupMax: 20 * time.Millisecond,
			CopyBytes: 256 << 20, CopySamples: 7, HealthTolerance: 0.03, HealthEvery: 2 * time.Second}
	}
	return Policy{
		WarmupMin: 3, WarmupSteady: 0.02, WarmupMax: 200 * time.Millisecond,
		Timing:   Timing{FlushBytes: max(2*d.CacheBytes, 128<<20)},
		Adaptive: true, TargetCI: 0.005, Confidence: 0.95,
		MinLaunches: 10, MaxLaunches: 300, MinTimed: 5 * time.Millisecond, MaxTime: 250 * time.Millisecond,
		HotBelow: 20 * time.Microsecond, HotSamples: 21, HotRepeat: 50,
		CopyBytes: 1 << 30, CopySamples: 20, HealthTolerance: 0.03,
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
	// MMATFLOPS is the device's dense bf16 tensor-core rate (mma.sync, fp32 accumulation) measured by Start,
	// the yardstick of pct-mma; 0 where the backend cannot measure one (the CPU, GPUs before sm_80).
	MMATFLOPS float64
	// RunPending makes the GPU benchmarks run families whose GPU code is still pending (Family.Pending) and
	// measure the tensor-core yardstick while its probe is (mmaPending).
	RunPending bool
	Out        io.Writer
	// Costs is where the run's time went, printed by Finish as the costs line (see Costs).
	Costs Costs

	copy *CaseBuffers // the copy-bandwidth buffers, from the first MeasureCopy to Finish
	// lastCopy and lastCopyAt are the latest copy measurement and when it ended (checkHealth).
	lastCopy   float64
	lastCopyAt time.Time
	// lastCode is the last CodeKey value printed (printCode); "" before the first.
	lastCode string
	// vendorOn: the run measures pct-cublas (vendor.go), whose reference times are vendorNs, by case.
	vendorOn bool
	vendorNs map[string]float64
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
	"Unit hot-ns better=lower",
	"Unit TFLOP/s better=higher",
	"Unit pct-mma better=higher",
	"Unit pct-cublas better=higher",
}

// mmaProber is a backend that can measure its tensor cores: MeasureMMA times a kernel that does nothing but
// dense bf16 mma.sync with fp32 accumulation from registers (no memory traffic) and returns TFLOP/s, or an
// error wrapping ErrNotImplemented where the device has no such instruction; PeakMMA is the theoretical rate
// from a table in code (SMs × clock × dense bf16 FLOP per SM per clock) and how it was computed, 0 when the
// device is not in the table.
type mmaProber interface {
	MeasureMMA() (float64, error)
	PeakMMA() (tflops float64, how string)
}

// Start measures the copy bandwidth and prints the run's config and Unit lines; call it before any benchmark.
func (s *Suite) Start() error {
	gbps, err := s.MeasureCopy()
	if err != nil {
		return err
	}
	s.CopyGBps, s.lastCopy, s.lastCopyAt = gbps, gbps, time.Now()
	for _, l := range s.Device.ConfigLines() {
		fmt.Fprintln(s.Out, l)
	}
	fmt.Fprintf(s.Out, "copy-gbps: %.1f\n", gbps)
	if p, ok := s.Backend.(mmaProber); ok && (mmaPending == "" || s.RunPending) {
		start := time.Now()
		tf, err := p.MeasureMMA()
		s.Costs.charge(&s.Costs.Copy, start)
		switch {
		case err == nil:
			s.MMATFLOPS = tf
			fmt.Fprintf(s.Out, "mma-tflops: %.1f\n", tf)
		case errors.Is(err, ErrNotImplemented):
			fmt.Fprintf(s.Out, "mma-tflops: none (%v)\n", err)
		default:
			return err
		}
		if peak, how := p.PeakMMA(); peak > 0 {
			fmt.Fprintf(s.Out, "mma-peak-tflops: %.1f (%s)\n", peak, how)
		}
	}
	if err := s.startWGMMA(); err != nil {
		return err
	}
	s.startVendor()
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
	s.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "copy-gbps-end: %.1f\n", gbps)
	fmt.Fprintf(s.Out, "run-health: %s\n", runHealth(s.CopyGBps, gbps, s.Policy.HealthTolerance))
	fmt.Fprintln(s.Out, s.Costs.Line())
	return nil
}

// Close frees the copy-bandwidth buffers (MeasureCopy) without printing anything: for a suite that a test or
// tool opened to measure the copy and never Finishes.
func (s *Suite) Close() {
	if s.copy != nil {
		s.copy.Release()
		s.copy = nil
	}
}

// checkHealth measures the copy again and prints run-health, comparing it with the copy at the start of the
// run, as a config line that applies to the results after it.
//
// Why before every family: a benchfmt reader attaches config lines only to the results that follow them, so a
// single check printed at the end would reach no result, and one printed before the last family would leave
// the earlier families unmarked. Checked before each family, every result carries the state of the machine
// up to the start of its family; what happens during the last family is in Finish's summary only. (Two
// copies back to back at the start would measure the copy's own noise, not drift.) A measurement younger than
// Policy.HealthEvery is reused: on the CPU, where the main job's families take a fraction of a second each and
// a copy of 256 MiB seven times about as long, measuring before each of 16 families in 20 processes was half
// of the check.
func (s *Suite) checkHealth() error {
	if s.Policy.HealthEvery == 0 || s.lastCopyAt.IsZero() || time.Since(s.lastCopyAt) >= s.Policy.HealthEvery {
		gbps, err := s.MeasureCopy()
		if err != nil {
			return err
		}
		s.lastCopy, s.lastCopyAt = gbps, time.Now()
	}
	fmt.Fprintf(s.Out, "run-health: %s\n", runHealth(s.CopyGBps, s.lastCopy, s.Policy.HealthTolerance))
	return nil
}

// runHealth is "ok" when the copy bandwidths at the start and the end of a run differ by at most tol
// (relative to the start), else "degraded".
func runHealth(start, end, tol float64) string {
	if math.Abs(end-start) <= tol*start {
		return "ok"
	}
	return "degraded"
}

// MeasureCopy times the suite's own copy kernel (CopyFamily, fused, fp32) on Policy.CopyBytes and returns its
// median bandwidth in GB/s, counting the bytes read and written. The buffers are allocated on the first call
// and kept until Finish (or Close), so that every measurement of a run copies the same, already-mapped memory.
func (s *Suite) MeasureCopy() (float64, error) {
	defer s.Costs.charge(&s.Costs.Copy, time.Now())
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
	return float64(CopyFamily.MinBytes(s.copy.c)) / Median(ns), nil
}

// Bench prints the run-health config line (checkHealth) before the family's first selected case, and sweeps
// family f over the suite's grid (or its own, Family.Grid): one sub-benchmark per case and impl, named as in
// design §2. A case's buffers are set up once, on its first selected sub-benchmark, shared by its impls, and
// freed after. A family whose GPU code is pending (Family.Pending) is skipped on a GPU unless the run asks.
func (s *Suite) Bench(b *testing.B, f *Family) {
	if s == nil || s.CopyGBps == 0 {
		b.Fatal("harness: no suite: TestMain did not Start one (harness.Main)")
	}
	if !s.Backend.Implements(f, Fused) && !s.Backend.Implements(f, Naive) {
		b.Skipf("harness: %s: %s", f.Name, ErrNotImplemented)
	}
	if f.Pending != "" && s.Device.Kind != "cpu" && !s.RunPending {
		b.Skipf("harness: %s: pending: %s (-kernels.pending runs it)", f.Name, f.Pending)
	}
	// The health check and the family's modules wait for its first selected sub-benchmark: a run that selects
	// none of the family's cases (-test.bench naming others) pays for neither. go test calls that first body
	// once with b.N = 1 before it prints the sub-benchmark's name, so the config line lands before the result.
	ready := false
	start := func(b *testing.B) {
		if ready {
			return
		}
		ready = true
		if err := s.checkHealth(); err != nil {
			b.Fatal(err)
		}
		if ml, ok := s.Backend.(moduleLoader); ok {
			start := time.Now()
			err := ml.Load(f)
			s.Costs.charge(&s.Costs.Modules, start)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range f.CasesOn(s.Device.Kind, s.Grid) {
		var st *CaseBuffers
		for _, impl := range Impls {
			coded := false
			b.Run(f.BenchName(c, impl), func(b *testing.B) {
				if !s.Backend.Implements(f, impl) {
					b.Skipf("harness: %s %s: %s", f.Name, impl, ErrNotImplemented)
				}
				if f.Skip != nil {
					if why := f.Skip(c, impl); why != "" {
						b.Skipf("harness: %s %s: %s", f.Name, impl, why)
					}
				}
				start(b)
				if st == nil {
					var err error
					if st, err = s.Buffers(f, c, nil); err != nil {
						b.Fatal(err)
					}
				}
				l, err := st.launch(impl)
				if errors.Is(err, ErrNotImplemented) { // a kernel this device cannot run (tensor cores before sm_80)
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				if !coded { // the first body, before go test prints the name: the line lands before the result
					coded = true
					s.printCode(l)
				}
				if err := s.measure(b, f, c, l, st.warm[impl]); err != nil {
					b.Fatal(err)
				}
				st.warm[impl] = true
			})
		}
		if st != nil {
			st.Release()
		}
	}
}

// adaptive reports whether this run samples adaptively: the policy says so and go test asked for one
// iteration (-benchtime 1x), which on such a device means "one sample, as many launches as it needs".
func (s *Suite) adaptive() bool {
	if !s.Policy.Adaptive {
		return false
	}
	bt := flag.Lookup("test.benchtime")
	return bt != nil && bt.Value.String() == "1x"
}

// measure warms l up (unless this case and impl already ran in this process), takes one sample — adaptively
// (Policy) or of exactly b.N launches — and reports the metrics: ns/op (the median launch), p99-ns, GB/s
// (MinBytes / median), pct-copy, scratch-B, for families that declare Flops TFLOP/s and pct-mma (against
// Suite.MMATFLOPS), and, for kernels under Policy.HotBelow, hot-ns. An adaptive
// sample sets b.N to its launch count, which go test prints as the iteration count.
func (s *Suite) measure(b *testing.B, f *Family, c Case, l Launch, warm bool) error {
	b.StopTimer()
	if !warm {
		if err := s.warmUp(l); err != nil {
			return err
		}
	}
	b.ResetTimer()
	b.StartTimer()
	start, flush0 := time.Now(), s.flushTime()
	var ns []float64
	var err error
	if s.adaptive() {
		ns, err = s.sample(l)
	} else {
		ns, err = s.timed(l, b.N, s.Policy.Timing)
	}
	b.StopTimer()
	s.Costs.charge(&s.Costs.Sampling, start)
	s.Costs.Flush += s.flushTime() - flush0
	if err != nil {
		return err
	}
	if s.adaptive() {
		b.N = len(ns)
	}
	med := Median(ns)
	gbps := float64(f.MinBytes(c)) / med
	b.ReportMetric(med, "ns/op")
	b.ReportMetric(percentile(ns, 0.99), "p99-ns")
	b.ReportMetric(gbps, "GB/s")
	b.ReportMetric(100*gbps/s.CopyGBps, "pct-copy")
	b.ReportMetric(float64(l.ScratchBytes()), "scratch-B")
	if f.Flops != nil {
		tflops := f.Flops(c) / med / 1e3 // FLOP per ns = GFLOP/s
		b.ReportMetric(tflops, "TFLOP/s")
		if s.MMATFLOPS > 0 {
			b.ReportMetric(100*tflops/s.MMATFLOPS, "pct-mma")
		}
	}
	if err := s.reportVendor(b, f, c, med); err != nil {
		return err
	}
	if s.wantsHot(f, c, med) {
		start := time.Now()
		hot, err := s.timed(l, s.Policy.HotSamples, Timing{Repeat: s.Policy.HotRepeat})
		s.Costs.charge(&s.Costs.Sampling, start)
		if err != nil {
			return err
		}
		b.ReportMetric(Median(hot), "hot-ns")
	}
	return nil
}

// wantsHot is whether case c, of cold median med ns, also gets the hot figure: never without one in the policy
// (HotBelow 0), else as the family's Hot says, else when med is under Policy.HotBelow.
func (s *Suite) wantsHot(f *Family, c Case, med float64) bool {
	switch {
	case s.Policy.HotBelow <= 0:
		return false
	case f.Hot != nil:
		return f.Hot(c)
	}
	return med < float64(s.Policy.HotBelow.Nanoseconds())
}

// flushTime is the backend's cache-flush time so far (0 when it does not measure it).
func (s *Suite) flushTime() time.Duration {
	if ft, ok := s.Backend.(flushTimer); ok {
		return ft.FlushTime()
	}
	return 0
}

// timed is Backend.Time, with the launch time it measured added to Costs.Timed (the wall time of the launches
// where the samples are CPU time).
func (s *Suite) timed(l Launch, n int, t Timing) ([]float64, error) {
	if lw, ok := s.Backend.(launchWaller); ok {
		before := lw.LaunchWall()
		ns, err := s.Backend.Time(l, n, t)
		s.Costs.Timed += lw.LaunchWall() - before
		return ns, err
	}
	ns, err := s.Backend.Time(l, n, t)
	for _, v := range ns {
		s.Costs.Timed += time.Duration(v * float64(max(t.Repeat, 1)))
	}
	return ns, err
}

// warmUp runs l, one launch at a time, until two consecutive launches agree within Policy.WarmupSteady
// (relative), at least WarmupMin launches, or until WarmupMax has passed.
func (s *Suite) warmUp(l Launch) error {
	defer s.Costs.charge(&s.Costs.Warmup, time.Now())
	p := s.Policy
	deadline := time.Now().Add(p.WarmupMax)
	prev := math.NaN()
	for n := 1; ; n++ {
		ns, err := s.Backend.Time(l, 1, p.Timing)
		if err != nil {
			return err
		}
		if n >= p.WarmupMin && math.Abs(ns[0]-prev) <= p.WarmupSteady*prev || !time.Now().Before(deadline) {
			return nil
		}
		prev = ns[0]
	}
}

// sample takes one adaptive sample of l (Policy): batches of launches, the count doubling, until the median's
// confidence interval is narrow enough or a cap is reached.
func (s *Suite) sample(l Launch) ([]float64, error) {
	p := s.Policy
	deadline := time.Now().Add(p.MaxTime)
	var ns []float64
	var timed float64
	batch := p.MinLaunches
	for {
		got, err := s.timed(l, batch, p.Timing)
		if err != nil {
			return nil, err
		}
		ns = append(ns, got...)
		for _, v := range got {
			timed += v
		}
		if len(ns) >= p.MaxLaunches || !time.Now().Before(deadline) {
			return ns, nil
		}
		if len(ns) >= p.MinLaunches && timed >= float64(p.MinTimed.Nanoseconds()) && medianCIWithin(ns, p.Confidence, p.TargetCI) {
			return ns, nil
		}
		batch = len(ns) // double
		if need := float64(p.MinTimed.Nanoseconds()) - timed; need > 0 {
			// Far below the minimum launch time (short kernels): jump there in one batch.
			batch = max(batch, int(need/(timed/float64(len(ns))))+1)
		}
		batch = min(batch, p.MaxLaunches-len(ns))
	}
}

// medianCIWithin reports whether the order-statistic confidence interval of the median of ns (benchmath's
// AssumeNothing summary) lies within ±rel of the median.
func medianCIWithin(ns []float64, confidence, rel float64) bool {
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(ns), &benchmath.DefaultThresholds), confidence)
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) || !(sum.Center > 0) {
		return false
	}
	return (sum.Hi-sum.Lo)/2 <= rel*sum.Center
}

// CaseBuffers are one case's buffers on a suite's backend, inputs filled (Suite.Buffers), and a launch per
// impl, prepared on first use.
type CaseBuffers struct {
	In, Out  []Buffer // following the family's Inputs and Outputs
	s        *Suite
	f        *Family
	c        Case
	launches map[Impl]Launch
	warm     map[Impl]bool
}

// Buffers allocates the buffers of case c of family f and fills its inputs as the benchmarks do, so that runs
// see the same data: with gen for every input when non-nil (host values, uploaded), else from each operand's
// distribution — filled in place by the backend (Backend.Fill, no host copy) from a seed that is a function
// of the case and operand, or for a distribution that cannot be filled in place sampled on the host from a
// generator seeded the same way. Tests and tuning tools use it to time launches of their own on the same
// inputs; Release frees the buffers.
func (s *Suite) Buffers(f *Family, c Case, gen Generator) (*CaseBuffers, error) {
	defer s.Costs.charge(&s.Costs.Inputs, time.Now())
	h := fnv.New64a()
	fmt.Fprint(h, f.Name, f.BenchName(c, ""))
	base := h.Sum64()
	k := 0
	return s.alloc(f, c, func(o Operand, buf Buffer) error {
		seed := mix64(base + uint64(k))
		k++
		if gen == nil && o.Gen.InPlace() {
			return s.Backend.Fill(buf, o.Gen, c, seed)
		}
		host := make([]float32, buf.Len())
		rng := rand.New(rand.NewPCG(seed, 0x6b65726e656c73))
		if gen != nil {
			gen(rng, c, host)
		} else {
			o.Gen.Sample(rng, c, host)
		}
		return s.Backend.Upload(buf, host)
	})
}

// alloc allocates a case's buffers, filling each input with fill, in the order of f.Inputs.
func (s *Suite) alloc(f *Family, c Case, fill func(Operand, Buffer) error) (*CaseBuffers, error) {
	st := &CaseBuffers{s: s, f: f, c: c, launches: map[Impl]Launch{}, warm: map[Impl]bool{}}
	for _, o := range f.Inputs {
		buf, err := s.Backend.Alloc(o.Type(c), o.Len(c))
		if err == nil {
			st.In = append(st.In, buf)
			err = fill(o, buf)
		}
		if err != nil {
			st.Release()
			return nil, err
		}
	}
	for _, o := range f.Outputs {
		buf, err := s.Backend.Alloc(o.Type(c), o.Len(c))
		if err != nil {
			st.Release()
			return nil, err
		}
		st.Out = append(st.Out, buf)
	}
	return st, nil
}

// launch returns the case's launch for impl, preparing it on first use.
func (st *CaseBuffers) launch(impl Impl) (Launch, error) {
	if l, ok := st.launches[impl]; ok {
		return l, nil
	}
	defer st.s.Costs.charge(&st.s.Costs.Inputs, time.Now())
	l, err := st.s.Backend.Prepare(st.f, impl, st.c, st.In, st.Out)
	if err != nil {
		return nil, err
	}
	st.launches[impl] = l
	return l, nil
}

// Release frees the buffers and the launches prepared on them.
func (st *CaseBuffers) Release() {
	for _, l := range st.launches {
		l.Release()
	}
	for _, b := range append(st.In, st.Out...) {
		st.s.Backend.Free(b)
	}
}

// Median is the middle sample (the mean of the two middle ones for an even count): the figure ns/op reports
// of a sample's launch times, for tools that time launches themselves.
func Median(x []float64) float64 {
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

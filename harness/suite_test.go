package harness

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/group"
)

func TestCPUClass(t *testing.T) {
	if d := NewCPU(1).Device(); !regexp.MustCompile(`^cpu-[a-z0-9]+-[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(d.Class) {
		t.Errorf("cpu class %q", d.Class)
	}
}

func TestRunHealth(t *testing.T) {
	for _, tc := range []struct {
		start, end float64
		want       string
	}{
		{100, 100, "ok"}, {100, 97.5, "ok"}, {100, 102.9, "ok"}, {100, 96.9, "degraded"}, {100, 103.1, "degraded"},
	} {
		if got := runHealth(tc.start, tc.end, 0.03); got != tc.want {
			t.Errorf("runHealth(%v, %v) = %s, want %s", tc.start, tc.end, got, tc.want)
		}
	}
}

func TestMedianPercentile(t *testing.T) {
	x := []float64{5, 1, 4, 2, 3}
	if m := Median(x); m != 3 {
		t.Errorf("median = %v", m)
	}
	if m := Median(x[:4]); m != 3 { // 1 2 4 5
		t.Errorf("median of four = %v", m)
	}
	var h []float64
	for i := 200; i >= 1; i-- {
		h = append(h, float64(i))
	}
	if p := percentile(h, 0.99); p != 198 {
		t.Errorf("p99 of 1…200 = %v, want 198", p)
	}
	if p := percentile([]float64{7}, 0.99); p != 7 {
		t.Errorf("p99 of one sample = %v", p)
	}
}

// TestGrids checks the grids against the issue: GPU rows·cols in 2^26 … 2^28 with cols 256 … 262144 plus one
// decode shape (rows ≤ 64); CPU rows·cols at most 2^20 with cols 256 … 65536 plus a decode shape.
func TestGrids(t *testing.T) {
	for kind, lim := range map[string]struct{ minSize, maxSize, minCols, maxCols int }{
		"cuda": {1 << 26, 1 << 28, 256, 262144},
		"cpu":  {1 << 18, 1 << 20, 256, 65536},
	} {
		decode, minCols, maxCols := 0, 1<<62, 0
		for _, s := range Grids[kind] {
			minCols, maxCols = min(minCols, s.Cols), max(maxCols, s.Cols)
			switch n := s.Rows * s.Cols; {
			case s.Rows <= 64 && n < lim.minSize:
				decode++
			case n < lim.minSize || n > lim.maxSize:
				t.Errorf("%s grid: %v has %d elements", kind, s, n)
			}
		}
		if decode != 1 || minCols != lim.minCols || maxCols != lim.maxCols {
			t.Errorf("%s grid: %d decode shapes, cols %d … %d", kind, decode, minCols, maxCols)
		}
	}
}

// TestHarnessMetrics runs the harness's measurement once (-benchtime=1x) and checks that it reports every
// metric, with scratch-B the exact size of the naive implementation's intermediate.
func TestHarnessMetrics(t *testing.T) {
	benchtime1x(t)
	be := NewCPU(2)
	defer be.Close()
	s := NewSuite(be, io.Discard)
	s.CopyGBps = 10
	s.Policy.WarmupMax = 0
	c := Case{DType: FP32, Shape: Shape{4, 256}}
	// The naive scaling's intermediate: the 4×256 input in fp32.
	const wantScratch = 4 * 1024
	for _, impl := range Impls {
		res := measureOnce(t, s, scaleFamily, c, impl)
		for _, unit := range []string{"ns/op", "p99-ns", "GB/s", "pct-copy"} {
			if !(res.Extra[unit] > 0) {
				t.Errorf("%s: %s = %v", impl, unit, res.Extra[unit])
			}
		}
		if want := map[Impl]float64{Fused: 0, Naive: wantScratch}[impl]; res.Extra["scratch-B"] != want {
			t.Errorf("%s: scratch-B = %v, want %v", impl, res.Extra["scratch-B"], want)
		}
		if got, want := res.Extra["pct-copy"], 100*res.Extra["GB/s"]/s.CopyGBps; got != want {
			t.Errorf("%s: pct-copy %v, want %v", impl, got, want)
		}
	}
}

// benchtime1x sets -test.benchtime to 1x (the adaptive policy's signal) until the test ends.
func benchtime1x(t *testing.T) {
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	if err := bt.Value.Set("1x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bt.Value.Set(old) })
}

// measureOnce prepares case c of family f on suite s, runs the harness's measurement of impl once as a
// benchmark and returns what it reported.
func measureOnce(t *testing.T, s *Suite, f *Family, c Case, impl Impl) testing.BenchmarkResult {
	t.Helper()
	st, err := s.Buffers(f, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	var runErr error
	res := testing.Benchmark(func(b *testing.B) {
		l, err := st.launch(impl)
		if err == nil {
			err = s.measure(b, f, c, l, false)
		}
		runErr = err
	})
	if runErr != nil {
		t.Fatal(runErr)
	}
	return res
}

// TestCPUTime checks the CPU clock: one positive sample per launch, hot or with a cache flush before each.
func TestCPUTime(t *testing.T) {
	be := NewCPU(2)
	defer be.Close()
	s := NewSuite(be, io.Discard)
	st, err := s.Buffers(CopyFamily, Case{DType: FP32, Shape: Shape{64, 1024}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	l, err := st.launch(Fused)
	if err != nil {
		t.Fatal(err)
	}
	for _, timing := range []Timing{{}, {FlushBytes: 4 << 20}} {
		ns, err := be.Time(l, 5, timing)
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 5 || slices.ContainsFunc(ns, func(v float64) bool { return !(v > 0) }) {
			t.Errorf("%+v: samples %v", timing, ns)
		}
	}
}

// sleeper is a launch that takes wall time but almost no CPU time.
type sleeper struct{ d time.Duration }

func (s sleeper) Run() error          { time.Sleep(s.d); return nil }
func (s sleeper) ScratchBytes() int64 { return 0 }
func (s sleeper) Release()            {}

// TestCPUTimers: the process-cpu timer does not count the time a launch waits without running (what a
// neighbour holding the cores looks like to the wall clock), the wall timer does; the cpu-timer config line
// says which one a run used, and a timer that does not exist is refused. The process's CPU time counts all of
// its threads, the garbage collector's too (a CI run once read 3 ms of CPU in two of three 3 ms naps), so the
// heap is collected first and the quietest of 5 samples is judged.
func TestCPUTimers(t *testing.T) {
	be := NewCPU(2)
	defer be.Close()
	if _, ok := processCPUTime(); !ok {
		if be.Device().Timer != TimerWall || be.SetTimer(TimerProcessCPU) == nil {
			t.Fatalf("no process CPU clock: timer %q, and process-cpu was accepted", be.Device().Timer)
		}
		t.Skip("no process CPU clock on this system")
	}
	const nap = 3 * time.Millisecond
	for _, tc := range []struct {
		timer string
		ok    func(ns float64) bool
	}{
		{TimerProcessCPU, func(ns float64) bool { return ns < float64(nap.Nanoseconds())/3 }},
		{TimerWall, func(ns float64) bool { return ns >= float64(nap.Nanoseconds()) }},
	} {
		if err := be.SetTimer(tc.timer); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		ns, err := be.Time(sleeper{nap}, 5, Timing{})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.ok(slices.Min(ns)) {
			t.Errorf("timer %s: a launch sleeping %v measured %v ns", tc.timer, nap, ns)
		}
		if lines := be.Device().ConfigLines(); !slices.Contains(lines, "cpu-timer: "+tc.timer) {
			t.Errorf("timer %s: config lines %q", tc.timer, lines)
		}
	}
	if be.LaunchWall() < 10*nap {
		t.Errorf("launch wall time %v for 10 launches of %v", be.LaunchWall(), nap)
	}
	if err := be.SetTimer("cycles"); err == nil || !strings.Contains(err.Error(), `"cycles"`) {
		t.Errorf("SetTimer(cycles): %v", err)
	}
}

// preparing records the impls a backend prepares.
type preparing struct {
	Backend
	impls []Impl
}

func (p *preparing) Prepare(f *Family, impl Impl, c Case, in, out []Buffer) (Launch, error) {
	p.impls = append(p.impls, impl)
	return p.Backend.Prepare(f, impl, c, in, out)
}

// TestBenchSkip: the harness prepares and measures no (case, impl) that the family's Skip names.
func TestBenchSkip(t *testing.T) {
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	if err := bt.Value.Set("1x"); err != nil {
		t.Fatal(err)
	}
	defer bt.Value.Set(old)
	cpu := NewCPU(1)
	defer cpu.Close()
	be := &preparing{Backend: cpu}
	s := NewSuite(be, io.Discard)
	s.Grid, s.Policy.CopyBytes, s.Policy.WarmupMax = []Shape{{2, 64}}, 1<<16, 0
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	f := *scaleFamily
	f.Skip = func(c Case, impl Impl) string {
		if impl == Naive && c.DType == BF16 {
			return "not this one"
		}
		return ""
	}
	testing.Benchmark(func(b *testing.B) { s.Bench(b, &f) })
	// The copy reference (Start), then fp32 fused and naive, then bf16 fused alone.
	if want := []Impl{Fused, Fused, Naive, Fused}; !slices.Equal(be.impls, want) {
		t.Errorf("prepared %v, want %v", be.impls, want)
	}
}

// TestHarnessComputeMetrics checks the compute-bound metrics: a family that declares Flops gets TFLOP/s
// (Flops / ns/op), and pct-mma against the suite's measured tensor-core rate only when there is one.
func TestHarnessComputeMetrics(t *testing.T) {
	benchtime1x(t)
	be := NewCPU(2)
	defer be.Close()
	f := *CopyFamily
	f.Flops = func(c Case) float64 { return 1e6 * float64(c.Rows) }
	c := Case{DType: FP32, Shape: Shape{64, 256}}
	for _, mma := range []float64{0, 0.5} {
		s := NewSuite(be, io.Discard)
		s.CopyGBps, s.MMATFLOPS = 10, mma
		s.Policy.WarmupMax = 0
		res := measureOnce(t, s, &f, c, Fused)
		want := 64e6 / res.Extra["ns/op"] / 1e3
		if got := res.Extra["TFLOP/s"]; math.Abs(got-want) > 1e-9*want || !(got > 0) {
			t.Errorf("mma %v: TFLOP/s %v, want %v", mma, got, want)
		}
		pct, ok := res.Extra["pct-mma"]
		switch {
		case mma == 0 && ok:
			t.Errorf("pct-mma %v reported with no measured tensor-core rate", pct)
		case mma > 0 && math.Abs(pct-100*want/mma) > 1e-9*pct:
			t.Errorf("pct-mma %v, want %v", pct, 100*want/mma)
		}
	}
	// A family without Flops reports neither.
	s := NewSuite(be, io.Discard)
	s.CopyGBps, s.MMATFLOPS = 10, 1
	s.Policy.WarmupMax = 0
	if res := measureOnce(t, s, CopyFamily, c, Fused); res.Extra["TFLOP/s"] != 0 || res.Extra["pct-mma"] != 0 {
		t.Errorf("Copy reported TFLOP/s or pct-mma: %v", res.Extra)
	}
}

// fakeMMA is a CPU backend that claims tensor cores, for the config lines Start prints.
type fakeMMA struct {
	Backend
	tflops float64
	err    error
}

func (f fakeMMA) MeasureMMA() (float64, error) { return f.tflops, f.err }
func (f fakeMMA) PeakMMA() (float64, string)   { return 989.4, "132 SMs × 1.83 GHz × 4096" }

// TestStartPrintsMMA checks the mma config lines: the measured rate and the table's peak; "none" with the
// reason on a device without the instruction; any other failure stops the run.
func TestStartPrintsMMA(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	for _, tc := range []struct {
		be      fakeMMA
		want    string
		wantErr bool
	}{
		{fakeMMA{cpu, 612.34, nil}, "mma-tflops: 612.3\nmma-peak-tflops: 989.4 (132 SMs × 1.83 GHz × 4096)\n", false},
		{fakeMMA{cpu, 0, fmt.Errorf("sm_75: %w", ErrNotImplemented)}, "mma-tflops: none (sm_75: not implemented on this backend)\n", false},
		{fakeMMA{cpu, 0, errors.New("launch failed")}, "", true},
	} {
		var out strings.Builder
		s := NewSuite(tc.be, &out)
		s.Policy.CopyBytes, s.Policy.CopySamples = 1<<20, 1
		s.RunPending = true // the probe is pending (mmaPending) until it has run on a GPU
		err := s.Start()
		if (err != nil) != tc.wantErr || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: err %v, output\n%s\nwant it to contain\n%s", tc.be.err, err, out.String(), tc.want)
		}
		if err == nil && s.MMATFLOPS != tc.be.tflops {
			t.Errorf("MMATFLOPS %v, want %v", s.MMATFLOPS, tc.be.tflops)
		}
		// Besides the machine's (device, gpu, gpu-driver, class) and what the CPU's samples measure (cpu-timer),
		// which results are only compared within,
		// the lines are measured afresh by each process: a key the comparator took for a benchmark's
		// configuration would split every comparison between processes (an A/A check on an H100 then
		// reported every benchmark as removed and added), so each must be one of regress's run keys.
		machine := []string{"device", "cpu-timer", "gpu", "gpu-driver", group.ClassKey}
		for _, l := range strings.Split(out.String(), "\n") {
			k, _, ok := strings.Cut(l, ": ")
			if ok && !strings.Contains(k, " ") && !slices.Contains(machine, k) && !slices.Contains(group.RunKeys, k) {
				t.Errorf("Start prints %q, which regress would take for the benchmarks' configuration (group.RunKeys)", l)
			}
		}
		if s.copy != nil {
			s.copy.Release()
		}
	}
	// While the probe is pending, a run that does not ask for pending code neither runs it nor prints its lines.
	defer func(old string) { mmaPending = old }(mmaPending)
	mmaPending = "not yet run on a GPU"
	{
		var out strings.Builder
		s := NewSuite(fakeMMA{cpu, 0, errors.New("the probe ran")}, &out)
		s.Policy.CopyBytes, s.Policy.CopySamples = 1<<20, 1
		if err := s.Start(); err != nil || strings.Contains(out.String(), "mma-") {
			t.Errorf("pending probe: err %v, output\n%s", err, out.String())
		}
		if s.copy != nil {
			s.copy.Release()
		}
	}
}

// gpuLike is the CPU backend presenting itself as a GPU, for what the harness does on GPUs only.
type gpuLike struct{ Backend }

func (g gpuLike) Device() Device {
	d := g.Backend.Device()
	d.Kind = "cuda"
	return d
}

// TestBenchSkipsPending checks that a GPU run skips a family whose GPU code is pending unless it asks for
// pending code, and runs it then; the CPU runs it either way.
func TestBenchSkipsPending(t *testing.T) {
	benchtime1x(t)
	cpu := NewCPU(2)
	defer cpu.Close()
	f := *scaleFamily
	f.Grid, f.DimKeys = map[string][][]int{"cuda": {{8, 8}}, "cpu": {{8, 8}}}, []string{"rows", "cols"}
	f.Pending = "not yet run on a GPU"
	for _, tc := range []struct {
		be         Backend
		runPending bool
		wantRun    bool
	}{{gpuLike{cpu}, false, false}, {gpuLike{cpu}, true, true}, {cpu, false, true}} {
		var out strings.Builder
		s := NewSuite(tc.be, &out)
		s.Policy = PolicyFor(cpu.Device())
		s.Policy.CopyBytes, s.Policy.CopySamples = 1<<20, 1
		s.CopyGBps, s.RunPending = 10, tc.runPending
		testing.Benchmark(func(b *testing.B) { s.Bench(b, &f) })
		// The family's first case prints its run-health line; a skipped family prints nothing.
		if ran := strings.Contains(out.String(), "run-health"); ran != tc.wantRun {
			t.Errorf("%s, RunPending %v: ran %v, want %v", tc.be.Device().Kind, tc.runPending, ran, tc.wantRun)
		}
		if s.copy != nil {
			s.copy.Release()
		}
	}
}

// TestFamilyHotDecides checks that a family's Hot, when set, decides which cases get hot-ns in place of the
// harness's rule (a cold median under Policy.HotBelow), in both directions; that the rule holds without it;
// and that a policy without a hot figure (HotBelow 0, the CPU's) gives none either way.
func TestFamilyHotDecides(t *testing.T) {
	const us = 1e3                                 // ns
	s := &Suite{Policy: Policy{HotBelow: 20 * us}} // a time.Duration: ns
	f := *scaleFamily
	// A family's own rule: hot for the short sequences, whatever their time.
	shortOnly := func(c Case) bool { return c.Dims[2] < 100 }
	short := Case{Dims: []int{32, 4, 60, 64}}
	long := Case{Dims: []int{1, 32, 4096, 128}}
	for _, tc := range []struct {
		hot  func(Case) bool
		c    Case
		med  float64
		want bool
	}{
		{nil, short, 19.9 * us, true},
		{nil, short, 20.1 * us, false}, // the rule flips on noise at the bound
		{shortOnly, short, 20.1 * us, true},
		{shortOnly, short, 19.9 * us, true},
		{shortOnly, long, 19.9 * us, false},
		{func(Case) bool { return false }, short, 1 * us, false},
	} {
		f.Hot = tc.hot
		if got := s.wantsHot(&f, tc.c, tc.med); got != tc.want {
			t.Errorf("Hot set %v, %v, median %.1f µs: %v, want %v", tc.hot != nil, tc.c.Dims, tc.med/us, got, tc.want)
		}
	}
	s.Policy.HotBelow = 0
	if f.Hot = shortOnly; s.wantsHot(&f, short, 1*us) {
		t.Error("HotBelow 0: a hot figure anyway")
	}
}

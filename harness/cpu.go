package harness

import (
	"flag"
	"fmt"
	"github.com/kernelwatch/kernelwatch/internal/hwclass"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func init() {
	registerBackend("cpu", 0, func() (Backend, error) {
		c := NewCPU(runtime.GOMAXPROCS(0))
		if cpuTimerFlag != "" {
			if err := c.SetTimer(cpuTimerFlag); err != nil {
				c.Close()
				return nil, fmt.Errorf("-kernels.cpu-timer: %w", err)
			}
		}
		return c, nil
	})
}

// CPU is the pure-Go backend: buffers are Go slices (HostBuffer: bf16 as uint16, e4m3 as uint8), a family's CPU
// code (RegisterCPU) runs on a pool of worker goroutines that take blocks of rows (CPULaunch.Parallel), and Time
// reads the process's CPU time around each launch (see TimerProcessCPU), or the wall clock.
type CPU struct {
	dev   Device
	pool  *workerPool
	flush []byte // overwritten before each timed launch when a Timing asks for a cold cache
	// flushTime is the wall time spent overwriting flush, and launchWall the wall time of the timed launches,
	// for Costs.
	flushTime, launchWall time.Duration
}

// The CPU backend's timers (Device.Timer, the cpu-timer config line, -kernels.cpu-timer).
//
// TimerProcessCPU, the default where the clock exists (Linux), times a launch by the CPU time the whole process
// used during it (CLOCK_PROCESS_CPUTIME_ID): the work of every worker thread, summed. What a busy neighbour takes
// from a shared runner is wall time, not this process's CPU time, so the figure stays put when other processes
// take the cores (measured on a 2-core runner with two busy loops beside it: the spread of a benchmark's
// per-process median over 8 processes went from 48% to 2.9% for the fused kernels, against 2.7% and 1.3%
// idle). What the neighbours still change is the caches and memory bandwidth the launch shares with them. The
// number is CPU time, not elapsed time: with two workers busy it is about twice the launch's wall time, and GB/s
// is bytes per CPU-second. The workers wait for work blocked on a channel and a WaitGroup, not spinning, so the
// CPU time is the launch's work plus the Go scheduler's short search for runnable goroutines when a worker runs
// out of rows.
//
// TimerWall times a launch by the wall clock, what a user waits for, and what a busy machine inflates.
const (
	TimerProcessCPU = "process-cpu"
	TimerWall       = "wall"
)

// cpuTimerFlag is -kernels.cpu-timer: the timer the CPU backend opens with ("" for its default).
var cpuTimerFlag string

func init() {
	backendFlags = append(backendFlags, func() {
		flag.StringVar(&cpuTimerFlag, "kernels.cpu-timer", "", "what the CPU backend's samples measure: process-cpu "+
			"(the process's CPU time, the default where it can be read) or wall")
	})
}

// NewCPU returns a CPU backend whose launches run on the given number of worker goroutines, timed by
// TimerProcessCPU where the process CPU clock can be read, else by TimerWall.
func NewCPU(workers int) *CPU {
	workers = max(1, workers)
	timer := TimerWall
	if _, ok := processCPUTime(); ok {
		timer = TimerProcessCPU
	}
	return &CPU{
		dev: Device{Kind: "cpu", Class: hwclass.CPU(), Name: hwclass.CPUModel(),
			CacheBytes: lastLevelCache(), Workers: workers, Timer: timer},
		pool: newWorkerPool(workers),
	}
}

// SetTimer chooses how Time measures a launch: TimerProcessCPU or TimerWall.
func (c *CPU) SetTimer(timer string) error {
	switch timer {
	case TimerWall:
	case TimerProcessCPU:
		if _, ok := processCPUTime(); !ok {
			return fmt.Errorf("harness: cpu timer %s: this system has no process CPU clock (use %s)", timer, TimerWall)
		}
	default:
		return fmt.Errorf("harness: cpu timer %q: want %s or %s", timer, TimerProcessCPU, TimerWall)
	}
	c.dev.Timer = timer
	return nil
}

// lastLevelCache is the size of CPU 0's highest cache level from sysfs, or 0.
func lastLevelCache() int64 {
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	var level, size int64
	for _, d := range dirs {
		l := readSysfsInt(filepath.Join(d, "level"))
		s := readSysfsInt(filepath.Join(d, "size"))
		if l > level || l == level && s > size {
			level, size = l, s
		}
	}
	return size
}

// readSysfsInt parses "1024K"-style sysfs values; 0 when unreadable.
func readSysfsInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(b))
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n * mult
}

// Device implements Backend.
func (c *CPU) Device() Device { return c.dev }

// Close implements Backend: it stops the worker goroutines.
func (c *CPU) Close() error {
	c.pool.close()
	return nil
}

// HostBuffer is the CPU backend's Buffer: its elements in the Go slice that matches its dtype, the others nil —
// F32 for FP32, U16 for BF16 (the bit patterns: BF16FromF32, F32FromBF16), U8 for E4M3 (the codes: E4M3FromF32,
// F32FromE4M3), I32 for Int32. A family's CPU code reads its inputs and writes its outputs there.
type HostBuffer struct {
	dt  DType
	F32 []float32
	U16 []uint16
	U8  []uint8
	I32 []int32
}

// DType implements Buffer.
func (b *HostBuffer) DType() DType { return b.dt }

// Len implements Buffer.
func (b *HostBuffer) Len() int {
	switch b.dt {
	case FP32:
		return len(b.F32)
	case BF16:
		return len(b.U16)
	case E4M3:
		return len(b.U8)
	}
	return len(b.I32)
}

// Alloc implements Backend.
func (c *CPU) Alloc(dt DType, n int) (Buffer, error) {
	b := &HostBuffer{dt: dt}
	switch dt {
	case FP32:
		b.F32 = make([]float32, n)
	case BF16:
		b.U16 = make([]uint16, n)
	case E4M3:
		b.U8 = make([]uint8, n)
	case Int32:
		b.I32 = make([]int32, n)
	default:
		return nil, fmt.Errorf("harness: cpu cannot allocate %v", dt)
	}
	return b, nil
}

// Free implements Backend; the garbage collector reclaims the slices.
func (c *CPU) Free(Buffer) {}

func hostBuf(b Buffer, n int) (*HostBuffer, error) {
	cb, ok := b.(*HostBuffer)
	if !ok {
		return nil, fmt.Errorf("harness: %T is not a cpu buffer", b)
	}
	if n >= 0 && cb.Len() != n {
		return nil, fmt.Errorf("harness: buffer of %d elements, host slice of %d", cb.Len(), n)
	}
	return cb, nil
}

// Upload implements Backend.
func (c *CPU) Upload(dst Buffer, host []float32) error {
	b, err := hostBuf(dst, len(host))
	if err != nil {
		return err
	}
	switch b.dt {
	case FP32:
		copy(b.F32, host)
	case BF16:
		for i, v := range host {
			b.U16[i] = BF16FromF32(v)
		}
	case E4M3:
		for i, v := range host {
			b.U8[i] = E4M3FromF32(v)
		}
	case Int32:
		for i, v := range host {
			b.I32[i] = int32(v)
		}
	}
	return nil
}

// Download implements Backend.
func (c *CPU) Download(src Buffer, host []float32) error {
	b, err := hostBuf(src, len(host))
	if err != nil {
		return err
	}
	switch b.dt {
	case FP32:
		copy(host, b.F32)
	case BF16:
		for i, h := range b.U16 {
			host[i] = F32FromBF16(h)
		}
	case E4M3:
		for i, q := range b.U8 {
			host[i] = F32FromE4M3(q)
		}
	case Int32:
		for i, v := range b.I32 {
			host[i] = float32(v)
		}
	}
	return nil
}

// Poison implements Backend.
func (c *CPU) Poison(buf Buffer) error {
	b, err := hostBuf(buf, -1)
	if err != nil {
		return err
	}
	nan := math.Float32frombits(0xffffffff)
	for i := range b.F32 {
		b.F32[i] = nan
	}
	for i := range b.U16 {
		b.U16[i] = 0xffff
	}
	for i := range b.U8 {
		b.U8[i] = 0xff
	}
	for i := range b.I32 {
		b.I32[i] = -1
	}
	return nil
}

// Time implements Backend with the device's timer (TimerProcessCPU or TimerWall) read around each launch (each
// batch of t.Repeat launches).
func (c *CPU) Time(l Launch, n int, t Timing) ([]float64, error) {
	if t.FlushBytes > 0 && int64(len(c.flush)) != t.FlushBytes {
		c.flush = make([]byte, t.FlushBytes)
	}
	cpuTime := c.dev.Timer == TimerProcessCPU
	rep := max(t.Repeat, 1)
	ns := make([]float64, n)
	for i := range ns {
		if t.FlushBytes > 0 {
			start := time.Now()
			clear(c.flush) // writes every byte, evicting the launch's data from the caches
			c.flushTime += time.Since(start)
		}
		var cpu0 int64
		if cpuTime {
			cpu0, _ = processCPUTime()
		}
		start := time.Now()
		for range rep {
			if err := l.Run(); err != nil {
				return nil, err
			}
		}
		wall := time.Since(start)
		if cpuTime {
			cpu1, _ := processCPUTime()
			ns[i] = float64(cpu1-cpu0) / float64(rep)
		} else {
			ns[i] = float64(wall.Nanoseconds()) / float64(rep)
		}
		c.launchWall += wall
	}
	return ns, nil
}

// FlushTime is the time Time has spent flushing caches.
func (c *CPU) FlushTime() time.Duration { return c.flushTime }

// LaunchWall is the wall time of the launches Time has timed, whatever the timer.
func (c *CPU) LaunchWall() time.Duration { return c.launchWall }

// Fill implements Backend: host memory is the CPU's device memory, so it is FillHost rounded to the dtype.
func (c *CPU) Fill(dst Buffer, d Dist, cs Case, seed uint64) error {
	if !d.InPlace() {
		return fmt.Errorf("harness: cpu cannot fill a custom distribution in place")
	}
	host := make([]float32, dst.Len())
	d.FillHost(cs, seed, host)
	return c.Upload(dst, host)
}

// cpuCode is the CPU code of every family, by family name and implementation (RegisterCPU).
var cpuCode = map[string]map[Impl]func(*CPULaunch){}

// RegisterCPU registers run as implementation impl of family f on the CPU backend (call it from an init
// function, as for the CUDA backend's RegisterCUDA). run is called once per launch with the launch's case and
// buffers; it computes the outputs from the inputs, in fp32 arithmetic whatever the storage dtype, and may use
// every core through l.Parallel. A family without code for an impl is skipped by Test and Bench there.
// Registering the same family name and impl again replaces the code.
func RegisterCPU(f *Family, impl Impl, run func(l *CPULaunch)) {
	if cpuCode[f.Name] == nil {
		cpuCode[f.Name] = map[Impl]func(*CPULaunch){}
	}
	cpuCode[f.Name][impl] = run
}

// Implements implements Backend.
func (c *CPU) Implements(f *Family, impl Impl) bool { return cpuCode[f.Name][impl] != nil }

// Prepare implements Backend.
func (c *CPU) Prepare(f *Family, impl Impl, cs Case, in, out []Buffer) (Launch, error) {
	if err := f.CheckBuffers(cs, in, out); err != nil {
		return nil, err
	}
	run := cpuCode[f.Name][impl]
	if run == nil {
		return nil, fmt.Errorf("harness: cpu has no %s %s: %w", f.Name, impl, ErrNotImplemented)
	}
	l := &CPULaunch{Case: cs, run: run, pool: c.pool}
	var err error
	if l.In, l.Out, err = unwrapBuffers(in, out, hostBuf); err != nil {
		return nil, err
	}
	return l, nil
}

// CPULaunch is what a family's CPU code receives, once per launch: the case, the buffers in the order of the
// family's Inputs and Outputs, and the means to use every core and to allocate intermediates. It is also the
// Launch the CPU backend's Prepare returns.
type CPULaunch struct {
	Case
	In, Out []*HostBuffer
	run     func(*CPULaunch)
	pool    *workerPool
	scratch arena
	err     error // the first error of the code or of a composite's members (Call), returned by Run
}

// Run implements Launch.
func (l *CPULaunch) Run() error {
	l.scratch.reset()
	l.err = nil
	l.run(l)
	return l.err
}

// ScratchBytes implements Launch: the intermediates the last Run allocated (ScratchF32, ScratchBF16, Temp).
func (l *CPULaunch) ScratchBytes() int64 { return l.scratch.bytes }

// Release implements Launch.
func (l *CPULaunch) Release() { l.scratch = arena{} }

// Parallel runs fn over blocks of rows [0, n) on every worker of the backend and returns when all are done:
// about four blocks a worker, so that uneven blocks even out. fn must only write what its rows own.
func (l *CPULaunch) Parallel(n int, fn func(r0, r1 int)) { l.pool.run(n, fn) }

// ScratchF32 returns an intermediate of n float32s with unspecified contents, counted in scratch-B. Each call of
// a Run is its own buffer; buffers are kept from one Run to the next, the way an eager framework's caching
// allocator keeps device memory, so that the timing measures the passes rather than Go's zeroing of fresh pages.
func (l *CPULaunch) ScratchF32(n int) []float32 {
	l.scratch.bytes += 4 * int64(n)
	return grab(&l.scratch.f32, &l.scratch.nextF32, n)
}

// ScratchBF16 returns an intermediate of n bf16 values (bit patterns), as ScratchF32.
func (l *CPULaunch) ScratchBF16(n int) []uint16 {
	l.scratch.bytes += 2 * int64(n)
	return grab(&l.scratch.u16, &l.scratch.nextU16, n)
}

// Temp returns an intermediate buffer of n elements of dtype dt (FP32 or BF16) from ScratchF32 or ScratchBF16:
// what a composite (Call) passes from one member to the next.
func (l *CPULaunch) Temp(dt DType, n int) *HostBuffer {
	if dt == BF16 {
		return &HostBuffer{dt: BF16, U16: l.ScratchBF16(n)}
	}
	return &HostBuffer{dt: FP32, F32: l.ScratchF32(n)}
}

// Fail records err as the launch's error, unless one is recorded already: Run returns it, and the tests and
// benchmarks fail with it. The code should return after calling it.
func (l *CPULaunch) Fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

// Err is the error the launch has recorded so far (Fail, or a member of Call), nil if none.
func (l *CPULaunch) Err() error { return l.err }

// Call runs family f's CPU code for impl on case c over buffers in and out (following f.Inputs and f.Outputs)
// as part of this launch: a composite family built from other families' code. The member's intermediates come
// from this launch and count in its scratch-B. A member that is missing or does not match its buffers fails
// the launch (Fail); once the launch has failed, Call does nothing.
func (l *CPULaunch) Call(f *Family, impl Impl, c Case, in, out []*HostBuffer) {
	if l.err != nil {
		return
	}
	run := cpuCode[f.Name][impl]
	if run == nil {
		l.err = fmt.Errorf("harness: cpu %s %s: %w", f.Name, impl, ErrNotImplemented)
		return
	}
	if err := f.CheckBuffers(c, asBuffers(in), asBuffers(out)); err != nil {
		l.err = fmt.Errorf("harness: cpu %s %s: %w", f.Name, f.BenchName(c, impl), err)
		return
	}
	sub := CPULaunch{Case: c, In: in, Out: out, run: run, pool: l.pool, scratch: l.scratch}
	run(&sub)
	l.scratch = sub.scratch
	if sub.err != nil {
		l.err = fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), sub.err)
	}
}

// asBuffers widens a slice of concrete buffers to the Buffer interface.
func asBuffers[T Buffer](bs []T) []Buffer {
	out := make([]Buffer, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}

// arena holds a launch's intermediates (ScratchF32, ScratchBF16): the buffers handed out by the current Run,
// kept for the next, and their bytes.
type arena struct {
	f32              [][]float32
	u16              [][]uint16
	nextF32, nextU16 int
	bytes            int64
}

func (a *arena) reset() { a.nextF32, a.nextU16, a.bytes = 0, 0, 0 }

// grab hands out buffer *next of bufs, grown to n elements, and moves next on.
func grab[T any](bufs *[][]T, next *int, n int) []T {
	if *next == len(*bufs) {
		*bufs = append(*bufs, nil)
	}
	if cap((*bufs)[*next]) < n {
		(*bufs)[*next] = make([]T, n)
	}
	b := (*bufs)[*next][:n]
	*next++
	return b
}

// workerPool runs row-parallel loops (CPULaunch.Parallel) on a fixed set of goroutines; the calling goroutine
// works too.
type workerPool struct {
	workers int
	jobs    chan *rowJob
}

// rowJob is one parallel loop: workers take blocks of grain rows until none are left.
type rowJob struct {
	fn          func(r0, r1 int)
	rows, grain int
	next        atomic.Int64
	wg          sync.WaitGroup
}

func newWorkerPool(workers int) *workerPool {
	p := &workerPool{workers: workers, jobs: make(chan *rowJob, workers)}
	for range workers - 1 {
		go func() {
			for j := range p.jobs {
				j.work()
				j.wg.Done()
			}
		}()
	}
	return p
}

func (p *workerPool) close() { close(p.jobs) }

func (j *rowJob) work() {
	for {
		r0 := int(j.next.Add(int64(j.grain))) - j.grain
		if r0 >= j.rows {
			return
		}
		j.fn(r0, min(r0+j.grain, j.rows))
	}
}

// run calls fn on blocks covering [0, rows) — about four blocks per worker, so uneven blocks even out — and
// returns when all are done.
func (p *workerPool) run(rows int, fn func(r0, r1 int)) {
	if rows <= 0 {
		return
	}
	grain := (rows + 4*p.workers - 1) / (4 * p.workers)
	blocks := (rows + grain - 1) / grain
	helpers := min(p.workers-1, blocks-1)
	if helpers <= 0 {
		fn(0, rows)
		return
	}
	j := &rowJob{fn: fn, rows: rows, grain: grain}
	j.wg.Add(helpers)
	for range helpers {
		p.jobs <- j
	}
	j.work()
	j.wg.Wait()
}

package harness

import (
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
	RegisterBackend("cpu", 0, func() (Backend, error) { return NewCPU(runtime.GOMAXPROCS(0)), nil })
}

// CPU is the pure-Go backend: buffers are Go slices (bf16 as uint16, e4m3 as uint8), a launch runs on a pool of
// worker goroutines that take blocks of rows, and Time reads the wall clock around each launch.
type CPU struct {
	dev   Device
	pool  *workerPool
	flush []byte // overwritten before each timed launch when a Timing asks for a cold cache
	// flushTime is the wall time spent overwriting flush, for Costs.
	flushTime time.Duration
}

// NewCPU returns a CPU backend whose launches run on the given number of worker goroutines.
func NewCPU(workers int) *CPU {
	workers = max(1, workers)
	return &CPU{
		dev: Device{Kind: "cpu", Class: hwclass.CPU(), Name: hwclass.CPUModel(),
			CacheBytes: lastLevelCache(), Workers: workers},
		pool: newWorkerPool(workers),
	}
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

// cpuBuffer holds a buffer's elements in the slice that matches its dtype.
type cpuBuffer struct {
	dt  DType
	f32 []float32
	u16 []uint16
	u8  []uint8
	i32 []int32
}

func (b *cpuBuffer) DType() DType { return b.dt }

func (b *cpuBuffer) Len() int {
	switch b.dt {
	case FP32:
		return len(b.f32)
	case BF16:
		return len(b.u16)
	case E4M3:
		return len(b.u8)
	}
	return len(b.i32)
}

// act is the buffer as an activation tensor, the view kernels compute through.
func (b *cpuBuffer) act() act { return act{f32: b.f32, b16: b.u16} }

// Alloc implements Backend.
func (c *CPU) Alloc(dt DType, n int) (Buffer, error) {
	b := &cpuBuffer{dt: dt}
	switch dt {
	case FP32:
		b.f32 = make([]float32, n)
	case BF16:
		b.u16 = make([]uint16, n)
	case E4M3:
		b.u8 = make([]uint8, n)
	case Int32:
		b.i32 = make([]int32, n)
	default:
		return nil, fmt.Errorf("kernels: cpu cannot allocate %v", dt)
	}
	return b, nil
}

// Free implements Backend; the garbage collector reclaims the slices.
func (c *CPU) Free(Buffer) {}

func cpuBuf(b Buffer, n int) (*cpuBuffer, error) {
	cb, ok := b.(*cpuBuffer)
	if !ok {
		return nil, fmt.Errorf("kernels: %T is not a cpu buffer", b)
	}
	if n >= 0 && cb.Len() != n {
		return nil, fmt.Errorf("kernels: buffer of %d elements, host slice of %d", cb.Len(), n)
	}
	return cb, nil
}

// Upload implements Backend.
func (c *CPU) Upload(dst Buffer, host []float32) error {
	b, err := cpuBuf(dst, len(host))
	if err != nil {
		return err
	}
	switch b.dt {
	case FP32:
		copy(b.f32, host)
	case BF16:
		for i, v := range host {
			b.u16[i] = BF16FromF32(v)
		}
	case E4M3:
		for i, v := range host {
			b.u8[i] = E4M3FromF32(v)
		}
	case Int32:
		for i, v := range host {
			b.i32[i] = int32(v)
		}
	}
	return nil
}

// Download implements Backend.
func (c *CPU) Download(src Buffer, host []float32) error {
	b, err := cpuBuf(src, len(host))
	if err != nil {
		return err
	}
	switch b.dt {
	case FP32:
		copy(host, b.f32)
	case BF16:
		for i, h := range b.u16 {
			host[i] = F32FromBF16(h)
		}
	case E4M3:
		for i, q := range b.u8 {
			host[i] = F32FromE4M3(q)
		}
	case Int32:
		for i, v := range b.i32 {
			host[i] = float32(v)
		}
	}
	return nil
}

// Poison implements Backend.
func (c *CPU) Poison(buf Buffer) error {
	b, err := cpuBuf(buf, -1)
	if err != nil {
		return err
	}
	nan := math.Float32frombits(0xffffffff)
	for i := range b.f32 {
		b.f32[i] = nan
	}
	for i := range b.u16 {
		b.u16[i] = 0xffff
	}
	for i := range b.u8 {
		b.u8[i] = 0xff
	}
	for i := range b.i32 {
		b.i32[i] = -1
	}
	return nil
}

// Time implements Backend with the wall clock around each launch (each batch of t.Repeat launches).
func (c *CPU) Time(l Launch, n int, t Timing) ([]float64, error) {
	if t.FlushBytes > 0 && int64(len(c.flush)) != t.FlushBytes {
		c.flush = make([]byte, t.FlushBytes)
	}
	rep := max(t.Repeat, 1)
	ns := make([]float64, n)
	for i := range ns {
		if t.FlushBytes > 0 {
			start := time.Now()
			clear(c.flush) // writes every byte, evicting the launch's data from the caches
			c.flushTime += time.Since(start)
		}
		start := time.Now()
		for range rep {
			if err := l.Run(); err != nil {
				return nil, err
			}
		}
		ns[i] = float64(time.Since(start).Nanoseconds()) / float64(rep)
	}
	return ns, nil
}

// FlushTime is the time Time has spent flushing caches.
func (c *CPU) FlushTime() time.Duration { return c.flushTime }

// Fill implements Backend: host memory is the CPU's device memory, so it is FillHost rounded to the dtype.
func (c *CPU) Fill(dst Buffer, d Dist, cs Case, seed uint64) error {
	if !d.InPlace() {
		return fmt.Errorf("kernels: cpu cannot fill a custom distribution in place")
	}
	host := make([]float32, dst.Len())
	d.FillHost(cs, seed, host)
	return c.Upload(dst, host)
}

// cpuImpls are the CPU implementations of one family.
type cpuImpls struct{ fused, naive func(*cpuLaunch) }

// cpuKernels holds each family's CPU code, keyed by Family.Name; each family's file registers its own.
var cpuKernels = map[string]cpuImpls{}

func registerCPU(f *Family, fused, naive func(*cpuLaunch)) {
	cpuKernels[f.Name] = cpuImpls{fused, naive}
}

// Implements implements Backend.
func (c *CPU) Implements(f *Family, impl Impl) bool {
	impls := cpuKernels[f.Name]
	return map[Impl]func(*cpuLaunch){Fused: impls.fused, Naive: impls.naive}[impl] != nil
}

// Prepare implements Backend.
func (c *CPU) Prepare(f *Family, impl Impl, cs Case, in, out []Buffer) (Launch, error) {
	if err := f.CheckBuffers(cs, in, out); err != nil {
		return nil, err
	}
	impls, ok := cpuKernels[f.Name]
	run := map[Impl]func(*cpuLaunch){Fused: impls.fused, Naive: impls.naive}[impl]
	if !ok || run == nil {
		return nil, fmt.Errorf("kernels: cpu has no %s %s: %w", f.Name, impl, ErrNotImplemented)
	}
	l := &cpuLaunch{Case: cs, run: run, pool: c.pool}
	var err error
	if l.in, l.out, err = unwrapBuffers(in, out, cpuBuf); err != nil {
		return nil, err
	}
	return l, nil
}

// cpuLaunch is a family's CPU code bound to its buffers. Kernels read l.in and write l.out, which follow the
// family's Inputs and Outputs.
type cpuLaunch struct {
	Case
	in, out []*cpuBuffer
	run     func(*cpuLaunch)
	pool    *workerPool
	scratch arena
	err     error // the first error of a composite's members (compose.go), returned by Run
}

// Run implements Launch.
func (l *cpuLaunch) Run() error {
	l.scratch.reset()
	l.err = nil
	l.run(l)
	return l.err
}

// ScratchBytes implements Launch: the intermediates the last Run allocated.
func (l *cpuLaunch) ScratchBytes() int64 { return l.scratch.bytes }

// Release implements Launch.
func (l *cpuLaunch) Release() { l.scratch = arena{} }

// rows runs fn over blocks of [0, n) on every worker.
func (l *cpuLaunch) rows(n int, fn func(r0, r1 int)) { l.pool.run(n, fn) }

// arena hands out an eager chain's intermediates. Each request is its own buffer, counted in bytes; buffers are
// kept from one Run to the next, the way an eager framework's caching allocator keeps device memory, so the
// timing measures the passes rather than Go's zeroing of fresh pages.
type arena struct {
	bufs   [][]float32
	next   int
	bufs16 [][]uint16 // bf16 intermediates (a composite family's, kept in its storage dtype)
	next16 int
	bytes  int64
}

func (a *arena) reset() { a.next, a.next16, a.bytes = 0, 0, 0 }

// f32 returns an intermediate of n float32s with unspecified contents.
func (a *arena) f32(n int) []float32 {
	a.bytes += 4 * int64(n)
	return grab(&a.bufs, &a.next, n)
}

// b16 returns an intermediate of n bf16 values with unspecified contents.
func (a *arena) b16(n int) []uint16 {
	a.bytes += 2 * int64(n)
	return grab(&a.bufs16, &a.next16, n)
}

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

// tile is how many elements a CPU kernel holds in a local array at a time, the stand-in for a GPU thread
// block's registers: bf16 data is widened tile by tile and never as a whole row.
const tile = 256

// act is an activation tensor in its storage dtype: exactly one of f32 and b16 is in use.
type act struct {
	f32 []float32
	b16 []uint16
}

// load returns elements [off, off+n) as float32: the tensor itself for fp32, widened into buf for bf16.
func (a act) load(off, n int, buf *[tile]float32) []float32 {
	if a.b16 == nil {
		return a.f32[off : off+n]
	}
	d := buf[:n]
	for i, h := range a.b16[off : off+n] {
		d[i] = F32FromBF16(h)
	}
	return d
}

// at returns element i as float32.
func (a act) at(i int) float32 {
	if a.b16 == nil {
		return a.f32[i]
	}
	return F32FromBF16(a.b16[i])
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
		d[i] = BF16FromF32(x)
	}
}

// workerPool runs row-parallel loops on a fixed set of goroutines; the calling goroutine works too.
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

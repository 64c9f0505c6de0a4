//go:build cuda

package harness

// The CUDA backend, built with the cuda tag (go test -tags cuda). It drives the GPU through the driver API
// (gorgonia.org/cu) and runs kernels compiled to PTX, embedded in the binaries that use them and registered
// with AddModules: the harness's own (cuda/timing.cu, fill.cu, copy.cu, mma.cu) and each family package's. A
// module is loaded once per process, when it is first used: the backend's own (timing, fill, copy) when it
// opens, a family's when the family first runs (CUDA.Load), so a run JIT-compiles only what it uses. Building
// needs cgo, cuda.h and libcuda.so (scripts/install-cuda-toolkit.sh installs CUDA 11.8's); running needs an
// NVIDIA GPU: gorgonia.org/cu calls os.Exit(1) from its init when there is none, which is why no file without
// the cuda tag may import it — in this package or in a package of families.
//
// One CUDA context, on one locked OS thread: OpenCUDA starts a goroutine that locks itself to its thread,
// creates the context there and then runs every driver call of the backend, which the methods send it as
// closures over a channel (CUDA.do). So callers may be any goroutine (tests and benchmarks each run on their
// own), and the context is never current on two threads. Every driver call's error is checked; the errors of
// Free and Release, which cannot return one, come back from the backend's next call that can.
//
// # A family's CUDA code
//
// A family's CUDA code is a .cu file compiled to PTX and a Go file with the cuda build tag:
//
//  1. cuda/<family>.cu: extern "C" kernels. Declare every kernel parameter as a pointer, long long or double:
//     each is passed as 8 bytes — but for leading CUtensorMap parameters, which CUDALaunch.KernelTMA passes
//     by value (tensormap_cuda.go). The harness's cuda/common.cuh has bf16 conversions that match BF16FromF32
//     bit for bit and the DType codes (KW_FP32 …).
//
//  2. <family>_cuda.go:
//
//     //go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/<family>.ptx cuda/<family>.cu
//
//     //go:embed cuda/ptx/*.ptx
//     var ptx embed.FS
//
//     func init() {
//     	harness.AddModules(ptx, "cuda/ptx")
//     	harness.RegisterCUDA(<Family>, harness.Fused, "<family>", <family>FusedCUDA)
//     }
//
//     where the launcher takes a *CUDALaunch (l.Case is the case, l.In and l.Out the buffers in the order of
//     the family's Inputs and Outputs) and records the launches of one run with l.Kernel(name, grid, block,
//     args...), from the module it was registered with.
//
//  3. go generate -tags cuda (nvcc), and commit the .ptx with the sources: they are embedded. Kernels that need
//     a newer GPU (thread-block clusters: compute_90) go in a second module of the same .cu, guarded by
//     #if __CUDA_ARCH__ >= 900 and compiled with -arch=compute_90 to cuda/ptx/<family>_sm90.ptx; the backend
//     loads a <module>_smXY module only on compute capability X.Y or later, and the launcher checks l.CC()
//     before it uses one (l.KernelIn(l.Module()+"_sm90", …)). Kernels that need Hopper's
//     architecture-specific instructions (wgmma, setmaxnreg: sm_90a, which CUDA 11.8 lacks) go in their own .cu,
//     cuda/<module>_sm90a.cu, compiled by CUDA 12.4 in a chroot (scripts/install-hopper-toolchain.sh; the
//     go:generate lines are in a package's sm90a_generate.go, run by scripts/hopper-ptx.sh, which records the
//     sources' hash that the package's TestSM90aPTXRecorded checks); the backend loads a <module>_smXYa module
//     only on exactly X.Y (moduleArch). A family's own <family>_sm90a module would load with the family (Load),
//     so a module not yet run on a GPU takes a name of its own.
//
// Launchers run once per Prepare, on the context thread; they may allocate scratch (l.Alloc, counted in
// ScratchBytes) and query occupancy (l.ResidentBlocks). An error sticks to the launch (l.Fail) and Prepare
// returns it. A family without CUDA code is skipped by the tests and benchmarks (Backend.Implements).
//
// # Timing
//
// CUDA.Time carries out the harness's Timing: a pair of events around each Run; with FlushBytes > 0 a
// cuMemsetD32Async of that many bytes (a new value each time) before each start event (cold L2, the GPU
// policy), with 0 the launches back to back (hot). Samples are queued in batches behind a gate kernel
// (cuda/timing.cu) and released at once, so host latency never falls between an event pair.

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/timing.ptx cuda/timing.cu

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/kernelwatch/kernelwatch/internal/hwclass"
	"gorgonia.org/cu"
)

// ownPTX holds the harness's own modules: the timing gate, the input generator, the copy and the mma probe.
//
//go:embed cuda/ptx/*.ptx
var ownPTX embed.FS

func init() {
	AddModules(ownPTX, "cuda/ptx")
	registerBackend("cuda", 10, func() (Backend, error) { return OpenCUDA(0) })
}

// moduleSource is where a registered module's PTX or cubin is.
type moduleSource struct {
	fsys fs.FS
	path string
}

var (
	moduleFiles = map[string]moduleSource{} // by module name (AddModules)
	moduleErrs  []error                     // AddModules' errors, returned by OpenCUDA
)

// AddModules registers every dir/<module>.ptx and dir/<module>.cubin file of fsys (an embed.FS, as a rule) as
// a module named <module>, for the launchers of RegisterCUDA and CUDALaunch.KernelIn. PTX is compiled by the
// driver for the GPU at hand (cached by it), so one file serves every later GPU; a cubin loads only on the
// architecture it was built for. A <module>_smXY file holds kernels for compute capability X.Y and later only,
// which the backend loads on such GPUs alone. Module names are one namespace across every package of a
// binary; a name registered twice, or a dir without modules, makes OpenCUDA fail naming it. Call it from an
// init function.
func AddModules(fsys fs.FS, dir string) {
	var files []string
	for _, ext := range []string{".ptx", ".cubin"} {
		found, err := fs.Glob(fsys, path.Join(dir, "*"+ext))
		if err != nil {
			moduleErrs = append(moduleErrs, fmt.Errorf("AddModules %s: %w", dir, err))
			return
		}
		files = append(files, found...)
	}
	if len(files) == 0 {
		moduleErrs = append(moduleErrs, fmt.Errorf("AddModules %s: no .ptx or .cubin files", dir))
		return
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), path.Ext(f))
		if _, dup := moduleFiles[name]; dup {
			moduleErrs = append(moduleErrs, fmt.Errorf("AddModules %s: module %s is registered twice", dir, name))
			continue
		}
		moduleFiles[name] = moduleSource{fsys, f}
	}
}

// cudaImpl is one implementation's CUDA code: the module its kernels are in, the other modules it launches
// from (loaded with it), and its launcher.
type cudaImpl struct {
	module string
	uses   []string
	launch func(*CUDALaunch)
}

// cudaCode is the CUDA code of every family, by family name and implementation (RegisterCUDA).
var cudaCode = map[string]map[Impl]cudaImpl{}

// RegisterCUDA registers launch as implementation impl of family f on the CUDA backend (call it from an init
// function of a file with the cuda build tag). launch runs once per Prepare and records the kernel launches of
// one run (CUDALaunch.Kernel) from module — a name given to AddModules, whose _smXY twins come with it — or, for a
// family whose launcher only calls other modules (KernelIn) or families (Call), "". uses names the other
// modules the launcher launches from, so that they are loaded with the family, outside any timing.
// Registering the same family name and impl again replaces the code.
func RegisterCUDA(f *Family, impl Impl, module string, launch func(l *CUDALaunch), uses ...string) {
	if cudaCode[f.Name] == nil {
		cudaCode[f.Name] = map[Impl]cudaImpl{}
	}
	cudaCode[f.Name][impl] = cudaImpl{module, uses, launch}
}

// Timing: launches are queued in batches behind a gate kernel and released together (see timing.cu); a batch
// holds at most cudaBatch samples and about cudaQueueOps queued operations, well inside the driver's queue.
const (
	cudaBatch       = 64
	cudaQueueOps    = 512
	cudaGateTimeout = time.Second
)

// CUDA is the GPU backend: buffers in device memory, launches on one stream, per-launch event timing.
type CUDA struct {
	dev  Device
	cc   int // compute capability, major·10 + minor (90: Hopper)
	work chan func()

	// Owned by the context thread.
	ctx        cu.CUContext
	stream     cu.Stream // every launch, timing memset and event
	release    cu.Stream // the release of the timing gate, while stream waits behind it
	modules    map[string]cu.Module
	moduleSums map[string]string // each loaded module's PTX, hashed (codeParts)
	ptx        map[string]bool   // registered modules this GPU can load (loaded on first use)
	funcs      map[string]cu.Function
	events     []cu.Event // flush start, start and end of each sample of a batch
	flushTime  time.Duration
	gateMem    cu.DevicePtr
	token      uint32
	noGate     bool // the gate timed out once: time without it
	flush      cu.DevicePtr
	flushBytes int64
	fill       uint32
	deferred   error // from Free and Release, returned by the next call that can

	// Placement (placement.go): every buffer and launcher scratch is placed in one range reserved when the
	// backend opens, at offsets that depend only on the case; arenaMem is that range (0 when placement is
	// the driver's: -kernels.arena=false, or the reservation failed), arenaBase its first usable byte.
	arena     placement
	arenaMem  cu.DevicePtr
	arenaBase cu.DevicePtr
	spilled   bool // a block did not fit in the arena and came from the driver (warned once)

	lt *cublasLt // the vendor library (cublaslt_cuda.go), loaded on first use
}

// Placement settings, set by Main's flags (-kernels.arena, -kernels.arena-skew) before the backend opens.
var (
	// cudaArenaOn places buffers in the arena (the default); off, each buffer is the driver's cuMemAlloc, as
	// before the arena existed — for measuring what placement does.
	cudaArenaOn = true
	// cudaArenaSkew shifts the arena's first usable byte by this many bytes (a multiple of 256): every case's
	// buffers move together, for measuring a kernel's sensitivity to where its memory lies.
	cudaArenaSkew int64
)

// cudaArenaReserve is the device memory left outside the arena for what the driver allocates itself (modules,
// their constant banks and local memory, events) and for the flush buffer: the larger of 2 GiB and 1/16 of
// what is free when the backend opens.
func cudaArenaReserve(free int64) int64 { return max(2<<30, free/16) }

// OpenCUDA opens GPU ordinal: it starts the context thread, creates the context and loads the backend's own
// modules.
func OpenCUDA(ordinal int) (*CUDA, error) {
	if err := errors.Join(moduleErrs...); err != nil {
		return nil, fmt.Errorf("harness: cuda: %w", err)
	}
	c := &CUDA{work: make(chan func())}
	ready := make(chan error)
	go c.serve(ordinal, ready)
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("harness: cuda: %w", err)
	}
	return c, nil
}

// serve is the context thread: it stays locked to its OS thread for its whole life (the thread ends with it).
func (c *CUDA) serve(ordinal int, ready chan<- error) {
	runtime.LockOSThread()
	if err := c.open(ordinal); err != nil {
		ready <- errors.Join(err, c.teardown())
		return
	}
	ready <- nil
	for f := range c.work {
		f()
	}
}

// do runs f on the context thread and returns its error, joined with any deferred one.
func (c *CUDA) do(f func() error) error {
	return c.call(f, true)
}

// call runs f on the context thread; report says whether to hand back (and clear) a deferred error too.
func (c *CUDA) call(f func() error, report bool) error {
	if c.work == nil {
		return errors.New("harness: cuda: backend closed")
	}
	errc := make(chan error, 1)
	c.work <- func() {
		err := f()
		if report {
			err = errors.Join(c.deferred, err)
			c.deferred = nil
		}
		errc <- err
	}
	return <-errc
}

func (c *CUDA) open(ordinal int) error {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return fmt.Errorf("device %d: %w", ordinal, err)
	}
	name, err := dev.Name()
	if err != nil {
		return fmt.Errorf("device name: %w", err)
	}
	l2, err := dev.Attribute(cu.L2CacheSize)
	if err != nil {
		return fmt.Errorf("L2 size: %w", err)
	}
	sms, err := dev.Attribute(cu.MultiprocessorCount)
	if err != nil {
		return fmt.Errorf("multiprocessor count: %w", err)
	}
	major, err := dev.Attribute(cu.ComputeCapabilityMajor)
	if err != nil {
		return fmt.Errorf("compute capability: %w", err)
	}
	minor, err := dev.Attribute(cu.ComputeCapabilityMinor)
	if err != nil {
		return fmt.Errorf("compute capability: %w", err)
	}
	c.cc = 10*major + minor
	c.dev = Device{Kind: "cuda", Class: hwclass.GPU(name), Name: strings.TrimSpace(name), Driver: nvidiaDriverVersion(),
		CacheBytes: int64(l2), Workers: sms}

	if c.ctx, err = dev.MakeContext(cu.SchedAuto); err != nil { // current on this thread from here on
		return fmt.Errorf("context: %w", err)
	}
	if c.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if c.release, err = cu.MakeStream(cu.DefaultStream); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	for range 3 * cudaBatch {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return fmt.Errorf("event: %w", err)
		}
		c.events = append(c.events, ev)
	}
	if c.gateMem, err = cu.MemAlloc(8); err != nil { // [0] the gate's flag, [1] its timed-out word
		return fmt.Errorf("alloc: %w", err)
	}
	if err := cu.MemsetD32(c.gateMem, 0, 2); err != nil {
		return fmt.Errorf("memset: %w", err)
	}
	// The flush buffer and then the arena, before any module loads, so that neither depends on a module's size.
	if fb := PolicyFor(c.dev).Timing.FlushBytes; fb > 0 {
		if c.flush, err = cu.MemAlloc(fb); err != nil {
			return fmt.Errorf("harness: cuda flush buffer of %d B: %w", fb, err)
		}
		c.flushBytes = fb
	}
	if err := c.openArena(); err != nil {
		return err
	}
	c.modules, c.funcs, c.ptx = map[string]cu.Module{}, map[string]cu.Function{}, map[string]bool{}
	c.moduleSums = map[string]string{}
	for name := range moduleFiles {
		loads, err := moduleLoads(name, c.cc) // <module>_smXY: X.Y and later; <module>_smXYa: exactly X.Y
		if err != nil {
			return err
		}
		if loads {
			c.ptx[name] = true
		}
	}
	for fam, impls := range cudaCode {
		for _, ci := range impls {
			for _, m := range append([]string{ci.module}, ci.uses...) {
				if _, ok := moduleFiles[m]; m != "" && !ok { // "": a composite (Call), its members' modules
					return fmt.Errorf("%s: no module %s registered (AddModules; go generate -tags cuda, then commit the .ptx)", fam, m)
				}
			}
		}
	}
	// The backend's own modules, which every run uses; the families' modules load when first used (Load).
	for _, name := range []string{"timing", "fill", "copy"} {
		if err := c.loadModule(name); err != nil {
			return err
		}
	}
	return nil
}

// loadModule loads registered module name (the driver JIT-compiles its PTX, or finds it in its cache) unless
// it is loaded, on the context thread.
func (c *CUDA) loadModule(name string) error {
	if _, ok := c.modules[name]; ok {
		return nil
	}
	if !c.ptx[name] {
		return fmt.Errorf("no module %s for compute capability %d.%d", name, c.cc/10, c.cc%10)
	}
	src := moduleFiles[name]
	image, err := fs.ReadFile(src.fsys, src.path)
	if err != nil {
		return err
	}
	m, err := cu.LoadData(string(image))
	if err != nil {
		return fmt.Errorf("load module %s: %w", name, err)
	}
	c.modules[name] = m
	sum := sha256.Sum256(image)
	c.moduleSums[name] = hex.EncodeToString(sum[:8])
	return nil
}

// Load loads the modules family f can launch — those of its implementations, their newer-GPU twins
// (<module>_smXY) and the modules they use (RegisterCUDA) — so that a run pays for the modules of the families
// it runs, and outside any timing.
func (c *CUDA) Load(f *Family) error {
	impls := cudaCode[f.Name]
	return c.do(func() error {
		for name := range c.ptx {
			for _, ci := range impls {
				if ci.module != "" && (name == ci.module || strings.HasPrefix(name, ci.module+"_sm")) || slices.Contains(ci.uses, name) {
					if err := c.loadModule(name); err != nil {
						return err
					}
					break
				}
			}
		}
		return nil
	})
}

// FlushTime is the GPU time the cache flushes before timed launches have taken so far (by events).
func (c *CUDA) FlushTime() time.Duration { return c.flushTime }

// teardown releases everything open created, in reverse; it runs on the context thread.
func (c *CUDA) teardown() error {
	var errs []error
	check := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	if c.flush != 0 {
		check("free flush buffer", cu.MemFree(c.flush))
	}
	if c.lt != nil {
		check("close cuBLASLt", c.lt.close())
	}
	if c.arenaMem != 0 {
		check("free arena", cu.MemFree(c.arenaMem))
	}
	if c.gateMem != 0 {
		check("free gate", cu.MemFree(c.gateMem))
	}
	for _, m := range c.modules {
		check("unload module", m.Unload())
	}
	for i := range c.events {
		check("destroy event", cu.DestroyEvent(&c.events[i]))
	}
	for _, s := range []*cu.Stream{&c.stream, &c.release} {
		if *s != (cu.Stream{}) {
			check("destroy stream", s.Destroy())
		}
	}
	if c.ctx != (cu.CUContext{}) {
		check("destroy context", c.ctx.Destroy())
	}
	return errors.Join(errs...)
}

// nvidiaDriverVersion is the driver version nvidia-smi reports, else the kernel module's from /proc, else "".
// (gorgonia.org/cu exposes only the CUDA API version of the driver, 13000 and the like, not this.)
func nvidiaDriverVersion() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader").Output(); err == nil {
		if v, _, _ := strings.Cut(string(out), "\n"); strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		// NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ...
		if _, rest, ok := strings.Cut(string(b), "Kernel Module"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}

// Device implements Backend.
func (c *CUDA) Device() Device { return c.dev }

// CC is the GPU's compute capability, major·10 + minor: 90 for Hopper.
func (c *CUDA) CC() int { return c.cc }

// Close implements Backend: it releases the device and ends the context thread.
func (c *CUDA) Close() error {
	if c.work == nil {
		return nil
	}
	err := c.do(c.teardown)
	close(c.work)
	c.work = nil
	return err
}

// DeviceBuffer is the CUDA backend's Buffer: Len elements of one DType in device memory.
type DeviceBuffer struct {
	dt  DType
	n   int
	ptr cu.DevicePtr
}

// DType implements Buffer.
func (b *DeviceBuffer) DType() DType { return b.dt }

// Len implements Buffer.
func (b *DeviceBuffer) Len() int { return b.n }

// Bytes is the buffer's size in bytes.
func (b *DeviceBuffer) Bytes() int64 { return int64(b.n) * int64(b.dt.Size()) }

// Ptr is the device address of the buffer's first element.
func (b *DeviceBuffer) Ptr() cu.DevicePtr { return b.ptr }

// View is the first n elements of b's memory as a buffer of dtype dt (b's own when dt is 0), for a launcher or
// a test that works on part of a buffer or reinterprets it. It shares b's memory and is never freed itself.
// It panics when the view is longer than b.
func (b *DeviceBuffer) View(dt DType, n int) *DeviceBuffer {
	if dt == 0 {
		dt = b.dt
	}
	if n < 0 || int64(n)*int64(dt.Size()) > b.Bytes() {
		panic(fmt.Sprintf("harness: a view of %d×%v on a buffer of %d×%v", n, dt, b.n, b.dt))
	}
	return &DeviceBuffer{dt: dt, n: n, ptr: b.ptr}
}

func deviceBuf(b Buffer, n int) (*DeviceBuffer, error) {
	cb, ok := b.(*DeviceBuffer)
	if !ok {
		return nil, fmt.Errorf("harness: %T is not a cuda buffer", b)
	}
	if n >= 0 && cb.n != n {
		return nil, fmt.Errorf("harness: buffer of %d elements, host slice of %d", cb.n, n)
	}
	return cb, nil
}

// Alloc implements Backend.
func (c *CUDA) Alloc(dt DType, n int) (Buffer, error) {
	switch dt {
	case FP32, BF16, E4M3, Int32:
	default:
		return nil, fmt.Errorf("harness: cuda cannot allocate %v", dt)
	}
	b := &DeviceBuffer{dt: dt, n: n}
	err := c.do(func() (err error) {
		b.ptr, err = c.devAlloc(b.Bytes())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("harness: cuda alloc %d×%v: %w", n, dt, err)
	}
	return b, nil
}

// Free implements Backend.
func (c *CUDA) Free(buf Buffer) {
	b, err := deviceBuf(buf, -1)
	if err != nil || b.ptr == 0 || c.work == nil {
		return
	}
	c.call(func() error {
		if err := c.devFree(b.ptr); err != nil && c.deferred == nil {
			c.deferred = fmt.Errorf("harness: cuda free: %w", err)
		}
		return nil
	}, false)
	b.ptr = 0
}

// idle waits for the stream's work, so that a copy on the null stream sees every launch before it.
func (c *CUDA) idle() error {
	if err := c.stream.Synchronize(); err != nil {
		return fmt.Errorf("harness: cuda: %w", err)
	}
	return nil
}

// Upload implements Backend.
func (c *CUDA) Upload(dst Buffer, host []float32) error {
	b, err := deviceBuf(dst, len(host))
	if err != nil || b.n == 0 {
		return err
	}
	src := unsafe.Pointer(&host[0]) // fp32 is stored as it is held: no staging copy of up to 1 GiB
	if b.dt != FP32 {
		src = unsafe.Pointer(&encodeHost(b.dt, host)[0])
	}
	err = c.do(func() error {
		if err := c.idle(); err != nil {
			return err
		}
		if err := cu.MemcpyHtoD(b.ptr, src, b.Bytes()); err != nil {
			return fmt.Errorf("harness: cuda upload: %w", err)
		}
		return nil
	})
	runtime.KeepAlive(host)
	return err
}

// Download implements Backend.
func (c *CUDA) Download(src Buffer, host []float32) error {
	b, err := deviceBuf(src, len(host))
	if err != nil || b.n == 0 {
		return err
	}
	raw := make([]byte, b.Bytes())
	err = c.do(func() error {
		if err := c.idle(); err != nil {
			return err
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&raw[0]), b.ptr, b.Bytes()); err != nil {
			return fmt.Errorf("harness: cuda download: %w", err)
		}
		return nil
	})
	if err == nil {
		decodeHost(b.dt, raw, host)
	}
	return err
}

// Poison implements Backend.
func (c *CUDA) Poison(buf Buffer) error {
	b, err := deviceBuf(buf, -1)
	if err != nil || b.n == 0 {
		return err
	}
	return c.do(func() error {
		if err := c.idle(); err != nil {
			return err
		}
		if err := cu.MemsetD8(b.ptr, 0xff, b.Bytes()); err != nil {
			return fmt.Errorf("harness: cuda poison: %w", err)
		}
		return nil
	})
}

// encodeHost rounds host values to dt's storage, as the CPU backend stores them (little-endian).
func encodeHost(dt DType, host []float32) []byte {
	raw := make([]byte, len(host)*dt.Size())
	switch dt {
	case FP32:
		copy(unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), len(host)), host)
	case BF16:
		d := unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), len(host))
		for i, v := range host {
			d[i] = BF16FromF32(v)
		}
	case E4M3:
		for i, v := range host {
			raw[i] = E4M3FromF32(v)
		}
	case Int32:
		d := unsafe.Slice((*int32)(unsafe.Pointer(&raw[0])), len(host))
		for i, v := range host {
			d[i] = int32(v)
		}
	}
	return raw
}

// decodeHost widens stored elements to float32 (exactly).
func decodeHost(dt DType, raw []byte, host []float32) {
	switch dt {
	case FP32:
		copy(host, unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), len(host)))
	case BF16:
		for i, h := range unsafe.Slice((*uint16)(unsafe.Pointer(&raw[0])), len(host)) {
			host[i] = F32FromBF16(h)
		}
	case E4M3:
		for i, q := range raw {
			host[i] = F32FromE4M3(q)
		}
	case Int32:
		for i, v := range unsafe.Slice((*int32)(unsafe.Pointer(&raw[0])), len(host)) {
			host[i] = float32(v)
		}
	}
}

// Implements implements Backend.
func (c *CUDA) Implements(f *Family, impl Impl) bool {
	return cudaCode[f.Name][impl].launch != nil
}

// Prepare implements Backend: it runs the family's launcher, which records the launches of one Run.
func (c *CUDA) Prepare(f *Family, impl Impl, cs Case, in, out []Buffer) (Launch, error) {
	if err := f.CheckBuffers(cs, in, out); err != nil {
		return nil, err
	}
	ci := cudaCode[f.Name][impl]
	if ci.launch == nil {
		return nil, fmt.Errorf("harness: cuda has no %s %s: %w", f.Name, impl, ErrNotImplemented)
	}
	l := &CUDALaunch{Case: cs, be: c, module: ci.module}
	var err error
	if l.In, l.Out, err = unwrapBuffers(in, out, deviceBuf); err != nil {
		return nil, err
	}
	err = c.do(func() error {
		ci.launch(l)
		if l.err != nil {
			l.free()
		}
		return l.err
	})
	if err != nil {
		return nil, fmt.Errorf("harness: cuda %s %s: %w", f.Name, f.BenchName(cs, impl), err)
	}
	return l, nil
}

// function returns kernel name of module, looked up once.
func (c *CUDA) function(module, name string) (cu.Function, error) {
	key := module + "." + name
	if fn, ok := c.funcs[key]; ok {
		return fn, nil
	}
	if err := c.loadModule(module); err != nil {
		return cu.Function{}, err
	}
	m := c.modules[module]
	fn, err := m.Function(name)
	if err != nil {
		return cu.Function{}, fmt.Errorf("kernel %s in module %s: %w", name, module, err)
	}
	c.funcs[key] = fn
	return fn, nil
}

// SetGlobal writes value into the __device__ variable symbol of module (loading the module), which must be
// exactly as large: a knob that a module's kernels read, such as a variant build's spin count.
func (c *CUDA) SetGlobal(module, symbol string, value []byte) error {
	return c.do(func() error {
		if err := c.loadModule(module); err != nil {
			return err
		}
		ptr, size, err := c.modules[module].Global(symbol)
		if err != nil || size != int64(len(value)) {
			return fmt.Errorf("harness: cuda: %s in module %s: %v (%d bytes, want %d)", symbol, module, err, size, len(value))
		}
		return cu.MemcpyHtoD(ptr, unsafe.Pointer(&value[0]), size)
	})
}

// CUDALaunch is what a family's CUDA launcher receives, once per Prepare: the case, the buffers in the order of
// the family's Inputs and Outputs, and the means to record kernel launches, allocate scratch and ask about the
// GPU. The launches it records are what one Run of the launch does; it is also the Launch Prepare returns.
type CUDALaunch struct {
	Case
	In, Out []*DeviceBuffer
	be      *CUDA
	module  string // the family's module (RegisterCUDA)
	steps   []cudaStep
	scratch []cu.DevicePtr
	bytes   int64    // scratch bytes
	err     error    // the first error of the launcher
	onFree  []func() // run by free, after the scratch: what host steps set up (cuBLASLt plans)
}

// cudaStep is one kernel launch with its parameters, each 8 bytes (what cu.Function.Launch reads), or, with
// host set, a library call that queues its own work on the stream (cuBLASLt: cublaslt_cuda.go).
type cudaStep struct {
	name        string
	fn          cu.Function
	module      string // fn's module ("" for a host step)
	argSig      string // the arguments as code sees them: scalars by value, device pointers as "p" (codeParts)
	grid, block int
	args        []uint64
	params      []unsafe.Pointer
	// cluster > 0: launched in clusters of that many blocks with smem bytes of dynamic shared memory a block
	// (KernelCluster, cuda_cluster.go); coop: a cooperative launch of blocks of one (KernelCooperative).
	cluster, smem int
	coop          bool
	// maps set: the kernel's leading parameters are these tensor maps, by value (KernelTMA,
	// tensormap_cuda.go), launched with smem bytes of dynamic shared memory, in clusters when cluster > 1.
	maps []TensorMap
	// host set: a library call instead of a kernel (cuBLASLt: cublaslt_cuda.go).
	host func(cu.Stream) error
}

// Fail records the launcher's first error; Prepare returns it, and later calls on the launch record nothing.
func (l *CUDALaunch) Fail(err error) {
	if l.err == nil && err != nil {
		l.err = err
	}
}

// Err is the error the launcher has recorded so far, nil if none.
func (l *CUDALaunch) Err() error { return l.err }

// Module is the module the family's implementation was registered with (RegisterCUDA).
func (l *CUDALaunch) Module() string { return l.module }

// Kernel records a launch of kernel name from the family's module on grid × block threads (one-dimensional).
// Arguments may be buffers, device pointers, integers (passed as long long), floats (passed as double) and
// DTypes (their codes, as long long); each is passed as 8 bytes.
func (l *CUDALaunch) Kernel(name string, grid, block int, args ...any) {
	l.KernelIn(l.module, name, grid, block, args...)
}

// KernelIn records a launch of kernel name from module, as Kernel does.
func (l *CUDALaunch) KernelIn(module, name string, grid, block int, args ...any) {
	if l.err != nil {
		return
	}
	fn, err := l.be.function(module, name)
	if err != nil {
		l.Fail(err)
		return
	}
	if maxBlock, err := fn.Attribute(cu.FnMaxThreadsPerBlock); err != nil || grid < 1 || block < 1 || block > maxBlock {
		l.Fail(fmt.Errorf("kernel %s: grid %d × block %d (at most %d threads a block; %v)", name, grid, block, maxBlock, err))
		return
	}
	st := cudaStep{name: name, fn: fn, module: module, grid: grid, block: block, args: make([]uint64, len(args))}
	sig := make([]string, len(args))
	for i, a := range args {
		sig[i] = "p"
		switch v := a.(type) {
		case *DeviceBuffer:
			st.args[i] = uint64(v.ptr)
		case cu.DevicePtr:
			st.args[i] = uint64(v)
		case float64:
			st.args[i] = math.Float64bits(v)
			sig[i] = ""
		case float32:
			st.args[i] = math.Float64bits(float64(v))
			sig[i] = ""
		default:
			sig[i] = ""
			// Integers of any kind, DTypes and a family's own integer enums.
			switch r := reflect.ValueOf(a); r.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				st.args[i] = uint64(r.Int())
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				st.args[i] = r.Uint()
			default:
				l.Fail(fmt.Errorf("kernel %s: argument %d is a %T", name, i, a))
				return
			}
		}
	}
	st.params = make([]unsafe.Pointer, len(st.args))
	for i := range st.args {
		st.params[i] = unsafe.Pointer(&st.args[i])
		if sig[i] == "" {
			sig[i] = strconv.FormatUint(st.args[i], 16)
		}
	}
	st.argSig = strings.Join(sig, ",")
	l.steps = append(l.steps, st)
}

// Alloc returns n bytes of scratch device memory, counted in ScratchBytes and freed by Release; zero clears it
// now (the launches do not see it cleared again).
func (l *CUDALaunch) Alloc(n int64, zero bool) cu.DevicePtr {
	if l.err != nil {
		return 0
	}
	p, err := l.be.devAlloc(n)
	if err != nil {
		l.Fail(fmt.Errorf("scratch of %d B: %w", n, err))
		return 0
	}
	l.scratch = append(l.scratch, p)
	l.bytes += n
	if zero {
		l.Fail(cu.MemsetD8(p, 0, max(n, 1)))
	}
	return p
}

// Temp returns a scratch buffer of n elements of dtype dt (Alloc): what a composite (Call) passes from one
// member to the next.
func (l *CUDALaunch) Temp(dt DType, n int) *DeviceBuffer {
	return &DeviceBuffer{dt: dt, n: n, ptr: l.Alloc(int64(n)*int64(dt.Size()), false)}
}

// ResidentBlocks is how many blocks of kernel name (from the family's module) with block threads the whole GPU
// holds at once; 0 after an error.
func (l *CUDALaunch) ResidentBlocks(name string, block int) int {
	if l.err != nil {
		return 0
	}
	fn, err := l.be.function(l.module, name)
	if err == nil {
		var per int
		if per, err = fn.MaxActiveBlocksPerMultiProcessor(block, 0); err == nil {
			return per * l.be.dev.Workers
		}
	}
	l.Fail(fmt.Errorf("occupancy of %s: %w", name, err))
	return 0
}

// SMs is the GPU's multiprocessor count.
func (l *CUDALaunch) SMs() int { return l.be.dev.Workers }

// CC is the GPU's compute capability, major·10 + minor: 90 for Hopper.
func (l *CUDALaunch) CC() int { return l.be.cc }

// Call records family f's CUDA code for impl on case c over buffers in and out (following f.Inputs and
// f.Outputs) as launches of l: a composite family built from other families' code. The member's launches run
// in l's Run in order, its scratch is l's and counts in l's scratch-B. A member that is missing or does not
// match its buffers fails the launch. Call it from a launcher only (it runs on the backend's context thread).
func (l *CUDALaunch) Call(f *Family, impl Impl, c Case, in, out []*DeviceBuffer) {
	if l.err != nil {
		return
	}
	ci := cudaCode[f.Name][impl]
	if ci.launch == nil {
		l.Fail(fmt.Errorf("%s %s: %w", f.Name, impl, ErrNotImplemented))
		return
	}
	if err := f.CheckBuffers(c, asBuffers(in), asBuffers(out)); err != nil {
		l.Fail(fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), err))
		return
	}
	sub := &CUDALaunch{Case: c, be: l.be, module: ci.module, In: in, Out: out}
	ci.launch(sub)
	l.steps = append(l.steps, sub.steps...)
	l.scratch = append(l.scratch, sub.scratch...)
	l.bytes += sub.bytes
	if sub.err != nil {
		l.Fail(fmt.Errorf("%s %s: %w", f.Name, f.BenchName(c, impl), sub.err))
	}
}

// Append moves the launches and scratch of other, a launch of the same backend, to the end of l's: l's Run
// then runs both and its Release frees both. other is left empty. It is for variant builds that add work to a
// prepared launch (a deliberately slowed suite).
func (l *CUDALaunch) Append(other Launch) error {
	o, ok := other.(*CUDALaunch)
	if !ok || o.be != l.be {
		return fmt.Errorf("harness: %T is not a launch of this cuda backend", other)
	}
	l.steps = append(l.steps, o.steps...)
	l.scratch = append(l.scratch, o.scratch...)
	l.bytes += o.bytes
	o.steps, o.scratch, o.bytes = nil, nil, 0
	return nil
}

// KernelInfo describes one kernel launch of a CUDALaunch, as the driver compiled the kernel.
type KernelInfo struct {
	Name        string
	Grid, Block int
	Registers   int // per thread
	LocalBytes  int // local memory per thread: register spills
}

// Kernels describes the kernel launches of one Run of l, in order: what a launcher chose, for tests and tuning
// tools. Call it on a prepared launch, not from a launcher.
func (l *CUDALaunch) Kernels() ([]KernelInfo, error) {
	var ks []KernelInfo
	err := l.be.do(func() error {
		for _, st := range l.steps {
			k := KernelInfo{Name: st.name, Grid: st.grid, Block: st.block}
			var err error
			if k.Registers, err = st.fn.Attribute(cu.NumRegs); err != nil {
				return fmt.Errorf("harness: cuda: registers of %s: %w", st.name, err)
			}
			if k.LocalBytes, err = st.fn.Attribute(cu.LocalSizeBytes); err != nil {
				return fmt.Errorf("harness: cuda: local memory of %s: %w", st.name, err)
			}
			ks = append(ks, k)
		}
		return nil
	})
	return ks, err
}

// codeParts describes each step of one Run of l for its code fingerprint (CodeKey): a kernel by its module's
// PTX hash, name, grid, block, cluster, dynamic shared memory, tensor maps and scalar arguments, a library call
// by its name (which carries its shape). It reads moduleSums off the context thread, as Prepare's callers read
// what Prepare built: after the do that wrote them has returned, and with no other call in flight.
func (l *CUDALaunch) codeParts() ([]string, bool) {
	parts := make([]string, 0, len(l.steps))
	for _, st := range l.steps {
		if st.host != nil {
			parts = append(parts, "host "+st.name)
			continue
		}
		sum, ok := l.be.moduleSums[st.module]
		if !ok {
			return nil, false
		}
		part := fmt.Sprintf("%s@%s %s grid=%d block=%d cluster=%d smem=%d maps=%d args=%s", st.module, sum,
			st.name, st.grid, st.block, st.cluster, st.smem, len(st.maps), st.argSig)
		if st.coop {
			part += " cooperative"
		}
		parts = append(parts, part)
	}
	return parts, true
}

// Redirect points l's launches of kernels of module from at the kernels of the same names in module to (a
// variant build of the same source, such as a deliberately slowed one) and returns how many it redirected.
// Call it on a prepared launch, not from a launcher.
func (l *CUDALaunch) Redirect(from, to string) (int, error) {
	n := 0
	err := l.be.do(func() error {
		for i := range l.steps {
			st := &l.steps[i]
			if own, err := l.be.function(from, st.name); err != nil || own != st.fn {
				continue // a kernel of another module
			}
			fn, err := l.be.function(to, st.name)
			if err != nil {
				return err
			}
			st.fn, st.module = fn, to
			n++
		}
		return nil
	})
	return n, err
}

// enqueue queues the launches of one Run on s.
func (l *CUDALaunch) enqueue(s cu.Stream) error {
	for i := range l.steps {
		st := &l.steps[i]
		if st.host != nil {
			if err := st.host(s); err != nil {
				return fmt.Errorf("kernels: cuda %s: %w", st.name, err)
			}
			continue
		}
		if st.maps != nil {
			if err := st.launchMaps(s); err != nil {
				return err
			}
			continue
		}
		if st.cluster > 0 {
			if err := st.launchCluster(s); err != nil {
				return err
			}
			continue
		}
		if err := st.fn.Launch(st.grid, 1, 1, st.block, 1, 1, 0, s, st.params); err != nil {
			return fmt.Errorf("harness: cuda launch %s: %w", st.name, err)
		}
	}
	return nil
}

// Run implements Launch: it runs the launches and waits for them.
func (l *CUDALaunch) Run() error {
	return l.be.do(func() error {
		if err := l.enqueue(l.be.stream); err != nil {
			return err
		}
		if err := l.be.stream.Synchronize(); err != nil {
			return fmt.Errorf("harness: cuda run: %w", err)
		}
		return nil
	})
}

// ScratchBytes implements Launch.
func (l *CUDALaunch) ScratchBytes() int64 { return l.bytes }

// Release implements Launch.
func (l *CUDALaunch) Release() {
	if l.be.work == nil {
		return
	}
	l.be.call(func() error {
		l.free()
		return nil
	}, false)
}

// free releases the scratch on the context thread, deferring an error.
func (l *CUDALaunch) free() {
	if err := l.be.idle(); err != nil && l.be.deferred == nil {
		l.be.deferred = err
	}
	for _, p := range l.scratch {
		if err := l.be.devFree(p); err != nil && l.be.deferred == nil {
			l.be.deferred = fmt.Errorf("harness: cuda free scratch: %w", err)
		}
	}
	for _, f := range l.onFree {
		f()
	}
	l.scratch, l.steps, l.onFree = nil, nil, nil
}

// Time implements Backend. Each sample is a pair of events around one Run's launches (t.Repeat Runs, back to
// back, for a hot batch: the sample is their mean). With t.FlushBytes > 0, a buffer of that size is overwritten
// with cuMemsetD32Async (a new value each time) just before the start event, so the launch finds nothing of its
// own in L2 ("cold"); with 0 the launches run back to back ("hot"). Samples are queued in batches behind a gate
// kernel, released at once, so no host latency enters a sample — unless one sample alone holds more launches
// than the driver's queue takes (a chain of thousands of launches), which is timed ungated: a gate would wait
// for a release the host never gets to queue.
func (c *CUDA) Time(l Launch, n int, t Timing) ([]float64, error) {
	cl, ok := l.(*CUDALaunch)
	if !ok || cl.be != c {
		return nil, fmt.Errorf("harness: %T is not a launch of this cuda backend", l)
	}
	ns := make([]float64, 0, n)
	err := c.do(func() error {
		cold := t.FlushBytes > 0
		if cold && t.FlushBytes != c.flushBytes {
			if c.flush != 0 {
				if err := cu.MemFree(c.flush); err != nil {
					return fmt.Errorf("harness: cuda free flush buffer: %w", err)
				}
				c.flush, c.flushBytes = 0, 0
			}
			p, err := cu.MemAlloc(t.FlushBytes)
			if err != nil {
				return fmt.Errorf("harness: cuda flush buffer of %d B: %w", t.FlushBytes, err)
			}
			c.flush, c.flushBytes = p, t.FlushBytes
		}
		rep := max(t.Repeat, 1)
		ops := rep*len(cl.steps) + 4 // launches, flush and events of one sample
		batch := max(1, min(cudaBatch, cudaQueueOps/ops))
		for len(ns) < n {
			got, err := c.timeBatch(cl, min(batch, n-len(ns)), rep, cold, ops <= cudaQueueOps)
			if err != nil {
				return err
			}
			ns = append(ns, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ns, nil
}

// timeBatch times k samples of rep Runs of l, on the context thread, behind the timing gate when gate.
func (c *CUDA) timeBatch(l *CUDALaunch, k, rep int, cold, gate bool) ([]float64, error) {
	gated := gate && !c.noGate
	if gated {
		c.token++
		gate, err := c.function("timing", "timing_gate")
		if err != nil {
			return nil, err
		}
		args := []uint64{uint64(c.gateMem), uint64(c.token), uint64(cudaGateTimeout.Nanoseconds()), uint64(c.gateMem + 4)}
		params := []unsafe.Pointer{unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1]), unsafe.Pointer(&args[2]), unsafe.Pointer(&args[3])}
		if err := gate.Launch(1, 1, 1, 1, 1, 1, 0, c.stream, params); err != nil {
			return nil, fmt.Errorf("harness: cuda timing gate: %w", err)
		}
	}
	released := !gated
	releaseGate := func() error {
		if released {
			return nil
		}
		released = true
		if err := cu.MemsetD32Async(c.gateMem, uint(c.token), 1, c.release); err != nil {
			return fmt.Errorf("harness: cuda release timing gate: %w", err)
		}
		return nil
	}
	record := func(ev cu.Event) error {
		if err := ev.Record(c.stream); err != nil {
			return fmt.Errorf("harness: cuda event: %w", err)
		}
		return nil
	}
	enqueue := func() error {
		for i := range k {
			if cold {
				if err := record(c.events[3*i]); err != nil {
					return err
				}
				c.fill++
				if err := cu.MemsetD32Async(c.flush, uint(c.fill), c.flushBytes/4, c.stream); err != nil {
					return fmt.Errorf("harness: cuda flush: %w", err)
				}
			}
			if err := record(c.events[3*i+1]); err != nil {
				return err
			}
			for range rep {
				if err := l.enqueue(c.stream); err != nil {
					return err
				}
			}
			if err := record(c.events[3*i+2]); err != nil {
				return err
			}
		}
		return nil
	}
	err := enqueue()
	err = errors.Join(err, releaseGate())
	if serr := c.stream.Synchronize(); serr != nil {
		err = errors.Join(err, fmt.Errorf("harness: cuda timed run: %w", serr))
	}
	if err != nil {
		return nil, err
	}
	if gated {
		var timedOut uint32
		if err := cu.MemcpyDtoH(unsafe.Pointer(&timedOut), c.gateMem+4, 4); err != nil {
			return nil, fmt.Errorf("harness: cuda timing gate: %w", err)
		}
		if timedOut != 0 {
			// The release never overtook the gate (the two streams did not run side by side): time without it.
			fmt.Fprintln(os.Stderr, "harness: cuda: the timing gate timed out; timing without it from now on")
			c.noGate = true
			return c.timeBatch(l, k, rep, cold, false)
		}
	}
	ns := make([]float64, k)
	for i := range ns {
		ms, err := c.events[3*i+1].Elapsed(c.events[3*i+2])
		if err != nil {
			return nil, fmt.Errorf("harness: cuda elapsed time: %w", err)
		}
		ns[i] = ms * 1e6 / float64(rep)
		if cold {
			fms, err := c.events[3*i].Elapsed(c.events[3*i+1])
			if err != nil {
				return nil, fmt.Errorf("harness: cuda elapsed time: %w", err)
			}
			c.flushTime += time.Duration(fms * 1e6)
		}
	}
	return ns, nil
}

// ceilDiv is ⌈a / b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

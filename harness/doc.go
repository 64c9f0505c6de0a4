// Package harness measures GPU and CPU kernels the way kernelwatch's own suite measures its own, for any Go
// module: a family of kernels is declared as data — its inputs and the distributions they are drawn from, its
// outputs, a float64 reference, its axes — and the harness checks every implementation against the reference
// and times it by one policy, printing go test benchmark lines that regress compares and gates.
//
// The package's opinion is that a kernel's number means nothing without the machine's own yardstick beside it
// and a correctness check behind it, so neither is left to the benchmark. A benchmark only names its family
// (Bench); a test only names its families and shapes (Test). What to sweep is the family's declaration
// (Family); how to time, flush, warm up, stop sampling and check is the harness's, the same for every family of
// every module (PolicyFor, CheckCase).
//
// # Measurement
//
// One process is one sample: regress runs each side's test binary once per round, so that every sample has
// its own process start, memory placement and clocks, and a result line is one sample. In every process the
// suite measures its own copy kernel first (the copy-gbps config line), again before each family and at the
// end (run-health: ok while within 3% of the first), and on GPUs with bf16 tensor cores a tensor-core rate
// (mma-tflops). Before each GPU benchmark's result it prints a code line, the fingerprint of the kernels the
// benchmark launched (CodeKey). Each benchmark reports the median launch time (ns/op), its tail (p99-ns), the bandwidth of
// the traffic it cannot avoid — each input read once, each output written once — as GB/s and as a share of the
// copy (pct-copy), the intermediates it allocates (scratch-B), and for a family that declares Flops, TFLOP/s and
// a share of the tensor-core rate (pct-mma).
//
// On a GPU every timed launch starts with a cold L2 (a buffer of max(2 × L2, 128 MiB) overwritten before it)
// and is timed by its own pair of events, launches queued behind a gate and released together so that no host
// latency falls inside a sample; a case warms up until two launches agree within 2%, then takes launches until
// the 95% confidence interval of their median is within ±0.5% (at most 300 launches or 250 ms) when run with
// -benchtime 1x; kernels under 20 µs also get a hot figure (hot-ns). Buffers lie in one arena reserved when
// the backend opens, so that where a benchmark's memory lies does not depend on what ran before it. On a CPU,
// launches run back to back, b.N of them (go test's -benchtime), the CPU backend using every core
// (CPULaunch.Parallel).
//
// # Correctness
//
// CheckCase (Check and Test in a test) draws fresh random inputs from each operand's distribution, with a
// seed that a failure prints (-kernels.seed reproduces it), sets every byte of the outputs to 0xFF — NaN in
// every float format — and runs the implementation twice, so that an element left unwritten fails and so
// does a result that depends on what a previous run left behind; it compares the outputs with the float64
// reference by relative L2 error (1e-5 for fp32, 1e-2 for bf16; a family may set its own Tolerance or Check),
// and fails a run that changes an input or a naive implementation that needs no more scratch than the fused
// one.
//
// # Axes
//
// A Family is swept as nvbench sweeps its axes: over its storage dtypes (DTypes; fp32 and bf16 unless it says
// otherwise), over shapes — the device's rows × cols grid (Grids) or the family's own sizes (Grid, named by
// DimKeys) — over its variants (VariantKey, Variants) and over the two implementations, Fused (one kernel)
// and Naive (a chain of simple kernels with intermediates, as an eager framework runs it). A case's name is
// dtype=…/rows=…/cols=…[/labels][/<variant key>=…]/impl=…, under Benchmark<Family.Name>.
//
// # What a package uses
//
// A package of families needs a handful of names: Family, Operand and Dist to declare a family; RegisterCPU and
// CPULaunch for its CPU code; RegisterCUDA, CUDALaunch and AddModules for its CUDA code (cuda build tag only:
// GOFLAGS=-tags=cuda go doc shows them); Main, Test and Bench in its test file. The rest — the Backend and its
// buffers, Suite, Policy, CheckCase, CaseBuffers, WrapBench — is for tests and tuning tools that prepare and time
// launches themselves, as kernelwatch's own suite does.
//
// # Example
//
// A module's family, y = α·x + b, with its CPU code, its test and its benchmark (examples/go-module in
// kernelwatch's repository, which adds the CUDA code and a regress configuration). scaleadd.go:
//
//	package scaleadd
//
//	import "github.com/kernelwatch/kernelwatch/harness"
//
//	// alpha is the scale of ScaleAdd.
//	const alpha = 0.5
//
//	// ScaleAdd is y = α·x + b over rows × cols elements, in fp32 or bf16 storage with fp32 arithmetic. It is swept
//	// over the harness's grid of the device (Suite.Grid), both storage dtypes and both implementations.
//	var ScaleAdd = &harness.Family{
//		Name: "ScaleAdd",
//		Inputs: []harness.Operand{
//			{Name: "x", Len: elements, Gen: harness.Dist{Kind: harness.Normal, SD: 1}},
//			{Name: "b", Len: elements, Gen: harness.Dist{Kind: harness.Uniform, Lo: -1, Hi: 1}},
//		},
//		Outputs:   []harness.Operand{{Name: "y", Len: elements}},
//		Reference: reference,
//	}
//
//	func elements(c harness.Case) int { return c.Rows * c.Cols }
//
//	// reference computes y in float64 from the inputs as stored.
//	func reference(_ harness.Case, in [][]float64) [][]float64 {
//		x, b := in[0], in[1]
//		y := make([]float64, len(x))
//		for i := range y {
//			y[i] = alpha*x[i] + b[i]
//		}
//		return [][]float64{y}
//	}
//
//	func init() {
//		harness.RegisterCPU(ScaleAdd, harness.Fused, fusedCPU)
//		harness.RegisterCPU(ScaleAdd, harness.Naive, naiveCPU)
//	}
//
//	// fusedCPU reads x and b once and writes y once, blocks of rows on every core.
//	func fusedCPU(l *harness.CPULaunch) {
//		x, b, y, cols := l.In[0], l.In[1], l.Out[0], l.Cols
//		n := l.Rows
//		// …
//		l.Parallel(n, func(r0, r1 int) {
//			for r := r0; r < r1; r++ {
//				lo, hi := r%l.Rows*cols, (r%l.Rows+1)*cols
//				if y.DType() == harness.BF16 {
//					xs, bs, ys := x.U16[lo:hi], b.U16[lo:hi], y.U16[lo:hi]
//					for i := range ys {
//						ys[i] = harness.BF16FromF32(alpha*harness.F32FromBF16(xs[i]) + harness.F32FromBF16(bs[i]))
//					}
//					continue
//				}
//				xs, bs, ys := x.F32[lo:hi], b.F32[lo:hi], y.F32[lo:hi]
//				for i := range ys {
//					ys[i] = alpha*xs[i] + bs[i]
//				}
//			}
//		})
//	}
//
//	// naiveCPU is the eager form, t = α·x; y = t + b: two passes, t an fp32 intermediate of the whole tensor.
//	func naiveCPU(l *harness.CPULaunch) {
//		x, b, y, n := l.In[0], l.In[1], l.Out[0], l.Rows*l.Cols
//		t := l.ScratchF32(n)
//		l.Parallel(n, func(lo, hi int) {
//			ts := t[lo:hi]
//			if x.DType() == harness.BF16 {
//				for i, v := range x.U16[lo:hi] {
//					ts[i] = alpha * harness.F32FromBF16(v)
//				}
//				return
//			}
//			for i, v := range x.F32[lo:hi] {
//				ts[i] = alpha * v
//			}
//		})
//		l.Parallel(n, func(lo, hi int) {
//			ts := t[lo:hi]
//			if y.DType() == harness.BF16 {
//				bs, ys := b.U16[lo:hi], y.U16[lo:hi]
//				for i := range ys {
//					ys[i] = harness.BF16FromF32(ts[i] + harness.F32FromBF16(bs[i]))
//				}
//				return
//			}
//			bs, ys := b.F32[lo:hi], y.F32[lo:hi]
//			for i := range ys {
//				ys[i] = ts[i] + bs[i]
//			}
//		})
//	}
//
// scaleadd_test.go:
//
//	package scaleadd
//
//	import (
//		"os"
//		"testing"
//
//		"github.com/kernelwatch/kernelwatch/harness"
//	)
//
//	// TestMain opens the harness's backends and, for benchmarks, its suite: the copy reference, config lines, policy.
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
//
//	// testShapes are the correctness shapes: a single element, rows that do not fill the CPU's row blocks evenly,
//	// columns that are not a multiple of a 16-byte vector.
//	var testShapes = []harness.Shape{{Rows: 1, Cols: 1}, {Rows: 7, Cols: 129}, {Rows: 33, Cols: 1000}, {Rows: 3, Cols: 4099}}
//
//	// TestScaleAdd checks both implementations on every backend built in against the float64 reference, on fresh
//	// random inputs with poisoned outputs.
//	func TestScaleAdd(t *testing.T) { harness.Test(t, []*harness.Family{ScaleAdd}, testShapes) }
//
//	// BenchmarkScaleAdd measures both implementations over the device's grid, by the harness's policy.
//	func BenchmarkScaleAdd(b *testing.B) { harness.Bench(b, ScaleAdd) }
//
// go test runs TestScaleAdd on every backend built in; go test -run '^$' -bench . prints the config lines and
// one benchmark line per dtype, shape and implementation; regress check compares two commits of it. With the
// cuda build tag the same family runs on a GPU once its CUDA code is registered: a launcher per
// implementation (RegisterCUDA), which records the kernel launches of one run on a CUDALaunch
// (l.Kernel(name, grid, block, args...)), from PTX embedded in the package and registered with AddModules.
//
// Only files with the cuda build tag may import gorgonia.org/cu or use the CUDA backend's API: the driver
// binding calls os.Exit(1) from its init on a machine without a GPU.
package harness

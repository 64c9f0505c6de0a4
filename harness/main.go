package harness

import (
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"sync"
	"testing"
	"time"
)

// The flags Main defines. Their names are kernelwatch's suite's, which regress passes on (-kernels.device).
var (
	deviceFlag, seedFlag, pendingFlag = new(string), new(uint64), new(bool)
	// backendFlags define a backend's own flags (the CUDA backend's placement), with Main's.
	backendFlags []func()
	defineFlags  = sync.OnceFunc(func() {
		flag.StringVar(deviceFlag, "kernels.device", "auto", "backend the benchmarks run on: auto (the preferred "+
			"one built in), or a name such as cpu")
		flag.Uint64Var(seedFlag, "kernels.seed", 0, "seed of the correctness tests' random inputs (0: from the clock)")
		flag.BoolVar(pendingFlag, "kernels.pending", false, "GPU benchmarks: also run the families whose GPU code "+
			"is pending (Family.Pending), the pending plans of verified families (RunPending) and the tensor-core probe")
		for _, define := range backendFlags {
			define()
		}
	})
)

// What Main opened, for Bench, Check and the tests.
var (
	mainSuite    *Suite
	mainBackends = map[string]Backend{}
	testSeed     uint64
)

// WrapBench, when set before Main runs (from an init function of a variant build's test file), wraps the
// backend the benchmarks run on — a deliberately slowed suite, for measuring what a regression gate detects.
// The tests run on the backends themselves.
var WrapBench func(Backend) (Backend, error)

// Main is the body of TestMain in a package of families: it defines the harness's flags and parses them, opens
// every backend built in (the tests run on each: Backends), and when benchmarks were asked for (-test.bench)
// opens the suite on the preferred one (-kernels.device picks another) — measuring the copy bandwidth and
// printing the config and Unit lines before the benchmarks (Suite.Start) and the run-health and costs lines after
// them (Suite.Finish) — then runs the tests and benchmarks and returns the exit code:
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
//
// Flags: -kernels.device (cpu, cuda, auto), -kernels.seed (the correctness tests' seed; 0: from the clock, and
// a failure prints the seed that reproduces it), -kernels.pending (run GPU code that has not yet passed its
// tests on a GPU), -kernels.cpu-timer (process-cpu or wall: what the CPU backend's samples measure); with the
// cuda build tag -kernels.arena and -kernels.arena-skew (where device buffers are
// placed, for measuring placement). Do not call flag.Parse before Main. With -test.list it opens nothing.
func Main(m *testing.M) int {
	defineFlags()
	flag.Parse()
	if flag.Lookup("test.list").Value.String() != "" {
		// Listing runs nothing: skip opening the device (a CUDA context and its modules take seconds), which
		// regress pays on every side before a comparison starts.
		return m.Run()
	}
	testSeed = *seedFlag
	if testSeed == 0 {
		testSeed = uint64(time.Now().UnixNano())
	}
	start := time.Now()
	for _, name := range BackendNames() {
		be, err := openBackend(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer be.Close()
		mainBackends[name] = be
	}
	name, err := resolveBackend(*deviceFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	be := mainBackends[name]
	if WrapBench != nil {
		if be, err = WrapBench(be); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	mainSuite = NewSuite(be, os.Stdout)
	mainSuite.RunPending = *pendingFlag
	mainSuite.Costs.Start, mainSuite.Costs.Open = start, time.Since(start)
	bench := flag.Lookup("test.bench").Value.String() != ""
	if bench {
		if err := mainSuite.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if bench {
		if err := mainSuite.Finish(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

// RunPending reports whether this run asks for GPU code that has not yet passed its tests on a GPU
// (-kernels.pending): besides the families whose Pending is set, which the harness skips by itself, a family's
// own pending plans, which its launchers choose only then. It parses the harness's flags if Main has not yet,
// so that TestMain may consult it before calling Main.
func RunPending() bool {
	defineFlags()
	if !flag.Parsed() {
		flag.Parse()
	}
	return *pendingFlag
}

// Bench is the body of a benchmark of family f: the suite Main opened sweeps f's cases and implementations as
// sub-benchmarks and measures each by the device's policy (Suite.Bench).
//
//	func BenchmarkRMSNorm(b *testing.B) { harness.Bench(b, RMSNormFamily) }
func Bench(b *testing.B, f *Family) { mainSuite.Bench(b, f) }

// Backends returns the backends Main opened, by name: every one built in (the CPU's, and CUDA's with the cuda
// build tag). The tests run on each.
func Backends() map[string]Backend { return maps.Clone(mainBackends) }

// TestSeed is the base seed of this process's correctness tests: -kernels.seed, or one from the clock.
func TestSeed() uint64 { return testSeed }

// CaseSeed derives a test's input seed from TestSeed and the test's name, so that each subtest draws its own
// inputs and -kernels.seed with -run reproduces any one of them.
func CaseSeed(t *testing.T) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, t.Name())
	return testSeed ^ h.Sum64()
}

package harness

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

var (
	deviceFlag = flag.String("kernels.device", "auto", "backend the benchmarks run on: auto (the preferred one built in), "+
		"or a name such as cpu")
	seedFlag    = flag.Uint64("kernels.seed", 0, "seed of the correctness tests' random inputs (0: from the clock)")
	pendingFlag = flag.Bool("kernels.pending", false, "GPU benchmarks: also run the families whose GPU code is "+
		"pending (Family.Pending), the pending plans of verified families (row_dsmem) and the tensor-core probe")
)

// testBackends holds every backend built in, by name; the correctness tests run on each.
var testBackends = map[string]Backend{}

// suite is the benchmark run (see Suite); Start has run when benchmarks were requested.
var suite *Suite

// benchBackend, when set (by a variant build's test file, see slowdown_cuda_test.go), wraps the backend the
// benchmarks run on.
var benchBackend func(Backend) (Backend, error)

// testSeed is the base seed of this process's correctness tests; failures print it.
var testSeed uint64

// TestMain opens the backends (unless it only lists, -test.list), and when benchmarks were requested (-test.bench), measures the copy bandwidth
// and prints the config and Unit lines before them and the run-health lines after them (Suite.Start, Finish).
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
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
		be, err := OpenBackend(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer be.Close()
		testBackends[name] = be
	}
	name, err := ResolveBackend(*deviceFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	be := testBackends[name]
	if benchBackend != nil {
		if be, err = benchBackend(be); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	suite = NewSuite(be, os.Stdout)
	suite.RunPending = *pendingFlag
	rowDSMEMOn = rowDSMEMOn || *pendingFlag // the row families' pending plan (rowplan.go)
	suite.Costs.Start, suite.Costs.Open = start, time.Since(start)
	bench := flag.Lookup("test.bench").Value.String() != ""
	if bench {
		if err := suite.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if bench {
		if err := suite.Finish(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

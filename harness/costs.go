package harness

import (
	"fmt"
	"strings"
	"time"
)

// CostsKey is the configuration key of the line Suite.Finish prints last: where the process's time went.
// regress reads it from every invocation, adds the process start-up it measured itself, and reports the
// whole run's breakdown (regress/runner.Breakdown); it is not kept in result files.
const CostsKey = "kernelwatch-costs"

// Costs is where a benchmark process's wall time went, phase by phase. The phases do not overlap except
// that Timed and Flush are parts of Sampling (launch time measured by the device's own clock):
//
//   - Open: opening the backends (CUDA: the context, streams and events);
//   - Modules: loading kernel modules (CUDA: PTX JIT-compiled by the driver, or found in its cache);
//   - Copy: the references every benchmark is judged against: the copy bandwidth, its run-health checks and
//     the tensor-core probe (mma-tflops);
//   - Inputs: allocating buffers, filling inputs, binding launches;
//   - Warmup: launches before a case's first sample;
//   - Sampling: the timed launches' loops, of which Timed is the launches themselves and Flush the cache
//     flushes before them; the rest is what queueing, synchronising and reading events cost;
//   - Total: from TestMain's start to the costs line; what no phase claims is the testing package's own
//     work (garbage collection between benchmarks, output).
type Costs struct {
	Start                               time.Time
	Open, Modules, Copy, Inputs, Warmup time.Duration
	Sampling, Timed, Flush              time.Duration
}

// charge adds the time since start to *phase; call it as defer c.charge(&c.Phase, time.Now()).
func (c *Costs) charge(phase *time.Duration, start time.Time) { *phase += time.Since(start) }

// flushTimer is a backend that measures its own cache flushes (the GPU by events, the CPU by the clock).
type flushTimer interface{ FlushTime() time.Duration }

// launchWaller is a backend whose samples are not wall time (the CPU timed by its CPU time) and that keeps the
// wall time of its timed launches for Costs.Timed.
type launchWaller interface{ LaunchWall() time.Duration }

// moduleLoader is a backend that loads a family's code on demand, so that a run loads only what it runs.
type moduleLoader interface{ Load(f *Family) error }

// Line is the costs configuration line: each phase in seconds.
func (c *Costs) Line() string {
	total := time.Since(c.Start)
	if c.Start.IsZero() {
		total = 0
	}
	var b strings.Builder
	b.WriteString(CostsKey + ":")
	for _, p := range []struct {
		name string
		d    time.Duration
	}{{"total", total}, {"open", c.Open}, {"modules", c.Modules}, {"copy", c.Copy}, {"inputs", c.Inputs},
		{"warmup", c.Warmup}, {"sampling", c.Sampling}, {"timed", c.Timed}, {"flush", c.Flush}} {
		fmt.Fprintf(&b, " %s=%.4f", p.name, p.d.Seconds())
	}
	return b.String()
}

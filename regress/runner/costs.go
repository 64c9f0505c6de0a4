package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CostsKey is the configuration key of the line a kernelwatch suite prints
// last in every process (harness.CostsKey): where that process's time went.
// The runner takes it out of the results (it would otherwise become
// configuration of the next round's results) and adds it up in Costs.
const CostsKey = "kernelwatch-costs"

// Costs is where the test binary processes' time went, summed over every
// invocation: each field is process-seconds. From a suite that prints no
// costs line (a plain Go module) only Process is known, and it holds the
// whole wall time of its processes.
type Costs struct {
	// Processes counts the invocations; Reported those with a costs line.
	Processes, Reported int
	// Process is what a process costs outside its own accounting: exec,
	// the Go runtime, package init (gorgonia.org/cu's cuInit), exit.
	Process time.Duration
	// Open (contexts, streams), Modules (kernel modules, PTX JIT), Copy
	// (the copy reference and health checks), Inputs (allocation, fills,
	// launch binding), Warmup and Sampling; of Sampling, Timed is the
	// timed launches themselves and Flush the cache flushes before them,
	// both by the device's clock. Other is what the suite's process spent
	// outside every phase (the testing package's own work).
	Open, Modules, Copy, Inputs, Warmup, Sampling, Timed, Flush, Other time.Duration
}

// parseCosts reads a costs line: "kernelwatch-costs: total=1.5 open=0.2 …"
// (seconds). It returns the process's total and its costs.
func parseCosts(line string) (total time.Duration, c Costs, err error) {
	_, rest, _ := strings.Cut(line, ":")
	fields := map[string]*time.Duration{"total": &total, "open": &c.Open, "modules": &c.Modules, "copy": &c.Copy,
		"inputs": &c.Inputs, "warmup": &c.Warmup, "sampling": &c.Sampling, "timed": &c.Timed, "flush": &c.Flush}
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		s, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || s < 0 {
			return 0, Costs{}, fmt.Errorf("bad %s field %q", CostsKey, f)
		}
		if d := fields[k]; d != nil {
			*d = time.Duration(s * float64(time.Second))
		}
	}
	known := c.Open + c.Modules + c.Copy + c.Inputs + c.Warmup + c.Sampling
	c.Other = max(total-known, 0)
	return total, c, nil
}

// add adds one invocation: its wall time and, when it printed one, its
// costs line (total and phases; ok false when it printed none).
func (c *Costs) add(wall, total time.Duration, p Costs, ok bool) {
	if !ok {
		c.Merge(Costs{Processes: 1, Process: wall})
		return
	}
	p.Processes, p.Reported, p.Process = 1, 1, max(wall-total, 0)
	c.Merge(p)
}

// Merge adds o's invocations to c.
func (c *Costs) Merge(o Costs) {
	c.Processes += o.Processes
	c.Reported += o.Reported
	c.Process += o.Process
	c.Open += o.Open
	c.Modules += o.Modules
	c.Copy += o.Copy
	c.Inputs += o.Inputs
	c.Warmup += o.Warmup
	c.Sampling += o.Sampling
	c.Timed += o.Timed
	c.Flush += o.Flush
	c.Other += o.Other
}

// Phase is one named share of a run's time.
type Phase struct {
	Name string
	Time time.Duration
}

// Phases lists the costs as disjoint phases, in the order a process goes
// through them: process start and exit, context and modules, copy
// reference, inputs, warm-up, L2 flushes, timed launches, launch gaps
// (sampling less flushes and timed launches: queueing, synchronising,
// reading events) and the rest of the process.
func (c Costs) Phases() []Phase {
	gaps := max(c.Sampling-c.Timed-c.Flush, 0)
	return []Phase{
		{"process start and exit", c.Process},
		{"context and modules", c.Open + c.Modules},
		{"copy reference", c.Copy},
		{"inputs", c.Inputs},
		{"warm-up", c.Warmup},
		{"L2 flushes", c.Flush},
		{"timed launches", c.Timed},
		{"launch gaps", gaps},
		{"other", c.Other},
	}
}

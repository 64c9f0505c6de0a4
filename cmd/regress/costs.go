package main

import (
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// commandCosts is where a check's or run's wall time went: building, the
// test binaries' phases (runner.Costs.Phases) when the suite accounts for
// them, else the test binaries' time as one phase, and regress's own work
// (git, listing, comparing: the wall time that neither building nor the
// busiest lane's processes account for).
func commandCosts(wall, build time.Duration, res *runner.Result) *report.Costs {
	c := &report.Costs{WallSeconds: wall.Seconds()}
	add := func(name string, d time.Duration) {
		c.Phases = append(c.Phases, report.Phase{Name: name, Seconds: d.Seconds()})
	}
	if build > 0 {
		add("build", build)
	}
	if res.Costs.Reported > 0 {
		for _, p := range res.Costs.Phases() {
			add(p.Name, p.Time)
		}
	} else {
		// A plain Go module: no launches, contexts or flushes to
		// account for, only its processes.
		add("test binaries", res.Costs.Process)
	}
	add("regress itself", max(wall-build-res.InvocationTime, 0))
	return c
}

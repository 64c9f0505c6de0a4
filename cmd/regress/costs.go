package main

import (
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// commandCosts is where a check's or run's wall time went: building, the
// test binaries' phases (runner.Costs.Phases), and regress's own work (git,
// listing, comparing: the wall time that neither building nor the busiest
// lane's processes account for).
func commandCosts(wall, build time.Duration, res *runner.Result) *report.Costs {
	c := &report.Costs{WallSeconds: wall.Seconds()}
	add := func(name string, d time.Duration) {
		c.Phases = append(c.Phases, report.Phase{Name: name, Seconds: d.Seconds()})
	}
	if build > 0 {
		add("build", build)
	}
	for _, p := range res.Costs.Phases() {
		add(p.Name, p.Time)
	}
	add("regress itself", max(wall-build-res.InvocationTime, 0))
	return c
}

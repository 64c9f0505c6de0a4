package verdict

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kernelwatch/kernelwatch/regress/group"
)

// Run health: is the machine's drift during the run worth a warning?
//
// A kernelwatch suite measures its own copy kernel at the start of every
// process (copy-gbps), again before kernel families, and at the end
// (copy-gbps-end), and marks run-health "degraded" when a later copy drifted
// more than 3% from the first. On a CPU, whose copy runs through memory
// shared with everything else on the machine, nearly every run drifts that
// much: a warning on every "degraded" would be a warning on every CPU run,
// and one nobody can act on.
//
// What matters to the verdicts is the size of the drift against the
// thresholds the comparisons are judged by, and whether it differs between
// the sides. Drift common to both interleaved sides lands on both alike:
// it widens the noise, and is worth saying only when it is as large as the
// smallest gated threshold. A difference between the sides (a stored
// baseline recorded on an idle machine, the current side on a busy one)
// moves every comparison the same way, so half the threshold is enough to
// mention. Both are said once per report, with what to do.

// healthWarning returns the report's one run-health warning, or "" when
// the drift is too small to matter against minThreshold (the smallest
// threshold a gated comparison is judged by).
func healthWarning(g *group.Grouping, minThreshold float64) string {
	base, cur := copyReadings(g.BaseValues), copyReadings(g.CurValues)
	if len(base) == 0 && len(cur) == 0 {
		return degradedWithoutReadings(g)
	}
	if len(base) > 0 && len(cur) > 0 {
		mb, mc := median(base), median(cur)
		if shift := math.Abs(mb-mc) / math.Max(mb, mc); shift >= minThreshold/2 {
			slower, faster := "current", "baseline"
			if mb < mc {
				slower, faster = faster, slower
			}
			return fmt.Sprintf("the copy reference ran %s slower on the %s side than on the %s (median %s against %s GB/s): "+
				"the sides ran on a machine in different states, so differences of that size may be the machine's, not the code's; "+
				"compare sides measured on one idle runner", driftPct(shift), slower, faster, gbps(math.Min(mb, mc)), gbps(math.Max(mb, mc)))
		}
	}
	db, dc := drift(base), drift(cur)
	hi := math.Max(db, dc)
	if hi < minThreshold {
		return ""
	}
	if math.Min(db, dc) >= minThreshold/2 {
		return fmt.Sprintf("the copy reference drifted %s during the run on both sides (baseline %s, current %s): "+
			"the machine was busy; rerun on an idle runner or widen thresholds", driftPct(hi), driftPct(db), driftPct(dc))
	}
	side, other, od := "current", "baseline", db
	if db > dc {
		side, other, od = "baseline", "current", dc
	}
	return fmt.Sprintf("the copy reference drifted %s during the run on the %s side only (%s %s): "+
		"the machine was busy while that side ran, so its results may be the machine's, not the code's; rerun on an idle runner",
		driftPct(hi), side, other, driftPct(od))
}

// copyReadings are the copy bandwidths a side's processes measured, at
// their start and their end (distinct values, in GB/s).
func copyReadings(values map[string][]string) []float64 {
	var out []float64
	for _, k := range []string{"copy-gbps", "copy-gbps-end"} {
		for _, v := range values[k] {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
				out = append(out, f)
			}
		}
	}
	return out
}

// drift is how far the slowest copy fell below the fastest, as a fraction
// of the fastest.
func drift(readings []float64) float64 {
	if len(readings) < 2 {
		return 0
	}
	hi, lo := slices.Max(readings), slices.Min(readings)
	return (hi - lo) / hi
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// degradedWithoutReadings is the warning for results that say
// run-health: degraded but carry no copy bandwidth to size the drift by.
func degradedWithoutReadings(g *group.Grouping) string {
	var sides []string
	for _, side := range []struct {
		name   string
		values map[string][]string
	}{{"baseline", g.BaseValues}, {"current", g.CurValues}} {
		if slices.ContainsFunc(side.values["run-health"], func(h string) bool { return h != "ok" }) {
			sides = append(sides, side.name)
		}
	}
	switch len(sides) {
	case 0:
		return ""
	case 2:
		return "run-health is degraded on both sides, and no copy bandwidth says by how much: the machine may have been busy; rerun on an idle runner if the results surprise"
	}
	return "run-health is degraded on the " + sides[0] + " side, and no copy bandwidth says by how much: the machine may have been busy; rerun on an idle runner if the results surprise"
}

// driftPct formats a fraction as a percentage with two significant digits at
// most: 0.072 → 7.2%, 0.42 → 42%.
func driftPct(f float64) string {
	if f >= 0.1 {
		return fmt.Sprintf("%.0f%%", 100*f)
	}
	return strconv.FormatFloat(math.Round(1000*f)/10, 'f', -1, 64) + "%"
}

func gbps(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// CostsLine is the one-line breakdown of a command's time. When the suite
// accounted for its own time (a phase "timed launches"), the timed
// launches' share comes first ("timed launches 61% of 7m12s"), since it is
// the part that measures; then every other phase that took at least 0.5%,
// largest first. A suite that accounts for nothing (a plain Go module) has
// no launches to speak of: its line is the wall time and its phases
// ("4s: test binaries 75%, build 20%, regress itself 5%"). Shares are of
// the phases' sum, which is the wall time unless lanes ran in parallel; ""
// without costs.
func CostsLine(c *report.Costs) string {
	if c == nil || len(c.Phases) == 0 {
		return ""
	}
	var sum float64
	for _, p := range c.Phases {
		sum += p.Seconds
	}
	if sum <= 0 {
		return ""
	}
	share := func(s float64) string { return fmt.Sprintf("%.0f%%", 100*s/sum) }
	timed, accounted := 0.0, false
	var rest []report.Phase
	for _, p := range c.Phases {
		if p.Name == TimedLaunches {
			timed, accounted = p.Seconds, true
		} else if p.Seconds >= 0.005*sum {
			rest = append(rest, p)
		}
	}
	for i := 1; i < len(rest); i++ { // largest first, stable
		for j := i; j > 0 && rest[j].Seconds > rest[j-1].Seconds; j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	parts := make([]string, len(rest))
	for i, p := range rest {
		parts[i] = p.Name + " " + share(p.Seconds)
	}
	wall := time.Duration(c.WallSeconds * float64(time.Second)).Round(time.Second)
	if !accounted {
		return wall.String() + ": " + strings.Join(parts, ", ")
	}
	line := fmt.Sprintf("%s %s of %s", TimedLaunches, share(timed), wall)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

// TimedLaunches is the phase of a suite's own accounting that measures.
const TimedLaunches = "timed launches"

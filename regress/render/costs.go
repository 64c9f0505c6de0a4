package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// CostsLine is the one-line breakdown of a command's time: the timed
// launches' share first ("timed launches 61% of 7m12s"), then every other
// phase that took at least 0.5%, largest first. Shares are of the phases'
// sum, which is the wall time unless lanes ran in parallel; "" without
// costs.
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
	var timed float64
	var rest []report.Phase
	for _, p := range c.Phases {
		if p.Name == "timed launches" {
			timed = p.Seconds
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
	line := fmt.Sprintf("timed launches %s of %s", share(timed), wall)
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

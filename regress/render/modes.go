package render

import (
	"fmt"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// ModesNote describes the modes of a comparison whose samples fall in two
// modes on either side: "two modes: baseline 721.4µs ×2, 836.6µs ×8;
// current 720.9µs ×5, 836.9µs ×5", with "one mode" for a side that has
// one. It is "" when neither side has two modes. Every format shows it:
// with the row's notes in text and markdown (and so in the pull-request
// comment), in the verdict cell of the HTML page; the JSON report has the
// modes themselves. It is not escaped.
func ModesNote(c *report.Comparison) string {
	b, cur := c.Baseline, c.Current
	if (b == nil || len(b.Modes) == 0) && (cur == nil || len(cur.Modes) == 0) {
		return ""
	}
	class := benchunit.ClassOf(c.Unit)
	suffix := " " + c.Unit
	if strings.HasPrefix(c.Unit, "sec/") {
		suffix = "s"
	}
	side := func(name string, s *report.Summary) string {
		switch {
		case s == nil:
			return ""
		case len(s.Modes) == 0:
			return name + " one mode"
		}
		parts := make([]string, len(s.Modes))
		for i, m := range s.Modes {
			parts[i] = fmt.Sprintf("%s%s ×%d", benchunit.Scale(m.Center, class), suffix, m.N)
		}
		return name + " " + strings.Join(parts, ", ")
	}
	var sides []string
	for _, s := range []string{side("baseline", b), side("current", cur)} {
		if s != "" {
			sides = append(sides, s)
		}
	}
	return "two modes: " + strings.Join(sides, "; ")
}

// rowNotes are the notes of a comparison's row: the two-mode note first,
// then its warnings.
func rowNotes(c *report.Comparison) []string {
	if n := ModesNote(c); n != "" {
		return append([]string{n}, c.Warnings...)
	}
	return c.Warnings
}

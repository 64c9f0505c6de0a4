package comment

import (
	"fmt"
	"unicode/utf16"

	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// StatusState maps the report's verdict to a commit-status state; a run
// cut short whose verdict does not stand is an error.
func StatusState(r *report.Report) string {
	if r.CutShort() {
		return "error"
	}
	switch r.Verdict {
	case report.Pass:
		return "success"
	case report.Fail:
		return "failure"
	}
	return "error"
}

// StatusDescription is the one-line commit-status description of r, at
// most StatusLimit characters: the outcome, the worst regression and the
// threshold, shortened until it fits.
func StatusDescription(r *report.Report) string {
	thr := " (threshold " + render.Percent(r.Settings.Threshold) + ")"
	line := render.CleanText(render.Headline(r))
	w := worst(r)
	if w == nil {
		return fitStatus(line+thr, line)
	}
	what := w.Verdict
	if w.Delta.Valid() {
		what = render.Delta(w.Delta)
	}
	name := render.CleanText(render.Name(w))
	short := fmt.Sprintf("FAIL: %d failing", len(r.Failing()))
	for _, pre := range []string{line, short} {
		for _, n := range []int{1 << 20, 60, 40, 24} {
			if s := pre + "; worst " + truncate(name, n) + " " + what + thr; utf16Len(s) <= StatusLimit {
				return s
			}
		}
	}
	return fitStatus(short+"; worst "+what+thr, line)
}

// fitStatus returns the first candidate that fits, else the last one cut.
func fitStatus(candidates ...string) string {
	for _, s := range candidates {
		if utf16Len(s) <= StatusLimit {
			return s
		}
	}
	s := candidates[len(candidates)-1]
	rs := []rune(s)
	for utf16Len(string(rs))+1 > StatusLimit {
		rs = rs[:len(rs)-1]
	}
	return string(rs) + "…"
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

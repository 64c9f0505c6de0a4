package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// HistoryFormats lists the formats WriteHistory accepts.
var HistoryFormats = []string{"text", "markdown", "json"}

// WriteHistory renders the steps of a history: text (a table for terminals
// and CI logs), markdown (for job summaries) or json (the History itself).
func WriteHistory(w io.Writer, h *history.History, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(h)
	case "text", "markdown":
	default:
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(HistoryFormats, ", "))
	}
	md := format == "markdown"
	esc := clean
	if md {
		esc = mdEscape
	}
	var b strings.Builder
	title := fmt.Sprintf("history of %s: %d snapshots, %d series, %s", h.Source, len(h.Snapshots), len(h.Series), HistoryHeadline(h))
	method := fmt.Sprintf("%s (p < %s, %d permutations, seed %d), segments ≥ %d points; step size over ≤ %d points each side, %s CI",
		h.Settings.Method, formatG(h.Settings.Alpha), h.Settings.Permutations, h.Settings.Seed, h.Settings.MinSegment,
		h.Settings.Window, percent(h.Settings.Confidence))
	if h.Settings.Correction != "" {
		method += "; steps gated past their benchmark's threshold, p corrected across series (" + CorrectionWords(h.Settings.Correction) + ")"
	}
	if md {
		b.WriteString("### " + esc(title) + "\n\n" + esc(method) + "\n\n")
	} else {
		b.WriteString(esc(title) + "\n" + method + "\n\n")
	}
	if len(h.Steps) > 0 {
		head := []string{"benchmark", "unit", "first after", "before", "after", "delta", "CI", "threshold", "p", ""}
		var rows [][]string
		for _, s := range h.Steps {
			sc := benchunit.CommonScale([]float64{float64(s.Before), float64(s.After)}, benchunit.ClassOf(s.Unit))
			mark := ""
			switch {
			case s.Gated:
				mark = "✗ worse (gated)"
			case s.Worse && !s.PastThreshold:
				mark = "worse, within its threshold"
			case s.Worse && s.PAdjusted.Valid() && h.Series[s.Series].Gate == report.GateFail:
				mark = "worse, not significant after the correction"
			case s.Worse:
				mark = "worse"
			default:
				mark = "better"
			}
			p := strconv.FormatFloat(s.P, 'f', 3, 64)
			if s.PAdjusted.Valid() {
				if adj := strconv.FormatFloat(float64(s.PAdjusted), 'f', 3, 64); adj != p {
					p += " (adj " + adj + ")"
				}
			}
			label := s.Label
			if s.Commit != "" && !strings.Contains(label, shortSHA(s.Commit)) {
				label += " (" + shortSHA(s.Commit) + ")"
			}
			rows = append(rows, []string{esc(s.Name), esc(s.Unit), esc(label), sc.Format(float64(s.Before)),
				sc.Format(float64(s.After)), delta(s.Delta), stepCI(s), percent(s.Threshold), p, mark})
		}
		if md {
			b.WriteString("| " + strings.Join(head, " | ") + " |\n|:--|:--|:--|--:|--:|--:|:-:|--:|--:|:--|\n")
			for _, r := range rows {
				b.WriteString("| " + strings.Join(r, " | ") + " |\n")
			}
		} else {
			t := &table{seps: []string{"", "  ", "  ", "  ", "  ", "  ", "  ", "  ", "  ", "  "}}
			cells := func(r []string) []cell {
				out := make([]cell, len(r))
				for i, s := range r {
					out[i] = cell{s: s}
					if i >= 3 && i <= 5 || i == 7 {
						out[i].align = right
					}
				}
				return out
			}
			t.add(cells(head)...)
			for _, r := range rows {
				t.add(cells(r)...)
			}
			t.write(&b)
		}
		b.WriteString("\n")
	}
	for _, m := range h.Warnings {
		if md {
			b.WriteString("- warning: " + esc(m) + "\n")
		} else {
			b.WriteString("warning: " + esc(m) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HistoryHeadline says how many steps a history has: "no steps",
// "3 steps (1 worse and gated, 1 worse, 1 better)".
func HistoryHeadline(h *history.History) string {
	if len(h.Steps) == 0 {
		return "no steps"
	}
	gated, worse := 0, 0
	for _, s := range h.Steps {
		switch {
		case s.Gated:
			gated++
		case s.Worse:
			worse++
		}
	}
	var parts []string
	if gated > 0 {
		parts = append(parts, fmt.Sprintf("%d worse and gated", gated))
	}
	if worse > 0 {
		parts = append(parts, fmt.Sprintf("%d worse", worse))
	}
	if n := len(h.Steps) - gated - worse; n > 0 {
		parts = append(parts, fmt.Sprintf("%d better", n))
	}
	noun := "steps"
	if len(h.Steps) == 1 {
		noun = "step"
	}
	return fmt.Sprintf("%d %s (%s)", len(h.Steps), noun, strings.Join(parts, ", "))
}

func stepCI(s history.Step) string {
	c := report.Comparison{DeltaLo: s.DeltaLo, DeltaHi: s.DeltaHi}
	return deltaCI(&c)
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

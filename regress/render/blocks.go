package render

import (
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// The building blocks below let a publisher (regress/publish/comment) lay out
// the same markdown as Markdown under a byte budget, row by row, instead of
// re-implementing the cells and their escaping.

// Headline is the one-line outcome of r: "FAIL: 2 regressions, 1 removed",
// "PASS: 0 regressions, 140 unchanged", "NO DATA: nothing was comparable".
func Headline(r *report.Report) string { return headline(r) }

// Incomplete says how far a run cut short got and why ("3 of 10 rounds,
// interrupted"); "" for a complete run.
func Incomplete(r *report.Report) string {
	if r.Incomplete == nil {
		return ""
	}
	return incomplete(r.Incomplete)
}

// EscapeMarkdown makes untrusted text inert in GitHub markdown, in a table
// cell or in running text: pipes and markdown punctuation are escaped, HTML
// characters become entities, line breaks spaces, and @mentions and #links
// are broken by putting their key character alone in a <code> element.
func EscapeMarkdown(s string) string { return mdEscape(s) }

// CleanText makes untrusted text safe to print on one line of plain text:
// control characters and bidirectional overrides are shown escaped.
func CleanText(s string) string { return clean(s) }

// Delta formats a relative change as benchstat does (+6.40%); — when it does
// not exist.
func Delta(d report.Number) string { return delta(d) }

// Percent formats a fraction as a percentage without float noise: 0.05 → 5%.
func Percent(f float64) string { return percent(f) }

// Name is the comparison's name with its distinguishing configuration:
// "Softmax/rows=1024 [pkg=foo]". It is not escaped.
func Name(c *report.Comparison) string { return configName(c) }

// Ordered returns the comparisons of r in the order Markdown presents them:
// failing the gate (worst first), warned about, bad but ungated,
// improvements, inconclusive, added, unchanged.
func Ordered(r *report.Report) []*report.Comparison { return mdOrder(r) }

// CorrectionWords describes a multiple-comparison correction in words.
func CorrectionWords(name string) string {
	if w, ok := corrections[name]; ok {
		return w
	}
	return "correction " + mdEscape(name)
}

// MarkdownTable renders the comparisons of one report as rows of the table
// Markdown writes. Warnings of the rows become numbered footnotes in the
// order rows are rendered, so a caller that drops rows never numbers notes
// it does not show.
type MarkdownTable struct {
	confidence float64
	notes      footnotes
}

// NewMarkdownTable starts a table for the comparisons of r.
func NewMarkdownTable(r *report.Report) *MarkdownTable {
	return &MarkdownTable{confidence: r.Settings.Confidence}
}

// Header returns the two header lines of the table.
func (t *MarkdownTable) Header() string {
	ci := "CI"
	if t.confidence > 0 {
		ci = percent(t.confidence) + " CI"
	}
	return "| Benchmark | Unit | Baseline | Current | Δ | " + ci + " | p | Verdict |\n" +
		"|:--|:--|--:|--:|--:|:-:|--:|:--|\n"
}

// Row returns the table line of c, numbering its warnings as footnotes.
func (t *MarkdownTable) Row(c *report.Comparison) string {
	sc := rowFormatOf(c)
	notes := rowNotes(c)
	warns := make([]string, len(notes))
	for i, m := range notes {
		warns[i] = mdEscape(m)
	}
	verdict := c.Verdict
	if bud := budget(c); bud != "" {
		verdict += " (" + bud + ")"
	}
	if d := detects(c); d != "" {
		verdict += " " + d
	}
	switch {
	case c.Fails():
		verdict = "❌ " + verdict
	case c.Warns():
		verdict = "⚠️ " + verdict
	}
	if m := t.notes.mark(warns); m != "" {
		verdict += " " + m
	}
	cells := []string{mdEscape(configName(c)), mdEscape(c.Unit), mdSummary(c.Baseline, sc),
		mdSummary(c.Current, sc), delta(c.Delta), deltaCI(c), pValue(c), verdict}
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// NoteCount is the number of footnotes numbered so far.
func (t *MarkdownTable) NoteCount() int { return len(t.notes.list) }

// DropNotes forgets the footnotes numbered after the first n, for a caller
// that decided not to show the row that numbered them.
func (t *MarkdownTable) DropNotes(n int) {
	for _, m := range t.notes.list[n:] {
		delete(t.notes.num, m)
	}
	t.notes.list = t.notes.list[:n]
}

// Notes returns the footnote lines ("- ¹ text\n") of the rows rendered so
// far.
func (t *MarkdownTable) Notes() []string {
	out := make([]string, len(t.notes.list))
	for i, m := range t.notes.list {
		out[i] = "- " + superscript(i+1) + " " + m + "\n"
	}
	return out
}

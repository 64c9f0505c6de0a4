package render

import (
	"io"
	"strings"
	"unicode"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Text writes r as aligned benchstat-style tables, one per unit: the labels
// and configuration of both sides, then per comparison the two summaries, the
// delta with its confidence interval, p, n and the verdict (✗ fails the gate,
// ! is only warned about), comparison warnings as footnotes, the report's
// warnings and a final one-line summary.
func Text(w io.Writer, r *report.Report) error {
	var b strings.Builder
	b.WriteString("baseline: " + orMissing(clean(r.Baseline.Label)) + "\n")
	b.WriteString("current:  " + orMissing(clean(r.Current.Label)) + "\n")
	for _, l := range configLines(r) {
		b.WriteString(clean(l) + "\n")
	}
	ci := "CI"
	if r.Settings.Confidence > 0 {
		ci = percent(r.Settings.Confidence) + " CI"
	}
	for _, unit := range units(r) {
		b.WriteString("\n")
		var rows []*report.Comparison
		marked := false
		for i := range r.Comparisons {
			if c := &r.Comparisons[i]; c.Unit == unit {
				rows = append(rows, c)
				marked = marked || c.Fails() || c.Warns()
			}
		}
		t := &table{seps: []string{"", "  ", " ± ", "   ", " ± ", "   ", "  ", "  ", "  ", "  "}}
		t.add(cell{s: clean(unit)}, cell{s: "baseline", align: center, span: 2},
			cell{s: "current", align: center, span: 2}, cell{s: "delta", align: right},
			cell{s: ci}, cell{s: "p"}, cell{s: "n"}, cell{s: "verdict"})
		var notes footnotes
		for _, c := range rows {
			sc := rowScaler(c)
			bv, bp := centerOf(c.Baseline, sc)
			cv, cp := centerOf(c.Current, sc)
			verdict := c.Verdict
			if b := budget(c); b != "" {
				verdict += " (" + b + ")"
			}
			if d := detects(c); d != "" {
				verdict += " " + d
			}
			if marked {
				verdict = mark(c) + " " + verdict
			}
			rn := rowNotes(c)
			warns := make([]string, len(rn))
			for i, m := range rn {
				warns[i] = clean(m)
			}
			if m := notes.mark(warns); m != "" {
				verdict += " " + m
			}
			t.add(cell{s: clean(configName(c))}, cell{s: bv, align: right}, cell{s: bp, align: right},
				cell{s: cv, align: right}, cell{s: cp, align: right}, cell{s: delta(c.Delta), align: right},
				cell{s: deltaCI(c)}, cell{s: "p=" + pValue(c)}, cell{s: sampleCount(c)},
				cell{s: verdict})
		}
		t.write(&b)
		for i, m := range notes.list {
			b.WriteString(superscript(i+1) + " " + m + "\n")
		}
	}
	b.WriteString("\n")
	for _, m := range r.Warnings {
		b.WriteString("warning: " + clean(m) + "\n")
	}
	if l := CostsLine(r.Costs); l != "" {
		b.WriteString("time: " + l + "\n")
	}
	b.WriteString(headline(r) + " (" + clean(settings(r)) + ")\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// mark is the text marker of a verdict: ✗ fails the gate, ! is warned about.
func mark(c *report.Comparison) string {
	switch {
	case c.Fails():
		return "✗"
	case c.Warns():
		return "!"
	}
	return " "
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// units lists the units of r's comparisons in order of first appearance.
func units(r *report.Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.Comparisons {
		if !seen[c.Unit] {
			seen[c.Unit] = true
			out = append(out, c.Unit)
		}
	}
	return out
}

type alignment int

const (
	left alignment = iota
	right
	center
)

type cell struct {
	s     string
	align alignment
	span  int // columns covered; 0 means 1
}

// table aligns cells in columns by display width. seps[i] precedes column i;
// an empty cell prints its separator as spaces, so " ± " vanishes with a
// missing value.
type table struct {
	seps []string
	rows [][]cell
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) write(b *strings.Builder) {
	widths := make([]int, len(t.seps))
	for pass := 0; pass < 2; pass++ { // single cells first, then spans widen their first column
		for _, row := range t.rows {
			col := 0
			for _, c := range row {
				n := max(c.span, 1)
				if w := width(c.s) - t.spanWidth(widths, col, n); (n > 1) == (pass == 1) && w > 0 {
					widths[col] += w
				}
				col += n
			}
		}
	}
	for _, row := range t.rows {
		var line strings.Builder
		col := 0
		for _, c := range row {
			n := max(c.span, 1)
			if sep := t.seps[col]; c.s == "" {
				line.WriteString(strings.Repeat(" ", width(sep)))
			} else {
				line.WriteString(sep)
			}
			pad := t.spanWidth(widths, col, n) - width(c.s)
			switch c.align {
			case left:
				line.WriteString(c.s + strings.Repeat(" ", pad))
			case right:
				line.WriteString(strings.Repeat(" ", pad) + c.s)
			case center:
				line.WriteString(strings.Repeat(" ", pad/2) + c.s + strings.Repeat(" ", pad-pad/2))
			}
			col += n
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// spanWidth is the width of n columns from col with the separators between.
func (t *table) spanWidth(widths []int, col, n int) int {
	w := widths[col]
	for i := col + 1; i < col+n; i++ {
		w += width(t.seps[i]) + widths[i]
	}
	return w
}

// width is the number of terminal cells s occupies: East Asian wide and
// fullwidth characters take two, combining marks and format characters none.
func width(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case wide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || // Hangul Jamo
		(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) || // CJK … Yi
		(r >= 0xac00 && r <= 0xd7a3) || // Hangul syllables
		(r >= 0xf900 && r <= 0xfaff) || // CJK compatibility ideographs
		(r >= 0xfe30 && r <= 0xfe4f) || // CJK compatibility forms
		(r >= 0xff00 && r <= 0xff60) || (r >= 0xffe0 && r <= 0xffe6) || // fullwidth forms
		(r >= 0x1f300 && r <= 0x1f64f) || (r >= 0x1f900 && r <= 0x1f9ff) || // emoji
		(r >= 0x20000 && r <= 0x3fffd)) // CJK extensions
}

package render

import (
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// TextWidth is the width text tables fit unless Options.Wide is set: a CI
// log or a terminal shows it without wrapping.
const TextWidth = 120

// Text writes r as aligned benchstat-style tables, one per unit: the labels
// and configuration of both sides, then per comparison the two summaries, the
// delta with its confidence interval, p, n and the verdict (✗ fails the gate,
// ! is only warned about), comparison warnings as footnotes, the report's
// warnings, the rounds regress check added beyond the configured ones (one
// line per benchmark that wanted them) and a final one-line summary. Where
// the time went is not part of it: the command prints that on standard
// error (CostsLine), once.
//
// Tables fit TextWidth columns. When the full table would not, it gives up,
// in this order and only as far as it must: the n column when every row has
// the same n, the name segments every benchmark has, the delta's confidence
// interval, the keys of key=value segments, and finally the middle of the
// longest names. A legend under the tables says what was left out, so every
// short name maps back to its full one; Options.Wide prints everything.
func Text(w io.Writer, r *report.Report) error { return TextWith(w, r, Options{}) }

// TextWith is Text with options.
func TextWith(w io.Writer, r *report.Report, opt Options) error {
	var b strings.Builder
	b.WriteString("baseline: " + orMissing(clean(r.Baseline.Label)) + "\n")
	b.WriteString("current:  " + orMissing(clean(r.Current.Label)) + "\n")
	for _, l := range configLines(r) {
		b.WriteString(clean(l) + "\n")
	}
	var lay textLayout
	tables := textTables(r, lay)
	if !opt.Wide {
		n, uniform := uniformN(r)
		steps := []func(){
			func() { lay.n, lay.noN = n, uniform },
			func() { lay.shortP = true },
			func() { lay.names.elide = true },
			func() { lay.noCI = true },
			func() { lay.budgetNote = true },
			func() { lay.noSpread = true },
			func() { lay.names.values = true },
			func() { lay.cut = true },
		}
		for _, step := range steps {
			if tables.width <= TextWidth {
				break
			}
			step()
			tables = textTables(r, lay)
		}
	}
	b.WriteString(tables.text)
	if len(tables.legend) > 0 {
		b.WriteString("\n")
		for _, l := range tables.legend {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n")
	for _, m := range r.Warnings {
		b.WriteString("warning: " + clean(m) + "\n")
	}
	if l := SequentialSummary(r); l != "" {
		b.WriteString(l + "\n")
		t := &table{seps: []string{"  ", "  ", "  ", "  "}}
		for i := range r.Sequential.Benchmarks {
			name, rounds, detects, status := sequentialRow(&r.Sequential.Benchmarks[i])
			t.add(cell{s: clean(name)}, cell{s: rounds, align: right}, cell{s: detects}, cell{s: status})
		}
		t.write(&b)
	}
	b.WriteString(headline(r) + " (" + clean(settings(r)) + ")\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// textLayout is what the tables leave out to fit TextWidth.
type textLayout struct {
	names nameLayout
	noN   bool   // every row has the same n: said once, in the legend
	n     string // that n
	// shortP writes p without "p=" and its adjusted value in
	// parentheses without "adj": "0.436 (1.000)" under "p (adj)".
	shortP     bool
	noCI       bool // no column for the delta's confidence interval
	budgetNote bool // a rule's budget is a footnote, not in the verdict cell
	noSpread   bool // each side's center without its ± spread
	// cut shortens, table by table, the names too long for the table to
	// fit, keeping their ends; the legend gives each in full.
	cut bool
}

// uniformN returns the sample counts every comparison of r shares
// ("n=10"), if they share one.
func uniformN(r *report.Report) (string, bool) {
	n := ""
	for i := range r.Comparisons {
		switch c := sampleCount(&r.Comparisons[i]); {
		case n == "":
			n = c
		case c != n:
			return "", false
		}
	}
	return n, n != ""
}

// tableSet is the tables of a report under one layout.
type tableSet struct {
	text   string
	legend []string
	width  int // of the widest line
}

// textTables lays out the tables of r, one per unit, under lay.
func textTables(r *report.Report, lay textLayout) tableSet {
	var out tableSet
	names, legend := shortNames(r, lay.names)
	ci := "CI"
	if r.Settings.Confidence > 0 {
		ci = percent(r.Settings.Confidence) + " CI"
	}
	var b strings.Builder
	var cuts []string
	for _, unit := range units(r) {
		var rows []int
		for i := range r.Comparisons {
			if r.Comparisons[i].Unit == unit {
				rows = append(rows, i)
			}
		}
		text, w, rest := unitTable(r, unit, rows, names, ci, lay)
		if lay.cut && w > TextWidth {
			limit := max(TextWidth-rest, 16)
			cut := slices.Clone(names)
			for _, i := range rows {
				if width(names[i]) > limit {
					cut[i] = cutName(names[i], limit)
				}
			}
			uniquify(r, rows, cut, names)
			for _, i := range rows {
				if cut[i] != names[i] {
					cuts = append(cuts, "  "+cut[i]+" = "+clean(configName(&r.Comparisons[i])))
				}
			}
			text, w, _ = unitTable(r, unit, rows, cut, ci, lay)
		}
		b.WriteString("\n" + text)
		out.width = max(out.width, w)
	}
	out.text = b.String()
	if len(cuts) > 0 {
		legend = append(legend, "names cut to fit:")
		seen := map[string]bool{}
		for _, c := range cuts {
			if !seen[c] {
				seen[c] = true
				legend = append(legend, c)
			}
		}
	}
	var said, left []string
	if lay.noN {
		said = append(said, "every row has "+lay.n+" samples a side")
	}
	if lay.noCI {
		left = append(left, "the delta's "+ci)
	}
	if lay.noSpread {
		left = append(left, "each side's ± spread")
	}
	if len(left) > 0 {
		said = append(said, "left out: "+strings.Join(left, ", "))
	}
	if len(said) > 0 || len(legend) > 0 {
		legend = append(legend, strings.Join(append(said, "--wide shows everything"), "; "))
	}
	for _, l := range legend {
		out.legend = append(out.legend, wrapText(l, TextWidth, "    ")...)
	}
	return out
}

// unitTable lays out the table of one unit: its rows (indexes into
// r.Comparisons) under names, with the footnotes under it. It returns the
// text, the width of its widest line, and that less the name column.
func unitTable(r *report.Report, unit string, rows []int, names []string, ci string, lay textLayout) (text string, widest, rest int) {
	marked := false
	for _, i := range rows {
		c := &r.Comparisons[i]
		marked = marked || c.Fails() || c.Warns()
	}
	t := &table{seps: lay.dropSeps([]string{"", "  ", " ± ", "   ", " ± ", "   ", "  ", "  ", "  ", "  "})}
	pHead := "p"
	if lay.shortP {
		pHead = "p (adj)"
	}
	t.add(lay.drop([]cell{{s: clean(unit)}, {s: "baseline", align: center, span: 2},
		{s: "current", align: center, span: 2}, {s: "delta", align: right},
		{s: ci}, {s: pHead}, {s: "n"}, {s: "verdict"}})...)
	var notes footnotes
	for _, i := range rows {
		c := &r.Comparisons[i]
		sc := rowFormatOf(c)
		bv, bp := centerOf(c.Baseline, sc)
		cv, cp := centerOf(c.Current, sc)
		verdict := c.Verdict
		var msgs []string
		if b := budget(c); b != "" && lay.budgetNote {
			msgs = append(msgs, b)
		} else if b != "" {
			verdict += " (" + b + ")"
		}
		if d := detects(c); d != "" {
			verdict += " " + d
		}
		if marked {
			verdict = mark(c) + " " + verdict
		}
		for _, m := range rowNotes(c) {
			msgs = append(msgs, clean(m))
		}
		if m := notes.mark(msgs); m != "" {
			verdict += " " + m
		}
		t.add(lay.drop([]cell{{s: names[i]}, {s: bv, align: right}, {s: bp, align: right},
			{s: cv, align: right}, {s: cp, align: right}, {s: delta(c.Delta), align: right},
			{s: deltaCI(c)}, {s: lay.p(c)}, {s: sampleCount(c)},
			{s: verdict}})...)
	}
	var b strings.Builder
	widest, rest = t.write(&b)
	for i, m := range notes.list {
		b.WriteString(superscript(i+1) + " " + m + "\n")
	}
	return b.String(), widest, rest
}

// p is the p cell of c: "p=0.001 (adj 0.024)", or "0.001 (0.024)" under
// shortP.
func (lay textLayout) p(c *report.Comparison) string {
	if !lay.shortP {
		return "p=" + pValue(c)
	}
	return strings.Replace(pValue(c), "(adj ", "(", 1)
}

// Columns of a text table that a layout may leave out.
const (
	baselineSpread = 2
	currentSpread  = 4
	ciColumn       = 6
	nColumn        = 8
)

// dropped reports whether the layout leaves out column col.
func (lay textLayout) dropped(col int) bool {
	switch col {
	case ciColumn:
		return lay.noCI
	case nColumn:
		return lay.noN
	case baselineSpread, currentSpread:
		return lay.noSpread
	}
	return false
}

// drop removes the cells of a row that the layout leaves out; a cell
// spanning columns loses the ones left out.
func (lay textLayout) drop(row []cell) []cell {
	var out []cell
	col := 0
	for _, c := range row {
		n := max(c.span, 1)
		kept := 0
		for i := col; i < col+n; i++ {
			if !lay.dropped(i) {
				kept++
			}
		}
		if kept > 0 {
			c.span = kept
			out = append(out, c)
		}
		col += n
	}
	return out
}

// dropSeps removes the separators of the columns the layout leaves out.
func (lay textLayout) dropSeps(seps []string) []string {
	var out []string
	for col, s := range seps {
		if !lay.dropped(col) {
			out = append(out, s)
		}
	}
	return out
}

// wrapText breaks a legend line at spaces to fit width, keeping its own
// indentation and indenting the lines after the first by indent more.
func wrapText(s string, w int, indent string) []string {
	rest := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(rest)]
	var lines []string
	line := lead
	for _, word := range strings.Split(rest, " ") {
		switch {
		case line == lead:
			line += word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = lead + indent + word
		}
	}
	return append(lines, line)
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

// write writes the table and returns the width of its widest line and of
// its widest line less the first column.
func (t *table) write(b *strings.Builder) (widest, rest int) {
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
		l := strings.TrimRight(line.String(), " ")
		widest, rest = max(widest, width(l)), max(rest, width(l)-widths[0])
		b.WriteString(l + "\n")
	}
	return widest, rest
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

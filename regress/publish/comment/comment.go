// Package comment turns a report into the three things kernelwatch publishes
// on GitHub: the sticky pull-request comment, the job summary and the
// commit-status description. It decides nothing about the report — every
// number and verdict comes from it — and touches no network or environment;
// it decides only what a reader sees first and what is cut when space runs
// out.
//
// The opinion: a pull-request comment is read in seconds, so the verdict,
// the worst regression, the gate in words and the two commits come first,
// the rows that fail the gate stay open, and everything else is folded into
// <details>. GitHub rejects comments over 65,536 characters, so a comment is
// kept within Budget bytes by dropping whole rows from the end of each table
// and saying how many were left out; the job summary (1 MiB) carries the
// full table.
//
// Every text that comes from the report (benchmark names, labels, warnings)
// may come from a fork's code and is escaped with render.EscapeMarkdown; the
// hardware class is reduced to a slug before it enters the hidden marker, and
// commit SHAs and URLs are only linked when they have the expected shape.
package comment

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Size limits.
const (
	// Budget is the default size of a comment body in bytes: below GitHub's
	// 65,536-character limit with room to spare, counted in bytes so that
	// multibyte names can never push it over.
	Budget = 60_000
	// SummaryBudget is GitHub's limit for one step's job summary.
	SummaryBudget = 1 << 20
	// StatusLimit is GitHub's limit for a commit-status description, in
	// characters (counted here in UTF-16 code units, the stricter count).
	StatusLimit = 140
)

// Options says what the published text is about; everything is optional.
type Options struct {
	// Class is the hardware class the report is for; it keys the sticky
	// comment. Default: the report's class: configuration line.
	Class string
	// HeadSHA is the pull request's head commit the report is for.
	// Default: the current side's commit: configuration line.
	HeadSHA string
	// ServerURL (GITHUB_SERVER_URL) and Repository (owner/name) build the
	// commit links.
	ServerURL, Repository string
	// RunURL links to the workflow run whose job summary holds the full
	// report.
	RunURL string
	// Budget is the size limit in bytes; 0 means Budget for a comment and
	// SummaryBudget for a summary.
	Budget int
}

// safeURL returns u if it is an absolute http(s) URL that can sit inside a
// markdown link unescaped, else "".
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil {
		return ""
	}
	if strings.ContainsAny(u, " ()<>\"'`\\[]\n\r\t") {
		return ""
	}
	return u
}

// commitLink links a commit: [`1f2e3d4`](server/owner/name/commit/sha), or
// just the short hash when no link can be built; "" when sha is not a hash.
func commitLink(o Options, sha string) string {
	if !IsSHA(sha) {
		return ""
	}
	short := sha
	if len(short) > 7 {
		short = short[:7]
	}
	base := safeURL(strings.TrimRight(o.ServerURL, "/"))
	if base == "" || !IsRepository(o.Repository) {
		return "`" + short + "`"
	}
	return "[`" + short + "`](" + base + "/" + o.Repository + "/commit/" + sha + ")"
}

// truncate cuts s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// worse is how much worse the current side of c is, as a fraction: the
// delta in the direction of the unit; NaN when unknown.
func worse(c *report.Comparison) float64 {
	if !c.Delta.Valid() {
		return math.NaN()
	}
	switch c.Better {
	case report.Lower:
		return float64(c.Delta)
	case report.Higher:
		return -float64(c.Delta)
	}
	return math.NaN()
}

func icon(r *report.Report) string {
	if r.CutShort() {
		return "⚠️"
	}
	switch r.Verdict {
	case report.Pass:
		return "✅"
	case report.Fail:
		return "❌"
	}
	return "⚠️"
}

// incompleteWords explains an incomplete report in one sentence.
func incompleteWords(r *report.Report) string {
	w := "**Incomplete:** " + render.Incomplete(r) + ". The comparisons use the rounds that finished on both sides; "
	need := strconv.Itoa(r.Settings.MinSamples)
	switch {
	case r.Incomplete.Reason != report.StopDeadline:
		return w + "an interrupted run is an error for the gate (exit 2), whatever they say.\n\n"
	case r.CutShort():
		return w + "that is fewer than min_samples (" + need + "), so the gate reports an error (exit 2), whatever they say.\n\n"
	}
	return w + "that is at least min_samples (" + need + "), so the verdict stands.\n\n"
}

// worst returns the comparison that fails the gate worst, or nil.
func worst(r *report.Report) *report.Comparison {
	if o := render.Ordered(r); len(o) > 0 && o[0].Fails() {
		return o[0]
	}
	return nil
}

// gateWords says in words when a benchmark fails the gate.
func gateWords(r *report.Report) string {
	s := r.Settings
	w := "a benchmark fails when it is more than " + render.Percent(s.Threshold) +
		" worse than the baseline and the difference is significant at alpha " +
		strconv.FormatFloat(s.Alpha, 'g', -1, 64) + " (" + render.CorrectionWords(s.Correction) + ")"
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range r.Comparisons {
		// Exact units are judged by their tolerance, not a threshold.
		if c := &r.Comparisons[i]; c.Gate == report.GateFail && c.Threshold > 0 {
			lo, hi = math.Min(lo, c.Threshold), math.Max(hi, c.Threshold)
		}
	}
	if lo <= hi && (lo != s.Threshold || hi != s.Threshold) {
		if lo == hi {
			w += "; benchmarks.yaml rules set " + render.Percent(lo) + " for the gated benchmarks"
		} else {
			w += "; benchmarks.yaml rules set " + render.Percent(lo) + " to " + render.Percent(hi) + " for some"
		}
	}
	return w
}

// head is the verdict block: marker lines (comments only), the outcome,
// the worst regression, the gate in words, the class and both commits.
func head(r *report.Report, o Options, class string, marker bool) string {
	var b strings.Builder
	if marker {
		b.WriteString(Marker(class) + "\n")
		if IsSHA(o.HeadSHA) {
			b.WriteString(headPrefix + o.HeadSHA + markerSuffix + "\n")
		}
	}
	b.WriteString("### " + icon(r) + " " + render.EscapeMarkdown(render.Headline(r)) + "\n\n")
	if w := worst(r); w != nil {
		b.WriteString("**Worst:** " + render.EscapeMarkdown(truncate(render.Name(w), 200)) +
			" (" + render.EscapeMarkdown(w.Unit) + ") ")
		if w.Delta.Valid() {
			b.WriteString("**" + render.Delta(w.Delta) + "**")
		} else {
			b.WriteString("**" + w.Verdict + "**")
		}
		b.WriteString("\n\n")
	}
	if r.Incomplete != nil {
		b.WriteString(incompleteWords(r))
	}
	b.WriteString("**Gate:** " + gateWords(r) + ".\n\n")
	side := func(label, sha string) string {
		s := commitLink(o, sha)
		if l := truncate(label, 120); l != "" && s != "" {
			s += " (" + render.EscapeMarkdown(l) + ")"
		} else if l != "" {
			s = render.EscapeMarkdown(l)
		}
		if s == "" {
			s = "—"
		}
		return s
	}
	cur := o.HeadSHA
	if !IsSHA(cur) {
		cur = r.Current.Config["commit"]
	}
	b.WriteString("**Class:** `" + class + "` · **baseline** " + side(r.Baseline.Label, r.Baseline.Config["commit"]) +
		" → **current** " + side(r.Current.Label, cur) + "\n\n")
	return b.String()
}

// Body returns the sticky pull-request comment for r: at most o.Budget
// (default Budget) bytes.
func Body(r *report.Report, o Options) string {
	if o.Budget <= 0 {
		o.Budget = Budget
	}
	return layout(r, o, true)
}

// Summary returns the job summary for r: the same verdict block and the
// full table, at most o.Budget (default SummaryBudget) bytes.
func Summary(r *report.Report, o Options) string {
	if o.Budget <= 0 {
		o.Budget = SummaryBudget
	}
	return layout(r, o, false)
}

// layout builds a comment (collapse: rows that do not fail the gate folded
// into <details>, hidden marker) or a summary (one open table) within
// o.Budget bytes. Whole rows are dropped from the end of each table, and
// each cut says how many rows it left out.
func layout(r *report.Report, o Options, comment bool) string {
	class := Slug(o.Class)
	if o.Class == "" {
		class = ClassOf(r)
	}
	top := head(r, o, class, comment)
	runURL := safeURL(o.RunURL)
	var foot string
	switch {
	case comment && runURL != "":
		foot = "<sub>Full report: [job summary](" + runURL + ") · kernelwatch</sub>\n"
	case comment:
		foot = "<sub>kernelwatch</sub>\n"
	}
	where := "in the JSON report"
	if comment && runURL != "" {
		where = "in the [job summary](" + runURL + ")"
	} else if comment {
		where = "in the job summary"
	}
	more := func(k int, what string) string {
		return "…and " + strconv.Itoa(k) + " more " + what + " not shown here: see them " + where + ".\n"
	}

	t := render.NewMarkdownTable(r)
	header := t.Header()
	ordered := render.Ordered(r)
	var open, folded []*report.Comparison
	for _, c := range ordered {
		if comment && !c.Fails() && !c.Warns() {
			folded = append(folded, c)
		} else {
			open = append(open, c)
		}
	}
	foldOpen, foldClose := "", "\n</details>\n\n"
	if len(folded) > 0 {
		var counts report.Counts
		for _, c := range folded {
			counts.Add(c.Verdict)
		}
		var parts []string
		for _, v := range report.Verdicts {
			if n := counts.Of(v); n > 0 {
				parts = append(parts, strconv.Itoa(n)+" "+v)
			}
		}
		what := "more comparisons"
		if len(open) == 0 {
			what = "comparisons"
		}
		foldOpen = fmt.Sprintf("<details><summary>%d %s: %s</summary>\n\n", len(folded), what, strings.Join(parts, ", "))
	}
	noteMax := len(more(len(r.Comparisons), "failing or warned comparisons")) + 1

	// Bytes the mandatory parts need, whatever fits: every fixed text plus
	// the longest possible truncation note of each table and the list.
	avail := o.Budget - len(top) - len(foot) - 2 // blank lines around the notes
	if len(open) > 0 {
		avail -= noteMax + 1
	}
	if len(folded) > 0 {
		avail -= len(foldOpen) + len(foldClose) + noteMax
	}
	if len(r.Comparisons) == 0 {
		avail -= len("_No comparisons._\n\n")
	}

	// fill renders rows while they fit, each with the footnotes it numbers.
	fill := func(cs []*report.Comparison) (rows []string) {
		for i, c := range cs {
			n := t.NoteCount()
			row := t.Row(c)
			cost := len(row)
			if i == 0 {
				cost += len(header)
			}
			if t.NoteCount() > n {
				for _, l := range t.Notes()[n:] {
					cost += len(l)
				}
			}
			if cost > avail {
				t.DropNotes(n)
				return rows
			}
			avail -= cost
			rows = append(rows, row)
		}
		return rows
	}
	// The chart is small (eight bars at most) and comes before the rows.
	var chartBlock string
	if c := chart(r); c != "" {
		block := "<details><summary>Largest changes</summary>\n\n" + c + "\n</details>\n\n"
		if !comment {
			block = c + "\n"
		}
		if len(block) <= avail {
			avail -= len(block)
			chartBlock = block
		}
	}
	openRows := fill(open)

	// The report's warnings, whole lines, before the folded rows.
	var warnLines []string
	if len(r.Warnings) > 0 {
		wmore := len(fmt.Sprintf("- …and %d more warnings %s.\n", len(r.Warnings), where)) + 1
		if avail >= wmore {
			avail -= wmore
			for _, w := range r.Warnings {
				l := "- warning: " + render.EscapeMarkdown(truncate(w, 2000)) + "\n"
				if len(l) > avail {
					break
				}
				avail -= len(l)
				warnLines = append(warnLines, l)
			}
			if k := len(r.Warnings) - len(warnLines); k > 0 {
				warnLines = append(warnLines, fmt.Sprintf("- …and %d more warnings %s.\n", k, where))
			}
		}
	}

	foldedRows := fill(folded)

	var b strings.Builder
	b.WriteString(top)
	if len(r.Comparisons) == 0 {
		b.WriteString("_No comparisons._\n\n")
	}
	table := func(all []*report.Comparison, rows []string, what string) {
		if len(rows) > 0 {
			b.WriteString(header)
			for _, row := range rows {
				b.WriteString(row)
			}
		}
		if k := len(all) - len(rows); k > 0 {
			if len(rows) > 0 {
				b.WriteString("\n")
			}
			b.WriteString(more(k, what))
		}
	}
	if len(open) > 0 {
		what := "failing or warned comparisons"
		if !comment {
			what = "comparisons"
		}
		table(open, openRows, what)
		b.WriteString("\n")
	}
	if comment {
		b.WriteString(chartBlock)
	}
	if len(folded) > 0 {
		b.WriteString(foldOpen)
		table(folded, foldedRows, "comparisons")
		b.WriteString(foldClose)
	}
	if !comment {
		b.WriteString(chartBlock)
	}
	notes := t.Notes()
	for _, n := range notes {
		b.WriteString(n)
	}
	for _, w := range warnLines {
		b.WriteString(w)
	}
	if len(notes)+len(warnLines) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(foot)
	return b.String()
}

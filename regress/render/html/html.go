// Package html renders a history and a comparison report as one
// self-contained HTML page: inline SVG charts and inline CSS, no scripts,
// fonts, images or requests of any kind (a Content-Security-Policy of
// default-src 'none' says so to the browser too), readable without
// JavaScript, so it can be opened from a CI artifact as it is.
//
// The page leads with what the reader came for. A check of a whole suite
// makes thousands of comparisons, and the few that changed are what
// matters: a page in suite order buries forty regressions under hundreds of
// unchanged ones. So the page holds, in order:
//
//   - the verdict of the comparison with its honest-pass note;
//   - the comparisons that changed — failing the gate (worst first), warned
//     about, then improvements — grouped by benchmark, each benchmark's rows
//     followed by its chart: the trend of that unit along the history (the
//     median per snapshot, its confidence band, steps as dashed lines, hover
//     titles naming the commit and value of each point) with this
//     comparison's current side as the last point, or, without a history,
//     the samples of both sides;
//   - everything else, grouped by kernel family (the name up to its first
//     "/") in suite order and folded (<details>): the family's other
//     comparisons, the trend charts of its benchmarks and a bar chart of
//     their pct-copy (bandwidth as a share of the in-run device copy).
//
// A page of a history alone leads with the benchmarks whose history has
// steps (gated ones first) and folds the rest the same way.
//
// It decides nothing: every number comes from the history or the report, and
// what counts as changed is the report's verdicts. Benchmark names, labels
// and warnings may come from untrusted code and are HTML-escaped everywhere
// they appear.
package html

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Write renders the page; h or r may be nil, not both.
func Write(w io.Writer, h *history.History, r *report.Report) error {
	if h == nil && r == nil {
		return fmt.Errorf("html: nothing to render: no history and no report")
	}
	p := &page{h: h, r: r, charted: map[string]bool{}, listed: map[*report.Comparison]bool{}}
	class := ""
	switch {
	case h != nil && h.Class != "":
		class = h.Class
	case r != nil:
		class = r.Current.Config["class"]
		if class == "" {
			class = r.Baseline.Config["class"]
		}
	}
	title := "kernelwatch"
	if class != "" {
		title += " — " + class
	}
	p.f(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head>
<body>
<h1>%s</h1>
`, esc(title), css, esc(title))
	if r != nil {
		p.verdict(r)
		p.changed(r)
	} else {
		p.stepped(h)
	}
	p.families()
	p.s("<footer>kernelwatch · self-contained page: no scripts, no requests</footer>\n</body>\n</html>\n")
	_, err := io.WriteString(w, p.b.String())
	return err
}

const css = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.verdict{font-size:16px;padding:8px 12px;border-radius:6px;display:inline-block;margin:4px 0}
.pass{background:#dafbe1}.fail{background:#ffebe9}.no-data{background:#fff8c5}
.meta{color:#57606a;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}
figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:6px 8px;background:#f6f8fa;display:inline-block}
figcaption{font-size:12px;font-weight:600;max-width:560px;overflow-wrap:anywhere}
figure p{font-size:12px;margin:2px 0;color:#57606a;max-width:560px}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
.line{fill:none;stroke:#0969da;stroke-width:1.5}.band{fill:#0969da;opacity:.12}
.pt{fill:#0969da}.pt:hover{fill:#cf222e}
.cur{fill:#cf222e}.cur.good{fill:#1a7f37}.curci{stroke:#cf222e;stroke-width:2}.curci.good{stroke:#1a7f37}
.sample{fill:#0969da;opacity:.7}.sample.cur{fill:#cf222e}.sample.cur.good{fill:#1a7f37}.median{stroke:#1b1f24;stroke-width:2}
.step{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:4 3}.steplabel{fill:#cf222e}
.better{stroke:#1a7f37}.betterlabel{fill:#1a7f37}
table{border-collapse:collapse;font-size:12px}th,td{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:right}
th{background:#f6f8fa}td.name,th.name{text-align:left;max-width:420px;overflow-wrap:anywhere}
tr.regression td,tr.failed td,tr.over-budget td,tr.removed td{background:#ffebe9}
tr.improvement td{background:#dafbe1}tr.inconclusive td{background:#fff8c5}tr.added td{background:#ddf4ff}
tr.chart td{background:#fff;text-align:left;padding:4px 8px 12px}
td.v{font-weight:600;text-align:left}.warn{color:#9a6700}
details.family{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:4px 10px}
details.family summary{cursor:pointer;padding:2px 0}details.family[open] summary{margin-bottom:6px}
.bar{fill:#0969da}.bar.naive{fill:#8c959f}.ref{stroke:#cf222e;stroke-dasharray:3 3}
footer{margin-top:32px;color:#8c959f;font-size:12px}
`

type page struct {
	b strings.Builder
	h *history.History
	r *report.Report
	// charted holds the benchmarks whose chart is on the page already, and
	// listed the comparisons whose row is: the family folds show the rest.
	charted map[string]bool
	listed  map[*report.Comparison]bool
}

func (p *page) s(s string)                   { p.b.WriteString(s) }
func (p *page) f(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

func esc(s string) string { return html.EscapeString(render.CleanText(s)) }

func (p *page) verdict(r *report.Report) {
	p.f("<p class=\"verdict %s\">%s</p>\n", esc(r.Verdict), esc(render.Headline(r)))
	p.f("<p class=\"meta\">baseline %s → current %s · alpha %g · threshold %s · %s</p>\n",
		esc(r.Baseline.Label), esc(r.Current.Label), r.Settings.Alpha, render.Percent(r.Settings.Threshold),
		esc(render.CorrectionWords(r.Settings.Correction)))
}

// changes reports whether a comparison belongs to the changed section: it
// fails the gate, is warned about, is bad though ungated, or improved.
func changes(c *report.Comparison) bool {
	return c.Fails() || c.Warns() || report.Bad(c.Verdict) || c.Verdict == report.Improvement
}

// changed lists the comparisons that changed, worst first, grouped by
// benchmark, each group followed by its chart.
func (p *page) changed(r *report.Report) {
	var order []string
	groups := map[string][]*report.Comparison{}
	for _, c := range render.Ordered(r) {
		if !changes(c) {
			continue
		}
		name := render.Name(c)
		if _, ok := groups[name]; !ok {
			order = append(order, name)
		}
		groups[name] = append(groups[name], c)
	}
	p.s("<h2 id=\"changed\">Regressions and improvements</h2>\n")
	if len(order) == 0 {
		p.f("<p class=\"meta\">No comparison regressed or improved: all %d are in the families below.</p>\n", len(r.Comparisons))
		p.warnings(r)
		return
	}
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	how := "the samples of both sides"
	if p.h != nil {
		how = fmt.Sprintf("its trend over %d snapshots of %s, this comparison's current side last", len(p.h.Snapshots), esc(p.h.Source))
	}
	p.f("<p class=\"meta\">%d of %d comparisons, in %d benchmarks, worst first; each benchmark's chart shows %s.</p>\n",
		n, len(r.Comparisons), len(order), how)
	p.s("<table id=\"changed-table\">\n")
	p.header()
	for _, name := range order {
		g := groups[name]
		for _, c := range g {
			p.row(c)
			p.listed[c] = true
		}
		p.s("<tr class=\"chart\"><td colspan=\"10\">")
		p.changeChart(g[0])
		p.s("</td></tr>\n")
	}
	p.s("</table>\n")
	p.warnings(r)
}

func (p *page) warnings(r *report.Report) {
	for _, w := range r.Warnings {
		p.f("<p class=\"warn\">warning: %s</p>\n", esc(w))
	}
}

// changeChart draws the chart of a changed comparison: the history of its
// benchmark in its unit (else in sec/op) with the comparison's current side
// as the last point, or without a history the samples of both sides.
func (p *page) changeChart(c *report.Comparison) {
	if p.h != nil {
		si := p.series(c.Name, c.Unit)
		if si < 0 {
			si = p.series(c.Name, "sec/op")
		}
		if si >= 0 {
			var cur *current
			if s := p.h.Series[si]; s.Unit == c.Unit && c.Current != nil && c.Current.Center.Valid() {
				cur = &current{label: p.r.Current.Label, sum: c.Current, good: c.Verdict == report.Improvement}
			}
			p.chart(si, cur)
			p.s("</figure>")
			p.charted[c.Name] = true
			return
		}
	}
	p.samples(c)
}

// series returns the index of the history's series of (name, unit), or -1.
func (p *page) series(name, unit string) int {
	if p.h == nil {
		return -1
	}
	for i, s := range p.h.Series {
		if s.Name == name && s.Unit == unit {
			return i
		}
	}
	return -1
}

// stepped leads a history-only page with the benchmarks whose history has
// steps, in the history's order of steps (gated first).
func (p *page) stepped(h *history.History) {
	p.f("<p class=\"meta\">%s: %d snapshots, %s; %s, p &lt; %g, segments ≥ %d</p>\n",
		esc(h.Source), len(h.Snapshots), esc(render.HistoryHeadline(h)), esc(h.Settings.Method), h.Settings.Alpha, h.Settings.MinSegment)
	p.s("<h2 id=\"changed\">Steps in the history</h2>\n")
	var names []string
	for _, st := range h.Steps {
		if !p.charted[st.Name] {
			names = append(names, st.Name)
			p.charted[st.Name] = true
		}
	}
	if len(names) == 0 {
		p.s("<p class=\"meta\">No series has a step.</p>\n")
		return
	}
	p.s("<div class=\"charts\">\n")
	for _, name := range names {
		p.trend(name)
	}
	p.s("</div>\n")
}

// trend draws the chart of one benchmark of the history: its sec/op series
// (else its first), with the steps of its other units listed below it.
func (p *page) trend(name string) {
	h := p.h
	main := -1
	for i, s := range h.Series {
		if s.Name == name && (main < 0 || s.Unit == "sec/op" && h.Series[main].Unit != "sec/op") {
			main = i
		}
	}
	if main < 0 {
		return
	}
	p.chart(main, nil)
	var other []string
	for _, st := range h.Steps {
		if st.Name == name && st.Series != main {
			other = append(other, fmt.Sprintf("%s %s at %s", st.Unit, render.Delta(st.Delta), st.Label))
		}
	}
	if len(other) > 0 {
		p.f("<p>steps in other units: %s</p>\n", esc(strings.Join(other, "; ")))
	}
	p.s("</figure>\n")
}

// family is one kernel family's share of what the changed section did not
// show.
type family struct {
	name        string
	comparisons []*report.Comparison // rows not listed above, in Ordered order
	benchmarks  []string             // benchmarks with a history and no chart above
	bars        []bar
	counts      map[string]int
	total       int
	steps       int
}

func familyOf(name string) string {
	f, _, _ := strings.Cut(name, "/")
	return f
}

// families folds everything the page has not shown yet, one <details> per
// kernel family in suite order.
func (p *page) families() {
	var order []string
	byName := map[string]*family{}
	get := func(name string) *family {
		k := familyOf(name)
		f, ok := byName[k]
		if !ok {
			f = &family{name: k, counts: map[string]int{}}
			byName[k] = f
			order = append(order, k)
		}
		return f
	}
	seen := map[string]bool{}
	if p.r != nil {
		for i := range p.r.Comparisons {
			c := &p.r.Comparisons[i]
			f := get(c.Name)
			f.total++
			f.counts[c.Verdict]++
		}
		for _, c := range render.Ordered(p.r) {
			if !p.listed[c] {
				get(c.Name).comparisons = append(get(c.Name).comparisons, c)
			}
		}
	}
	if p.h != nil {
		for _, s := range p.h.Series {
			if !seen[s.Name] && !p.charted[s.Name] {
				get(s.Name).benchmarks = append(get(s.Name).benchmarks, s.Name)
			}
			seen[s.Name] = true
		}
		for _, st := range p.h.Steps {
			get(st.Name).steps++
		}
	}
	for _, b := range p.bars() {
		f := get(b.kernel)
		f.bars = append(f.bars, b)
	}
	var shown []*family
	for _, k := range order {
		if f := byName[k]; len(f.comparisons) > 0 || len(f.benchmarks) > 0 || len(f.bars) > 0 {
			shown = append(shown, f)
		}
	}
	if len(shown) == 0 {
		return
	}
	what := "Everything else, by family"
	if p.r == nil {
		what = "Every benchmark, by family"
	}
	p.f("<h2 id=\"families\">%s</h2>\n", what)
	if p.h != nil && p.r != nil {
		p.f("<p class=\"meta\">history: %s, %d snapshots, %s; %s, p &lt; %g, segments ≥ %d</p>\n",
			esc(p.h.Source), len(p.h.Snapshots), esc(render.HistoryHeadline(p.h)), esc(p.h.Settings.Method), p.h.Settings.Alpha, p.h.Settings.MinSegment)
	}
	for _, f := range shown {
		p.family(f)
	}
}

func (p *page) family(f *family) {
	var parts []string
	if f.total > 0 {
		var vs []string
		for _, v := range []string{report.Regression, report.OverBudget, report.Failed, report.Removed, report.Improvement, report.Inconclusive, report.Added, report.Unchanged} {
			if n := f.counts[v]; n > 0 {
				vs = append(vs, fmt.Sprintf("%d %s", n, v))
			}
		}
		parts = append(parts, fmt.Sprintf("%d comparisons: %s", f.total, strings.Join(vs, ", ")))
	}
	if n := len(f.benchmarks); n > 0 {
		parts = append(parts, fmt.Sprintf("%d trend charts", n))
	}
	if f.steps > 0 {
		parts = append(parts, fmt.Sprintf("%d steps in the history", f.steps))
	}
	p.f("<details class=\"family\"><summary><b>%s</b> — %s</summary>\n", esc(f.name), esc(strings.Join(parts, " · ")))
	if len(f.comparisons) > 0 {
		p.s("<table>\n")
		p.header()
		for _, c := range f.comparisons {
			p.row(c)
		}
		p.s("</table>\n")
	}
	if len(f.benchmarks) > 0 {
		p.s("<div class=\"charts\">\n")
		for _, name := range f.benchmarks {
			p.trend(name)
		}
		p.s("</div>\n")
	}
	if len(f.bars) > 0 {
		p.barChart(f.name, f.bars)
	}
	p.s("</details>\n")
}

// Chart geometry.
const (
	chartW, chartH = 560, 170
	padL, padR     = 62, 12
	padT, padB     = 12, 26
	curW           = 40 // room right of the history for the current side
)

// current is a comparison's current side, drawn after a trend.
type current struct {
	label string
	sum   *report.Summary
	good  bool
}

// chart opens a figure with the trend chart of series si, and cur after it
// when given (the caller closes the figure).
func (p *page) chart(si int, cur *current) {
	h := p.h
	s := h.Series[si]
	p.f("<figure><figcaption>%s <span class=\"meta\">(%s, %s is better)</span></figcaption>\n", esc(s.Name), esc(s.Unit), esc(s.Better))
	lo, hi := math.Inf(1), math.Inf(-1)
	widen := func(vs ...report.Number) {
		for _, v := range vs {
			if v.Valid() {
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
		}
	}
	for _, pt := range s.Points {
		widen(pt.Center, pt.Lo, pt.Hi)
	}
	right := chartW - padR
	if cur != nil {
		widen(cur.sum.Center, cur.sum.Lo, cur.sum.Hi)
		right -= curW
	}
	if !(lo <= hi) {
		lo, hi = 0, 1
	}
	if hi == lo {
		lo, hi = lo*0.99, hi*1.01+1e-300
	}
	span := hi - lo
	lo, hi = lo-0.05*span, hi+0.05*span
	n := len(s.Points)
	x := func(i int) float64 {
		if n == 1 {
			return padL + float64(right-padL)/2
		}
		return padL + float64(i)*float64(right-padL)/float64(n-1)
	}
	y := func(v float64) float64 { return padT + (hi-v)/(hi-lo)*float64(chartH-padT-padB) }
	sc := benchunit.CommonScale([]float64{lo, hi}, benchunit.ClassOf(s.Unit))
	p.f("<svg class=\"trend\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><title>%s</title>\n",
		chartW, chartH, chartW, chartH, esc(s.Name+" "+s.Unit))
	// Axes and labels.
	p.f("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d0d7de\"/>", padL, padT, padL, chartH-padB)
	p.f("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d0d7de\"/>\n", padL, chartH-padB, chartW-padR, chartH-padB)
	for _, v := range []float64{hi, (hi + lo) / 2, lo} {
		p.f("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", padL-4, y(v)+4, esc(sc.Format(v)))
	}
	if n > 0 {
		first, last := h.Snapshots[s.Points[0].Snapshot], h.Snapshots[s.Points[n-1].Snapshot]
		p.f("<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
			padL, chartH-8, esc(first.Label), right, chartH-8, esc(last.Label))
	}
	// Confidence band of the medians.
	var upper, lower []string
	for i, pt := range s.Points {
		if pt.Lo.Valid() && pt.Hi.Valid() {
			upper = append(upper, fmt.Sprintf("%.1f,%.1f", x(i), y(float64(pt.Hi))))
			lower = append([]string{fmt.Sprintf("%.1f,%.1f", x(i), y(float64(pt.Lo)))}, lower...)
		}
	}
	if len(upper) > 1 {
		p.f("<polygon class=\"band\" points=\"%s\"/>\n", strings.Join(append(upper, lower...), " "))
	}
	var line []string
	for i, pt := range s.Points {
		if pt.Center.Valid() {
			line = append(line, fmt.Sprintf("%.1f,%.1f", x(i), y(float64(pt.Center))))
		}
	}
	p.f("<polyline class=\"line\" points=\"%s\"/>\n", strings.Join(line, " "))
	// Steps.
	for _, st := range h.Steps {
		if st.Series != si {
			continue
		}
		sx := (x(st.Point-1) + x(st.Point)) / 2
		cls, lbl := "step", "steplabel"
		if !st.Worse {
			cls, lbl = "step better", "betterlabel"
		}
		p.f("<g><title>step %s [%s, %s] at %s (first commit after it), p = %.3f</title><line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"%s\" x=\"%.1f\" y=\"%d\">%s</text></g>\n",
			render.Delta(st.Delta), render.Delta(st.DeltaLo), render.Delta(st.DeltaHi), esc(stepCommit(st)), st.P,
			cls, sx, padT, sx, chartH-padB, lbl, sx+3, padT+10, render.Delta(st.Delta))
	}
	// Points with hover titles.
	for i, pt := range s.Points {
		if !pt.Center.Valid() {
			continue
		}
		snap := h.Snapshots[pt.Snapshot]
		what := snap.Label
		if snap.Commit != "" && !strings.HasPrefix(snap.Commit, snap.Label) {
			what += " (" + snap.Commit + ")"
		} else if snap.Commit != "" {
			what = snap.Commit
		}
		when := ""
		if !snap.Time.IsZero() {
			when = " " + snap.Time.Format("2006-01-02 15:04")
		}
		p.f("<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%s%s: %s %s (n=%d)</title></circle>\n",
			x(i), y(float64(pt.Center)), esc(what), esc(when), esc(benchunit.Scale(float64(pt.Center), benchunit.ClassOf(s.Unit))), esc(s.Unit), pt.N)
	}
	// The comparison's current side, right of the history.
	if cur != nil {
		cx := float64(chartW - padR - curW/2)
		cls := "cur"
		if cur.good {
			cls += " good"
		}
		if cur.sum.Lo.Valid() && cur.sum.Hi.Valid() {
			p.f("<line class=\"curci%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", strings.TrimPrefix(cls, "cur"), cx, y(float64(cur.sum.Lo)), cx, y(float64(cur.sum.Hi)))
		}
		p.f("<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"><title>%s (this comparison's current side): %s %s (n=%d)</title></circle>",
			cls, cx, y(float64(cur.sum.Center)), esc(cur.label), esc(benchunit.Scale(float64(cur.sum.Center), benchunit.ClassOf(s.Unit))), esc(s.Unit), cur.sum.N)
		p.f("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">now</text>\n", cx, chartH-8)
	}
	p.s("</svg>\n")
}

// samples draws the samples of both sides of a comparison on one axis, a
// row each, with their medians: the chart of a changed comparison when
// there is no history.
func (p *page) samples(c *report.Comparison) {
	const w, rowH, top = chartW, 34, 8
	const left, right = 90, chartW - padR
	var all []float64
	for _, s := range []*report.Summary{c.Baseline, c.Current} {
		if s != nil {
			all = append(all, s.Values...)
		}
	}
	if len(all) == 0 {
		p.s("<p class=\"meta\">no samples to draw</p>")
		return
	}
	lo, hi := all[0], all[0]
	for _, v := range all {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi == lo {
		lo, hi = lo*0.99, hi*1.01+1e-300
	}
	span := hi - lo
	lo, hi = lo-0.05*span, hi+0.05*span
	x := func(v float64) float64 { return left + (v-lo)/(hi-lo)*float64(right-left) }
	height := top + 2*rowH + 22
	sc := benchunit.CommonScale([]float64{lo, hi}, benchunit.ClassOf(c.Unit))
	p.f("<figure><figcaption>%s <span class=\"meta\">(%s, the samples of each side; %s is better)</span></figcaption>\n", esc(render.Name(c)), esc(c.Unit), esc(c.Better))
	p.f("<svg class=\"samples\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><title>%s %s samples</title>\n",
		w, height, w, height, esc(render.Name(c)), esc(c.Unit))
	axis := top + 2*rowH
	p.f("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d0d7de\"/>\n", left, axis, right, axis)
	for _, v := range []float64{lo, (lo + hi) / 2, hi} {
		p.f("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x(v), axis+14, esc(sc.Format(v)))
	}
	for i, side := range []struct {
		label string
		s     *report.Summary
	}{{"baseline", c.Baseline}, {"current", c.Current}} {
		cy := top + i*rowH + rowH/2
		p.f("<text x=\"%d\" y=\"%d\">%s</text>", 4, cy+4, side.label)
		if side.s == nil {
			continue
		}
		cls := "sample"
		if i == 1 {
			cls += " cur"
			if c.Verdict == report.Improvement {
				cls += " good"
			}
		}
		for _, v := range side.s.Values {
			p.f("<circle class=\"%s\" cx=\"%.1f\" cy=\"%d\" r=\"3.5\"/>", cls, x(v), cy)
		}
		if side.s.Center.Valid() {
			m := x(float64(side.s.Center))
			p.f("<line class=\"median\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>median %s</title></line>\n",
				m, cy-10, m, cy+10, esc(sc.Format(float64(side.s.Center))))
		}
	}
	p.s("</svg></figure>")
}

func stepCommit(st history.Step) string {
	if st.Commit != "" {
		return st.Commit
	}
	return st.Label
}

func (p *page) header() {
	p.s("<tr><th class=\"name\">benchmark</th><th>unit</th><th>baseline</th><th>current</th><th>Δ</th><th>95% CI</th><th>p (adj)</th><th>threshold</th><th>detects</th><th class=\"name\">verdict</th></tr>\n")
}

// row is one comparison's row of a table.
func (p *page) row(c *report.Comparison) {
	sc := benchunit.CommonScale(centers(c), benchunit.ClassOf(c.Unit))
	cell := func(s *report.Summary) string {
		if s == nil || !s.Center.Valid() {
			return "—"
		}
		return sc.Format(float64(s.Center))
	}
	ci := "—"
	if c.DeltaLo.Valid() && c.DeltaHi.Valid() {
		ci = render.Delta(c.DeltaLo) + " … " + render.Delta(c.DeltaHi)
	}
	pv := "—"
	if c.P.Valid() {
		pv = fmt.Sprintf("%.3f", float64(c.P))
		if c.PAdjusted.Valid() {
			pv += fmt.Sprintf(" (%.3f)", float64(c.PAdjusted))
		}
	}
	th := render.Percent(c.Threshold)
	switch c.ThresholdFrom {
	case "noise":
		th += " (noise floor)"
	case "hosts":
		th += " (cross-host floor)"
	}
	det := "—"
	if c.Detectable != nil {
		if c.Detectable.Valid() {
			det = fmt.Sprintf("%.1f%%", 100*float64(*c.Detectable))
		} else {
			det = "nothing"
		}
		if c.Blind() {
			det = "<span class=\"warn\">" + det + "</span>"
		}
	}
	v := c.Verdict
	switch {
	case c.Fails():
		v = "✗ " + v
	case c.Warns():
		v = "! " + v
	}
	if c.Unstable {
		v += " (unstable)"
	}
	if n := render.ModesNote(c); n != "" {
		v += " — " + n
	}
	p.f("<tr class=\"%s\"><td class=\"name\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"v\">%s</td></tr>\n",
		esc(c.Verdict), esc(render.Name(c)), esc(c.Unit), esc(cell(c.Baseline)), esc(cell(c.Current)), render.Delta(c.Delta),
		esc(ci), pv, esc(th), det, esc(v))
}

func centers(c *report.Comparison) []float64 {
	var out []float64
	for _, s := range []*report.Summary{c.Baseline, c.Current} {
		if s != nil && s.Center.Valid() {
			out = append(out, float64(s.Center))
		}
	}
	return out
}

// bar is one benchmark's pct-copy.
type bar struct {
	kernel, variant string
	value           float64
}

// bars returns the pct-copy of every benchmark: from the report's current
// side, else from the history's last point of each pct-copy series.
func (p *page) bars() []bar {
	var out []bar
	add := func(name string, v float64) {
		k, variant, _ := strings.Cut(name, "/")
		out = append(out, bar{k, variant, v})
	}
	if p.r != nil {
		for _, c := range p.r.Comparisons {
			if c.Unit == "pct-copy" && c.Current != nil && c.Current.Center.Valid() {
				add(c.Name, float64(c.Current.Center))
			}
		}
	}
	if len(out) == 0 && p.h != nil {
		for _, s := range p.h.Series {
			if s.Unit == "pct-copy" && len(s.Points) > 0 && s.Points[len(s.Points)-1].Center.Valid() {
				add(s.Name, float64(s.Points[len(s.Points)-1].Center))
			}
		}
	}
	return out
}

// barChart draws one kernel's pct-copy bars.
func (p *page) barChart(k string, bs []bar) {
	source := "the current side of the comparison"
	if p.r == nil {
		source = "the latest snapshot of the history"
	}
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].variant < bs[j].variant })
	top := 100.0
	for _, b := range bs {
		top = math.Max(top, b.value)
	}
	top *= 1.1
	const labelW, barW, rowH = 290, 240, 16
	height := len(bs)*rowH + 24
	xs := func(v float64) float64 { return labelW + v/top*barW }
	p.f("<figure><figcaption>%s pct-copy <span class=\"meta\">(bandwidth as a share of the in-run device copy, 100%% = copy speed; %s)</span></figcaption>\n<svg class=\"bars\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><title>%s pct-copy</title>\n",
		esc(k), source, labelW+barW+50, height, labelW+barW+50, height, esc(k))
	for i, b := range bs {
		y := 4 + i*rowH
		cls := "bar"
		if strings.Contains(b.variant, "impl=naive") {
			cls += " naive"
		}
		p.f("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text><rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\"><title>%s: %.1f pct-copy</title></rect><text x=\"%.1f\" y=\"%d\">%.1f%%</text>\n",
			labelW-4, y+11, esc(shorten(b.variant, 40)), cls, labelW, y, xs(b.value)-labelW, rowH-4, esc(k+"/"+b.variant), b.value, xs(b.value)+3, y+11, b.value)
	}
	p.f("<line class=\"ref\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\">copy</text>\n</svg></figure>\n",
		xs(100), xs(100), height-14, xs(100)-12, height-2)
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n/2-1]) + "…" + string(r[len(r)-n/2:])
}

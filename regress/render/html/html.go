// Package html renders a history and a comparison report as one
// self-contained HTML page: inline SVG charts and inline CSS, no scripts,
// fonts, images or requests of any kind (a Content-Security-Policy of
// default-src 'none' says so to the browser too), readable without
// JavaScript, so it can be opened from a CI artifact or served by GitHub
// Pages as it is.
//
// The page holds, in order: the verdict of the comparison with its
// honest-pass note; a trend chart per benchmark (its median per snapshot,
// the confidence band of each median, the steps the history found marked as
// red dashed lines, and hover titles naming the commit and the value of
// every point); the comparison table with verdict colours, the threshold
// that applied and the smallest detectable change; and a bar chart of
// pct-copy (bandwidth as a share of the in-run device copy) per kernel.
//
// It decides nothing: every number comes from the history or the report.
// Benchmark names, labels and warnings may come from untrusted code and are
// HTML-escaped everywhere they appear.
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
	p := &page{}
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
	}
	if h != nil {
		p.trends(h)
	}
	if r != nil {
		p.table(r)
	}
	p.bars(h, r)
	p.s("<footer>kernelwatch · self-contained page: no scripts, no requests</footer>\n</body>\n</html>\n")
	_, err := io.WriteString(w, p.b.String())
	return err
}

const css = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.verdict{font-size:16px;padding:8px 12px;border-radius:6px;display:inline-block}
.pass{background:#dafbe1}.fail{background:#ffebe9}.no-data{background:#fff8c5}
.meta{color:#57606a;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:6px 8px;background:#f6f8fa}
figcaption{font-size:12px;font-weight:600;max-width:560px;overflow-wrap:anywhere}
figure p{font-size:12px;margin:2px 0;color:#57606a;max-width:560px}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
.line{fill:none;stroke:#0969da;stroke-width:1.5}.band{fill:#0969da;opacity:.12}
.pt{fill:#0969da}.pt:hover{fill:#cf222e}
.step{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:4 3}.steplabel{fill:#cf222e}
.better{stroke:#1a7f37}.betterlabel{fill:#1a7f37}
table{border-collapse:collapse;font-size:12px}th,td{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:right}
th{background:#f6f8fa}td.name,th.name{text-align:left;max-width:420px;overflow-wrap:anywhere}
tr.regression td,tr.failed td,tr.over-budget td,tr.removed td{background:#ffebe9}
tr.improvement td{background:#dafbe1}tr.inconclusive td{background:#fff8c5}tr.added td{background:#ddf4ff}
td.v{font-weight:600;text-align:left}.warn{color:#9a6700}
.bar{fill:#0969da}.bar.naive{fill:#8c959f}.ref{stroke:#cf222e;stroke-dasharray:3 3}
footer{margin-top:32px;color:#8c959f;font-size:12px}
`

type page struct{ b strings.Builder }

func (p *page) s(s string)                   { p.b.WriteString(s) }
func (p *page) f(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

func esc(s string) string { return html.EscapeString(render.CleanText(s)) }

func (p *page) verdict(r *report.Report) {
	p.f("<p class=\"verdict %s\">%s</p>\n", esc(r.Verdict), esc(render.Headline(r)))
	p.f("<p class=\"meta\">baseline %s → current %s · alpha %g · threshold %s · %s</p>\n",
		esc(r.Baseline.Label), esc(r.Current.Label), r.Settings.Alpha, render.Percent(r.Settings.Threshold),
		esc(render.CorrectionWords(r.Settings.Correction)))
}

// Chart geometry.
const (
	chartW, chartH = 560, 170
	padL, padR     = 62, 12
	padT, padB     = 12, 26
)

// trends draws one chart per benchmark: its sec/op series (else its first
// series), with every step of any of its units listed below the chart.
func (p *page) trends(h *history.History) {
	p.f("<h2>Trends</h2>\n<p class=\"meta\">%s: %d snapshots, %s; %s, p &lt; %g, segments ≥ %d</p>\n<div class=\"charts\">\n",
		esc(h.Source), len(h.Snapshots), esc(render.HistoryHeadline(h)), esc(h.Settings.Method), h.Settings.Alpha, h.Settings.MinSegment)
	var names []string
	byName := map[string][]int{}
	for i, s := range h.Series {
		if _, ok := byName[s.Name]; !ok {
			names = append(names, s.Name)
		}
		byName[s.Name] = append(byName[s.Name], i)
	}
	for _, name := range names {
		main := byName[name][0]
		for _, i := range byName[name] {
			if h.Series[i].Unit == "sec/op" {
				main = i
				break
			}
		}
		p.chart(h, main)
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
	p.s("</div>\n")
}

// chart opens a figure with the trend chart of series si (the caller
// closes it).
func (p *page) chart(h *history.History, si int) {
	s := h.Series[si]
	p.f("<figure><figcaption>%s <span class=\"meta\">(%s, %s is better)</span></figcaption>\n", esc(s.Name), esc(s.Unit), esc(s.Better))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range s.Points {
		for _, v := range []report.Number{pt.Center, pt.Lo, pt.Hi} {
			if v.Valid() {
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
		}
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
			return padL + float64(chartW-padL-padR)/2
		}
		return padL + float64(i)*float64(chartW-padL-padR)/float64(n-1)
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
			padL, chartH-8, esc(first.Label), chartW-padR, chartH-8, esc(last.Label))
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
	p.s("</svg>\n")
}

func stepCommit(st history.Step) string {
	if st.Commit != "" {
		return st.Commit
	}
	return st.Label
}

// table is the comparison table, in the order of the markdown report.
func (p *page) table(r *report.Report) {
	p.s("<h2>Latest comparison</h2>\n<table>\n<tr><th class=\"name\">benchmark</th><th>unit</th><th>baseline</th><th>current</th><th>Δ</th><th>95% CI</th><th>p (adj)</th><th>threshold</th><th>detects</th><th class=\"name\">verdict</th></tr>\n")
	for _, c := range render.Ordered(r) {
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
	p.s("</table>\n")
	for _, w := range r.Warnings {
		p.f("<p class=\"warn\">warning: %s</p>\n", esc(w))
	}
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
	variant string
	value   float64
}

// bars draws a pct-copy bar chart per kernel (the name up to the first
// "/"): from the report's current side, else from the history's last
// point of each pct-copy series.
func (p *page) bars(h *history.History, r *report.Report) {
	kernels := map[string][]bar{}
	var order []string
	add := func(name string, v float64) {
		k, variant, _ := strings.Cut(name, "/")
		if _, ok := kernels[k]; !ok {
			order = append(order, k)
		}
		kernels[k] = append(kernels[k], bar{variant, v})
	}
	source := ""
	if r != nil {
		for _, c := range r.Comparisons {
			if c.Unit == "pct-copy" && c.Current != nil && c.Current.Center.Valid() {
				add(c.Name, float64(c.Current.Center))
			}
		}
		source = "current side of the comparison"
	}
	if len(order) == 0 && h != nil {
		for _, s := range h.Series {
			if s.Unit == "pct-copy" && len(s.Points) > 0 && s.Points[len(s.Points)-1].Center.Valid() {
				add(s.Name, float64(s.Points[len(s.Points)-1].Center))
			}
		}
		source = "latest snapshot of the history"
	}
	if len(order) == 0 {
		return
	}
	p.f("<h2>pct-copy per kernel</h2>\n<p class=\"meta\">bandwidth as a share of the in-run device copy (100%% = copy speed), %s</p>\n<div class=\"charts\">\n", esc(source))
	for _, k := range order {
		bs := kernels[k]
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].variant < bs[j].variant })
		top := 100.0
		for _, b := range bs {
			top = math.Max(top, b.value)
		}
		top *= 1.1
		const labelW, barW, rowH = 290, 240, 16
		height := len(bs)*rowH + 24
		xs := func(v float64) float64 { return labelW + v/top*barW }
		p.f("<figure><figcaption>%s</figcaption>\n<svg class=\"bars\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><title>%s pct-copy</title>\n",
			esc(k), labelW+barW+50, height, labelW+barW+50, height, esc(k))
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
	p.s("</div>\n")
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n/2-1]) + "…" + string(r[len(r)-n/2:])
}

// Package render turns a report.Report into text, markdown, JSON or CSV; it
// decides nothing. Every verdict, count and number comes from the report; this
// package only chooses how to lay them out.
//
// Text is benchstat-style output for terminals and CI logs, whose tables fit
// 120 columns unless Options.Wide asks for every column and full names
// (names are shortened, with a legend, rather than wrapped), Markdown is a
// GitHub-flavoured summary for pull-request comments and job summaries, JSON is
// the report itself (design §6) and CSV is one row per comparison with
// full-precision numbers for spreadsheets and scripts.
//
// Benchmark names, configuration values and warnings may come from untrusted
// code under test: every format neutralizes them for its medium (control and
// bidirectional characters in text, markup and mentions in markdown, formulas
// in CSV).
package render

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/perf/benchunit"

	"github.com/kernelwatch/kernelwatch/internal/logsafe"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Formats lists the formats Write accepts.
var Formats = []string{"text", "markdown", "json", "csv"}

// Options adjust how a report is rendered; the zero value is the default.
type Options struct {
	// Wide lets text tables be as wide as their full names and every
	// column make them, instead of fitting TextWidth.
	Wide bool
}

// Write renders r to w in the named format: one of Formats.
func Write(w io.Writer, r *report.Report, format string) error {
	return WriteWith(w, r, format, Options{})
}

// WriteWith is Write with options.
func WriteWith(w io.Writer, r *report.Report, format string, opt Options) error {
	switch format {
	case "text":
		return TextWith(w, r, opt)
	case "markdown":
		return Markdown(w, r)
	case "json":
		return JSON(w, r)
	case "csv":
		return CSV(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// JSON writes r as the indented JSON report of design §6.
func JSON(w io.Writer, r *report.Report) error { return r.Write(w) }

// missing stands for a value that does not exist.
const missing = "—"

// rowFormat formats the values of one comparison: on benchunit's common
// scale of the row's centers, as benchstat scales the cells of one row.
// A rate of bytes or FLOPs carries its unit in each cell, scaled as one
// number ("535.6 MB/s"): the unit's own prefix would otherwise stack with
// the scaler's ("535.6m GB/s").
type rowFormat struct {
	sc     benchunit.Scaler
	factor float64 // to the base unit of a rate, else 1
	unit   string  // the base unit of a rate ("B/s"), else ""
}

// siPrefixes are the prefixes a rate unit may carry.
var siPrefixes = map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

// rate recognizes a unit that is a rate of bytes or FLOPs with or without
// a prefix of its own (B/s, GB/s, TFLOP/s): its base unit and the factor
// of its prefix. Byte rates are decimal, as Go's MB/s and the suite's GB/s
// are.
func rate(unit string) (base string, factor float64, ok bool) {
	for _, b := range []string{"B/s", "FLOP/s"} {
		if p, found := strings.CutSuffix(unit, b); found {
			if f, ok := siPrefixes[p]; ok {
				return b, f, true
			}
		}
	}
	return "", 0, false
}

// rowFormatOf returns the format of c's values.
func rowFormatOf(c *report.Comparison) rowFormat {
	f := rowFormat{factor: 1}
	cls := benchunit.ClassOf(c.Unit)
	if base, factor, ok := rate(c.Unit); ok {
		f.unit, f.factor, cls = base, factor, benchunit.Decimal
	}
	var vals []float64
	for _, s := range []*report.Summary{c.Baseline, c.Current} {
		if s != nil && s.Center.Valid() {
			vals = append(vals, f.factor*float64(s.Center))
		}
	}
	f.sc = benchunit.CommonScale(vals, cls)
	return f
}

// format formats one value of the row.
func (f rowFormat) format(v float64) string {
	s := f.sc.Format(f.factor * v)
	if f.unit == "" {
		return s
	}
	return strings.TrimSuffix(s, f.sc.Prefix) + " " + f.sc.Prefix + f.unit
}

// scaleValue formats one value of unit on its own scale, as rowFormat
// would.
func scaleValue(v float64, unit string) string {
	c := report.Comparison{Unit: unit, Current: &report.Summary{Center: report.Number(v)}}
	return rowFormatOf(&c).format(v)
}

// centerOf formats the center of s with f and its confidence interval as a
// percentage; missing when s or its center does not exist.
func centerOf(s *report.Summary, f rowFormat) (value, pct string) {
	if s == nil || !s.Center.Valid() {
		return missing, ""
	}
	return f.format(float64(s.Center)), pctRange(s)
}

// pctRange formats the confidence interval of s relative to its center like
// benchstat's Summary.PctRangeString; a bound that does not exist is ∞.
func pctRange(s *report.Summary) string {
	c, lo, hi := float64(s.Center), float64(s.Lo), float64(s.Hi)
	if !s.Lo.Valid() || !s.Hi.Valid() {
		return "∞"
	}
	if sign(c) != sign(lo) || sign(c) != sign(hi) {
		return "?"
	}
	if c == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*math.Max(hi/c-1, 1-lo/c))
}

func sign(f float64) int {
	switch {
	case f < 0:
		return -1
	case f > 0:
		return 1
	}
	return 0
}

// delta formats a relative change as benchstat does: +6.40%.
func delta(d report.Number) string {
	if !d.Valid() {
		return missing
	}
	if d == 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%+.2f%%", 100*float64(d))
}

// deltaCI formats the confidence interval of a delta: [+5.1%, +7.7%]; empty
// when neither bound exists.
func deltaCI(c *report.Comparison) string {
	if !c.DeltaLo.Valid() && !c.DeltaHi.Valid() {
		return ""
	}
	bound := func(n report.Number) string {
		if !n.Valid() {
			return "?"
		}
		return fmt.Sprintf("%+.1f%%", 100*float64(n))
	}
	return "[" + bound(c.DeltaLo) + ", " + bound(c.DeltaHi) + "]"
}

// pValue formats p, with the adjusted p-value in parentheses when it reads
// differently: 0.001 (adj 0.024).
func pValue(c *report.Comparison) string {
	if !c.P.Valid() {
		return missing
	}
	p := fmt.Sprintf("%.3f", float64(c.P))
	if c.PAdjusted.Valid() {
		if adj := fmt.Sprintf("%.3f", float64(c.PAdjusted)); adj != p {
			p += " (adj " + adj + ")"
		}
	}
	return p
}

// sampleCount formats the sample sizes: n=10, n=10+8, or the one side's n.
func sampleCount(c *report.Comparison) string {
	switch {
	case c.Baseline == nil:
		return fmt.Sprintf("n=%d", c.Current.N)
	case c.Current == nil, c.Baseline.N == c.Current.N:
		return fmt.Sprintf("n=%d", c.Baseline.N)
	}
	return fmt.Sprintf("n=%d+%d", c.Baseline.N, c.Current.N)
}

// budget formats the comparison's absolute budget, if any.
func budget(c *report.Comparison) string {
	if c.Budget == nil || !report.Number(*c.Budget).Valid() {
		return ""
	}
	return "budget " + scaleValue(*c.Budget, c.Unit)
}

// percent formats a fraction as a percentage to at most two decimals, without float noise: 0.05 → 5%,
// 0.005 → 0.5%, and a threshold a noise floor raised to 0.0920634 → 9.21% (not 9.20634%).
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100*100)/100, 'f', -1, 64) + "%"
}

// formatG formats f with as many digits as it takes, 'g' style.
func formatG(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// nouns names the counts of each verdict in summaries, singular and plural.
var nouns = map[string][2]string{
	report.Regression:   {"regression", "regressions"},
	report.Failed:       {"failed", "failed"},
	report.OverBudget:   {"over budget", "over budget"},
	report.Removed:      {"removed", "removed"},
	report.Improvement:  {"improvement", "improvements"},
	report.Inconclusive: {"inconclusive", "inconclusive"},
	report.Added:        {"added", "added"},
	report.Unchanged:    {"unchanged", "unchanged"},
}

// headline is the one-line outcome of r, without its settings:
// "FAIL: 2 regressions, 1 removed", "PASS: 0 regressions, 140 unchanged",
// "NO DATA: nothing was comparable — 3 added", "INCONCLUSIVE: no gated
// comparison could be judged: need ≥ 6 samples a side (have 2) — 80
// inconclusive"; for a run cut short, "INCOMPLETE (3 of 10 rounds,
// interrupted): 0 regressions, 2 unchanged", or when its verdict stands,
// "PASS: … (7 of 10 rounds, stopped at the deadline)". A verdict that
// stands although some gated comparisons could not be judged, or could not
// have detected their threshold, says so after the counts.
func headline(r *report.Report) string {
	var parts []string
	for _, v := range report.Verdicts {
		n := r.Counts.Of(v)
		always := v == report.Regression && (r.Verdict == report.Pass || r.Verdict == report.Fail)
		if n == 0 && !always {
			continue
		}
		noun := nouns[v][1]
		if n == 1 {
			noun = nouns[v][0]
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, noun))
	}
	list := strings.Join(parts, ", ")
	if r.Verdict != report.Inconclusive {
		var buts []string
		if u := r.Unjudged; u != nil {
			b := fmt.Sprintf("%d of %d gated comparisons could not be judged", u.Count, u.Of)
			if u.NeedSamples > 0 {
				b += fmt.Sprintf(" (%s, have %s)", needSamples(u), haveSamples(u))
			}
			buts = append(buts, b)
		}
		if b := blindNote(r); b != "" {
			if len(buts) > 0 {
				b = strings.Replace(b, " gated comparisons", "", 1)
			}
			buts = append(buts, b)
		}
		if len(buts) > 0 {
			list += " — but " + strings.Join(buts, " and ")
		}
	}
	in := r.Incomplete
	if r.CutShort() {
		if list == "" {
			list = "nothing was comparable"
		}
		return "INCOMPLETE (" + incomplete(in) + "): " + list
	}
	var line string
	switch {
	case r.Verdict == report.Fail:
		line = "FAIL: " + list
	case r.Verdict == report.Pass:
		line = "PASS: " + list
	case r.Verdict == report.Inconclusive:
		line = "INCONCLUSIVE: " + Unjudged(r) + " — " + list
	case list == "":
		line = "NO DATA: nothing was comparable"
	default:
		line = "NO DATA: nothing was comparable — " + list
	}
	if in != nil {
		line += " (" + incomplete(in) + ")"
	}
	return line
}

// Unjudged says why an inconclusive report is: "no gated comparison could
// be judged: need ≥ 6 samples a side (have 2)"; "" for any other report.
func Unjudged(r *report.Report) string {
	u := r.Unjudged
	if r.Verdict != report.Inconclusive || u == nil {
		return ""
	}
	if u.NeedSamples == 0 {
		return "no gated comparison could be judged: each row's note says why"
	}
	return fmt.Sprintf("no gated comparison could be judged: %s (have %s)", needSamples(u), haveSamples(u))
}

func needSamples(u *report.Unjudged) string {
	return fmt.Sprintf("need ≥ %d samples a side", u.NeedSamples)
}

func haveSamples(u *report.Unjudged) string { return strconv.Itoa(u.HaveSamples) }

// incomplete says how far a run cut short got and why: "3 of 10 rounds,
// interrupted".
func incomplete(in *report.Incomplete) string {
	why := "interrupted"
	if in.Reason == report.StopDeadline {
		why = "stopped at the deadline"
	}
	return fmt.Sprintf("%d of %d rounds, %s", in.Rounds, in.Planned, why)
}

// settings summarizes the report's statistical settings:
// "alpha 0.05, threshold 5%, correction floor-holm".
func settings(r *report.Report) string {
	s := r.Settings
	out := fmt.Sprintf("alpha %s, threshold %s, correction %s",
		formatG(s.Alpha), percent(s.Threshold), s.Correction)
	if n := noiseNote(r); n != "" {
		out += ", " + n
	}
	return out
}

// noiseNote says which thresholds the calibrated noise floor and the
// cross-host floors raised: "noise floor 0.5 × p99 of baselines/x.noise.json
// raised 3 thresholds, 1 unstable; cross-host floors of
// baselines/x.floors.json raised 40 thresholds, 12 units gated on a
// normalized one"; "" without either file.
func noiseNote(r *report.Report) string {
	var parts []string
	if r.Settings.NoiseFile != "" {
		raised, unstable := 0, 0
		for i := range r.Comparisons {
			if r.Comparisons[i].ThresholdFrom == "noise" {
				raised++
			}
			if r.Comparisons[i].Unstable {
				unstable++
			}
		}
		out := fmt.Sprintf("noise floor %s × p99 of %s raised %d thresholds", formatG(r.Settings.NoiseK), r.Settings.NoiseFile, raised)
		if unstable > 0 {
			out += fmt.Sprintf(", %d unstable", unstable)
		}
		parts = append(parts, out)
	}
	if r.Settings.FloorsFile != "" {
		raised := 0
		for i := range r.Comparisons {
			if r.Comparisons[i].ThresholdFrom == "hosts" {
				raised++
			}
		}
		parts = append(parts, fmt.Sprintf("cross-host floors of %s raised %d thresholds", r.Settings.FloorsFile, raised))
	}
	return strings.Join(parts, "; ")
}

// configName appends the distinguishing configuration of c to its name:
// "Softmax/rows=1024 [pkg=foo]".
func configName(c *report.Comparison) string {
	if len(c.Config) == 0 {
		return c.Name
	}
	return c.Name + " [" + joinConfig(c.Config, " ") + "]"
}

// joinConfig joins the key=value pairs of m in key order.
func joinConfig(m map[string]string, sep string) string {
	keys := sortedKeys(m)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, sep)
}

func sortedKeys(maps ...map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// configLines lists the configuration of both sides, one "key: value" per
// key, and "key: old → new" for keys whose values differ.
func configLines(r *report.Report) []string {
	var lines []string
	for _, k := range sortedKeys(r.Baseline.Config, r.Current.Config) {
		old, okOld := r.Baseline.Config[k]
		cur, okCur := r.Current.Config[k]
		if okOld && okCur && old == cur {
			lines = append(lines, k+": "+old)
			continue
		}
		if !okOld {
			old = missing
		}
		if !okCur {
			cur = missing
		}
		lines = append(lines, k+": "+old+" → "+cur)
	}
	return lines
}

var superDigits = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")

// superscript returns i in superscript digits, as benchstat numbers footnotes.
func superscript(i int) string {
	s := []rune(strconv.Itoa(i))
	for j, r := range s {
		s[j] = superDigits[r-'0']
	}
	return string(s)
}

// footnotes numbers distinct warning messages in order of first use.
type footnotes struct {
	list []string
	num  map[string]int
}

// mark returns the footnote markers for msgs, numbering new messages.
func (f *footnotes) mark(msgs []string) string {
	var marks []string
	for _, m := range msgs {
		i, ok := f.num[m]
		if !ok {
			if f.num == nil {
				f.num = map[string]int{}
			}
			f.list = append(f.list, m)
			i = len(f.list)
			f.num[m] = i
		}
		marks = append(marks, superscript(i))
	}
	return strings.Join(marks, " ")
}

// clean makes untrusted text safe to print on one line of a terminal or CI
// log: control characters, line and paragraph separators and invisible
// format characters (bidirectional overrides, zero-width spaces and
// joiners, soft hyphens) are shown escaped, and what the Actions runner
// would read as a workflow command (a leading "::", "##[") is broken
// (logsafe.Line).
func clean(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return logsafe.Line(s)
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return logsafe.Line(b.String())
}

// unsafeRune reports whether r must not appear as itself in one line of
// text from a report: a control character, a line or paragraph separator
// (U+2028, U+2029), or a format character (category Cf: U+200B–U+200F,
// U+202A–U+202E, U+2060–U+2064, U+2066–U+2069, U+00AD, U+061C, U+FEFF, ...).
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// blindNote says how many gated comparisons could not have detected a
// change of their threshold's size: "31 of 200 gated comparisons could not
// detect 5%"; "" when all could, or when the report does not say.
func blindNote(r *report.Report) string {
	gated, blind := 0, 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		if c.Gate != report.GateFail || c.Detectable == nil {
			continue
		}
		gated++
		if c.Blind() {
			blind++
			lo, hi = math.Min(lo, c.Threshold), math.Max(hi, c.Threshold)
		}
	}
	if blind == 0 {
		return ""
	}
	what := percent(lo)
	if hi > lo {
		what = "their thresholds (" + percent(lo) + "–" + percent(hi) + ")"
	}
	return fmt.Sprintf("%d of %d gated comparisons could not detect %s", blind, gated, what)
}

// detects is the verdict-cell note of a comparison that could not have
// detected its threshold: "(detects ≥ 26%)", or "(detects nothing)" when no
// change could reach significance. The figure is rounded up, to two
// significant digits: a comparison that detects only changes of 5.2% or
// more must not read "≥ 5%" beside a summary that counts it among those
// that could not detect 5%.
func detects(c *report.Comparison) string {
	if !c.Blind() {
		return ""
	}
	if !c.Detectable.Valid() {
		return "(detects nothing)"
	}
	return "(detects ≥ " + ceilPercent(float64(*c.Detectable)) + ")"
}

// ceilPercent formats a fraction as a percentage rounded up to two
// significant digits (at least to a hundredth of a percent): 0.052 → 5.2%,
// 0.2601 → 27%.
func ceilPercent(f float64) string {
	p := math.Round(f*100*1e9) / 1e9 // float noise must not round up
	scale := 1.0
	switch {
	case p < 1:
		scale = 100
	case p < 10:
		scale = 10
	}
	return strconv.FormatFloat(math.Ceil(p*scale)/scale, 'f', -1, 64) + "%"
}

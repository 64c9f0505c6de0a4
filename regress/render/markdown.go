package render

import (
	"io"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// corrections describes each multiple-comparison correction in words.
var corrections = map[string]string{
	report.Holm:      "Holm–Bonferroni correction",
	report.BH:        "Benjamini–Hochberg correction",
	report.FloorHolm: "Holm correction over the comparisons past the threshold",
	report.NoCorrect: "no multiple-comparison correction",
}

// Markdown writes r as GitHub-flavoured markdown: a heading with the outcome,
// the settings and both sides, one table of every comparison with the ones
// that fail the gate first (worst delta first), then the ones only warned
// about, improvements, inconclusive, added and unchanged, the warnings as
// a bullet list, and what sampling beyond the configured rounds did, with a
// bullet for each benchmark still underpowered. All text from the report is
// escaped so that it can neither break the table nor mention users or link
// issues.
func Markdown(w io.Writer, r *report.Report) error {
	var b strings.Builder
	icon := "⚠️"
	switch {
	case r.CutShort():
	case r.Verdict == report.Pass:
		icon = "✅"
	case r.Verdict == report.Fail:
		icon = "❌"
	}
	b.WriteString("### " + icon + " " + mdEscape(headline(r)) + "\n\n")
	s := r.Settings
	b.WriteString("alpha " + formatG(s.Alpha) + " · threshold " + percent(s.Threshold) + " · " +
		CorrectionWords(s.Correction))
	if n := noiseNote(r); n != "" {
		b.WriteString(" · " + mdEscape(n))
	}
	b.WriteString("\n\n")
	b.WriteString("**baseline** " + mdEscape(orMissing(r.Baseline.Label)) +
		" → **current** " + mdEscape(orMissing(r.Current.Label)) + "\n")
	var changed []string
	for _, l := range configLines(r) {
		if strings.Contains(l, " → ") {
			changed = append(changed, mdEscape(l))
		}
	}
	if len(changed) > 0 {
		b.WriteString("\nconfiguration differs: " + strings.Join(changed, " · ") + "\n")
	}
	b.WriteString("\n")
	t := NewMarkdownTable(r)
	if len(r.Comparisons) == 0 {
		b.WriteString("_No comparisons._\n")
	} else {
		b.WriteString(t.Header())
		for _, c := range mdOrder(r) {
			b.WriteString(t.Row(c))
		}
	}
	notes := t.Notes()
	if len(notes) > 0 || len(r.Warnings) > 0 {
		b.WriteString("\n")
	}
	for _, n := range notes {
		b.WriteString(n)
	}
	for _, m := range r.Warnings {
		b.WriteString("- warning: " + mdEscape(m) + "\n")
	}
	if l := SequentialSummary(r); l != "" {
		b.WriteString("\n" + mdEscape(l) + "\n")
		for i := range r.Sequential.Benchmarks {
			sb := &r.Sequential.Benchmarks[i]
			if !sb.Underpowered {
				continue
			}
			name, rounds, detects, _ := sequentialRow(sb)
			b.WriteString("- still underpowered: " + mdEscape(name) + " (" + rounds + ", " + detects + ")\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdSummary(s *report.Summary, f rowFormat) string {
	if s == nil || !s.Center.Valid() {
		return missing
	}
	return f.format(float64(s.Center)) + " ± " + pctRange(s)
}

// mdOrder returns the comparisons in presentation order: failing the gate
// (worst delta first), warned about, bad but ungated, improvements,
// inconclusive, added, unchanged; report order otherwise.
func mdOrder(r *report.Report) []*report.Comparison {
	rank := func(c *report.Comparison) int {
		switch {
		case c.Fails():
			return 0
		case c.Warns():
			return 1
		case report.Bad(c.Verdict):
			return 2
		}
		switch c.Verdict {
		case report.Improvement:
			return 3
		case report.Inconclusive:
			return 4
		case report.Added:
			return 5
		case report.Unchanged:
			return 6
		}
		return 7
	}
	// worse is how much worse the current side is; comparisons without a
	// delta (removed, failed) sort after those with one.
	worse := func(c *report.Comparison) float64 {
		d := float64(c.Delta)
		switch {
		case !c.Delta.Valid():
			return math.Inf(-1)
		case c.Better == report.Higher:
			return -d
		case c.Better == report.Lower:
			return d
		}
		return math.Abs(d)
	}
	out := make([]*report.Comparison, len(r.Comparisons))
	for i := range r.Comparisons {
		out[i] = &r.Comparisons[i]
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj || ri != 0 {
			return ri < rj
		}
		return worse(out[i]) > worse(out[j])
	})
	return out
}

// mdEscape makes untrusted text inert inside a GitHub markdown table cell
// or running text. Markdown punctuation and table pipes are
// backslash-escaped, HTML characters become entities, line breaks spaces,
// and invisible or line-separating characters are shown escaped (clean).
// What GitHub would turn into a link or a notification is broken by putting
// its key character alone in a <code> element, which renders it literally:
// the @ of a mention or an e-mail address and the # of an issue reference
// (owner/repo#123 too) when a letter or digit follows, the - of GH-123, the : after http, https, ftp, mailto or xmpp,
// and the . after www. Mentions and references are found after markdown is
// rendered, in text outside code and links, so an escape the markdown
// parser undoes (a backslash, an entity) would not stop them, and an
// invisible character between @ and a name would look like the name it is
// not; a character in its own <code> element is neither.
func mdEscape(s string) string {
	var b strings.Builder
	rs := []rune(clean(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)))
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
	// asciiWord is what GitHub's autolinker counts as a word character before a mention or a GH- reference:
	// after any other letter ("Ǌ@octocat") it still links, so only an ASCII one keeps a boundary away.
	asciiWord := func(r rune) bool { return r < utf8.RuneSelf && word(r) }
	// after reports whether the runes before i end with word (ASCII, any
	// case) starting at a word boundary (no ASCII word character before it).
	after := func(i int, words ...string) bool {
		for _, w := range words {
			k := i - len(w)
			if k < 0 || !strings.EqualFold(string(rs[k:i]), w) {
				continue
			}
			if k == 0 || !asciiWord(rs[k-1]) {
				return true
			}
		}
		return false
	}
	// ends reports whether the runes before i end with word (ASCII, any case),
	// wherever it starts: a link scheme or "www" glued to what precedes it is
	// escaped too, which costs nothing where GitHub would not have linked it.
	ends := func(i int, words ...string) bool {
		for _, w := range words {
			if k := i - len(w); k >= 0 && strings.EqualFold(string(rs[k:i]), w) {
				return true
			}
		}
		return false
	}
	// alnumNext reports whether a letter or any number (decimal or not: GitHub's
	// own rules aside, "@➀" is escaped too) follows i.
	alnumNext := func(i int) bool { return i+1 < len(rs) && (unicode.IsLetter(rs[i+1]) || unicode.IsNumber(rs[i+1])) }
	// mentionOrEmail reports whether the @ at i could start a mention (it
	// follows no ASCII word character) or belong to an e-mail address (a dotted
	// domain follows); "main@1f2e3d4" is neither and stays as it is.
	mentionOrEmail := func(i int) bool {
		if !alnumNext(i) {
			return false
		}
		if i == 0 || !asciiWord(rs[i-1]) {
			return true
		}
		for j := i + 1; j+1 < len(rs) && (word(rs[j]) || rs[j] == '-' || rs[j] == '.'); j++ {
			if rs[j] == '.' && word(rs[j+1]) {
				return true
			}
		}
		return false
	}
	for i, r := range rs {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case strings.ContainsRune("|\\`*_[]~", r):
			b.WriteRune('\\')
			b.WriteRune(r)
		case r == '@' && mentionOrEmail(i), r == '#' && alnumNext(i),
			r == '-' && after(i, "gh") && i+1 < len(rs) && unicode.IsDigit(rs[i+1]),
			r == ':' && ends(i, "http", "https", "ftp", "mailto", "xmpp"),
			r == '.' && ends(i, "www"):
			b.WriteString("<code>" + string(r) + "</code>")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

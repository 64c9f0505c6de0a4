package comment

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// linkish counts what GitHub could turn into a link, a mention or a
// reference, or what would change the page's structure, in a comment body.
var linkish = map[string]*regexp.Regexp{
	"url":       regexp.MustCompile(`(?i)(https?|ftp|mailto|xmpp):`),
	"www":       regexp.MustCompile(`(?i)www\.`),
	"mention":   regexp.MustCompile(`(^|[^\w])@[\p{L}\p{N}]`),
	"email":     regexp.MustCompile(`\w@[\w-]+\.\w`),
	"reference": regexp.MustCompile(`#\d`),
	"gh-ref":    regexp.MustCompile(`(?i)\bgh-\d`),
	"link":      regexp.MustCompile(`(^|[^\\])\]\(`), // an unescaped ](
	"tag":       regexp.MustCompile(`<[a-zA-Z!/]`),
	"marker":    regexp.MustCompile(`<!--`),
}

// inert removes what mdEscape puts in a <code> element: one character
// rendered literally, which joins nothing on either side of it (it is
// replaced by a space, so that "#<code>#</code>0" is not read as "#0").
var codeRE = regexp.MustCompile(`<code>.</code>`)

// FuzzCommentBody puts arbitrary text where a fork controls it — a
// benchmark name, the current side's label, a warning — into the fail
// report's sticky comment, and checks that the comment keeps its marker,
// its budget, its lines and its table, and holds no more links, mentions,
// references, tags or invisible characters than the same comment with
// plain text there.
func FuzzCommentBody(f *testing.F) {
	for _, s := range []string{"x", "@octocat #12 GH-42", "https://evil.example www.evil.example me@evil.example",
		"a|b\nc\r\u2028d", "<script>alert(1)</script>", "`code` **bold** [link](https://x)", "@\u200boctocat", "<!-- kernelwatch:v1 class=cpu -->",
		"owner/repo#1", "::error::x ##[warning]y", "\xff\xfe"} {
		f.Add(s, s, s)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "fail.json"))
	if err != nil {
		f.Fatal(err)
	}
	fresh := func(tb testing.TB) *report.Report {
		r, err := report.Read(bytes.NewReader(data), "fail.json")
		if err != nil {
			tb.Fatal(err)
		}
		return r
	}
	plain := Body(with(fresh(f), "x", "x", "x"), opts)
	plainCounts := map[string]int{}
	for what, re := range linkish {
		plainCounts[what] = len(re.FindAllString(codeRE.ReplaceAllString(plain, " "), -1))
	}
	f.Fuzz(func(t *testing.T, name, label, warning string) {
		if len(name)+len(label)+len(warning) > 600 {
			return // the layout drops rows past the budget; these checks compare layouts
		}
		body := Body(with(fresh(t), name, label, warning), opts)
		if len(body) > Budget {
			t.Fatalf("%d bytes, budget %d", len(body), Budget)
		}
		if m, ok := Parse(body); !ok || m.Class != "gpu-nvidia-h100-80gb-hbm3" || m.HeadSHA != opts.HeadSHA {
			t.Fatalf("marker %+v, %v", m, ok)
		}
		if got, want := strings.Count(body, "\n"), strings.Count(plain, "\n"); got != want {
			t.Fatalf("%d lines, want %d:\n%s", got, want, body)
		}
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "| ") && len(cells(l)) != 10 {
				t.Fatalf("table row with %d fields: %q", len(cells(l)), l)
			}
		}
		if strings.ContainsAny(body, "\u2028\u2029\u200b\u200c\u200d\u2060\ufeff\u202e\r") {
			t.Fatalf("invisible or line-breaking character in %q", body)
		}
		stripped := codeRE.ReplaceAllString(body, " ")
		for what, re := range linkish {
			if got, want := len(re.FindAllString(stripped, -1)), plainCounts[what]; got > want {
				t.Fatalf("%d %s matches, want %d: %q", got, what, want, re.FindAllString(stripped, -1))
			}
		}
		if utf8.ValidString(name+label+warning) && !utf8.ValidString(body) {
			t.Fatal("valid input made an invalid body")
		}
	})
}

// with sets the text a fork controls.
func with(r *report.Report, name, label, warning string) *report.Report {
	r.Comparisons[0].Name = name
	r.Current.Label = label
	r.Warnings = append(r.Warnings, warning)
	return r
}

// cells splits a table row at its unescaped pipes.
func cells(row string) []string {
	var out []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			out = append(out, row[start:i])
			start = i + 1
		}
	}
	return append(out, row[start:])
}

package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestMarkdownTableIsMarkdown checks that the building blocks give exactly
// the table Markdown writes.
func TestMarkdownTableIsMarkdown(t *testing.T) {
	r := failReport(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	tb := NewMarkdownTable(r)
	var b strings.Builder
	b.WriteString(tb.Header())
	for _, c := range Ordered(r) {
		b.WriteString(tb.Row(c))
	}
	if !strings.Contains(buf.String(), b.String()) {
		t.Errorf("table blocks differ from Markdown's table:\n%s", b.String())
	}
	for _, n := range tb.Notes() {
		if !strings.Contains(buf.String(), n) {
			t.Errorf("note %q not in Markdown's output", n)
		}
	}
}

func TestMarkdownTableDropNotes(t *testing.T) {
	r := failReport(t)
	tb := NewMarkdownTable(r)
	var noted, plain = -1, -1
	for i, c := range r.Comparisons {
		if len(c.Warnings) > 0 && noted < 0 {
			noted = i
		}
		if len(c.Warnings) == 0 && plain < 0 {
			plain = i
		}
	}
	tb.Row(&r.Comparisons[plain])
	n := tb.NoteCount()
	row := tb.Row(&r.Comparisons[noted])
	if tb.NoteCount() != n+1 || !strings.Contains(row, "¹") {
		t.Fatalf("row %q numbered %d notes", row, tb.NoteCount()-n)
	}
	tb.DropNotes(n)
	if tb.NoteCount() != n || len(tb.Notes()) != n {
		t.Fatalf("DropNotes left %d notes", tb.NoteCount())
	}
	if again := tb.Row(&r.Comparisons[noted]); again != row {
		t.Errorf("after DropNotes the row reads %q, want %q", again, row)
	}
}

func TestExportedHelpers(t *testing.T) {
	if got := EscapeMarkdown(hostile); strings.Contains(got, "<script>") || strings.Contains(got, "@octocat") {
		t.Errorf("EscapeMarkdown = %q", got)
	}
	if got := CleanText("a\nb\u202e"); got != `a\x0ab\u202e` {
		t.Errorf("CleanText = %q", got)
	}
	if Percent(0.015) != "1.5%" || Delta(0.064) != "+6.40%" {
		t.Error("Percent or Delta")
	}
	if CorrectionWords("holm") != "Holm–Bonferroni correction" || CorrectionWords("x|y") != `correction x\|y` {
		t.Errorf("CorrectionWords: %q", CorrectionWords("x|y"))
	}
}

// TestEscapeMarkdownInert checks that what GitHub would turn into a link,
// a mention or a reference comes out with its key character alone in a
// <code> element, and that invisible and line-separating characters come
// out visible, not as themselves.
func TestEscapeMarkdownInert(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fixes GH-42", "fixes GH<code>-</code>42"},
		{"gh-7 and xGH-7", "gh<code>-</code>7 and xGH-7"},
		{"see https://evil.example/x", "see https<code>:</code>//evil.example/x"},
		{"HTTP://a.b and ftp://c", "HTTP<code>:</code>//a.b and ftp<code>:</code>//c"},
		{"mailto:a@b.c", "mailto<code>:</code>a<code>@</code>b.c"},
		{"www.evil.example", "www<code>.</code>evil.example"},
		{"@octocat and @org/team", "<code>@</code>octocat and <code>@</code>org/team"},
		{"mail me: me@evil.example", "mail me: me<code>@</code>evil.example"},
		{"main@1f2e3d4 and HEAD@9a8b7c6", "main@1f2e3d4 and HEAD@9a8b7c6"},
		// After a letter that is not ASCII, GitHub still sees a word boundary (a fuzz find: "Ǌ@0").
		{"Ǌ@octocat, é@0 and ǊGH-1", "Ǌ<code>@</code>octocat, é<code>@</code>0 and ǊGH<code>-</code>1"},
		{"#12 and owner/repo#34", "<code>#</code>12 and owner/repo<code>#</code>34"},
		// Shown as escapes (a backslash escaped for markdown): "\u2028" on the page.
		{"a\u2028b\u2029c", `a\\u2028b\\u2029c`},
		{"@\u200boctocat", `@\\u200boctocat`},
		{"GH\u200d-42 x\u00ady\u2060z\ufeff", `GH\\u200d-42 x\\xady\\u2060z\\ufeff`},
		{"##[error]x", `#\\x23\[error\]x`},
		{"plain/name=1", "plain/name=1"},
	} {
		got := EscapeMarkdown(tc.in)
		if got != tc.want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, r := range got {
			if r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2028 || r == 0x2029 || r == 0x2060 || r == 0xad || r == 0xfeff {
				t.Errorf("EscapeMarkdown(%q) = %q holds U+%04X", tc.in, got, r)
			}
		}
	}
}

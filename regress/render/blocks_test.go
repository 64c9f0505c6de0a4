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

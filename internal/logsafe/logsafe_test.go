package logsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
)

// commandLines returns the lines of out that the Actions runner would
// execute as workflow commands: it splits output at LF and at CR, and
// accepts "::name" after leading white space (TryParseV2) or "##[name]"
// anywhere (the legacy TryParse). Any name counts, registered or not.
func commandLines(out string) []string {
	var cmds []string
	for _, l := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		t := strings.TrimLeftFunc(l, unicode.IsSpace)
		v2 := strings.HasPrefix(t, "::") && strings.Contains(t[2:], "::")
		i := strings.Index(l, "##[")
		v1 := i >= 0 && strings.Contains(l[i:], "]")
		if v1 || v2 {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

var hostile = []string{
	"x\n::error title=Forged::the GPU check passed",
	"::add-mask::ghs_",
	"  \t::stop-commands::resume-token",
	"progress\r::warning::carriage return ends a line for the runner",
	"name ##[error]legacy form anywhere in a line",
	"###[set-output name=verdict;]pass",
	"\u2003\u00a0::notice::Unicode white space is trimmed too",
	"\u0085::debug::next line",
}

func TestWriterNeutralisesCommands(t *testing.T) {
	for _, in := range hostile {
		if len(commandLines(in)) == 0 {
			t.Fatalf("the test's runner model misses %q", in)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		// Byte by byte: a command split over writes is still caught.
		for i := 0; i < len(in); i++ {
			w.Write([]byte{in[i]})
		}
		w.Write([]byte("\n"))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if c := commandLines(out.String()); len(c) > 0 {
			t.Errorf("%q: the runner would execute %q", in, c)
		}
		if strings.Count(out.String(), "\n")+strings.Count(out.String(), "\r") != strings.Count(in, "\n")+strings.Count(in, "\r")+1 {
			t.Errorf("%q: line structure changed: %q", in, out.String())
		}
	}
}

func TestWriterLeavesOrdinaryText(t *testing.T) {
	in := "regress check: 12 of 40 benchmarks, 1m2s left\r" +
		"regress comment: created the cpu comment on #7: https://github.example/o/r/pull/7\n" +
		"a::b and #[x] and ## [y] stay\npartial"
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte(in))
	if out.String() != strings.TrimSuffix(in, "partial") {
		t.Errorf("before Flush: %q", out.String())
	}
	w.Flush()
	if out.String() != in {
		t.Errorf("got %q, want it unchanged", out.String())
	}
}

func TestText(t *testing.T) {
	for _, in := range hostile {
		got := Text(in)
		if strings.ContainsAny(got, "\r\n\u2028\u2029\u0085") || len(commandLines("prefix: "+got)) > 0 || len(commandLines(got)) > 0 {
			t.Errorf("Text(%q) = %q", in, got)
		}
	}
	if got := Text("::error::x"); got != `:\x3aerror::x` {
		t.Errorf("Text = %q", got)
	}
}

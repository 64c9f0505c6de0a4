// Package logsafe keeps untrusted text from acting as a GitHub Actions
// workflow command. The runner reads a step's output line by line — a line
// ends at LF or at a lone CR — and executes two forms of command in it: a
// line that starts with "::" once leading white space is trimmed (::error,
// ::add-mask::, ::stop-commands::), and, in the legacy form the runner still
// parses, "##[" anywhere in a line. A benchmark name or a report field from
// a fork that reached the log of a job holding a write token could
// otherwise annotate the run, mask text or stop command processing.
//
// The opinion: neutralise at the one place every line passes — the
// command's standard error, through Writer — instead of trusting each of
// many messages to quote what it prints (messages still quote untrusted
// values with %q, so that they read unambiguously). Neutralised text stays
// readable and changes only where it would have been a command: the
// character that completes the command is written as a Go escape, ":\x3a"
// and "#\x23[".
package logsafe

import (
	"io"
	"strings"
	"sync"
	"unicode"
)

// Line returns s, one line without its terminator, made inert: a leading
// "::" (after white space, as the runner trims it) becomes ":\x3a" and
// every "##[" becomes "#\x23[". Text that is no command is returned as is.
func Line(s string) string {
	rest := strings.TrimLeftFunc(s, unicode.IsSpace)
	if strings.HasPrefix(rest, "::") {
		lead := len(s) - len(rest)
		s = s[:lead] + `:\x3a` + rest[2:]
	}
	return strings.ReplaceAll(s, "##[", `#\x23[`)
}

// Text returns s made safe to print inside one line: line breaks (LF, CR,
// and the Unicode line and paragraph separators) are written as \n, \r,
// \u2028 and \u2029, and the result is then made inert as Line does.
func Text(s string) string {
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`, "\u0085", `\u0085`).Replace(s)
	return Line(s)
}

// Writer passes everything written to it on to an underlying writer, one
// line at a time, each made inert with Line. A line is written once its
// terminator (LF or CR, the runner's line ends) arrives; Flush writes what
// is left of an unterminated last line. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	var out []byte
	for {
		i := strings.IndexAny(string(w.buf), "\r\n")
		if i < 0 {
			break
		}
		out = append(out, Line(string(w.buf[:i]))...)
		out = append(out, w.buf[i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a long-lived writer drop its largest line
	}
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes an unterminated last line, made inert.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	line := Line(string(w.buf))
	w.buf = nil
	_, err := io.WriteString(w.w, line)
	return err
}

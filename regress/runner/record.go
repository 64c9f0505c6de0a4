package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Summary is the failure's message with how often it happened: "panic:
// boom (in 3 runs)".
func (f Failure) Summary() string {
	if f.Times > 1 {
		return fmt.Sprintf("%s (in %d runs)", f.Message, f.Times)
	}
	return f.Message
}

// FailureLines records failures in a result file the way go test prints
// them ("--- FAIL: BenchmarkX" and the message indented below), so that a
// result file keeps the benchmarks that failed on its side, not only the
// results of those that did not. benchfmt skips such lines; ReadFailures
// reads them back.
func FailureLines(failures []Failure) []byte {
	var b bytes.Buffer
	for _, f := range failures {
		msg := strings.Join(strings.Fields(f.Summary()), " ")
		if msg == "" {
			msg = "failed"
		}
		fmt.Fprintf(&b, "--- FAIL: Benchmark%s\n    %s\n", f.Name, msg)
	}
	return b.Bytes()
}

// ReadFailures returns the failures recorded in a result file (by
// FailureLines, or by go test itself): name and message, Times 1.
func ReadFailures(data []byte) []Failure {
	sc := &scan{}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		sc.line(s.Text())
	}
	var out []Failure
	for _, f := range sc.fails {
		msg := f.msg
		if msg == "" {
			msg = "failed"
		}
		out = append(out, Failure{Name: f.name, Message: msg, Times: 1})
	}
	return out
}

package runner

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// scan reads the standard output of one test binary invocation line by line
// and keeps what a result file holds: configuration lines (the go test
// header, what the suite prints), Unit lines and benchmark results. It drops
// the rest (PASS, FAIL, test log output) and records, on the way, the
// benchmarks go test reports as failed and the one that was running when the
// output stopped.
type scan struct {
	out      bytes.Buffer // kept lines
	results  int
	fails    []failLine
	inFail   bool   // the indented lines after "--- FAIL:" belong to it
	partial  string // an unterminated "BenchmarkX-N \t" line at the end
	top      string // top-level benchmark of the latest result
	onResult func(top string)
	// costs is the invocation's costs line (costsOK: it printed one), and
	// total the process's own total time from it.
	costs   Costs
	total   time.Duration
	costsOK bool
}

type failLine struct {
	name, msg string
}

// line handles one complete line (without its newline).
func (s *scan) line(l string) {
	l = strings.TrimSuffix(l, "\r")
	if s.inFail {
		if strings.HasPrefix(l, "    ") {
			if f := &s.fails[len(s.fails)-1]; f.msg == "" {
				f.msg = strings.TrimSpace(l)
			}
			return
		}
		s.inFail = false
	}
	switch {
	case strings.HasPrefix(l, "--- FAIL: Benchmark"):
		name := strings.TrimPrefix(l, "--- FAIL: Benchmark")
		if i := strings.Index(name, " ("); i >= 0 {
			name = name[:i]
		}
		s.fails = append(s.fails, failLine{name: strings.TrimSpace(name)})
		s.inFail = true
	case strings.HasPrefix(l, "Benchmark"):
		name, ok := resultName(l)
		if !ok {
			return
		}
		s.out.WriteString(l)
		s.out.WriteByte('\n')
		s.results++
		top, _, _ := strings.Cut(trimName(name), "/")
		top = "Benchmark" + top
		s.top = top
		if s.onResult != nil {
			s.onResult(top)
		}
	case configKey(l) == CostsKey:
		if total, c, err := parseCosts(l); err == nil {
			s.total, s.costs, s.costsOK = total, c, true
		}
	case strings.HasPrefix(l, "Unit ") || isConfigLine(l):
		s.out.WriteString(l)
		s.out.WriteByte('\n')
	}
}

// end handles the text after the last newline: go test prints a benchmark's
// name before running it, so an unterminated name is the benchmark that was
// running when the process died.
func (s *scan) end(rest string) {
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "Benchmark") && !strings.ContainsAny(rest, " \t") {
		s.partial = rest
		return
	}
	if rest != "" {
		s.line(rest)
	}
}

// resultName returns the benchmark name of a result line ("BenchmarkX-8 100
// 12 ns/op ..."): the name, an iteration count, then value/unit pairs.
func resultName(l string) (string, bool) {
	f := strings.Fields(l)
	if len(f) < 4 || len(f)%2 != 0 {
		return "", false
	}
	if _, err := strconv.ParseUint(f[1], 10, 64); err != nil {
		return "", false
	}
	if _, err := strconv.ParseFloat(f[2], 64); err != nil {
		return "", false
	}
	return f[0], true
}

// isConfigLine reports whether l is a benchfmt configuration line: a key
// that starts with a lower-case letter and has no space or upper-case
// letter, a colon, then a space or the end of the line.
func isConfigLine(l string) bool {
	key, rest, ok := strings.Cut(l, ":")
	if !ok || key == "" || key[0] < 'a' || key[0] > 'z' {
		return false
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	for _, r := range key {
		if r == ' ' || r == '\t' || r >= 'A' && r <= 'Z' {
			return false
		}
	}
	return true
}

// configKey returns the key of a configuration line, "" for other lines.
func configKey(l string) string {
	if !isConfigLine(l) {
		return ""
	}
	k, _, _ := strings.Cut(l, ":")
	return k
}

// trimName turns a go test name (BenchmarkX/sub-8) into the name the
// comparator uses: without "Benchmark" and without the -N GOMAXPROCS
// suffix.
func trimName(full string) string {
	name := strings.TrimPrefix(full, "Benchmark")
	i := len(name) - 1
	for i >= 0 && '0' <= name[i] && name[i] <= '9' {
		i--
	}
	if i > 0 && i < len(name)-1 && name[i] == '-' {
		return name[:i]
	}
	return name
}

// deepest drops every failure whose name is a parent of another failure's
// name: go test fails a parent benchmark whenever a sub-benchmark fails.
func deepest(fails []failLine) []failLine {
	var out []failLine
	for _, f := range fails {
		parent := false
		for _, g := range fails {
			if strings.HasPrefix(g.name, f.name+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, f)
		}
	}
	return out
}

// benchFrame finds the benchmark function in a goroutine dump:
// "pkg.BenchmarkX(0x...)" or "pkg.BenchmarkX.func1(...)".
var benchFrame = regexp.MustCompile(`\.(Benchmark[^.(\s]*)[.(]`)

// crashInfo reads a crashed invocation's standard error: the first line of
// the panic or fatal error, and the top-level benchmark function on the
// crashing goroutine's stack, if any.
func crashInfo(stderr string) (msg, top string) {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			msg = strings.TrimSpace(l)
			break
		}
	}
	// The crashing goroutine is the first one dumped.
	if i := strings.Index(stderr, "\ngoroutine "); i >= 0 {
		dump := stderr[i+1:]
		if j := strings.Index(dump, "\n\ngoroutine "); j >= 0 {
			dump = dump[:j]
		}
		if m := benchFrame.FindStringSubmatch(dump); m != nil {
			top = m[1]
		}
	}
	return msg, top
}

// lastLines returns the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// Package convert turns the result files of other benchmark harnesses —
// pytest-benchmark, Google Benchmark and NVIDIA nvbench — into Go benchmark
// format, so that kernels benchmarked from Python or C++ are judged by the
// same statistics as the Go suite.
//
// Its opinion is that a converter must keep the samples, not the summaries:
// the rank test that decides a verdict needs every measurement, and a mean or
// a median of one process is one sample however many launches it averages.
// So each reader writes one result line per sample the tool recorded —
// pytest-benchmark's stats.data (every round), Google Benchmark's
// per-repetition entries, nvbench's per-sample times — and treats a file that
// holds only aggregates as an error: it says so and what flag makes the tool
// keep its samples, and converts the aggregate as a single sample only when
// the caller allows it (Options.AllowAggregates), with a warning.
//
// What each benchmark was configured with (dtype, shape, device, the
// parameters of a pytest case, the named arguments of a Google Benchmark,
// the axes of an nvbench state) becomes name segments, key=value with the
// key in lower case and no spaces or slashes anywhere, in the order the tool
// gives them. What describes the machine becomes configuration lines. A
// converter never writes the keys regress writes itself (commit, branch,
// date, go, count, seed, shard, ...), so a converted file can sit under a
// regress check header; it writes class only where the file names the GPU.
//
// Bad input is an *Error naming the file and the line (JSON decoder offsets
// turned into line numbers). Problems that do not stop the conversion travel
// with the result as warnings.
package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The formats this package reads.
const (
	PytestBenchmark = "pytest-benchmark"
	GBench          = "gbench"
	NVBench         = "nvbench"
)

// Formats lists the formats, for messages.
var Formats = []string{PytestBenchmark, GBench, NVBench}

// Options change what a conversion accepts.
type Options struct {
	// AllowAggregates converts a benchmark that only has aggregates
	// (a mean or median, no samples) into one sample, with a warning,
	// instead of failing.
	AllowAggregates bool
	// Dir is where files the input refers to (nvbench's sample files) are
	// looked up; "" is the input file's directory (the current directory
	// for standard input).
	Dir string
}

// Result is a converted file.
type Result struct {
	// Text is the Go benchmark format: configuration lines, Unit lines,
	// benchmark lines and, for benchmarks the tool reports as failed,
	// "--- FAIL: BenchmarkX" lines as go test writes them.
	Text []byte
	// Samples counts the benchmark lines of Text.
	Samples int
	// Benchmarks counts the distinct benchmark names.
	Benchmarks int
	// Warnings are problems that did not stop the conversion.
	Warnings []string
}

// Error is bad input: File and, where there is one, Line say where.
type Error struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
	// AggregatesOnly marks the error of a file with benchmarks that have
	// only aggregates (Options.AllowAggregates converts them).
	AggregatesOnly bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// File converts the file at path, written by the tool format names. "-"
// reads standard input (stdin), and files it refers to (nvbench's sample
// files) are then looked up in the current directory.
func File(format, path string, stdin io.Reader, opt Options) (*Result, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Convert(format, data, path, opt)
}

// Convert converts data, the contents of the file name (for messages, and
// for nvbench to find the sample files beside it), written by the tool
// format names.
func Convert(format string, data []byte, name string, opt Options) (*Result, error) {
	d := &doc{data: data, name: name, opt: opt}
	var err error
	switch format {
	case PytestBenchmark:
		err = readPytest(d)
	case GBench:
		err = readGBench(d)
	case NVBench:
		err = readNVBench(d)
	default:
		return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, err
	}
	if d.out.samples == 0 && d.out.fails == 0 {
		return nil, &Error{File: name, Msg: "no benchmark results in the file"}
	}
	return &Result{Text: d.out.b.Bytes(), Samples: d.out.samples, Benchmarks: len(d.out.names), Warnings: d.warnings}, nil
}

// doc is one input file being converted.
type doc struct {
	data     []byte
	name     string
	opt      Options
	out      writer
	warnings []string
	warned   map[string]bool
}

func (d *doc) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if d.warned == nil {
		d.warned = map[string]bool{}
	}
	if !d.warned[msg] {
		d.warned[msg] = true
		d.warnings = append(d.warnings, msg)
	}
}

// errAt is an *Error at byte offset off of the file.
func (d *doc) errAt(off int64, format string, args ...any) error {
	return &Error{File: d.name, Line: d.line(off), Msg: fmt.Sprintf(format, args...)}
}

// line is the 1-based line of byte offset off.
func (d *doc) line(off int64) int {
	off = min(max(off, 0), int64(len(d.data)))
	return bytes.Count(d.data[:off], []byte("\n")) + 1
}

// skipSpace moves off past white space and the separators between JSON
// values (',' and ':'), to where the next value starts.
func (d *doc) skipSpace(off int64) int64 {
	for off < int64(len(d.data)) && strings.IndexByte(" \t\r\n,:", d.data[off]) >= 0 {
		off++
	}
	return off
}

// jsonErr turns an encoding/json error from decoding the value that starts
// at byte offset base into an *Error with the line it happened on.
func (d *doc) jsonErr(base int64, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return d.errAt(base+se.Offset, "malformed JSON: %v", se)
	case errors.As(err, &te):
		what := te.Value
		if te.Field != "" {
			return d.errAt(base+te.Offset, "%s: want %s, got %s", te.Field, jsonType(te.Type.Kind().String()), what)
		}
		return d.errAt(base+te.Offset, "want %s, got %s", jsonType(te.Type.Kind().String()), what)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return d.errAt(int64(len(d.data)), "malformed JSON: unexpected end of file")
	}
	return d.errAt(base, "%v", err)
}

// jsonType names a Go kind the way a JSON file would.
func jsonType(kind string) string {
	switch kind {
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "interface":
		return "a value"
	}
	return "a number"
}

// member is one value of a JSON object or array, undecoded, with the
// offset at which it starts.
type member struct {
	key string // "" for array elements
	off int64
	raw json.RawMessage
}

// object reads the JSON object in raw (which starts at byte offset base of
// the file) into its members, in file order. what names it in errors.
func (d *doc) object(raw []byte, base int64, what string) ([]member, error) {
	return d.container(raw, base, what, '{')
}

// array reads the JSON array in raw (at base) into its elements.
func (d *doc) array(raw []byte, base int64, what string) ([]member, error) {
	return d.container(raw, base, what, '[')
}

func (d *doc) container(raw []byte, base int64, what string, open json.Delim) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, d.jsonErr(base, err)
	}
	if tok != open {
		want := "an object"
		if open == '[' {
			want = "a list"
		}
		return nil, d.errAt(base, "%s: want %s, got %s", what, want, describeToken(tok))
	}
	var out []member
	for dec.More() {
		var m member
		if open == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, d.jsonErr(base, err)
			}
			m.key, _ = k.(string)
		}
		m.off = base + d.skipSpaceIn(raw, dec.InputOffset())
		if err := dec.Decode(&m.raw); err != nil {
			return nil, d.jsonErr(base, err)
		}
		out = append(out, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, d.jsonErr(base, err)
	}
	return out, nil
}

// skipSpaceIn is skipSpace within raw.
func (d *doc) skipSpaceIn(raw []byte, off int64) int64 {
	for off < int64(len(raw)) && strings.IndexByte(" \t\r\n,:", raw[off]) >= 0 {
		off++
	}
	return off
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "a list"
	case string:
		return strconv.Quote(t)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// top reads the whole file as one JSON object (checking that nothing but
// white space follows it).
func (d *doc) top(what string) ([]member, error) {
	start := d.skipSpace(0)
	if start == int64(len(d.data)) {
		return nil, &Error{File: d.name, Msg: "empty file"}
	}
	dec := json.NewDecoder(bytes.NewReader(d.data[start:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, d.jsonErr(start, err)
	}
	if rest := start + dec.InputOffset(); d.skipSpace(rest) != int64(len(d.data)) {
		return nil, d.errAt(d.skipSpace(rest), "unexpected data after the JSON %s", what)
	}
	return d.object(raw, start, what)
}

// decode unmarshals m into v, with errors at the lines they happen on.
func (d *doc) decode(m member, v any) error {
	if err := json.Unmarshal(m.raw, v); err != nil {
		return d.jsonErr(m.off, err)
	}
	return nil
}

// isNull reports whether m is JSON null.
func (m member) isNull() bool { return string(bytes.TrimSpace(m.raw)) == "null" }

// writer writes Go benchmark format.
type writer struct {
	b       bytes.Buffer
	config  map[string]string // in force
	units   map[string]bool   // Unit lines written
	names   map[string]bool
	samples int
	fails   int
}

// setConfig writes a configuration line unless key already has value.
// Keys are lower-cased; an empty value deletes the key.
func (w *writer) setConfig(key, value string) {
	key = Key(key)
	value = strings.Join(strings.Fields(value), " ")
	if w.config == nil {
		w.config = map[string]string{}
	}
	if old, ok := w.config[key]; ok && old == value || !ok && value == "" {
		return
	}
	w.config[key] = value
	if value == "" {
		fmt.Fprintf(&w.b, "%s:\n", key)
		return
	}
	fmt.Fprintf(&w.b, "%s: %s\n", key, value)
}

// unit writes a Unit metadata line once.
func (w *writer) unit(unit, better string) {
	if w.units == nil {
		w.units = map[string]bool{}
	}
	if w.units[unit] {
		return
	}
	w.units[unit] = true
	fmt.Fprintf(&w.b, "Unit %s better=%s\n", unit, better)
}

// metric is one value/unit pair of a result line.
type metric struct {
	value float64
	unit  string
}

// result writes one sample of benchmark name (with its "Benchmark" prefix).
func (w *writer) result(name string, iters int64, metrics ...metric) {
	if w.names == nil {
		w.names = map[string]bool{}
	}
	w.names[name] = true
	w.samples++
	w.b.WriteString(protectProcs(name))
	fmt.Fprintf(&w.b, " %d", max(iters, 1))
	for _, m := range metrics {
		fmt.Fprintf(&w.b, " %s %s", strconv.FormatFloat(m.value, 'g', -1, 64), m.unit)
	}
	w.b.WriteByte('\n')
}

// fail writes a failed benchmark as go test does.
func (w *writer) fail(name, msg string) {
	w.fails++
	fmt.Fprintf(&w.b, "--- FAIL: %s\n", protectProcs(name))
	if msg = strings.Join(strings.Fields(msg), " "); msg != "" {
		fmt.Fprintf(&w.b, "    %s\n", msg)
	}
}

// protectProcs appends "-1" to a name that ends in "-<digits>", which a
// reader would otherwise take for go test's GOMAXPROCS suffix.
func protectProcs(name string) string {
	i := len(name) - 1
	for i >= 0 && '0' <= name[i] && name[i] <= '9' {
		i--
	}
	if i > 0 && i < len(name)-1 && name[i] == '-' {
		return name + "-1"
	}
	return name
}

// Key makes a configuration key: lower case, with every character that
// cannot appear in a key or a name segment (white space, '/', '=', ':'
// and control characters) replaced by '-'.
func Key(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' || r == '=' || r == ':' {
			return '-'
		}
		return r
	}, k)
}

// Value makes a name segment's value: every run of white space, and every
// '/' (which separates name segments), becomes '_'.
func Value(v string) string {
	v = strings.Join(strings.Fields(v), "_")
	return strings.Map(func(r rune) rune {
		if r == '/' || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, v)
}

// Segment is the name segment key=value.
func Segment(key, value string) string { return Key(key) + "=" + Value(value) }

// TopName makes the top-level benchmark name: "Benchmark" and name with
// every character that cannot appear in a name replaced by '_'.
func TopName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' {
			return '_'
		}
		return r
	}, strings.TrimSpace(name))
	if name == "" {
		name = "_"
	}
	return "Benchmark" + name
}

// jsonValue renders a decoded JSON value (decoded with UseNumber, or
// json.Number) as a name segment value: numbers as written, lists joined
// by 'x' (a shape [4096, 4096] is 4096x4096), null as "none".
func jsonValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "none"
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = jsonValue(e)
		}
		return strings.Join(parts, "x")
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + jsonValue(t[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

// number parses a JSON number member that must be finite and not negative.
func (d *doc) number(m member, what string) (float64, error) {
	var n json.Number
	if err := json.Unmarshal(m.raw, &n); err != nil {
		return 0, d.errAt(m.off, "%s: want a number, got %s", what, short(m.raw))
	}
	v, err := n.Float64()
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, d.errAt(m.off, "%s: %s is not a finite, non-negative number", what, n)
	}
	return v, nil
}

// short is a JSON value cut for messages.
func short(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// field returns the member of ms with key, and whether there is one.
func field(ms []member, key string) (member, bool) {
	for _, m := range ms {
		if m.key == key {
			return m, true
		}
	}
	return member{}, false
}

// aggregatesOnly is the error, or with Options.AllowAggregates the warning,
// about benchmarks that have aggregates and no samples.
func (d *doc) aggregatesOnly(names []string, how string) error {
	if len(names) == 0 {
		return nil
	}
	shown := names
	if len(shown) > 3 {
		shown = append(slices.Clone(shown[:3]), fmt.Sprintf("and %d more", len(names)-3))
	}
	if d.opt.AllowAggregates {
		d.warn("only aggregates for %d benchmark(s) (%s): each is converted as one sample, which the rank test cannot judge alone; %s",
			len(names), strings.Join(shown, ", "), how)
		return nil
	}
	return &Error{File: d.name, Msg: fmt.Sprintf("only aggregates, no samples, for %d benchmark(s) (%s): %s",
		len(names), strings.Join(shown, ", "), how), AggregatesOnly: true}
}

// dir is the directory of the input file, for files it refers to.
func (d *doc) dir() string {
	if d.opt.Dir != "" {
		return d.opt.Dir
	}
	if d.name == "-" || d.name == "" {
		return "."
	}
	return filepath.Dir(d.name)
}

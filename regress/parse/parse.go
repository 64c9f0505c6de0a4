// Package parse reads Go benchmark result files (the format of
// golang.org/design/14313-benchmark-format) for one side of a comparison.
//
// Parsing is done by golang.org/x/perf/benchfmt, which also tidies units with
// benchunit (ns/op becomes sec/op, MB/s becomes B/s) and collects Unit
// metadata lines. This package adds the strictness a CI gate needs, where
// benchstat is lenient: every problem is an error that names the file and,
// where there is one, the line — a syntax error, a value that is NaN,
// infinite or negative, a line too long to read, binary data, conflicting Unit
// metadata, and a file with no benchmark results at all. Nothing is skipped
// silently.
package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
)

// Side holds every result read for one side of a comparison.
type Side struct {
	// Files are the names of the files read, in order ("-" is stdin).
	Files []string
	// Configs are the distinct sets of configuration lines in force for
	// the results; Result.Config indexes it.
	Configs []Config
	// Results are the benchmark results in file order.
	Results []Result
	values  []Value
}

// Config is an ordered set of configuration key/value pairs.
type Config []KV

// KV is one configuration line.
type KV struct{ Key, Value string }

// Get returns the value of key, or "".
func (c Config) Get(key string) string {
	for _, kv := range c {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// Result is one benchmark line.
type Result struct {
	// Name is the benchmark name without the "Benchmark" prefix and without
	// the "-N" GOMAXPROCS suffix.
	Name string
	// Procs is the GOMAXPROCS suffix, 0 when the name has none.
	Procs int
	// Config indexes Side.Configs.
	Config int
	// File and Line locate the result for messages.
	File string
	Line int

	start, end int32
}

// Value is one measurement in a tidied unit.
type Value struct {
	Unit  string
	Value float64
}

// Values returns the measurements of r.
func (s *Side) Values(r *Result) []Value { return s.values[r.start:r.end] }

// Reader reads the result files of both sides of a comparison. One Reader is
// used for both sides so that Unit metadata is shared and a conflict between
// the sides is reported.
type Reader struct {
	r         *benchfmt.Reader
	stdin     io.Reader
	usedStdin bool
}

// NewReader returns a Reader; stdin is read for the file name "-".
func NewReader(stdin io.Reader) *Reader {
	return &Reader{r: benchfmt.NewReader(bytes.NewReader(nil), ""), stdin: stdin}
}

// Units returns the Unit metadata read so far, keyed by tidied unit.
func (p *Reader) Units() benchfmt.UnitMetadataMap { return p.r.Units() }

// maxLine is the longest line accepted, safely inside the buffer of the
// bufio.Scanner that benchfmt reads lines with (bufio.MaxScanTokenSize).
const maxLine = 60000

// ReadSide reads files into one Side.
func (p *Reader) ReadSide(files []string) (*Side, error) {
	if len(files) == 0 {
		return nil, errors.New("no result files given")
	}
	side := &Side{}
	for _, name := range files {
		if err := p.readFile(side, name); err != nil {
			return nil, err
		}
	}
	return side, nil
}

func (p *Reader) readFile(side *Side, name string) error {
	var in io.Reader
	if name == "-" {
		if p.usedStdin {
			return errors.New("-: standard input can be read only once")
		}
		p.usedStdin = true
		in = p.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, unwrapPath(err))
		}
		defer f.Close()
		in = f
	}
	br := bufio.NewReaderSize(in, 64<<10)
	head, err := br.Peek(8 << 10)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("%s: %w", name, err)
	}
	if looksBinary(head) {
		return fmt.Errorf("%s: binary data, not Go benchmark results", name)
	}
	side.Files = append(side.Files, name)

	guard := &lineGuard{r: br, line: 1}
	p.r.Reset(guard, name)
	count := 0
	lastCfg := -1
	for p.r.Scan() {
		switch rec := p.r.Result().(type) {
		case *benchfmt.SyntaxError:
			if guard.err != nil {
				// The scanner handed over the cut-off start of a
				// too-long line; report the real problem.
				return fmt.Errorf("%s:%d: line longer than %d bytes", name, guard.err.line, maxLine)
			}
			return rec
		case *benchfmt.UnitMetadata:
			// Collected by the reader; conflicts arrive as SyntaxErrors.
		case *benchfmt.Result:
			count++
			if err := side.add(rec, &lastCfg); err != nil {
				return err
			}
		}
	}
	if err := p.r.Err(); err != nil {
		var long *lineTooLong
		if errors.As(err, &long) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", name, long.line, maxLine)
		}
		return err
	}
	if count == 0 {
		return fmt.Errorf("%s: no benchmark results", name)
	}
	return nil
}

// lineGuard passes a reader through and fails, naming the line, as soon as
// a line grows longer than maxLine; benchfmt's scanner would otherwise stop
// with a message that names the line before it.
type lineGuard struct {
	r    io.Reader
	line int // current line, 1-based
	cur  int // bytes of the current line so far
	err  *lineTooLong
}

type lineTooLong struct{ line int }

func (e *lineTooLong) Error() string { return fmt.Sprintf("line %d too long", e.line) }

func (g *lineGuard) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	for _, c := range b[:n] {
		if c == '\n' {
			g.line++
			g.cur = 0
			continue
		}
		g.cur++
		if g.cur > maxLine {
			g.err = &lineTooLong{g.line}
			return 0, g.err
		}
	}
	return n, err
}

func (side *Side) add(rec *benchfmt.Result, lastCfg *int) error {
	file, line := rec.Pos()
	full := rec.Name.Full()
	name, procs := splitProcs(full)
	if len(name) == 0 {
		return fmt.Errorf("%s:%d: benchmark with an empty name", file, line)
	}
	if !utf8.Valid(full) {
		return fmt.Errorf("%s:%d: benchmark name is not valid UTF-8", file, line)
	}
	start := len(side.values)
	for _, v := range rec.Values {
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 {
			orig, unit := v.Value, v.Unit
			if v.OrigUnit != "" {
				orig, unit = v.OrigValue, v.OrigUnit
			}
			return fmt.Errorf("%s:%d: Benchmark%s: %v %s is not a finite, non-negative measurement", file, line, full, orig, unit)
		}
		side.values = append(side.values, Value{Unit: v.Unit, Value: v.Value})
	}
	side.Results = append(side.Results, Result{
		Name: string(name), Procs: procs, Config: side.config(rec, lastCfg),
		File: file, Line: line, start: int32(start), end: int32(len(side.values)),
	})
	return nil
}

// config returns the index of rec's configuration in side.Configs, adding
// it when it is new. Configuration rarely changes between results, so the
// last index is tried first without allocating.
func (side *Side) config(rec *benchfmt.Result, last *int) int {
	same := func(c Config) bool {
		n := 0
		for _, kv := range rec.Config {
			if !kv.File {
				continue
			}
			if n >= len(c) || c[n].Key != kv.Key || c[n].Value != string(kv.Value) {
				return false
			}
			n++
		}
		return n == len(c)
	}
	if *last >= 0 && same(side.Configs[*last]) {
		return *last
	}
	for i := range side.Configs {
		if same(side.Configs[i]) {
			*last = i
			return i
		}
	}
	var c Config
	for _, kv := range rec.Config {
		if kv.File {
			c = append(c, KV{kv.Key, string(kv.Value)})
		}
	}
	side.Configs = append(side.Configs, c)
	*last = len(side.Configs) - 1
	return *last
}

// splitProcs splits "Name-8" into "Name" and 8.
func splitProcs(full []byte) ([]byte, int) {
	i := len(full) - 1
	for i >= 0 && '0' <= full[i] && full[i] <= '9' {
		i--
	}
	if i > 0 && i < len(full)-1 && full[i] == '-' {
		if n, err := strconv.Atoi(string(full[i+1:])); err == nil {
			return full[:i], n
		}
	}
	return full, 0
}

// looksBinary reports whether the start of a file is not text: it has a NUL
// byte or is mostly invalid UTF-8.
func looksBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			if len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				break // a rune cut by the peek window
			}
			bad++
		}
		i += size
	}
	return bad > 0 && bad*20 > len(head)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

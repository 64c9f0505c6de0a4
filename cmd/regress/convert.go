package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/convert"
)

const convertSynopsis = "--from FORMAT [flags] FILE"

const convertHelp = `Converts the JSON results of another benchmark harness into Go benchmark
format, which every other verb reads (regress compare old.bench new.bench).
FILE "-" is standard input.

Every sample is kept, never a summary, since the rank test works on samples:

  pytest-benchmark  pytest --benchmark-json=FILE: every round (stats.data)
  gbench            --benchmark_format=json with --benchmark_repetitions=N:
                    every repetition, aggregates skipped
  nvbench           --jsonbin FILE: every sample time (the float32 files
                    nvbench writes beside FILE)

Parameters, named arguments and axes become name segments (key=value, keys
in lower case), the machine configuration lines. A file with only
aggregates (no --benchmark-save-data, --benchmark_report_aggregates_only,
nvbench --json) is refused; --allow-aggregates converts each aggregate as
one sample, with a warning. Warnings go to standard error.

Exit codes: 0 converted; 2 usage or bad input (the message names the file
and line).
`

// convertFlags are convert's flags.
type convertFlags struct {
	from, out string
	opt       convert.Options
}

func newConvertFlags() (*flag.FlagSet, *convertFlags) {
	fs := newFlagSet("convert")
	c := &convertFlags{}
	fs.StringVar(&c.from, "from", "", "`FORMAT` of FILE: "+strings.Join(convert.Formats, ", "))
	fs.StringVar(&c.out, "out", "", "`FILE` write the Go benchmark format here (atomically) instead of standard output")
	fs.BoolVar(&c.opt.AllowAggregates, "allow-aggregates", false, "convert a benchmark that has only aggregates (a mean or median, no samples) as one sample, with a warning, instead of failing")
	return fs, c
}

func runConvert(e *env, args []string) int {
	fs, c := newConvertFlags()
	fail := failer(e, "convert")
	pos, code, ok := parseArgs(e, "convert", fs, args)
	if !ok {
		return code
	}
	from, out, opt := c.from, c.out, c.opt
	switch {
	case from == "":
		return fail(usagef("--from: name the format of the file (%s)", strings.Join(convert.Formats, ", ")))
	case !isFormat(from):
		return fail(usagef("--from %q: want %s", from, strings.Join(convert.Formats, ", ")))
	case len(pos) == 0:
		return fail(usagef("no FILE to convert"))
	case len(pos) > 1:
		return fail(usagef("unexpected argument %q (one FILE at a time)", pos[1]))
	}
	file := pos[0]
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(e.stdin)
		opt.Dir = e.dir
	} else {
		data, err = os.ReadFile(absPath(e, file))
		opt.Dir = filepath.Dir(absPath(e, file))
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail(fmt.Errorf("%s: %w", file, err))
	}
	res, err := convert.Convert(from, data, file, opt)
	if err != nil {
		var ce *convert.Error
		if errors.As(err, &ce) && ce.AggregatesOnly {
			err = fmt.Errorf("%w; or convert each aggregate as one sample with --allow-aggregates", err)
		}
		return fail(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "%s convert: warning: %s: %s\n", programName, file, w)
	}
	write := func(w io.Writer) error { _, err := w.Write(res.Text); return err }
	if out == "" || out == "-" {
		err = write(e.stdout)
	} else if err = writeAtomic(absPath(e, out), write); err != nil {
		err = fmt.Errorf("--out %s: %w", out, err)
	}
	if err != nil {
		return fail(err)
	}
	return exitPass
}

func isFormat(f string) bool {
	for _, x := range convert.Formats {
		if x == f {
			return true
		}
	}
	return false
}

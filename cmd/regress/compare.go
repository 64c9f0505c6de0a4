package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress"
	"github.com/kernelwatch/kernelwatch/regress/noise"
)

const compareSynopsis = "[flags] OLD[,OLD2...] NEW[,NEW2...]"

const compareHelp = `Compares two sets of result files (go test -bench output; "-" is standard
input) with benchstat's statistics and gates on the comparison: OLD is the
baseline side, NEW the current one. Several files of one side are read as
one side (--old and --new repeat, or commas join them). Benchmarks are
compared within one hardware class (the class configuration line) unless
--force-class.

Exit codes: 0 pass; 1 a gated regression, or a gated benchmark removed,
failed or over budget; 2 usage, configuration or input error (the message
names the file and line); 3 nothing comparable (no benchmark on both sides,
different hardware classes), or inconclusive (no gated comparison could be
judged: too few samples).
`

// compareFlags are compare's flags: the report's and the files of each
// side.
type compareFlags struct {
	judgeFlags
	olds, news listFlag
	floors     string
}

func newCompareFlags() (*flag.FlagSet, *compareFlags) {
	fs := newFlagSet("compare")
	c := &compareFlags{}
	c.register(fs)
	fs.Var(&c.olds, "old", "`FILE` baseline result file (repeatable; instead of the OLD argument)")
	fs.Var(&c.news, "new", "`FILE` current result file (repeatable; instead of the NEW argument)")
	fs.StringVar(&c.floors, "floors", "", "`FILE` cross-host floors file (regress calibrate --across-history) that raises the thresholds, as a stored check does: for judging a stored baseline against results from another host")
	return fs, c
}

func runCompare(e *env, args []string) int {
	fs, c := newCompareFlags()
	j := &c.judgeFlags
	fail := failer(e, "compare")
	pos, code, ok := parseArgs(e, "compare", fs, args)
	if !ok {
		return code
	}
	olds, news := c.olds, c.news
	if len(olds) == 0 && len(pos) > 0 {
		olds, pos = splitList(pos[0]), pos[1:]
	}
	if len(news) == 0 && len(pos) > 0 {
		news, pos = splitList(pos[0]), pos[1:]
	}
	switch {
	case len(pos) > 0:
		return fail(usagef("unexpected argument %q", pos[0]))
	case len(olds) == 0 || len(news) == 0:
		return fail(usagef("need baseline and current result files"))
	}
	opt, err := j.options(e)
	if err != nil {
		return fail(err)
	}
	abs := func(files []string) []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = f
			if f != "-" && !filepath.IsAbs(f) {
				out[i] = filepath.Join(e.dir, f)
			}
		}
		return out
	}
	opt.BaseLabel, opt.CurLabel = strings.Join(olds, ","), strings.Join(news, ",")
	opt.BaseFiles, opt.CurFiles = olds, news
	if floors := c.floors; floors != "" {
		path := floors
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		f, err := noise.LoadFloors(path)
		if err == nil && f == nil {
			err = fmt.Errorf("%s: no such file", floors)
		}
		if err != nil {
			return fail(fmt.Errorf("--floors: %w", err))
		}
		opt.Floors, opt.FloorsFile = f, floors
	}
	r, err := regress.Compare(regress.Input{Baseline: abs(olds), Current: abs(news), Stdin: e.stdin, Ignore: j.ignore, NoiseFor: j.noiseFor(e)}, opt)
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	if err := j.emit(e, r); err != nil {
		return fail(err)
	}
	explainInconclusive(e, "compare", r, "record each side with %d samples or more")
	return r.ExitCode()
}

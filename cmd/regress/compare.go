package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress"
	"github.com/kernelwatch/kernelwatch/regress/noise"
)

const compareSynopsis = "[flags] OLD[,OLD2...] NEW[,NEW2...]"

func runCompare(e *env, args []string) int {
	fs := newFlagSet("compare")
	var j judgeFlags
	j.register(fs)
	var olds, news listFlag
	fs.Var(&olds, "old", "baseline result file (repeatable; instead of the OLD argument)")
	fs.Var(&news, "new", "current result file (repeatable; instead of the NEW argument)")
	floors := fs.String("floors", "", "cross-host floors file (regress calibrate --across-history) that raises the thresholds, as a stored check does: for judging a stored baseline against results from another host")
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "%s compare: %v\n", programName, err)
		if errors.Is(err, errUsage) {
			fmt.Fprintf(e.stderr, "usage: %s compare %s (see -h)\n", programName, compareSynopsis)
		}
		return exitError
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(fs, e.stdout, "compare", compareSynopsis)
		return exitPass
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %w", err, errUsage))
	}
	if len(olds) == 0 && len(pos) > 0 {
		olds, pos = splitList(pos[0]), pos[1:]
	}
	if len(news) == 0 && len(pos) > 0 {
		news, pos = splitList(pos[0]), pos[1:]
	}
	switch {
	case len(pos) > 0:
		return fail(fmt.Errorf("unexpected argument %q: %w", pos[0], errUsage))
	case len(olds) == 0 || len(news) == 0:
		return fail(fmt.Errorf("need baseline and current result files: %w", errUsage))
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
	if *floors != "" {
		path := *floors
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		f, err := noise.LoadFloors(path)
		if err == nil && f == nil {
			err = fmt.Errorf("%s: no such file", *floors)
		}
		if err != nil {
			return fail(fmt.Errorf("--floors: %w", err))
		}
		opt.Floors, opt.FloorsFile = f, *floors
	}
	r, err := regress.Compare(regress.Input{Baseline: abs(olds), Current: abs(news), Stdin: e.stdin, Ignore: j.ignore, NoiseFor: j.noiseFor(e)}, opt)
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	if err := j.emit(e, r); err != nil {
		return fail(err)
	}
	return r.ExitCode()
}

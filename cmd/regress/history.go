package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/render"
)

const historySynopsis = "[--class C] [--since REF] [--baselines-ref REF | --dir DIR] [--gate] [flags]"

const historyHelp = `Builds one time series per (benchmark, unit) from the git history of
baselines/<class>.bench — one point per commit that changed it, oldest
first, from the tip of --ref (default HEAD) or of --baselines-ref — or from
the result files in --dir (one point per file, in name order), and finds
the steps in each: E-divisive means with a permutation test (p < 0.01, 199
permutations, seed 1), segments of at least 3 points.

Each step names the benchmark, the unit, the first commit after it, its
size with a confidence interval, the benchmark's threshold and its p with
the p adjusted across series. --since REF keeps only the commits after REF.

A step alerts as a comparison would: it is gated when it is worse, larger
than the benchmark's threshold (benchmarks.yaml rules), significant at the
benchmark's alpha after the multiple-comparison correction across every
series (the configured correction, floor-holm by default, per gate; a step
in that family is re-tested with enough permutations for it), and the
benchmark's gate is fail. Steps within their threshold, or not significant
after the correction, are listed and say so.

Exit codes: 0 done; 1 with --gate, a gated step was found; 2 usage,
configuration or input error; 3 no history (no commit changed the file, or
no result file).
`

// historyFlags say where a history comes from; shared by history and
// report --out.
type historyFlags struct {
	class, since, ref, baselinesRef, dir string
}

func (h *historyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.class, "class", "", "`CLASS` hardware class (default: the only class stored, or the class of the report)")
	fs.StringVar(&h.since, "since", "", "`REF` only commits after this ref")
	fs.StringVar(&h.ref, "ref", "HEAD", "`REF` read the history of baselines/<class>.bench reachable from this ref")
	fs.StringVar(&h.baselinesRef, "baselines-ref", "", "`BRANCH` read the history from this branch (e.g. kernelwatch-baselines) instead of --ref")
	fs.StringVar(&h.dir, "dir", "", "`DIR` read the result files of this directory (one point per file, in name order) instead of git")
}

// errNoHistory means there is nothing to build a history from: exit 3.
var errNoHistory = errors.New("no history")

// load builds the history the flags name.
func (h *historyFlags) load(ctx context.Context, e *env, opt history.Options) (*history.History, error) {
	snaps, err := h.snapshots(ctx, e, &opt)
	if err != nil {
		return nil, err
	}
	return history.Build(snaps, opt)
}

// snapshots reads the snapshots the flags name, oldest first, and sets
// opt's Class (when the flags or the history name it) and Source.
func (h *historyFlags) snapshots(ctx context.Context, e *env, opt *history.Options) ([]history.Snapshot, error) {
	if h.class != "" && !classPattern.MatchString(h.class) {
		return nil, fmt.Errorf("--class %q: want a class such as cpu-amd64-amd-epyc", h.class)
	}
	if h.class != "" {
		opt.Class = h.class
	}
	var snaps []history.Snapshot
	if h.dir != "" {
		if h.since != "" || h.baselinesRef != "" {
			return nil, usagef("--dir reads files, not git: it goes without --since and --baselines-ref")
		}
		dir := absPath(e, h.dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("--dir %s: %w", h.dir, unwrapPathErr(err))
		}
		var names []string
		for _, en := range entries {
			if !en.IsDir() && !strings.HasPrefix(en.Name(), ".") && (strings.HasSuffix(en.Name(), ".bench") || strings.HasSuffix(en.Name(), ".txt")) {
				names = append(names, en.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			data, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(h.dir, n), unwrapPathErr(err))
			}
			info := describeBaseline(data)
			snaps = append(snaps, history.Snapshot{Name: filepath.Join(h.dir, n), Label: n, Commit: info.config["commit"], Data: data})
		}
		if len(snaps) == 0 {
			return nil, fmt.Errorf("--dir %s holds no result file (*.bench, *.txt): %w", h.dir, errNoHistory)
		}
		opt.Source = h.dir
		return snaps, nil
	}
	repo, err := gitref.Open(ctx, e.dir)
	if err != nil {
		return nil, err
	}
	flagName, refName := "--ref", h.ref
	if h.baselinesRef != "" {
		flagName, refName = "--baselines-ref", h.baselinesRef
	}
	tip, err := repo.Resolve(ctx, refName)
	if err != nil {
		return nil, fmt.Errorf("%s %w", flagName, err)
	}
	if opt.Class == "" {
		stored, err := repo.StoredClasses(ctx, tip)
		if err != nil {
			return nil, err
		}
		if len(stored) != 1 {
			return nil, usagef("%s stores baselines of %d classes (%s): name one with --class",
				tip.Label(), len(stored), strings.Join(stored, ", "))
		}
		opt.Class = stored[0]
	}
	path := filepath.Join("baselines", opt.Class+".bench")
	log, err := repo.FileLog(ctx, tip, h.since, path)
	if err != nil {
		if h.since != "" && strings.Contains(err.Error(), "no such commit") {
			return nil, fmt.Errorf("--since %w", err)
		}
		return nil, err
	}
	for _, c := range log {
		data, ok, err := repo.Show(ctx, gitref.Commit{Ref: c.SHA, SHA: c.SHA}, path)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // the commit deleted the file
		}
		snaps = append(snaps, history.Snapshot{Name: c.Short() + ":" + filepath.ToSlash(path), Label: c.Short(),
			Commit: c.SHA, Time: c.Time, Data: data})
	}
	if len(snaps) == 0 {
		return nil, fmt.Errorf("no commit on %s changed %s: %w", tip.Label(), path, errNoHistory)
	}
	opt.Source = tip.Ref + ":" + filepath.ToSlash(path)
	return snaps, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// historyOptions are history's flags.
type historyOptions struct {
	h                   historyFlags
	config, format, out string
	gate                bool
}

func newHistoryFlags() (*flag.FlagSet, *historyOptions) {
	fs := newFlagSet("history")
	o := &historyOptions{}
	o.h.register(fs)
	fs.StringVar(&o.config, "config", "", "`FILE` benchmarks.yaml to use (directions and gates; default: the one at the repository root)")
	fs.StringVar(&o.format, "format", "text", "`FORMAT` output format: "+strings.Join(render.HistoryFormats, ", "))
	fs.StringVar(&o.out, "out", "", "`FILE` write the output to this file (atomically) instead of standard output")
	fs.BoolVar(&o.gate, "gate", false, "exit 1 when a gated step is found (worse, past its threshold, significant after the correction)")
	return fs, o
}

func runHistory(e *env, args []string) int {
	fs, o := newHistoryFlags()
	h := &o.h
	fail := func(err error) int {
		code := failer(e, "history")(relErr(interrupted(err), e.dir))
		if errors.Is(err, errNoHistory) {
			return exitNoData
		}
		return code
	}
	pos, code, ok := parseArgs(e, "history", fs, args)
	if !ok {
		return code
	}
	configPath, format, out, gate := o.config, o.format, o.out, o.gate
	if len(pos) > 0 {
		return fail(usagef("unexpected argument %q", pos[0]))
	}
	if !slices.Contains(render.HistoryFormats, format) {
		return fail(fmt.Errorf("--format %q: want one of %s", format, strings.Join(render.HistoryFormats, ", ")))
	}
	cfg, err := loadConfig(e, configPath)
	if err != nil {
		return fail(err)
	}
	ctx, stop := notifyContext()
	defer stop()
	hist, err := h.load(ctx, e, history.Options{Config: cfg})
	if err != nil {
		return fail(err)
	}
	write := func(w io.Writer) error { return render.WriteHistory(w, hist, format) }
	if out == "" {
		err = write(e.stdout)
	} else if err = writeAtomic(absPath(e, out), write); err != nil {
		err = fmt.Errorf("--out %s: %w", out, err)
	}
	if err != nil {
		return fail(err)
	}
	if gate && len(hist.Gated()) > 0 {
		return exitFail
	}
	return exitPass
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress"
	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/join"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

const judgeSynopsis = "[flags] DIR..."

const judgeHelp = `Joins the shards of one sharded check into one report and gates on it.
Each DIR is what "regress check --shard i/n --results DIR" wrote on one
machine: baseline.bench, current.bench (and report.json, whose labels are
reused). The comparison runs once over the results of every shard, so the
multiple-comparison correction covers every comparison, exactly as if one
machine had run the whole check: a correction per shard would let each
shard spend the whole false-alarm budget.

Only the parts of one run are joined. Exit 2, naming the files, for: a
directory without both result files; different hardware classes or
commits on one side; a missing shard, a shard given twice, shards of
different splits or unsharded results among shards, a benchmark in two
shards; shards run with a different --count or --seed.

A shard that stopped early (--deadline, or a signal) is joined and the
report is marked incomplete with the fewest rounds of any shard; it exits
as check would (2 unless every shard stopped at its deadline with at least
min_samples rounds).

Exit codes: 0 pass; 1 a gated regression, or a gated benchmark removed,
failed or over budget; 2 usage or input error, or a run cut short;
3 nothing comparable, or inconclusive (no gated comparison could be
judged: too few rounds).
`

// runJudge is the judge verb. It is a verb of its own rather than a mode of
// merge: merge writes one side's result file and exits 0, 2 or 3, while
// joining shards needs both sides, the report flags and the gate's exit
// codes.
func newJudgeFlags() (*flag.FlagSet, *judgeFlags) {
	fs := newFlagSet("judge")
	j := &judgeFlags{}
	j.register(fs)
	return fs, j
}

func runJudge(e *env, args []string) int {
	fs, j := newJudgeFlags()
	fail := failer(e, "judge")
	dirs, code, ok := parseArgs(e, "judge", fs, args)
	if !ok {
		return code
	}
	if len(dirs) == 0 {
		return fail(usagef("no shard directories"))
	}
	opt, err := j.options(e)
	if err != nil {
		return fail(err)
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		abs[i] = absPath(e, d)
	}
	set, err := join.Read(abs)
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	fmt.Fprintf(e.stderr, "%s judge: %d shards of one run (count %d, seed %d): %d baseline and %d current result files hold results\n",
		programName, len(set.Shards), set.Count, set.Seed, len(set.Baseline), len(set.Current))
	for i, files := range [][]string{set.Baseline, set.Current} {
		if len(files) == 0 {
			fmt.Fprintf(e.stderr, "%s judge: no shard holds a %s result: nothing to compare\n", programName, join.Sides[i])
			return exitNoData
		}
	}
	opt.BaseLabel, opt.CurLabel = shardLabels(set)
	rel := func(path string) string { return strings.TrimPrefix(path, e.dir+string(filepath.Separator)) }
	for _, sh := range set.Shards {
		opt.BaseFiles = append(opt.BaseFiles, rel(sh.Files[0]))
		opt.CurFiles = append(opt.CurFiles, rel(sh.Files[1]))
	}
	for _, f := range set.Failures {
		opt.Failed = append(opt.Failed, verdict.Failure{Name: f.Name, Side: f.Side, Message: f.Message})
	}
	r, err := regress.Compare(regress.Input{Baseline: set.Baseline, Current: set.Current, Ignore: j.ignore}, opt)
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	if set.Stopped != "" {
		r.Incomplete = &report.Incomplete{Rounds: set.Rounds, Planned: set.Count, Reason: set.Stopped}
	}
	if err := j.emit(e, r); err != nil {
		return fail(err)
	}
	if r.Incomplete != nil {
		fmt.Fprintf(e.stderr, "%s judge: incomplete, %s: %s\n", programName, render.Incomplete(r), incompleteConsequence(r))
	}
	explainInconclusive(e, "judge", r, "run the sharded check with --count %d or more")
	return r.ExitCode()
}

// explainInconclusive says on standard error why an inconclusive report
// exits 3 and what to do (fix, with the samples needed for %d), whatever
// format the report itself went out in.
func explainInconclusive(e *env, verb string, r *report.Report, fix string) {
	why := render.Unjudged(r)
	if why == "" || r.CutShort() {
		return
	}
	if r.Unjudged.NeedSamples > 0 {
		why += "; " + fmt.Sprintf(fix, r.Unjudged.NeedSamples)
	}
	fmt.Fprintf(e.stderr, "%s %s: INCONCLUSIVE, exit %d: %s\n", programName, verb, r.ExitCode(), why)
}

// shardLabels are the labels of the sides: those of the shards' own
// reports (report.json, as check wrote them) when they agree, else the
// directories.
func shardLabels(set *join.Set) (base, cur string) {
	var labels [2][]string
	for _, sh := range set.Shards {
		f, err := os.Open(filepath.Join(sh.Dir, join.ReportFile))
		if err != nil {
			continue
		}
		r, err := report.Read(f, join.ReportFile) // within report.DefaultLimits
		f.Close()
		if err != nil {
			continue
		}
		for i, l := range []string{r.Baseline.Label, r.Current.Label} {
			if l != "" && !slices.Contains(labels[i], l) {
				labels[i] = append(labels[i], l)
			}
		}
	}
	out := [2]string{}
	for i := range out {
		if len(labels[i]) == 1 {
			out[i] = labels[i][0]
		} else {
			out[i] = fmt.Sprintf("%s (%d shards)", join.Sides[i], len(set.Shards))
		}
	}
	return out[0], out[1]
}

// judgeFlags are the flags shared by every verb that produces a report.
type judgeFlags struct {
	config     string
	format     string
	wide       bool // text: full names and every column
	out        string
	alpha      float64
	threshold  string
	minSamples int
	correction string
	forceClass bool
	ignore     listFlag
	github     bool
	noise      string
	noiseRef   string // check --baselines-ref: read the noise file there
}

func (j *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.config, "config", "", "`FILE` benchmarks.yaml to use (default: the one at the repository root, if any; \"none\" for built-in defaults)")
	fs.StringVar(&j.format, "format", "text", "`FORMAT` output format: "+strings.Join(render.Formats, ", "))
	fs.BoolVar(&j.wide, "wide", false, "text format: full benchmark names and every column, however wide (default: tables fit 120 columns)")
	fs.BoolVar(&j.github, "github", false, "also publish the report like 'regress comment' does: job summary, step outputs and the sticky pull-request comment (token from GITHUB_TOKEN)")
	fs.StringVar(&j.out, "out", "", "`FILE` write the report to this file (atomically) instead of standard output")
	fs.Float64Var(&j.alpha, "alpha", 0, "`A` significance level (default 0.05 or benchmarks.yaml defaults.alpha)")
	fs.StringVar(&j.threshold, "threshold", "", "`T` effect floor: 5% or 0.05, never a bare 5 (default 5% or benchmarks.yaml defaults.threshold); rules still override it")
	fs.IntVar(&j.minSamples, "min-samples", 0, "`N` samples a side needed for a verdict (default 6 or benchmarks.yaml defaults.min_samples)")
	fs.StringVar(&j.correction, "correction", "", "`METHOD` multiple-comparison correction: floor-holm (default), holm, bh, none")
	fs.BoolVar(&j.forceClass, "force-class", false, "compare results of different hardware classes")
	fs.StringVar(&j.noise, "noise", "", "`FILE` calibrated noise file (regress calibrate) whose floors raise the thresholds (default: baselines/<class>.noise.json if present; \"none\" to ignore it)")
	fs.Var(&j.ignore, "ignore", "`KEYS` configuration keys that never split comparisons (comma-separated, repeatable)")
}

// options loads the configuration and applies the command-line overrides.
func (j *judgeFlags) options(e *env) (verdict.Options, error) {
	var opt verdict.Options
	if !slices.Contains(render.Formats, j.format) {
		return opt, fmt.Errorf("--format %q: want one of %s", j.format, strings.Join(render.Formats, ", "))
	}
	cfg, err := loadConfig(e, j.config)
	if err != nil {
		return opt, err
	}
	if j.alpha != 0 {
		if !(j.alpha > 0 && j.alpha < 1) {
			return opt, fmt.Errorf("--alpha %v: want a number between 0 and 1", j.alpha)
		}
		cfg.Defaults.Alpha = j.alpha
	}
	if j.threshold != "" {
		t, err := config.ParseFraction(j.threshold)
		if err != nil {
			return opt, fmt.Errorf("--threshold: %w", err)
		}
		cfg.Defaults.Threshold = t
	}
	if j.minSamples != 0 {
		if j.minSamples < 2 {
			return opt, fmt.Errorf("--min-samples %d: want at least 2", j.minSamples)
		}
		cfg.Defaults.MinSamples = j.minSamples
	}
	switch j.correction {
	case "", report.FloorHolm, report.Holm, report.BH, report.NoCorrect:
	default:
		return opt, fmt.Errorf("--correction %q: want floor-holm, holm, bh or none", j.correction)
	}
	opt.Config = cfg
	opt.Correction = j.correction
	opt.ForceClass = j.forceClass
	return opt, nil
}

// loadConfig loads the benchmarks.yaml that --config names: "" for the
// one at the root of the enclosing repository (the defaults when there is
// none), "none" for the defaults.
func loadConfig(e *env, path string) (*config.Config, error) {
	switch path {
	case "none":
		return config.Default(), nil
	case "":
		if found, ok := config.Find(e.dir); ok {
			return config.Load(found)
		}
		return config.Default(), nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.dir, path)
	}
	return config.Load(path)
}

// emit renders r where the flags say.
func (j *judgeFlags) emit(e *env, r *report.Report) error {
	write := func(w io.Writer) error { return render.WriteWith(w, r, j.format, render.Options{Wide: j.wide}) }
	path := ""
	if j.out == "" {
		if err := write(e.stdout); err != nil {
			return err
		}
	} else {
		path = j.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		if err := writeAtomic(path, write); err != nil {
			return fmt.Errorf("--out %s: %w", j.out, err)
		}
	}
	if !j.github {
		return nil
	}
	if j.format != "json" {
		path = "" // the report output names a JSON report only
	}
	if err := publishReport(e, r, path, githubDefaults()); err != nil {
		return fmt.Errorf("--github: %w", err)
	}
	return nil
}

// relErr shortens absolute paths under dir in error messages back to what
// the user typed. A usage error stays one.
func relErr(err error, dir string) error {
	msg := err.Error()
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
	}
	if errors.Is(err, errUsage) {
		return usagef("%s", msg)
	}
	return errors.New(msg)
}

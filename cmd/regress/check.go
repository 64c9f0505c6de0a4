package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress"
	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/join"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
	"github.com/kernelwatch/kernelwatch/regress/sequential"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

const checkSynopsis = "[flags] [-- go test flags]"

const checkHelp = `Builds and benchmarks a baseline and a current version of the code and
gates on the comparison (the report flags are those of regress compare).
Bare "regress" is "regress check".

--mode relative (default): each ref is checked out in a temporary git
worktree, one test binary per package is built per ref (go test -c), and the
two sides run interleaved for --count rounds: round k runs baseline then
current when k is even, current then baseline when odd, from a seeded coin
flip (--seed). Each side's invocation is one process with -test.count 1, so
drift of the machine lands on both sides alike. The JSON report records the
round of every sample.

--mode stored: the baseline is baselines/<class>.bench as committed at the
baseline ref (written by regress baseline save); only the current side runs,
--count processes of one sample each, as the stored file was recorded.
--baseline-file F reads it from F instead, for a host without git (with
--current-bin). A stored baseline comes from another host, so a stored
check also reads baselines/<class>.floors.json where it reads the
baseline — at the baseline ref, or with --baseline-file the file
<class>.floors.json beside F, if there (written by regress calibrate
--across-history; --floors F names another file, --floors none skips it): each comparison is judged by
max(threshold, noise floor, cross-host floor), and families whose
normalized unit (pct-copy, pct-mma) moved less across hosts than sec/op
are gated on it, their raw units only warning.

--baseline REF is resolved to its merge base with --current, so a pull
request is charged only for its own changes (--baseline-tip: use the tip).
--current . is the working tree, uncommitted changes included.

--baseline-bin F --current-bin F skip git and building: they compare two
prebuilt test binaries (run in the current directory), so a GPU host needs
no Go toolchain.

--shard i/n runs shard i of n of the top-level benchmarks, both sides
interleaved as usual: one machine each in a CI matrix, each with the same
--seed (required). --shard-by cost (the default) balances the shards by
the top-level benchmarks' sub-benchmark counts in the stored baseline of
the class (baselines/<class>.bench in the checked-out tree), heaviest
first to the lightest shard; without a stored baseline, and with
--shard-by name, a hash of each name decides. With --results DIR each
shard writes baseline.bench, current.bench and report.json into DIR; the
header of each result file records count, seed, shard and shard-by (the
deal's fingerprint), and "regress judge DIR..." joins the shards into one
report with one multiple-comparison correction, refusing shards split
differently. A shard's own verdict is not the gate: the joined
one is. An empty shard writes its files (headers only) and exits 3.

A run cut short keeps its rounds: on SIGINT or SIGTERM (Ctrl-C, a CI job's
timeout or cancellation) the processes under way are stopped, the rounds
that finished on both sides are compared, and the report is marked
incomplete ("3 of 10 rounds") and exits 2, never 0. --deadline D stops
starting rounds that would not finish before D (estimated from the longest
round so far); D is a duration from the start of regress check (50m) or an
RFC 3339 time (2026-11-22T15:04:05Z). A run stopped at its deadline with at
least min_samples rounds exits with its verdict's code; with fewer, 2.

Sequential sampling: with --max-rounds N (suite.max_rounds) above
--count, the benchmarks whose gated comparisons cannot yet detect their
threshold get more rounds after the --count ones, two at a time, both
sides interleaved as before and each round a new process per side running
only them, until they can, have N rounds, or the next round would not
finish within --budget (suite.budget) of the start or before --deadline.
Which benchmarks go on is decided by the spread of both sides' samples
taken together, never by their deltas or p-values, so false alarms stay
at alpha. Benchmarks with two modes on one side, where more rounds could
tell a different mix from a change, get more rounds the same way. The
report says how many rounds each of them got and which still cannot
detect their threshold; stopping at the budget is no error. Relative mode
only: a stored baseline has the samples it has.

Exit codes: 0 pass; 1 a gated regression, or a gated benchmark removed,
failed or over budget; 2 usage, configuration or build error (the
compiler's messages come first), or a run cut short (above); 3 nothing
comparable (no stored baseline for this class: the message says how to
create it; an empty shard), or INCONCLUSIVE: no gated comparison could be
judged (too few rounds for min_samples: the message says how many).
`

type checkFlags struct {
	baseline, current       string
	baselineTip             bool
	mode                    string
	baselineBin, currentBin string
	class                   string
	results                 string
	baselineFile            string
	baselinesRef            string
	deadline                string
	floors                  string
	maxRounds               int
	budget                  time.Duration
}

// checkOptions are check's flags: the report's, the suite's and check's
// own.
type checkOptions struct {
	j judgeFlags
	s suiteFlags
	c checkFlags
}

func newCheckFlags() (*flag.FlagSet, *checkOptions) {
	fs := newFlagSet("check")
	o := &checkOptions{}
	o.j.register(fs)
	o.s.register(fs, "check")
	c := &o.c
	fs.StringVar(&c.baseline, "baseline", "main", "`REF` baseline ref; resolved to its merge base with --current unless --baseline-tip")
	fs.BoolVar(&c.baselineTip, "baseline-tip", false, "use the tip of --baseline, not its merge base with --current")
	fs.StringVar(&c.current, "current", "HEAD", "`REF` current ref; \".\" is the working tree with uncommitted changes")
	fs.StringVar(&c.mode, "mode", "relative", "`MODE` relative (build and run both sides, interleaved) or stored (read baselines/<class>.bench at the baseline ref)")
	fs.StringVar(&c.baselineBin, "baseline-bin", "", "`BINARY` prebuilt baseline test binary (with --current-bin: no git, no build)")
	fs.StringVar(&c.currentBin, "current-bin", "", "`BINARY` prebuilt current test binary")
	fs.StringVar(&c.class, "class", "", "`CLASS` stored mode: hardware class of the stored baseline (default: this machine's)")
	fs.StringVar(&c.baselineFile, "baseline-file", "", "`FILE` stored mode: read the stored baseline from this file instead of baselines/<class>.bench at --baseline (no git needed)")
	fs.StringVar(&c.baselinesRef, "baselines-ref", "", "`BRANCH` stored mode: read baselines/<class>.bench at the tip of this branch (e.g. kernelwatch-baselines) instead of at the baseline ref")
	fs.StringVar(&c.results, "results", "", "`DIR` also write each side's result file (baseline.bench, current.bench) and the JSON report (report.json) into this directory")
	fs.StringVar(&c.floors, "floors", "", "`FILE` stored mode: cross-host floors file (default: baselines/<class>.floors.json where the stored baseline is read, or beside --baseline-file, if there; \"none\": no floors)")
	fs.StringVar(&c.deadline, "deadline", "", "`WHEN` start no round that would not finish before WHEN: a duration from the start of check (50m) or an RFC 3339 time; the rounds done are compared")
	fs.IntVar(&c.maxRounds, "max-rounds", 0, "`N` after --count rounds, give the benchmarks that cannot yet detect their threshold more, up to N in all (default: suite.max_rounds; at or below --count: none)")
	fs.DurationVar(&c.budget, "budget", 0, "`DURATION` add no round beyond --count that would not finish within DURATION of the start of check (default: suite.budget)")
	return fs, o
}

func runCheck(e *env, args []string) int {
	fs, o := newCheckFlags()
	j, s, c := &o.j, &o.s, &o.c
	fail := failer(e, "check")
	own, pass := splitPassthrough(args)
	pos, code, ok := parseArgs(e, "check", fs, own)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return fail(usagef("unexpected argument %q (go test flags go after --)", pos[0]))
	}
	switch {
	case c.mode != "relative" && c.mode != "stored":
		return fail(usagef("--mode %q: want relative or stored", c.mode))
	case c.mode == "relative" && (c.baselineBin == "") != (c.currentBin == ""):
		return fail(usagef("--baseline-bin and --current-bin go together in relative mode"))
	case c.mode != "stored" && c.baselinesRef != "":
		return fail(usagef("--baselines-ref goes with --mode stored"))
	case c.mode == "stored" && c.baselineBin != "":
		return fail(usagef("--baseline-bin: stored mode reads the baseline from baselines/<class>.bench"))
	case c.mode != "stored" && c.baselineFile != "":
		return fail(usagef("--baseline-file goes with --mode stored"))
	case c.mode != "stored" && c.floors != "":
		return fail(usagef("--floors goes with --mode stored"))
	case c.baselineFile != "" && c.currentBin == "":
		return fail(usagef("--baseline-file needs --current-bin (without git there is no ref to build)"))
	case c.mode == "stored" && s.shard != "":
		return fail(usagef("--shard: stored mode compares with the whole stored baseline; only relative (interleaved) checks are sharded"))
	case s.shard != "" && s.seed == "":
		return fail(usagef("--shard: give every shard of one run the same --seed (for example the CI run's id): regress judge joins only shards with the same seed"))
	case c.maxRounds < 0:
		return fail(usagef("--max-rounds %d: want at least 1", c.maxRounds))
	case c.budget < 0:
		return fail(usagef("--budget %v: want a positive duration", c.budget))
	}
	start := time.Now()
	deadline, err := parseDeadline(c.deadline, start)
	if err != nil {
		return fail(err)
	}
	opt, err := j.options(e)
	if err != nil {
		return fail(err)
	}
	ctx, stop := notifyContext()
	defer stop()
	prebuilt := c.currentBin != ""
	m, err := s.resolve(e, ctx, opt.Config, pass, prebuilt)
	if err != nil {
		return fail(err)
	}
	if m.command() && prebuilt {
		return fail(fmt.Errorf("--current-bin runs a Go test binary, and %s's suite is a suite.command (it runs in each side's checkout)", relPath(e, m.cfg.Source)))
	}
	j.noiseRef = c.baselinesRef
	ck := &checker{e: e, m: m, c: c, quiet: s.quiet, start: start, deadline: deadline, stopSignals: stop, noiseFor: j.noiseFor(e), ignore: j.ignore}
	defer ck.cleanup()
	r, err := ck.run(ctx, opt)
	if err != nil {
		var nb *noBaselineError
		var nbench *noBenchmarksError
		if errors.As(err, &nb) || errors.As(err, &nbench) {
			fmt.Fprintf(e.stderr, "%s check: %v\n", programName, err)
			return exitNoData
		}
		if code := printBuildError(e, "check", ck.building, ck.relBuildError(err)); code >= 0 {
			return code
		}
		return fail(err)
	}
	if err := j.emit(e, r); err != nil {
		return fail(err)
	}
	if in := r.Incomplete; in != nil {
		fmt.Fprintf(e.stderr, "%s check: incomplete, %s: %s\n", programName, render.Incomplete(r), incompleteConsequence(r))
	}
	if sq := r.Sequential; sq != nil && sq.Stopped == report.SeqSignal {
		fmt.Fprintf(e.stderr, "%s check: interrupted while adding rounds beyond --count: compared the rounds that finished; an interrupted run exits 2\n", programName)
		return exitError
	}
	explainInconclusive(e, "check", r, "rerun with --count %d or more")
	return r.ExitCode()
}

// incompleteConsequence says what an incomplete report means for the gate.
func incompleteConsequence(r *report.Report) string {
	in := r.Incomplete
	switch {
	case in.Reason == report.StopSignal:
		return "compared the rounds that finished; an interrupted run exits 2"
	case !in.Stands(r.Settings.MinSamples):
		return fmt.Sprintf("compared the rounds that finished; fewer than min_samples (%d), so it exits 2", r.Settings.MinSamples)
	}
	return fmt.Sprintf("compared the rounds that finished; at least min_samples (%d), so the verdict stands", r.Settings.MinSamples)
}

// parseDeadline parses --deadline: a positive duration from start, or an
// RFC 3339 time after start. "" is no deadline.
func parseDeadline(s string, start time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--deadline %q: want a positive duration", s)
		}
		return start.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--deadline %q: want a duration such as 50m or an RFC 3339 time such as 2026-11-22T15:04:05Z", s)
	}
	if !t.After(start) {
		return time.Time{}, fmt.Errorf("--deadline %q: already passed", s)
	}
	return t, nil
}

// checker is one regress check under way; cleanup undoes what it set up.
type checker struct {
	e        *env
	m        *measure
	c        *checkFlags
	quiet    bool
	start    time.Time
	deadline time.Time
	// stopSignals ends the handling of SIGINT and SIGTERM: once the
	// benchmarks have stopped, a second signal ends regress at once.
	stopSignals func()
	ignore      []string // --ignore: configuration keys that never split comparisons

	tmp       string
	worktrees []*gitref.Worktree
	building  string // the side being built, for messages
	buildTime time.Duration
	noiseFor  func(class string) (*noise.File, string, error)
	// floors are the cross-host floors of a stored check, and floorsName
	// the file they came from.
	floors     *noise.Floors
	floorsName string
}

func (ck *checker) cleanup() {
	for _, w := range ck.worktrees {
		if err := w.Remove(); err != nil {
			fmt.Fprintf(ck.e.stderr, "%s check: removing worktree %s: %v\n", programName, w.Dir, err)
		}
	}
	if ck.tmp != "" {
		os.RemoveAll(ck.tmp)
	}
}

func (ck *checker) info(format string, args ...any) {
	if !ck.quiet {
		fmt.Fprintf(ck.e.stderr, "%s check: %s\n", programName, fmt.Sprintf(format, args...))
	}
}

// side is one side of the comparison, ready to run.
type side struct {
	name   string // baseline or current
	label  string
	header runner.Header
	bins   []runner.Binary
}

func (ck *checker) run(ctx context.Context, opt verdict.Options) (*report.Report, error) {
	var err error
	if ck.tmp, err = tempDir("check"); err != nil {
		return nil, err
	}
	var base, cur *side
	var stored []byte
	switch {
	case ck.c.mode == "relative" && ck.c.currentBin != "":
		if base, err = ck.prebuilt("baseline", ck.c.baselineBin); err != nil {
			return nil, err
		}
		if cur, err = ck.prebuilt("current", ck.c.currentBin); err != nil {
			return nil, err
		}
	case ck.c.mode == "relative":
		if base, cur, err = ck.checkout(ctx); err != nil {
			return nil, err
		}
	default:
		if stored, base, cur, err = ck.storedBaseline(ctx); err != nil {
			return nil, err
		}
	}

	m := ck.m
	var res *runner.Result
	if stored == nil {
		first := base.name
		if runner.SecondFirst(m.seed) {
			first = cur.name
		}
		shard := ""
		if m.shard.N > 0 {
			shard = ", shard " + m.shard.String() + " by name"
			if m.shard.Dealt {
				shard = ", shard " + m.shard.String() + " balanced by the stored baseline's sub-benchmark counts"
			}
		}
		ck.info("%s vs %s: %d rounds, interleaved (seed %d: round 1 runs %s first%s)", base.label, cur.label, m.suite.Count, m.seed, first, shard)
		plan := m.plan(m.suite.Count, 1)
		plan.Deadline = ck.deadline
		res, err = runner.Run(ctx, []runner.Side{{Name: "baseline", Binaries: base.bins}, {Name: "current", Binaries: cur.bins}}, plan)
		if _, more := ck.sequential(res); !more || res.Stopped != "" {
			// Whatever finished is compared; a second signal now ends
			// regress. (With rounds to add, that comes after them.)
			ck.stopSignals()
		}
	} else {
		ck.info("%s vs %s: %d samples per benchmark", base.label, cur.label, m.suite.Count)
		plan := m.plan(m.suite.Count, 1)
		plan.Deadline = ck.deadline
		res, err = runner.Run(ctx, []runner.Side{{Name: "current", Binaries: cur.bins}}, plan)
		ck.stopSignals()
	}
	if res == nil {
		return nil, err
	}
	printWarnings(ck.e, "check", res)
	switch {
	case res.Stopped == runner.StopDeadline && res.Rounds == 0:
		return nil, fmt.Errorf("--deadline %s passed before the first round could start: nothing to compare", ck.c.deadline)
	case res.Stopped == runner.StopSignal:
		ck.info("interrupted after %d of %d rounds: comparing those", res.Rounds, m.suite.Count)
	case res.Stopped == runner.StopDeadline:
		ck.info("%d of %d rounds fit before the deadline: comparing those", res.Rounds, m.suite.Count)
	}

	// Write each side's result file.
	dir := ck.tmp
	if ck.c.results != "" {
		dir = absPath(ck.e, ck.c.results)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("--results %s: %w", ck.c.results, err)
		}
	}
	rs := &checkResults{dir: dir, stored: stored, files: map[string]string{}}
	for _, out := range res.Sides {
		sd := base
		if out.Side == "current" {
			sd = cur
		}
		sd.header.Class = runner.ResultClass(out.Results, m.class)
		sd.header.Date = time.Now()
		if stored == nil {
			sd.header.Run = runner.RunInfo{Count: m.suite.Count, Seed: m.seed, Shard: m.shard.String(), ShardBy: shardBy(m, res)}
			if res.Stopped != "" {
				sd.header.Run.RoundsDone, sd.header.Run.Stopped = res.Rounds, res.Stopped
			}
		}
		rs.sides = append(rs.sides, &sideResults{name: out.Side, header: sd.header.Lines(), bodies: [][]byte{out.Results}, failures: out.Failures})
	}
	if err := rs.write(); err != nil {
		return nil, err
	}
	for _, out := range res.Sides {
		if out.Benchmarks == 0 {
			return nil, &noBenchmarksError{side: out.Side, filter: m.filter.String(), shard: m.shard.String()}
		}
	}

	opt.BaseLabel, opt.CurLabel = base.label, cur.label
	opt.BaseFiles, opt.CurFiles = []string{}, []string{}
	if ck.c.results != "" {
		opt.BaseFiles, opt.CurFiles = []string{rs.files["baseline"]}, []string{rs.files["current"]}
	}
	opt.Floors, opt.FloorsFile = ck.floors, ck.floorsName
	sampler := &checkSampler{ck: ck, opt: opt, results: rs, res: res,
		sides: []runner.Side{{Name: "baseline", Binaries: base.bins}, {Name: "current", Binaries: cur.bins}}}
	var r *report.Report
	if seq, ok := ck.sequential(res); ok && stored == nil && res.Stopped == "" {
		sampler.perRound = res.InvocationTime / time.Duration(max(res.Rounds, 1))
		r, err = sequential.Extend(ctx, sampler, seq)
		ck.stopSignals()
		if err != nil && r == nil {
			return nil, err
		}
		if err != nil {
			ck.info("interrupted while adding rounds: comparing the rounds that finished")
		} else if sq := r.Sequential; len(sq.Benchmarks) > 0 {
			ck.info("%s", render.SequentialSummary(r))
		}
	} else if r, err = sampler.Judge(); err != nil {
		return nil, err
	}
	r.Costs = commandCosts(time.Since(ck.start), ck.buildTime, res)
	ck.info("time: %s", render.CostsLine(r.Costs))
	if res.Stopped != "" {
		r.Incomplete = &report.Incomplete{Rounds: res.Rounds, Planned: m.suite.Count, Reason: res.Stopped}
	}
	if ck.c.results != "" {
		if err := writeAtomic(filepath.Join(dir, join.ReportFile), r.Write); err != nil {
			return nil, fmt.Errorf("--results %s: %w", ck.c.results, err)
		}
	}
	return r, nil
}

// sequential returns the limits of the rounds beyond --count (flags over
// suite.max_rounds and suite.budget), and whether any may run.
func (ck *checker) sequential(res *runner.Result) (sequential.Options, bool) {
	m := ck.m
	if res == nil || ck.c.mode != "relative" {
		return sequential.Options{}, false
	}
	opt := sequential.Options{Rounds: res.Rounds, MaxRounds: m.suite.MaxRounds, Budget: m.suite.Budget, TwoMode: verdict.WantsMoreRounds}
	if ck.c.maxRounds > 0 {
		opt.MaxRounds = ck.c.maxRounds
	}
	if ck.c.budget > 0 {
		opt.Budget = ck.c.budget
	}
	if opt.Budget > 0 {
		opt.Stop, opt.StopReason = ck.start.Add(opt.Budget), report.SeqBudget
	}
	if !ck.deadline.IsZero() && (opt.Stop.IsZero() || ck.deadline.Before(opt.Stop)) {
		opt.Stop, opt.StopReason = ck.deadline, report.SeqDeadline
	}
	return opt, opt.MaxRounds > opt.Rounds
}

// checkResults are both sides' results so far and where they are written.
type checkResults struct {
	dir    string
	stored []byte // stored mode: the baseline file as stored
	sides  []*sideResults
	files  map[string]string // side → path
}

// sideResults is one side's result file in parts: its header, the output of
// each run (the configured rounds, then each batch of further rounds) and
// its failures.
type sideResults struct {
	name     string
	header   []byte
	bodies   [][]byte
	failures []runner.Failure
}

// write writes each side's result file: the header, the runs' output
// joined by runner.Concat (each run prints its own configuration) and the
// failures.
func (rs *checkResults) write() error {
	write := func(name string, data []byte) error {
		path := filepath.Join(rs.dir, map[string]string{"baseline": join.BaselineFile, "current": join.CurrentFile}[name])
		rs.files[name] = path
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("writing %s results: %w", name, err)
		}
		return nil
	}
	if rs.stored != nil {
		if err := write("baseline", rs.stored); err != nil {
			return err
		}
	}
	for _, sd := range rs.sides {
		var buf bytes.Buffer
		buf.Write(sd.header)
		runner.Concat(&buf, sd.bodies...)
		buf.Write(runner.FailureLines(sd.failures))
		if err := write(sd.name, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// failed lists every failure of both sides for the verdict.
func (rs *checkResults) failed() []verdict.Failure {
	var out []verdict.Failure
	for _, sd := range rs.sides {
		for _, f := range sd.failures {
			out = append(out, verdict.Failure{Name: f.Name, Side: sd.name, Message: f.Summary()})
		}
	}
	return out
}

// checkSampler is a check's sequential.Sampler: it judges the result files
// as they stand and runs further rounds of named benchmarks on both sides.
type checkSampler struct {
	ck      *checker
	opt     verdict.Options
	results *checkResults
	sides   []runner.Side
	res     *runner.Result // the configured rounds' run; further runs add their invocations and costs
	// perRound is the configured rounds' mean wall time, perBench a further
	// round's per benchmark once one has run: the estimate of the next
	// round, which must finish before the budget.
	perRound time.Duration
	perBench time.Duration
	benches  int // benchmarks (comparison names) in the configured rounds
}

// Judge implements sequential.Sampler.
func (s *checkSampler) Judge() (*report.Report, error) {
	opt := s.opt
	opt.Failed = s.results.failed()
	r, err := regress.Compare(regress.Input{Baseline: []string{s.results.files["baseline"]}, Current: []string{s.results.files["current"]}, NoiseFor: s.ck.noiseFor, Ignore: s.ck.ignore}, opt)
	if err == nil && s.benches == 0 {
		names := map[string]bool{}
		for _, c := range r.Comparisons {
			names[c.Name] = true
		}
		s.benches = len(names)
	}
	return r, err
}

// Run implements sequential.Sampler: n rounds of the benchmarks, numbered
// from first, as one continued interleaved run.
func (s *checkSampler) Run(ctx context.Context, bs []sequential.Benchmark, first, n int, stop time.Time) (int, error) {
	ck, m := s.ck, s.ck.m
	filter, err := runner.ParseFilter(sequential.BenchRegexp(bs))
	if err != nil {
		return 0, err
	}
	plan := m.plan(n, 1)
	plan.Filter, plan.FirstRound, plan.Deadline, plan.Progress = filter, first, stop, nil
	if m.shard.N > 0 {
		// The benchmarks named are this shard's already; dealt again
		// among themselves, some would go to other shards.
		plan.Lanes = nil
	}
	// The first further round is estimated from the configured ones (a
	// share of a whole round), later ones from the further rounds so far.
	plan.Longest = s.perBench * time.Duration(len(bs))
	if s.perBench == 0 && s.benches > 0 {
		plan.Longest = s.perRound * time.Duration(len(bs)) / time.Duration(s.benches)
	}
	what := "benchmarks that cannot yet detect their threshold"
	if len(bs) == 1 {
		what = "benchmark that cannot yet detect its threshold"
	}
	ck.info("rounds %d–%d: the %d %s", first+1, first+n, len(bs), what)
	res, err := runner.Run(ctx, s.sides, plan)
	if res == nil {
		return 0, err
	}
	printWarnings(ck.e, "check", res)
	for i, out := range res.Sides {
		sd := s.results.sides[i]
		sd.bodies = append(sd.bodies, out.Results)
		sd.failures = mergeFailures(sd.failures, out.Failures)
	}
	s.res.Invocations += res.Invocations
	s.res.InvocationTime += res.InvocationTime
	s.res.Costs.Merge(res.Costs)
	if res.Rounds > 0 {
		s.perBench = max(s.perBench, res.InvocationTime/time.Duration(res.Rounds*len(bs)))
	}
	if werr := s.results.write(); werr != nil && err == nil {
		err = werr
	}
	return res.Rounds, err
}

// mergeFailures adds the failures of a further run to a side's, counting a
// benchmark that failed again once more.
func mergeFailures(old, more []runner.Failure) []runner.Failure {
	for _, f := range more {
		i := slices.IndexFunc(old, func(o runner.Failure) bool { return o.Pkg == f.Pkg && o.Name == f.Name })
		if i < 0 {
			old = append(old, f)
			continue
		}
		old[i].Times += f.Times
	}
	return old
}

// prebuilt is a side made of one prebuilt test binary, run in the working
// directory.
func (ck *checker) prebuilt(name, path string) (*side, error) {
	bin, err := prebuiltBinary(ck.e, "--"+name+"-bin", path)
	if err != nil {
		return nil, err
	}
	return &side{name: name, label: name + " (" + filepath.Base(path) + ")", bins: []runner.Binary{bin},
		header: runner.Header{Go: bin.GoVersion()}}, nil
}

// prebuiltBinary checks that path (given with flag) is an executable file and
// returns it as a binary run in the working directory.
func prebuiltBinary(e *env, flag, path string) (runner.Binary, error) {
	abs := absPath(e, path)
	fi, err := os.Stat(abs)
	if err == nil && (!fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0) {
		err = errors.New("not an executable file")
	}
	if err != nil {
		return runner.Binary{}, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return runner.Binary{Path: abs, Dir: e.dir}, nil
}

// refs resolves --baseline and --current.
func (ck *checker) refs(ctx context.Context, repo *gitref.Repo) (base, cur gitref.Commit, err error) {
	if ck.c.current == "." {
		head, err := repo.Resolve(ctx, "HEAD")
		if err != nil {
			return base, cur, fmt.Errorf("--current .: %w", err)
		}
		cur = gitref.Commit{Ref: "working-tree", SHA: head.SHA}
	} else if cur, err = repo.Resolve(ctx, ck.c.current); err != nil {
		return base, cur, fmt.Errorf("--current %w", err)
	}
	tip, err := repo.Resolve(ctx, ck.c.baseline)
	if err != nil {
		return base, cur, fmt.Errorf("--baseline %w", err)
	}
	if ck.c.baselineTip {
		return tip, cur, nil
	}
	base, err = repo.MergeBase(ctx, tip, cur)
	if err != nil {
		return base, cur, fmt.Errorf("--baseline: %w", err)
	}
	return base, cur, nil
}

// checkout resolves both refs and builds each in its own worktree (the
// working tree itself for --current .). Identical commits are built once.
func (ck *checker) checkout(ctx context.Context) (base, cur *side, err error) {
	repo, err := gitref.Open(ctx, ck.e.dir)
	if err != nil {
		return nil, nil, err
	}
	bc, cc, err := ck.refs(ctx, repo)
	if err != nil {
		return nil, nil, err
	}
	base = &side{name: "baseline", label: bc.Label(), header: runner.Header{Commit: bc.SHA, Branch: bc.Ref}}
	if bc.SHA != tipOf(ctx, repo, bc.Ref) && !ck.c.baselineTip {
		base.label += " (merge base)"
	}
	cur = &side{name: "current", label: cc.Label(), header: runner.Header{Commit: cc.SHA, Branch: cc.Ref}}
	if ck.c.current == "." || ck.c.current == "HEAD" {
		cur.header.Branch = gitref.Branch(ctx, ck.e.dir)
	}
	if ck.c.current == "." && repo.Dirty(ctx) {
		cur.header.Commit += "+dirty"
		cur.label += "+changes"
	}
	if base.bins, err = ck.build(ctx, repo, bc, base.name); err != nil {
		return nil, nil, err
	}
	if ck.c.current != "." && cc.SHA == bc.SHA {
		one := "one build serves"
		if ck.m.command() {
			one = "one checkout serves"
		}
		ck.info("%s and %s are the same commit: %s both sides (an A/A run)", base.label, cur.label, one)
		cur.bins = base.bins
	} else if cur.bins, err = ck.build(ctx, repo, cc, cur.name); err != nil {
		return nil, nil, err
	}
	goVer := goVersion(base.bins)
	base.header.Go, cur.header.Go = goVer, goVersion(cur.bins)
	return base, cur, nil
}

func tipOf(ctx context.Context, repo *gitref.Repo, ref string) string {
	c, err := repo.Resolve(ctx, ref)
	if err != nil {
		return ""
	}
	return c.SHA
}

// build checks c out in a worktree (or uses the working tree for the
// working-tree pseudo-ref) and builds the suite's packages there.
func (ck *checker) build(ctx context.Context, repo *gitref.Repo, c gitref.Commit, name string) ([]runner.Binary, error) {
	start := time.Now()
	defer func() { ck.buildTime += time.Since(start) }()
	ck.building = name + " " + c.Label()
	dir := ck.e.dir
	if c.Ref != "working-tree" {
		wt, err := repo.AddWorktree(ctx, c, filepath.Join(ck.tmp, name))
		if err != nil {
			return nil, err
		}
		ck.worktrees = append(ck.worktrees, wt)
		rel, err := relDir(repo.Root, ck.e.dir)
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(wt.Dir, rel)
	}
	if ck.m.command() {
		checkout := ""
		if c.Ref != "working-tree" {
			checkout = ck.worktrees[len(ck.worktrees)-1].Dir
		}
		ck.info("checked out %s (%s) for %s", name, c.Label(), runner.CommandName(ck.m.suite.Command))
		ck.building = ""
		return ck.m.commandSuite(commandDir(ck.e, ck.m.cfg, repo.Root, checkout)), nil
	}
	ck.info("building %s (%s)", name, c.Label())
	bins, err := runner.Build(ctx, dir, ck.m.suite.Packages, ck.m.suite.Tags, filepath.Join(ck.tmp, name+"-bin"))
	if err != nil {
		return nil, err
	}
	if len(bins) == 0 {
		return nil, fmt.Errorf("%s: no package with tests matches %s", c.Label(), strings.Join(ck.m.suite.Packages, " "))
	}
	ck.building = ""
	return bins, nil
}

// relBuildError shortens the temporary worktree paths in a build error so
// that the compiler's messages name files as they are in the repository.
func (ck *checker) relBuildError(err error) error {
	var be *runner.BuildError
	if !errors.As(err, &be) {
		return err
	}
	out := be.Output
	for _, w := range ck.worktrees {
		out = strings.ReplaceAll(out, w.Dir+string(filepath.Separator), "")
	}
	return &runner.BuildError{Dir: be.Dir, Output: out}
}

// relDir is dir relative to the repository root, through symbolic links.
func relDir(root, dir string) (string, error) {
	r, err1 := filepath.EvalSymlinks(root)
	d, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		r, d = root, dir
	}
	rel, err := filepath.Rel(r, d)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside the repository %s", dir, root)
	}
	return rel, nil
}

// noBenchmarksError is a side with no benchmark selected: exit 3.
type noBenchmarksError struct{ side, filter, shard string }

func (e *noBenchmarksError) Error() string {
	if e.shard != "" {
		return fmt.Sprintf("shard %s holds no benchmark that --bench %q selects on the %s side: nothing to compare here (its result files are written for regress judge)", e.shard, e.filter, e.side)
	}
	return fmt.Sprintf("no benchmark matches --bench %q on the %s side: nothing to compare", e.filter, e.side)
}

// noBaselineError is a stored-mode check without a stored baseline: exit 3.
type noBaselineError struct {
	class, path string
	at          gitref.Commit
	ref         string // --baselines-ref, if given
}

func (e *noBaselineError) Error() string {
	if e.ref != "" {
		return fmt.Sprintf("no stored baseline for class %s on %s (%s); store one with: %s baseline save --class %s --baselines-ref %s",
			e.class, e.at.Label(), e.path, programName, e.class, e.ref)
	}
	return fmt.Sprintf("no stored baseline for class %s at %s (%s); store one from %s with: %s baseline save --class %s, then commit %s",
		e.class, e.at.Label(), e.path, e.at.Ref, programName, e.class, e.path)
}

// storedBaseline reads the stored baseline at the baseline ref and builds
// (or takes) the current side.
func (ck *checker) storedBaseline(ctx context.Context) (stored []byte, base, cur *side, err error) {
	if f := ck.c.baselineFile; f != "" {
		data, err := os.ReadFile(absPath(ck.e, f))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--baseline-file %s: %w", f, err)
		}
		class, err := storedClass(data, f)
		if err != nil {
			return nil, nil, nil, err
		}
		cur, err = ck.prebuilt("current", ck.c.currentBin)
		if err == nil {
			err = ck.loadFloorsBeside(absPath(ck.e, f), class)
		}
		return data, &side{name: "baseline", label: "stored " + filepath.Base(f)}, cur, err
	}
	class := ck.c.class
	if class == "" {
		class = ck.m.class
	}
	if class == "" {
		return nil, nil, nil, errors.New("cannot tell this machine's hardware class (no GPU answered): name it with --class")
	}
	repo, err := gitref.Open(ctx, ck.e.dir)
	if err != nil {
		return nil, nil, nil, err
	}
	var bc, cc gitref.Commit
	if ck.c.currentBin != "" {
		tip, err := repo.Resolve(ctx, ck.c.baseline)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--baseline %w", err)
		}
		bc = tip
		if !ck.c.baselineTip {
			if head, err := repo.Resolve(ctx, "HEAD"); err == nil {
				if mb, err := repo.MergeBase(ctx, tip, head); err == nil {
					bc = mb
				}
			}
		}
	} else if bc, cc, err = ck.refs(ctx, repo); err != nil {
		return nil, nil, nil, err
	}
	path := filepath.Join("baselines", class+".bench")
	data, ok, err := repo.Show(ctx, bc, path)
	if ck.c.baselinesRef != "" {
		// A branch kept off main: its tip, not a merge base.
		data, bc, ok, err = readStored(ctx, ck.e, ck.c.baselinesRef, path)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if !ok {
		return nil, nil, nil, &noBaselineError{class: class, path: path, at: bc, ref: ck.c.baselinesRef}
	}
	// Before anything is built or run: a broken stored file fails now,
	// named as committed, not after the whole suite ran.
	if err := validStored(data, filepath.ToSlash(path)+"@"+bc.Short()); err != nil {
		return nil, nil, nil, err
	}
	if err := ck.loadFloors(ctx, repo, bc, class); err != nil {
		return nil, nil, nil, err
	}
	base = &side{name: "baseline", label: "stored " + bc.Label()}
	if ck.c.currentBin != "" {
		cur, err = ck.prebuilt("current", ck.c.currentBin)
		return data, base, cur, err
	}
	cur = &side{name: "current", label: cc.Label(), header: runner.Header{Commit: cc.SHA, Branch: cc.Ref}}
	if cur.bins, err = ck.build(ctx, repo, cc, "current"); err != nil {
		return nil, nil, nil, err
	}
	cur.header.Go = goVersion(cur.bins)
	return data, base, cur, nil
}

// validStored parses a stored baseline as the comparison will, and names
// it in errors as name (baselines/<class>.bench@<commit>, or the file of
// --baseline-file) with the line: "baselines/x.bench@f025a11:20: …".
func validStored(data []byte, name string) error {
	_, err := storedClass(data, name)
	return err
}

// storedClass is validStored's parse, returning the stored file's hardware
// class (its first class configuration line; "" if it has none).
func storedClass(data []byte, name string) (string, error) {
	side, err := parse.NewReader(bytes.NewReader(data)).ReadSide([]string{"-"})
	if err != nil {
		return "", errors.New(name + strings.TrimPrefix(err.Error(), "-"))
	}
	for _, c := range side.Configs {
		if v := c.Get("class"); v != "" {
			return v, nil
		}
	}
	return "", nil
}

// shardBy is the shard-by header line of a sharded run: the deal's
// fingerprint for shards balanced by cost, else "name".
func shardBy(m *measure, res *runner.Result) string {
	switch {
	case m.shard.N == 0:
		return ""
	case m.shard.Dealt && res.Deal != "":
		return res.Deal
	}
	return "name"
}

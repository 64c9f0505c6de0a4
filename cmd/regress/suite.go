package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// suiteFlags are the flags of the verbs that run benchmarks (run, check,
// baseline save): what to run and where. Their defaults come from the suite
// section of benchmarks.yaml, after the suite.classes entries that match the
// machine's hardware class.
type suiteFlags struct {
	config    string
	bench     string
	count     int
	benchtime string
	device    string
	shard     string
	shardBy   string
	gpus      string
	tags      string
	tagsSet   bool
	seed      string
	quiet     bool
}

// register declares the suite flags of verb (run, check, baseline save or
// calibrate), each with a text true for that verb: a verb gets only the
// flags it acts on.
func (s *suiteFlags) register(fs *flag.FlagSet, verb string) {
	if verb != "check" { // check's --config is a report flag (judgeFlags)
		fs.StringVar(&s.config, "config", "", "`FILE` benchmarks.yaml to use (default: the one at the repository root, if any; \"none\" for built-in defaults)")
	}
	fs.StringVar(&s.bench, "bench", "", "`REGEXP` run only the benchmarks this go test -bench regexp selects (default: suite.bench, else all)")
	switch verb {
	case "check":
		fs.IntVar(&s.count, "count", 0, "`N` interleaved rounds: each runs every benchmark once on each side, one process per side (default: suite.count, else 10)")
	case "run":
		fs.IntVar(&s.count, "count", 0, "`N` samples per benchmark, one process each (default: suite.count, else 10)")
	case "baseline save":
		fs.IntVar(&s.count, "count", 0, "`N` samples per benchmark to store, one process each (default: suite.count, else 10); fewer than min_samples are refused")
	}
	fs.StringVar(&s.benchtime, "benchtime", "", "`D` go test -benchtime of each sample, e.g. 100ms or 50x (default: suite.benchtime, else go test's)")
	fs.StringVar(&s.device, "device", "auto", "`BACKEND` backend: auto (cuda when built with the cuda tag and a GPU answers, else cpu), cpu or cuda")
	if verb == "check" || verb == "run" {
		fs.StringVar(&s.shard, "shard", "", "`I/N` run only shard i/n (1-based) of the top-level benchmarks, split as --shard-by says")
		fs.StringVar(&s.shardBy, "shard-by", "cost", "`HOW` how --shard splits the top-level benchmarks (cost or name): cost balances their sub-benchmark counts in the stored baseline of the class (by name where there is none); name hashes each name, so a benchmark keeps its shard whatever else changes")
	}
	fs.StringVar(&s.gpus, "gpus", "", "`IDS` comma-separated GPU ids: deal the top-level benchmarks over the GPUs (balancing their sub-benchmark counts in the stored baseline, if any), run one process per GPU concurrently (CUDA_VISIBLE_DEVICES) and merge")
	fs.Func("tags", "`TAGS` build tags, comma-separated (default: suite.tags)", func(v string) error {
		s.tags, s.tagsSet = v, true
		return nil
	})
	switch verb {
	case "check":
		fs.StringVar(&s.seed, "seed", "", "`N` seed of the coin flip that picks which side runs first in round 1 (default: from the clock; printed); every shard of a sharded check needs the same")
	case "calibrate":
		fs.StringVar(&s.seed, "seed", "", "`N` seed of the coin flip that picks which of the two identical sides runs first in round 1 (default: from the clock; printed)")
	}
	fs.BoolVar(&s.quiet, "quiet", false, "no progress on standard error")
}

// measure is a resolved suiteFlags: everything a run needs to know.
type measure struct {
	cfg      *config.Config
	suite    config.Suite // after suite.classes and the flags
	device   string       // cpu or cuda; "" leaves the binaries their own choice
	gpu      string       // name of the GPU, "" when none answered
	class    string       // predicted hardware class
	filter   *runner.Filter
	shard    runner.Shard
	lanes    []runner.Lane
	weights  map[string]float64 // for dealing over GPUs or cost shards (stored baseline's sub-benchmarks per top level)
	args     []string           // pass-through, as test binary flags
	seed     uint64
	progress *runner.Progress
}

// resolve loads the configuration and works out the run. prebuilt says the
// binaries are not built here, so --device auto is left to them.
func (s *suiteFlags) resolve(e *env, ctx context.Context, cfg *config.Config, passthrough []string, prebuilt bool) (*measure, error) {
	m := &measure{cfg: cfg, args: runner.TestFlags(passthrough)}
	if cfg == nil {
		c, err := loadConfig(e, s.config)
		if err != nil {
			return nil, err
		}
		m.cfg = c
	}
	suite := m.cfg.Suite
	command := len(suite.Command) > 0
	if command {
		// Nothing is built: the command chooses its device, as prebuilt
		// binaries do, and takes the arguments after -- as they are.
		prebuilt = true
		m.args = passthrough
		if s.tagsSet {
			return nil, fmt.Errorf("--tags: %s runs suite.command, which builds nothing (pass build options in the command)", relPath(e, m.cfg.Source))
		}
	}
	if s.tagsSet {
		suite.Tags = splitList(s.tags)
	}
	switch s.device {
	case "auto", "cpu", "cuda":
	default:
		return nil, fmt.Errorf("--device %q: want auto, cpu or cuda", s.device)
	}
	if s.device == "cuda" && !prebuilt && !slices.Contains(suite.Tags, "cuda") {
		suite.Tags = append(slices.Clone(suite.Tags), "cuda")
	}
	if s.device == "cuda" || s.device == "auto" && (prebuilt || slices.Contains(suite.Tags, "cuda")) {
		m.gpu = runner.GPUName(ctx)
	}
	m.device = runner.ResolveDevice(s.device, suite.Tags, m.gpu)
	if prebuilt && s.device == "auto" {
		// The binaries choose; they use the GPU when one answers and
		// they were built for it.
		m.device = "cpu"
		if m.gpu != "" {
			m.device = "cuda"
		}
		m.class = runner.PredictClass(m.device, m.gpu)
		m.device = ""
	} else {
		m.class = runner.PredictClass(m.device, m.gpu)
	}
	suite = suite.ForClass(m.class)
	if s.bench != "" {
		suite.Bench = s.bench
	}
	if s.count < 0 {
		return nil, fmt.Errorf("--count %d: want at least 1", s.count)
	} else if s.count > 0 {
		suite.Count = s.count
	}
	if suite.Count == 0 {
		suite.Count = 10
	}
	if s.benchtime != "" {
		if !validBenchtime(s.benchtime) {
			return nil, fmt.Errorf("--benchtime %q: want a duration like 100ms or a count like 50x", s.benchtime)
		}
		suite.Benchtime = s.benchtime
	}
	m.suite = suite
	f, err := runner.ParseFilter(suite.Bench)
	if err != nil {
		return nil, err
	}
	m.filter = f
	if s.shardBy == "" {
		s.shardBy = "cost" // a verb without --shard
	}
	if s.shardBy != "cost" && s.shardBy != "name" {
		return nil, fmt.Errorf("--shard-by %q: want cost or name", s.shardBy)
	}
	if s.shard != "" {
		if m.shard, err = runner.ParseShard(s.shard); err != nil {
			return nil, err
		}
		// A command is not listed before it runs, so its shards go by a
		// hash of each name (cost needs the list to deal).
		if s.shardBy == "cost" && m.shard.N > 1 && !command {
			if m.weights = dealWeights(e, m.class); m.weights != nil {
				m.shard.Dealt, m.shard.Hosts = true, true
			}
		}
	}
	if s.gpus != "" {
		if s.shard != "" {
			return nil, errors.New("--gpus and --shard: use one (--gpus shards the benchmarks over the GPUs)")
		}
		ids := splitList(s.gpus)
		if len(ids) == 0 {
			return nil, fmt.Errorf("--gpus %q: want GPU ids such as 0,1", s.gpus)
		}
		for i, id := range ids {
			if n, err := strconv.Atoi(id); err != nil || n < 0 || slices.Index(ids, id) != i {
				return nil, fmt.Errorf("--gpus %q: want distinct non-negative GPU ids such as 0,1", s.gpus)
			}
			lane := runner.Lane{Name: "gpu " + id, Env: []string{"CUDA_VISIBLE_DEVICES=" + id}}
			if len(ids) > 1 {
				lane.Shard = runner.Shard{I: i + 1, N: len(ids), Dealt: true}
			}
			m.lanes = append(m.lanes, lane)
		}
		if len(ids) > 1 && !command {
			m.weights = dealWeights(e, m.class)
		}
	} else if m.shard.N > 0 {
		m.lanes = []runner.Lane{{Shard: m.shard}}
	}
	if s.seed != "" {
		if m.seed, err = strconv.ParseUint(s.seed, 10, 64); err != nil {
			return nil, fmt.Errorf("--seed %q: want a non-negative integer", s.seed)
		}
	} else {
		m.seed = uint64(time.Now().UnixNano()) % 1_000_000
	}
	if !s.quiet {
		live := false
		if f, ok := e.stderr.(*os.File); ok {
			live = runner.IsTerminal(f)
		}
		m.progress = runner.NewProgress(e.stderr, live)
	}
	return m, nil
}

// plan is the runner plan for rounds invocations of count samples each.
func (m *measure) plan(rounds, count int) runner.Plan {
	return runner.Plan{
		Filter: m.filter, Benchtime: m.suite.Benchtime, Count: count, Rounds: rounds, Seed: m.seed,
		Device: m.device, Args: m.args, Lanes: m.lanes, Progress: m.progress, Weights: m.weights,
	}
}

// dealWeights is what --gpus and --shard-by cost balance: for each top-level benchmark, how
// many result lines it has in the stored baseline of the class
// (baselines/<class>.bench as it is in the working tree). On a GPU a
// sub-benchmark's wall time is mostly its fixed warm-up and data set-up, so
// the count of sub-benchmarks is a fair measure of a top level's cost, which
// dealing every N-th benchmark or hashing names ignores. nil (--gpus: deal
// every N-th; --shard: hash names) when there is no stored baseline. The
// deal is the same on every machine of a sharded check only if this file
// is: it is read from the checked-out tree (both sides' commits are the
// same on every shard, which regress judge checks), and the deal's
// fingerprint in each shard's header (shard-by) lets the join tell.
func dealWeights(e *env, class string) map[string]float64 {
	if class == "" {
		return nil
	}
	path := filepath.Join(baselineDir(e), class+".bench")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	side, err := parse.NewReader(nil).ReadSide([]string{path})
	if err != nil {
		return nil // a broken baseline fails where it is compared; dealing falls back to every N-th
	}
	w := map[string]float64{}
	for _, r := range side.Results {
		top, _, _ := strings.Cut(r.Name, "/")
		w["Benchmark"+top]++
	}
	if len(w) == 0 {
		return nil
	}
	return w
}

// validBenchtime accepts what go test's -benchtime does: a positive
// duration or a positive count followed by x.
func validBenchtime(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.Atoi(n)
		return err == nil && v >= 1 && n[0] != '+'
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}

// splitPassthrough splits the arguments at the first "--": what follows
// goes to go test.
func splitPassthrough(args []string) (own, pass []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}

// notifyContext returns a context cancelled by SIGINT or SIGTERM, so that
// a verb stops its processes and removes its temporary files and worktrees
// before it exits. Tests replace it.
var notifyContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// tempDir makes the temporary directory of one run; remove it with
// os.RemoveAll.
func tempDir(verb string) (string, error) {
	return os.MkdirTemp("", "regress-"+verb+"-")
}

// absPath makes path absolute relative to the verb's working directory.
func absPath(e *env, path string) string {
	if path == "" || path == "-" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(e.dir, path)
}

// printBuildError prints a failed build the way go test would: the go
// command's output, then a one-line summary.
func printBuildError(e *env, verb, side string, err error) int {
	var be *runner.BuildError
	if errors.As(err, &be) {
		fmt.Fprintln(e.stderr, be.Output)
		where := ""
		if side != "" {
			where = " (" + side + ")"
		}
		fmt.Fprintf(e.stderr, "%s %s: build failed%s\n", programName, verb, where)
		return exitError
	}
	return -1
}

// interrupted turns a cancelled run into its message.
func interrupted(err error) error {
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted: stopped the benchmarks and removed the temporary files")
	}
	return err
}

// goVersion returns the Go version the binaries were built with.
func goVersion(bins []runner.Binary) string {
	for _, b := range bins {
		if v := b.GoVersion(); v != "" {
			return v
		}
	}
	return ""
}

// buildSuite resolves the suite flags and builds the suite's test binaries
// of the working tree in a new temporary directory, which cleanup removes
// (also after an error). A failed build comes back as a *runner.BuildError
// for printBuildError. A suite command is not built: it is the one
// "binary", run where commandDir says.
func buildSuite(ctx context.Context, e *env, s *suiteFlags, pass []string, verb string) (m *measure, bins []runner.Binary, cleanup func(), err error) {
	cleanup = func() {}
	if m, err = s.resolve(e, ctx, nil, pass, false); err != nil {
		return nil, nil, cleanup, err
	}
	if m.command() {
		return m, m.commandSuite(commandDir(e, m.cfg, "", "")), cleanup, nil
	}
	tmp, err := tempDir(verb)
	if err != nil {
		return nil, nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	bins, err = runner.Build(ctx, e.dir, m.suite.Packages, m.suite.Tags, filepath.Join(tmp, "bin"))
	return m, bins, cleanup, err
}

// command reports whether the suite is a command (suite.command), not Go
// packages.
func (m *measure) command() bool { return len(m.suite.Command) > 0 }

// commandSuite is the suite command, run in dir.
func (m *measure) commandSuite(dir string) []runner.Binary {
	return []runner.Binary{runner.CommandSuite(dir, m.suite.Command, m.suite.Format)}
}

// commandDir is where a suite command runs: the directory of the
// benchmarks.yaml that names it, so that its paths mean the same wherever
// regress starts. In a checkout of another commit (checkout, a worktree of
// the repository at repoRoot) it is that directory's counterpart; for a
// file outside the repository, the working directory's.
func commandDir(e *env, cfg *config.Config, repoRoot, checkout string) string {
	dir := filepath.Dir(cfg.Source)
	if checkout == "" {
		return dir
	}
	rel, err := relDir(repoRoot, dir)
	if err != nil {
		if rel, err = relDir(repoRoot, e.dir); err != nil {
			rel = "."
		}
	}
	return filepath.Join(checkout, rel)
}

// printWarnings prints what a run's sides warned about, once each.
func printWarnings(e *env, verb string, res *runner.Result) {
	var seen []string
	for _, out := range res.Sides {
		for _, w := range out.Warnings {
			if !slices.Contains(seen, w) {
				seen = append(seen, w)
				fmt.Fprintf(e.stderr, "%s %s: warning: %s\n", programName, verb, w)
			}
		}
	}
}

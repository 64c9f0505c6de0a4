package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const runSynopsis = "[flags] [packages] [-- go test flags]"

const runHelp = `Runs the benchmark suite and writes one result file: go test -run '^$'
-bench RE -benchtime D over suite.packages (or the packages given), with
suite.tags, from test binaries built with go test -c, N times (--count): one
process per sample, as regress check's rounds, so that what differs between
processes (a GPU's memory placement and clocks, a CPU's caches) is in the
samples and a stored baseline does not look steadier than a check. The file
starts with commit, branch, class, go, regress-version and date lines, then
holds what the suite prints, each process after a "round: k" line. Progress
goes to standard error.

--list prints the selected top-level benchmarks without running anything.
Sub-benchmarks exist only once their parent runs, so they are not listed;
to see them, run with --benchtime 1x --count 1.

--bin F runs the prebuilt test binary F (from go test -c) instead of
building: for a GPU host without a Go toolchain. It runs in the current
directory, and takes no packages.

--shard i/n runs shard i (from 1) of n of the top-level benchmarks, split
as --shard-by says (check's help: by cost from the stored baseline, else by
a hash of each name), the same on every machine with the same tree. A shard
may be empty; its file then holds only the header. regress merge combines
the shards' files.

Exit codes: 0 written; 1 written, but a benchmark failed (named on standard
error; its results are missing); 2 usage, configuration or build error;
3 no benchmark selected (without --shard).
`

// runFlags are run's flags: the suite's and where the results go.
type runFlags struct {
	s    suiteFlags
	out  string
	list bool
	bin  string
}

func newRunFlags() (*flag.FlagSet, *runFlags) {
	fs := newFlagSet("run")
	r := &runFlags{}
	r.s.register(fs, "run")
	fs.StringVar(&r.bin, "bin", "", "`BINARY` prebuilt test binary (go test -c) to run instead of building the packages")
	fs.StringVar(&r.out, "out", "", "`FILE` write the result file here (atomically) instead of standard output; - is standard output")
	fs.BoolVar(&r.list, "list", false, "print the selected top-level benchmarks and exit without running them")
	return fs, r
}

func runRun(e *env, args []string) int {
	fs, r := newRunFlags()
	s, out, list, bin := &r.s, &r.out, &r.list, &r.bin
	fail := failer(e, "run")
	own, pass := splitPassthrough(args)
	pkgs, code, ok := parseArgs(e, "run", fs, own)
	if !ok {
		return code
	}
	ctx, stop := notifyContext()
	defer stop()
	start := time.Now()
	m, err := s.resolve(e, ctx, nil, pass, false)
	if err != nil {
		return fail(err)
	}
	var bins []runner.Binary
	var build time.Duration
	if m.command() {
		switch {
		case *bin != "":
			return fail(fmt.Errorf("--bin runs a Go test binary, and %s's suite is a suite.command", relPath(e, m.cfg.Source)))
		case len(pkgs) > 0:
			return fail(usagef("packages %v: %s's suite is a suite.command, which has no packages", pkgs, relPath(e, m.cfg.Source)))
		case *list:
			return fail(errors.New("--list: a suite.command says which benchmarks it has only by running them (regress run --count 1 runs it once)"))
		}
		bins = m.commandSuite(commandDir(e, m.cfg, "", ""))
	} else if *bin != "" {
		if len(pkgs) > 0 {
			return fail(usagef("--bin runs one prebuilt binary: packages %v are not built", pkgs))
		}
		b, err := prebuiltBinary(e, "--bin", *bin)
		if err != nil {
			return fail(err)
		}
		bins = []runner.Binary{b}
	} else {
		if len(pkgs) == 0 {
			pkgs = m.suite.Packages
		}
		tmp, err := tempDir("run")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(tmp)
		if bins, err = runner.Build(ctx, e.dir, pkgs, m.suite.Tags, tmp); err != nil {
			if code := printBuildError(e, "run", "", err); code >= 0 {
				return code
			}
			return fail(err)
		}
		build = time.Since(start)
	}
	if *list {
		return listBenchmarks(ctx, e, m, bins)
	}
	rf, err := runSuite(ctx, e, m, bins)
	if err != nil {
		return fail(err)
	}
	if !s.quiet {
		fmt.Fprintf(e.stderr, "%s run: time: %s\n", programName, render.CostsLine(commandCosts(time.Since(start), build, rf.res)))
	}
	if rf.benchmarks == 0 && m.shard.N == 0 {
		fmt.Fprintf(e.stderr, "%s run: no benchmark matches --bench %q in %d package(s) with test files\n", programName, m.filter, len(bins))
		return exitNoData
	}
	write := func(w io.Writer) error { _, err := w.Write(rf.data); return err }
	if *out == "" || *out == "-" {
		err = write(e.stdout)
	} else if err = writeAtomic(absPath(e, *out), write); err != nil {
		err = fmt.Errorf("--out %s: %w", *out, err)
	}
	if err != nil {
		return fail(err)
	}
	return reportFailures(e, "run", rf.failures)
}

// resultFile is one side's measured results, ready to be written.
type resultFile struct {
	data       []byte // header, then the results
	failures   []runner.Failure
	benchmarks int
	class      string
	elapsed    time.Duration
	res        *runner.Result
}

// runSuite runs bins --count times (one process per package and sample) and returns the result file, with a header for the
// commit checked out in the working directory.
func runSuite(ctx context.Context, e *env, m *measure, bins []runner.Binary) (*resultFile, error) {
	start := time.Now()
	res, err := runner.Run(ctx, []runner.Side{{Name: "current", Binaries: bins}}, m.plan(m.suite.Count, 1))
	if err != nil {
		return nil, err
	}
	printWarnings(e, "run", res)
	side := res.Sides[0]
	h := runner.Header{Go: goVersion(bins), Date: time.Now()}
	if repo, err := gitref.Open(ctx, e.dir); err == nil {
		h.Commit = gitref.Head(ctx, e.dir)
		if h.Commit != "" && repo.Dirty(ctx) {
			h.Commit += "+dirty"
		}
		h.Branch = gitref.Branch(ctx, e.dir)
	}
	h.Class = runner.ResultClass(side.Results, m.class)
	data := append(h.Lines(), side.Results...)
	return &resultFile{data: data, failures: side.Failures, benchmarks: side.Benchmarks, class: h.Class,
		elapsed: time.Since(start), res: res}, nil
}

// reportFailures names each failed benchmark on standard error and returns
// the verb's exit code: 1 when there is any.
func reportFailures(e *env, verb string, failures []runner.Failure) int {
	for _, f := range failures {
		times := ""
		if f.Times > 1 {
			times = fmt.Sprintf(" (%d times)", f.Times)
		}
		fmt.Fprintf(e.stderr, "%s %s: Benchmark%s failed%s: %s\n", programName, verb, f.Name, times, f.Message)
	}
	if len(failures) > 0 {
		return exitFail
	}
	return exitPass
}

// listBenchmarks prints the selected top-level benchmarks of bins, under a
// "# package" line each when there are several packages.
func listBenchmarks(ctx context.Context, e *env, m *measure, bins []runner.Binary) int {
	var env []string
	if len(m.lanes) > 0 {
		env = m.lanes[0].Env
	}
	var b bytes.Buffer
	n := 0
	listed := make([][]string, len(bins))
	var keys []string
	for i, bin := range bins {
		names, err := runner.List(ctx, bin, m.filter, m.device, env)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s run: %v\n", programName, interrupted(err))
			return exitError
		}
		listed[i] = names
		for _, name := range names {
			keys = append(keys, bin.Pkg+"\x00"+name)
		}
	}
	in := func(pkg, name string) bool { return m.shard.Has(name) }
	if m.shard.Dealt && m.shard.N > 1 {
		deal := runner.DealTops(keys, m.shard.N, m.weights)
		in = func(pkg, name string) bool { return deal[pkg+"\x00"+name] == m.shard.I-1 }
	}
	for i, bin := range bins {
		var sel []string
		for _, name := range listed[i] {
			if in(bin.Pkg, name) {
				sel = append(sel, name)
			}
		}
		if len(sel) == 0 {
			continue
		}
		if len(bins) > 1 {
			fmt.Fprintf(&b, "# %s\n", bin.Pkg)
		}
		for _, name := range sel {
			fmt.Fprintln(&b, name)
		}
		n += len(sel)
	}
	e.stdout.Write(b.Bytes())
	if n == 0 {
		fmt.Fprintf(e.stderr, "%s run: no benchmark matches --bench %q\n", programName, m.filter)
		return exitNoData
	}
	return exitPass
}

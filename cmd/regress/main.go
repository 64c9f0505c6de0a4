// Command regress compares Go benchmark results and gates pull requests on
// performance regressions, with benchstat's statistics and a real exit code.
//
// Usage:
//
//	regress compare [flags] OLD[,OLD2...] NEW[,NEW2...]
//
// Exit codes (every verb): 0 pass; 1 at least one gated regression (or a
// gated benchmark that vanished, failed or missed its budget); 2 usage,
// configuration, input or build error; 3 nothing comparable (no common
// benchmarks, or different hardware classes). Never 0 when nothing was
// compared.
//
// main only dispatches; each verb lives in its own file over the library
// packages under regress/.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernelwatch/kernelwatch/internal/logsafe"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// Exit codes of design §3.
const (
	exitPass    = 0
	exitFail    = 1
	exitError   = 2
	exitNoData  = 3
	programName = "regress"
)

// env is what a verb may touch, so tests can run verbs in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	dir            string // working directory
}

type verb struct {
	name, summary string
	run           func(e *env, args []string) int
}

var verbs = []verb{
	{"check", "build and run baseline and current interleaved, compare and gate (the default verb)", runCheck},
	{"compare", "compare two sets of benchmark result files", runCompare},
	{"convert", "convert pytest-benchmark, Google Benchmark or nvbench JSON to Go benchmark format, every sample kept", runConvert},
	{"run", "run the benchmark suite and write one result file", runRun},
	{"merge", "combine result files of shards", runMerge},
	{"judge", "join the shards of a sharded check (check --shard i/n --results DIR) into one report and gate", runJudge},
	{"baseline", "save or show the stored baseline of a hardware class", runBaseline},
	{"calibrate", "measure each benchmark's noise in an A/A run and store baselines/<class>.noise.json", runCalibrate},
	{"history", "time series and steps of the stored baselines along main (or of a directory of runs)", runHistory},
	{"report", "render a history and/or a JSON report as one self-contained HTML page (--html OUT.html)", runReport},
	{"comment", "publish a JSON report on GitHub: sticky PR comment, job summary, outputs, status", runComment},
}

func main() {
	wd, _ := os.Getwd()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, dir: wd}
	os.Exit(run(e, os.Args[1:]))
}

func run(e *env, args []string) int {
	// Standard error is where every error, warning and progress line goes,
	// and in CI it is a log that executes workflow commands: names and
	// reports from a fork's code must not act as one. A terminal is no
	// such log and keeps its live progress line.
	if f, ok := e.stderr.(*os.File); !ok || !runner.IsTerminal(f) {
		guarded := logsafe.NewWriter(e.stderr)
		defer guarded.Flush()
		safe := *e
		safe.stderr = guarded
		e = &safe
	}
	switch {
	case len(args) == 0:
		return runCheck(e, args)
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help":
		usage(e.stdout)
		return exitPass
	case strings.HasPrefix(args[0], "-"):
		return runCheck(e, args) // regress [flags] = regress check [flags]
	}
	for _, v := range verbs {
		if v.name == args[0] {
			return v.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "%s: unknown verb %q\n", programName, args[0])
	usage(e.stderr)
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <verb> [flags] [args]\n\nverbs:\n", programName)
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-10s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(w, "\nexit codes: 0 pass, 1 gated regression, 2 usage/config/input error, 3 nothing comparable\n")
}

// errUsage marks errors that come from the command line itself.
var errUsage = errors.New("usage")

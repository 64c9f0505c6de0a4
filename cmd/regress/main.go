// Command regress compares Go benchmark results and gates pull requests on
// performance regressions, with benchstat's statistics and a real exit code.
//
// Usage:
//
//	regress <verb> [flags] [args]
//	regress help <verb>
//
// Exit codes (every verb): 0 pass; 1 at least one gated regression (or a
// gated benchmark that vanished, failed or missed its budget); 2 usage,
// configuration, input or build error; 3 nothing comparable (no common
// benchmarks, or different hardware classes), or inconclusive (no gated
// comparison could be judged). Never 0 when nothing was judged.
//
// main only dispatches; each verb lives in its own file over the library
// packages under regress/, and declares its flags in one function that
// both the verb and its help (regress help VERB, docs/commands.md) use.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kernelwatch/kernelwatch/internal/logsafe"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// Exit codes, the same for every verb.
const (
	exitPass    = 0
	exitFail    = 1
	exitError   = 2
	exitNoData  = 3
	programName = "regress"
)

// exitCodes says what each exit code means, for the top-level help and the
// command reference.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitPass, "pass: something was compared and no gated comparison failed"},
	{exitFail, "a gated regression, or a gated benchmark that vanished, failed or missed its budget"},
	{exitError, "usage, configuration, input or build error, or a run cut short"},
	{exitNoData, "nothing comparable (no stored baseline for the class, no common benchmarks, different hardware classes), or INCONCLUSIVE: no gated comparison could be judged (too few samples)"},
}

// env is what a verb may touch, so tests can run verbs in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	dir            string // working directory
}

// verb is one command of regress.
type verb struct {
	name     string // as typed: "check", "baseline save"
	synopsis string // what follows "regress NAME" in the usage line
	summary  string // one line, for the list of verbs
	help     string // what the verb does, its exit codes
	// flags returns the verb's flag set, bound to values nobody reads:
	// regress help and the command reference list it. The verb itself
	// parses with the same function, so the two cannot drift apart.
	flags func() *flag.FlagSet
	run   func(e *env, args []string) int
}

// verbs lists the verbs in the order help presents them. It is filled in
// init, since the verbs' help looks itself up in it.
var verbs []verb

func init() {
	verbs = []verb{
		{"check", checkSynopsis, "build and run baseline and current interleaved, compare and gate (the default verb)", checkHelp,
			func() *flag.FlagSet { fs, _ := newCheckFlags(); return fs }, runCheck},
		{"compare", compareSynopsis, "compare two sets of benchmark result files", compareHelp,
			func() *flag.FlagSet { fs, _ := newCompareFlags(); return fs }, runCompare},
		{"convert", convertSynopsis, "convert pytest-benchmark, Google Benchmark or nvbench JSON to Go benchmark format, every sample kept", convertHelp,
			func() *flag.FlagSet { fs, _ := newConvertFlags(); return fs }, runConvert},
		{"run", runSynopsis, "run the benchmark suite and write one result file", runHelp,
			func() *flag.FlagSet { fs, _ := newRunFlags(); return fs }, runRun},
		{"merge", mergeSynopsis, "combine the result files of shards into one", mergeHelp,
			func() *flag.FlagSet { fs, _ := newMergeFlags(); return fs }, runMerge},
		{"judge", judgeSynopsis, "join the shards of a sharded check (check --shard i/n --results DIR) into one report and gate", judgeHelp,
			func() *flag.FlagSet { fs, _ := newJudgeFlags(); return fs }, runJudge},
		{"baseline", baselineSynopsis, "save or show the stored baseline of a hardware class", baselineHelp, nil, runBaseline},
		{"baseline save", baselineSaveSynopsis, "run the suite (or take FILE) and store it as baselines/<class>.bench", baselineSaveHelp,
			func() *flag.FlagSet { fs, _ := newBaselineSaveFlags(); return fs }, runBaselineSave},
		{"baseline show", baselineShowSynopsis, "show what is stored for this machine's hardware class", baselineShowHelp,
			func() *flag.FlagSet { fs, _ := newBaselineShowFlags(); return fs }, runBaselineShow},
		{"calibrate", calibrateSynopsis, "measure each benchmark's noise in an A/A run and store baselines/<class>.noise.json", calibrateHelp,
			func() *flag.FlagSet { fs, _ := newCalibrateFlags(); return fs }, runCalibrate},
		{"history", historySynopsis, "time series and steps of the stored baselines along main (or of a directory of runs)", historyHelp,
			func() *flag.FlagSet { fs, _ := newHistoryFlags(); return fs }, runHistory},
		{"report", reportSynopsis, "render a history and/or a JSON report as one self-contained HTML page", reportHelp,
			func() *flag.FlagSet { fs, _ := newReportFlags(); return fs }, runReport},
		{"comment", commentSynopsis, "publish a JSON report on GitHub: sticky PR comment, job summary, outputs, status", commentHelp,
			func() *flag.FlagSet { fs, _ := newCommentFlags(); return fs }, runComment},
		{"version", versionSynopsis, "print regress's version, module and VCS revision", versionHelp,
			func() *flag.FlagSet { return newFlagSet("version") }, runVersion},
		{"help", helpSynopsis, "print the help of regress or of one verb", helpHelp, nil, runHelpVerb},
	}
}

// lookupVerb returns the verb named name ("check", "baseline save"), or
// nil.
func lookupVerb(name string) *verb {
	for i := range verbs {
		if verbs[i].name == name {
			return &verbs[i]
		}
	}
	return nil
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
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		usage(e.stdout)
		return exitPass
	case args[0] == "-version" || args[0] == "--version":
		return runVersion(e, args[1:])
	case strings.HasPrefix(args[0], "-"):
		return runCheck(e, args) // regress [flags] = regress check [flags]
	}
	if v := lookupVerb(args[0]); v != nil {
		return v.run(e, args[1:])
	}
	fmt.Fprintf(e.stderr, "%s: unknown verb %q; see '%s help'\n", programName, args[0], programName)
	return exitError
}

// usage is the top-level help: the verbs and the exit codes.
func usage(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s <verb> [flags] [args]\n\nverbs:\n", programName)
	for _, v := range verbs {
		if v.name == "baseline" {
			continue // its actions are listed
		}
		fmt.Fprintf(&b, "  %-14s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(&b, "\nBare %q is %q. '%s help VERB' prints a verb's flags.\n\nexit codes:\n", programName, programName+" check", programName)
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "  %d  %s\n", c.code, c.meaning)
	}
	io.WriteString(w, b.String())
}

const helpSynopsis = "[VERB]"

const helpHelp = `Prints the help of VERB (for example "regress help check" or "regress help
baseline save"): its usage, what it does, its exit codes and its flags, the
same as "regress VERB -h". Without VERB, the list of verbs.
`

func runHelpVerb(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stdout)
		return exitPass
	}
	name := strings.Join(args, " ")
	v := lookupVerb(name)
	if v == nil {
		fmt.Fprintf(e.stderr, "%s help: unknown verb %q; '%s help' lists them\n", programName, name, programName)
		return exitError
	}
	printHelp(e.stdout, v)
	return exitPass
}

package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const calibrateSynopsis = "[--rounds N] [run flags] [--commit] [--baselines-ref REF] [-- go test flags]"

const calibrateHelp = `Measures each benchmark's noise: the code in the working tree runs against
itself for --rounds interleaved rounds (an A/A run, one sample per side per
round, each its own process), and baselines/<class>.noise.json records, per
(benchmark, unit), the spread of the samples and the 99th percentile of
|Δ| between the two sides of a round.

The comparator (check, compare) then judges each benchmark by
max(configured threshold, 0.5 × that percentile) — the median of n ≥ 6
samples varies at most half as much as one round — and marks benchmarks
whose floor exceeds 25% unstable: reported, gated as benchmarks.yaml's
defaults.unstable says (warn unless set). Reports say which threshold
applied.

Exit codes: 0 done; 1 a benchmark failed (measured without it); 2 usage,
configuration, input or build error; 3 no benchmark selected.
`

func runCalibrate(e *env, args []string) int {
	fs := newFlagSet("calibrate")
	var s suiteFlags
	s.register(fs, true)
	var st storeFlags
	st.register(fs)
	var rounds int
	fs.IntVar(&rounds, "rounds", 20, "interleaved A/A rounds (one sample per side per round)")
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "%s calibrate: %v\n", programName, interrupted(err))
		if errors.Is(err, errUsage) {
			fmt.Fprintf(e.stderr, "usage: %s calibrate %s (see -h)\n", programName, calibrateSynopsis)
		}
		return exitError
	}
	own, pass := splitPassthrough(args)
	pos, err := parseInterspersed(fs, own)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(fs, e.stdout, "calibrate", calibrateSynopsis)
		fmt.Fprint(e.stdout, "\n"+calibrateHelp)
		return exitPass
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %w", err, errUsage))
	}
	if len(pos) > 0 {
		return fail(fmt.Errorf("unexpected argument %q (go test flags go after --): %w", pos[0], errUsage))
	}
	if rounds < 6 {
		return fail(fmt.Errorf("--rounds %d: want at least 6 (a 99th percentile of fewer rounds says little)", rounds))
	}
	ctx, stop := notifyContext()
	defer stop()
	m, bins, cleanup, err := buildSuite(ctx, e, &s, pass, "calibrate")
	defer cleanup()
	if err != nil {
		if code := printBuildError(e, "calibrate", "", err); code >= 0 {
			return code
		}
		return fail(err)
	}
	if !s.quiet {
		fmt.Fprintf(e.stderr, "%s calibrate: A/A of the working tree against itself, %d rounds interleaved (seed %d)\n", programName, rounds, m.seed)
	}
	res, err := runner.Run(ctx, []runner.Side{{Name: "baseline", Binaries: bins}, {Name: "current", Binaries: bins}}, m.plan(rounds, 1))
	if err != nil {
		return fail(err)
	}
	printWarnings(e, "calibrate", res)
	h := runner.Header{Go: goVersion(bins), Date: time.Now(), Commit: gitref.Head(ctx, e.dir)}
	dir := filepath.Dir(bins[0].Path)
	if m.command() {
		// Nothing was built, so there is no build directory to write in.
		if dir, err = tempDir("calibrate"); err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
	}
	var files []string
	var failures []runner.Failure
	for _, out := range res.Sides {
		if out.Benchmarks == 0 {
			fmt.Fprintf(e.stderr, "%s calibrate: no benchmark matches --bench %q: nothing measured\n", programName, m.filter)
			return exitNoData
		}
		h.Class = runner.ResultClass(out.Results, m.class)
		path := filepath.Join(dir, out.Side+".bench")
		if err := os.WriteFile(path, append(h.Lines(), out.Results...), 0o644); err != nil {
			return fail(err)
		}
		files = append(files, path)
		if out.Side == "current" {
			failures = out.Failures
		}
	}
	rd := parse.NewReader(nil)
	a, err := rd.ReadSide(files[:1])
	if err != nil {
		return fail(err)
	}
	b, err := rd.ReadSide(files[1:])
	if err != nil {
		return fail(err)
	}
	nf := noise.Measure(group.Pair(a, b), h.Class)
	nf.Commit, nf.Date = h.Commit, h.Date.UTC().Truncate(time.Second)
	if len(nf.Entries) == 0 {
		return fail(errors.New("no benchmark reported a sample in two rounds: nothing to calibrate"))
	}
	var data bytes.Buffer
	if err := nf.Write(&data); err != nil {
		return fail(err)
	}
	where, err := st.store(ctx, e, map[string][]byte{noise.Path(nf.Class): data.Bytes()},
		fmt.Sprintf("baselines: noise of %s from %d A/A rounds", nf.Class, nf.Rounds))
	if err != nil {
		return fail(err)
	}
	printNoise(e, nf, m)
	fmt.Fprintf(e.stderr, "%s calibrate: stored %s; %s noise file\n", programName, noise.Path(nf.Class), where)
	return reportFailures(e, "calibrate", failures)
}

// printNoise summarizes a noise file against the configured thresholds:
// the noisiest benchmarks, how many floors exceed their threshold, and how
// many are unstable.
func printNoise(e *env, nf *noise.File, m *measure) {
	entries := append([]noise.Entry(nil), nf.Entries...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].P99 > entries[j].P99 })
	raised, unstable := 0, 0
	for _, en := range entries {
		if en.Floor() > m.cfg.Resolve(en.Name, nf.Class, en.Unit).Threshold {
			raised++
		}
		if en.Unstable() {
			unstable++
		}
	}
	fmt.Fprintf(e.stdout, "noise of %s: %d series over %d rounds; k = %g: %d floors above their configured threshold, %d unstable (floor > %.0f%%)\n",
		nf.Class, len(entries), nf.Rounds, noise.K, raised, unstable, 100*noise.UnstableLimit)
	fmt.Fprintf(e.stdout, "%-60s %-10s %8s %8s %8s\n", "noisiest", "unit", "spread", "p99 |Δ|", "floor")
	for i, en := range entries {
		if i == 10 {
			break
		}
		fmt.Fprintf(e.stdout, "%-60s %-10s %7.2f%% %7.2f%% %7.2f%%\n", en.Name, en.Unit, 100*en.Spread, 100*en.P99, 100*en.Floor())
	}
}

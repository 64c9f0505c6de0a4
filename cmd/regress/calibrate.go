package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const calibrateSynopsis = "[flags] [-- go test flags]\n       regress calibrate --across-history [--class C] [--since REF] [--ref REF | --baselines-ref REF | --dir DIR] [--commit]"

const calibrateHelp = `Measures each benchmark's noise: the code in the working tree runs against
itself for --count interleaved rounds (an A/A run, one sample per side per
round, each its own process), and baselines/<class>.noise.json records, per
(benchmark, unit), the spread of the samples and the 99th percentile of
|Δ| between the two sides of a round.

The comparator (check, compare) then judges each benchmark by
max(configured threshold, 0.5 × that percentile) — the median of n ≥ 6
samples varies at most half as much as one round — and marks benchmarks
whose floor exceeds 25% unstable: reported, gated as benchmarks.yaml's
defaults.unstable says (warn unless set). Reports say which threshold
applied.

--across-history measures instead what differs between hosts and days,
which an A/A run on one host cannot see: it reads every commit of
baselines/<class>.bench reachable from --ref (default HEAD), or from
--baselines-ref, after --since — or the result files of --dir, one per host
or day — builds nothing and runs nothing, and stores
baselines/<class>.floors.json: per (benchmark, unit), the largest shift of
its median between two snapshots that ran the same code (where the files
carry the suite's code lines, the fingerprint of the kernels each
benchmark launched; snapshots without them are compared with each other)
and its cross-host floor, max(that shift,
its family's floor: the 99th percentile of |shift| implied by the median
of the family's shifts); a series with one snapshot gets its family's
floor, or the class's. Stored checks (check --mode
stored) judge each comparison by max(threshold, noise floor, cross-host
floor), and gate a family on its normalized unit (pct-copy, pct-mma,
pct-cublas: the kernel over the same process's copy, mma probe or cuBLASLt
running the same GEMMs) instead of sec/op
where that unit's median shift is at least 20% smaller. It prints the
spread: per unit the median and largest shift, how many benchmarks are
steadier normalized, and per family which unit gates.

Exit codes: 0 done; 1 a benchmark failed (measured without it); 2 usage,
configuration, input or build error; 3 no benchmark selected (with
--across-history: no history, or fewer than 2 snapshots).
`

// calibrateFlags are calibrate's flags: the suite's, the rounds and where
// the noise file goes.
type calibrateFlags struct {
	s      suiteFlags
	st     storeFlags
	rounds int
	across bool         // --across-history
	hf     historyFlags // where --across-history reads the history
}

func newCalibrateFlags() (*flag.FlagSet, *calibrateFlags) {
	fs := newFlagSet("calibrate")
	c := &calibrateFlags{}
	c.s.register(fs, "calibrate")
	fs.IntVar(&c.rounds, "count", 20, "`N` interleaved A/A rounds, one sample per side each; at least 6")
	alias(fs, "rounds", "count")
	c.st.register(fs)
	fs.BoolVar(&c.across, "across-history", false, "measure cross-host floors from the history of the stored baseline instead of running an A/A (see the help above)")
	fs.StringVar(&c.hf.class, "class", "", "`CLASS` with --across-history: the hardware class (default: the only class stored)")
	fs.StringVar(&c.hf.since, "since", "", "`REF` with --across-history: only commits after this ref")
	fs.StringVar(&c.hf.ref, "ref", "HEAD", "`REF` with --across-history: read the history of baselines/<class>.bench reachable from this ref")
	fs.StringVar(&c.hf.dir, "dir", "", "`DIR` with --across-history: read the result files of this directory (one snapshot per file, in name order) instead of git")
	return fs, c
}

func runCalibrate(e *env, args []string) int {
	fs, c := newCalibrateFlags()
	s, st, hf := &c.s, &c.st, &c.hf
	fail := failer(e, "calibrate")
	own, pass := splitPassthrough(args)
	pos, code, ok := parseArgs(e, "calibrate", fs, own)
	if !ok {
		return code
	}
	rounds := c.rounds
	if len(pos) > 0 {
		return fail(usagef("unexpected argument %q (go test flags go after --)", pos[0]))
	}
	if c.across {
		hf.baselinesRef = st.ref
		return calibrateAcross(e, hf, st, s.config, fail)
	}
	if set := setFlags(fs, "class", "since", "dir"); set != "" {
		return fail(usagef("--%s goes with --across-history", set))
	}
	if rounds < 6 {
		return fail(usagef("--count %d: want at least 6 rounds (a 99th percentile of fewer says little)", rounds))
	}
	ctx, stop := notifyContext()
	defer stop()
	m, bins, cleanup, err := buildSuite(ctx, e, s, pass, "calibrate")
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

// setFlags returns the first of names that was set on the command line.
func setFlags(fs *flag.FlagSet, names ...string) string {
	set := ""
	fs.Visit(func(f *flag.Flag) {
		if set == "" && slices.Contains(names, f.Name) {
			set = f.Name
		}
	})
	return set
}

// calibrateAcross is calibrate --across-history: cross-host floors from
// the snapshots of the stored baseline (noise.Across), stored where the
// store flags say, and the spread they come from printed.
func calibrateAcross(e *env, hf *historyFlags, st *storeFlags, configPath string, fail func(error) int) int {
	cfg, err := loadConfig(e, configPath)
	if err != nil {
		return fail(err)
	}
	ctx, stop := notifyContext()
	defer stop()
	opt := history.Options{Config: cfg}
	snaps, err := hf.snapshots(ctx, e, &opt)
	if errors.Is(err, errNoHistory) {
		fmt.Fprintf(e.stderr, "%s calibrate: %v\n", programName, relErr(err, e.dir))
		return exitNoData
	}
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	h, err := history.Collect(snaps, opt)
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	class := h.Class
	if class == "" {
		class = classOfSnapshots(snaps)
	}
	if class == "" || !classPattern.MatchString(class) {
		return fail(usagef("the snapshots name no hardware class: give --class"))
	}
	if len(h.Snapshots) < 2 {
		fmt.Fprintf(e.stderr, "%s calibrate: %s holds %d snapshot: a spread across hosts needs at least 2\n", programName, h.Source, len(h.Snapshots))
		return exitNoData
	}
	fs := make([]noise.FloorSnapshot, len(h.Snapshots))
	for i, sn := range h.Snapshots {
		fs[i] = noise.FloorSnapshot{Label: sn.Label, Commit: sn.Commit, Time: sn.Time}
	}
	series := make([]noise.SeriesHistory, len(h.Series))
	for i, s := range h.Series {
		sh := noise.SeriesHistory{Name: s.Name, Unit: s.Unit}
		for _, p := range s.Points {
			sh.Snapshots = append(sh.Snapshots, p.Snapshot)
			sh.Centers = append(sh.Centers, float64(p.Center))
			sh.Codes = append(sh.Codes, p.Code)
		}
		series[i] = sh
	}
	fl := noise.Across(class, h.Source, fs, series)
	printSpread(e, fl, cfg)
	for _, w := range h.Warnings {
		fmt.Fprintf(e.stderr, "%s calibrate: warning: %s\n", programName, w)
	}
	var data bytes.Buffer
	if err := fl.Write(&data); err != nil {
		return fail(err)
	}
	where, err := st.store(ctx, e, map[string][]byte{noise.FloorsPath(class): data.Bytes()},
		fmt.Sprintf("baselines: cross-host floors of %s from %d snapshots", class, len(fs)))
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(e.stderr, "%s calibrate: stored %s; %s floors file\n", programName, noise.FloorsPath(class), where)
	return exitPass
}

// classOfSnapshots is the class the first snapshot that names one names.
func classOfSnapshots(snaps []history.Snapshot) string {
	for _, s := range snaps {
		if c := describeBaseline(s.Data).config["class"]; c != "" {
			return c
		}
	}
	return ""
}

// printSpread prints how far the class's series moved between snapshots:
// per unit, whether normalized figures are steadier, per family which unit
// gates stored checks, the largest sec/op shifts, and how many floors
// exceed their configured threshold.
func printSpread(e *env, f *noise.Floors, cfg *config.Config) {
	w := e.stdout
	fmt.Fprintf(w, "cross-host spread of %s: %d snapshots of %s\n", f.Class, len(f.Snapshots), f.Source)
	for _, s := range f.Snapshots {
		when := ""
		if !s.Time.IsZero() {
			when = " " + s.Time.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "  %s%s\n", s.Label, when)
	}
	fmt.Fprintf(w, "\n%-10s %7s %16s %13s  %s\n", "unit", "series", "median |shift|", "max |shift|", "largest")
	for _, r := range f.Spread("sec/op", "pct-copy", "pct-mma", "pct-cublas", "GB/s", "TFLOP/s", "hot-ns", "p99-sec") {
		fmt.Fprintf(w, "%-10s %7d %15.2f%% %12.2f%%  %s\n", r.Unit, r.Series, 100*r.Median, 100*r.Max, r.MaxName)
	}
	if len(f.Pairs) > 0 {
		fmt.Fprintf(w, "\n%-10s %-17s %7s %16s %13s\n", "unit", "snapshots", "series", "median |shift|", "max |shift|")
		for _, p := range f.Pairs {
			fmt.Fprintf(w, "%-10s %-17s %7d %15.2f%% %12.2f%%\n", p.Unit, f.Snapshots[p.A].Label+" "+f.Snapshots[p.B].Label, p.Series, 100*p.Median, 100*p.Max)
		}
	}
	steadier, both := map[string]int{}, map[string]int{}
	for _, fam := range f.Families {
		if fam.Normalized != "" {
			steadier[fam.Normalized] += fam.Steadier
		}
	}
	for _, e := range f.Entries {
		if (e.Unit == "pct-copy" || e.Unit == "pct-mma" || e.Unit == "pct-cublas") && e.Shift != nil {
			if raw, ok := f.Lookup(e.Name, "sec/op"); ok && raw.Shift != nil {
				both[e.Unit]++
			}
		}
	}
	fmt.Fprintln(w)
	for _, u := range []string{"pct-copy", "pct-mma", "pct-cublas"} {
		if both[u] > 0 {
			fmt.Fprintf(w, "steadier normalized: %d of %d benchmarks moved less in %s than in sec/op\n", steadier[u], both[u], u)
		}
	}
	fmt.Fprintf(w, "\n%-18s %10s %14s %26s  %s\n", "family", "benchmarks", "sec/op median", "normalized median (sec/op)", "stored checks gate on")
	for _, fam := range f.Families {
		norm, raw := "—", "—"
		if fam.Normalized != "" {
			norm = fmt.Sprintf("%s %.2f%% (%.2f%%)", fam.Normalized, 100*fam.NormalizedShift, 100*fam.RawShiftBoth)
		}
		if fam.Benchmarks > 0 {
			raw = fmt.Sprintf("%.2f%%", 100*fam.RawShift)
		}
		fmt.Fprintf(w, "%-18s %10d %14s %26s  %s\n", fam.Name, fam.Benchmarks, raw, norm, fam.GatedBy)
	}
	fmt.Fprintf(w, "\nlargest sec/op shifts:\n")
	for _, en := range f.Largest("sec/op", 10) {
		fmt.Fprintf(w, "  %7.2f%%  %s\n", 100**en.Shift, en.Name)
	}
	raised, timed, fromOwn, warned := 0, 0, 0, 0
	for _, en := range f.Entries {
		if en.Unit != "sec/op" {
			if en.Gate != "" {
				warned++
			}
			continue
		}
		timed++
		if en.Floor > cfg.Resolve(en.Name, f.Class, en.Unit).Threshold {
			raised++
		}
		if en.From == "benchmark" {
			fromOwn++
		}
		if en.Gate != "" {
			warned++
		}
	}
	fmt.Fprintf(w, "\nfloors: %d series; sec/op: %d of %d floors above the configured threshold, %d set by the benchmark's own shift (the rest by its family's or the class's); %d raw-unit series gated on a normalized unit instead\n",
		len(f.Entries), raised, timed, fromOwn, warned)
}

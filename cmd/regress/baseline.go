package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const baselineSynopsis = "save|show [flags]"

const baselineHelp = `Stored baselines are result files of main, one per hardware class, at
baselines/<class>.bench in the repository (regress check --mode stored reads
them as committed at the baseline ref).
`

const baselineSaveSynopsis = "[flags] [FILE] [-- go test flags]"

const baselineSaveHelp = `Runs the suite like regress run (the same suite flags) and stores the
result as baselines/<class>.bench, or stores FILE when given. It refuses
results with fewer samples of a gated benchmark than its min_samples
(benchmarks.yaml): every stored-mode comparison against them would be
inconclusive; --force stores them anyway. The file replaces the old one
atomically, with its configuration lines (commit, class, go, ...) intact.
The class is the one the results name; --class names it when they name
none.

Exit codes: 0 stored; 1 stored, but a benchmark failed (stored without it);
2 usage, configuration, input or build error; 3 no benchmark selected.
`

const baselineShowSynopsis = "[flags]"

const baselineShowHelp = `Prints what is stored for this machine's hardware class (or --class): the
commit it was measured at, when, and how many benchmarks it holds; from the
working tree of the enclosing git repository, or from the tip of
--baselines-ref.

Exit codes: 0 shown; 2 usage or input error (a stored file that does not
parse, a directory outside any git repository); 3 nothing stored for the
class (the message says how to store it).
`

// classPattern is what a class must look like to name a file.
var classPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// runBaseline dispatches to baseline save and baseline show.
func runBaseline(e *env, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printHelp(e.stdout, lookupVerb("baseline"))
		return exitPass
	}
	if len(args) > 0 {
		if v := lookupVerb("baseline " + args[0]); v != nil {
			return v.run(e, args[1:])
		}
		return failer(e, "baseline")(usagef("unknown action %q (want save or show)", args[0]))
	}
	return failer(e, "baseline")(usagef("want an action: save or show"))
}

// baselineDir is the baselines directory of the enclosing repository (of
// the working directory outside one).
func baselineDir(e *env) string {
	ctx, stop := notifyContext()
	defer stop()
	if repo, err := gitref.Open(ctx, e.dir); err == nil {
		return filepath.Join(repo.Root, "baselines")
	}
	return filepath.Join(e.dir, "baselines")
}

// baselineSaveFlags are baseline save's flags: the suite's and where the
// baseline goes.
type baselineSaveFlags struct {
	s     suiteFlags
	class string
	force bool
	store storeFlags
}

func newBaselineSaveFlags() (*flag.FlagSet, *baselineSaveFlags) {
	fs := newFlagSet("baseline save")
	b := &baselineSaveFlags{}
	b.s.register(fs, "baseline save")
	fs.StringVar(&b.class, "class", "", "`CLASS` hardware class to store the results under (default: the class the results name)")
	fs.BoolVar(&b.force, "force", false, "store results with fewer samples per benchmark than min_samples (their comparisons will be inconclusive)")
	b.store.register(fs)
	return fs, b
}

// inRepository reports whether the working directory is inside a git
// repository.
func inRepository(e *env) bool {
	ctx, stop := notifyContext()
	defer stop()
	_, err := gitref.Open(ctx, e.dir)
	return err == nil
}

func runBaselineSave(e *env, args []string) int {
	fs, b := newBaselineSaveFlags()
	fail := failer(e, "baseline save")
	own, pass := splitPassthrough(args)
	pos, code, ok := parseArgs(e, "baseline save", fs, own)
	if !ok {
		return code
	}
	s, store, force, class := &b.s, &b.store, b.force, b.class
	if len(pos) > 1 {
		return fail(usagef("unexpected argument %q", pos[1]))
	}
	if class != "" && !classPattern.MatchString(class) {
		return fail(usagef("--class %q: want a class such as cpu-amd64-amd-epyc", class))
	}
	var data []byte
	var failures []runner.Failure
	if len(pos) == 1 {
		path := absPath(e, pos[0])
		if _, err := parse.NewReader(nil).ReadSide([]string{path}); err != nil {
			return fail(relErr(err, e.dir))
		}
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return fail(relErr(err, e.dir))
		}
	} else {
		ctx, stop := notifyContext()
		defer stop()
		m, bins, cleanup, err := buildSuite(ctx, e, s, pass, "baseline")
		defer cleanup()
		if err != nil {
			if code := printBuildError(e, "baseline save", "", err); code >= 0 {
				return code
			}
			return fail(err)
		}
		rf, err := runSuite(ctx, e, m, bins)
		if err != nil {
			return fail(err)
		}
		if rf.benchmarks == 0 {
			fmt.Fprintf(e.stderr, "%s baseline save: no benchmark matches --bench %q: nothing stored\n", programName, m.filter)
			return exitNoData
		}
		data, failures = rf.data, rf.failures
	}
	classes := runner.Classes(data)
	switch {
	case len(classes) > 1:
		return fail(fmt.Errorf("the results mix hardware classes %s", strings.Join(classes, ", ")))
	case len(classes) == 1 && class != "" && classes[0] != class:
		return fail(fmt.Errorf("--class %s: the results are of class %s", class, classes[0]))
	case len(classes) == 1:
		class = classes[0]
	case class == "":
		return fail(errors.New("the results name no hardware class: name it with --class"))
	default:
		data = append([]byte("class: "+class+"\n"), data...)
	}
	if !classPattern.MatchString(class) {
		return fail(fmt.Errorf("class %q cannot name a file", class))
	}
	if !force {
		cfg, err := loadConfig(e, s.config)
		if err != nil {
			return fail(err)
		}
		if err := enoughSamples(data, class, cfg); err != nil {
			return fail(err)
		}
	}
	info := describeBaseline(data)
	path := filepath.Join("baselines", class+".bench")
	ctx, stop := notifyContext()
	defer stop()
	where, err := store.store(ctx, e, map[string][]byte{path: data}, "baselines: store "+class+" ("+info.summary()+")")
	if err != nil {
		return fail(err)
	}
	if store.ref == "" {
		path = relPath(e, filepath.Join(baselineDir(e), class+".bench"))
	}
	fmt.Fprintf(e.stderr, "%s baseline save: stored %s (%s); %s baseline\n", programName, path, info.summary(), where)
	return reportFailures(e, "baseline save", failures)
}

// baselineShowFlags are baseline show's flags: which class, and where to
// look.
type baselineShowFlags struct {
	config, device, class, ref string
}

func newBaselineShowFlags() (*flag.FlagSet, *baselineShowFlags) {
	fs := newFlagSet("baseline show")
	b := &baselineShowFlags{}
	fs.StringVar(&b.class, "class", "", "`CLASS` hardware class to show (default: this machine's)")
	fs.StringVar(&b.ref, "baselines-ref", "", "`BRANCH` show what is stored on this branch instead of the working tree")
	fs.StringVar(&b.config, "config", "", "`FILE` benchmarks.yaml whose suite.tags tell this machine's class (default: the one at the repository root, if any; \"none\" for built-in defaults)")
	fs.StringVar(&b.device, "device", "auto", "`BACKEND` backend that tells this machine's class: auto (cuda when the suite is built with the cuda tag and a GPU answers, else cpu), cpu or cuda")
	return fs, b
}

func runBaselineShow(e *env, args []string) int {
	fs, b := newBaselineShowFlags()
	fail := failer(e, "baseline show")
	pos, code, ok := parseArgs(e, "baseline show", fs, args)
	if !ok {
		return code
	}
	class, ref := b.class, b.ref
	if len(pos) > 0 {
		return fail(usagef("unexpected argument %q", pos[0]))
	}
	if class == "" {
		ctx, stop := notifyContext()
		s := suiteFlags{config: b.config, device: b.device}
		m, err := s.resolve(e, ctx, nil, nil, false)
		stop()
		if err != nil {
			return fail(err)
		}
		if class = m.class; class == "" {
			return fail(errors.New("cannot tell this machine's hardware class (no GPU answered): name it with --class"))
		}
	}
	if !classPattern.MatchString(class) {
		return fail(usagef("--class %q: want a class such as cpu-amd64-amd-epyc", class))
	}
	if ref != "" {
		return showStored(e, ref, class)
	}
	dir := baselineDir(e)
	path := filepath.Join(dir, class+".bench")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !inRepository(e) {
		// Stored baselines live in a repository: outside one there is
		// nothing to show and nowhere to store one.
		return fail(fmt.Errorf("%s is not a git repository (nor inside one) and holds no %s: run it in a checkout of the repository that stores the baselines, or name a branch with --baselines-ref",
			e.dir, relPath(e, path)))
	}
	if errors.Is(err, os.ErrNotExist) {
		var have []string
		if entries, err := os.ReadDir(dir); err == nil {
			for _, en := range entries {
				if c, ok := strings.CutSuffix(en.Name(), ".bench"); ok {
					have = append(have, c)
				}
			}
		}
		stored := "nothing is stored"
		if len(have) > 0 {
			stored = "stored: " + strings.Join(have, ", ")
		}
		fmt.Fprintf(e.stderr, "%s baseline show: no baseline for class %s (%s; %s); store one on main with: %s baseline save\n",
			programName, class, relPath(e, path), stored, programName)
		return exitNoData
	}
	if err != nil {
		return fail(relErr(err, e.dir))
	}
	if _, err := parse.NewReader(nil).ReadSide([]string{path}); err != nil {
		return fail(relErr(err, e.dir))
	}
	printBaseline(e, relPath(e, path), data)
	return exitPass
}

// printBaseline prints what a stored baseline says about itself.
func printBaseline(e *env, where string, data []byte) {
	info := describeBaseline(data)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n", where)
	for _, k := range []string{"class", "commit", "branch", "date", "go", "regress-version", "cpu", "gpu", "gpu-driver"} {
		if v := info.config[k]; v != "" {
			fmt.Fprintf(&b, "  %-16s %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "  %-16s %s\n", "benchmarks", info.counts())
	e.stdout.Write(b.Bytes())
}

// baselineInfo is what a stored result file says about itself.
type baselineInfo struct {
	config     map[string]string // first value of each configuration key
	names      []string
	benchLines int
}

func describeBaseline(data []byte) baselineInfo {
	info := baselineInfo{config: map[string]string{}}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "Benchmark") && !strings.ContainsAny(k, " \t") && k != "" {
			if _, seen := info.config[k]; !seen {
				info.config[k] = strings.TrimSpace(v)
			}
			continue
		}
		if f := strings.Fields(l); len(f) >= 4 && strings.HasPrefix(f[0], "Benchmark") {
			info.benchLines++
			name := f[0]
			if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
				name = name[:i]
			}
			if !slices.Contains(info.names, name) {
				info.names = append(info.names, name)
			}
		}
	}
	return info
}

func (b baselineInfo) summary() string {
	commit := b.config["commit"]
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "unknown commit"
	} else {
		commit = "commit " + commit
	}
	return fmt.Sprintf("class %s, %s, %s", b.config["class"], commit, b.counts())
}

func (b baselineInfo) counts() string {
	per := ""
	if len(b.names) > 0 && b.benchLines%len(b.names) == 0 {
		per = fmt.Sprintf(", %d each", b.benchLines/len(b.names))
	}
	return fmt.Sprintf("%d benchmarks (%d results%s)", len(b.names), b.benchLines, per)
}

// relPath is path relative to the working directory when it is below it.
func relPath(e *env, path string) string {
	if rel, err := filepath.Rel(e.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// enoughSamples fails when a gated (benchmark, unit) of data has fewer
// samples than the min_samples cfg gives it on class: a stored-mode
// comparison against it could never reach significance. It names the
// benchmark with the fewest samples, the count and min_samples.
func enoughSamples(data []byte, class string, cfg *config.Config) error {
	side, err := parse.NewReader(bytes.NewReader(data)).ReadSide([]string{"-"})
	if err != nil {
		return err
	}
	type key struct{ name, unit string }
	counts := map[key]int{}
	var order []key
	for i := range side.Results {
		r := &side.Results[i]
		for _, v := range side.Values(r) {
			k := key{r.Name, v.Unit}
			if counts[k] == 0 {
				order = append(order, k)
			}
			counts[k]++
		}
	}
	short, worst := 0, key{}
	need := 0
	for _, k := range order {
		p := cfg.Resolve(k.name, class, k.unit)
		if p.Gate == config.GateOff || counts[k] >= p.MinSamples {
			continue
		}
		if short == 0 || counts[k] < counts[worst] {
			worst, need = k, p.MinSamples
		}
		short++
	}
	if short == 0 {
		return nil
	}
	return fmt.Errorf("%s has %d samples of %s, below min_samples %d (%d gated benchmark units short): "+
		"comparisons against it would be inconclusive; record with --count %d or more, or store it anyway with --force",
		worst.name, counts[worst], worst.unit, need, short, need)
}

// Package join decides whether the result files of a sharded regress check
// are the parts of one run, and joins them into the two sides of one
// comparison.
//
// A check split over n machines (regress check --shard i/n on each) must gate
// as the same check on one machine would: one report, one verdict and one
// multiple-comparison correction over every comparison of every shard. A
// correction per shard would let each shard spend the whole false-alarm
// budget, so identical code would fail the gate about n times as often. So
// the shards are joined before anything is judged, and only when their
// result files show that they are parts of the same run. Anything else is
// refused with the files named:
//
//   - a shard directory without both sides' result files (BaselineFile,
//     CurrentFile);
//   - results of different hardware classes on one side: results are only
//     ever compared within one class;
//   - a missing shard, a shard given twice, shards of different splits
//     (1/2 with 1/3), unsharded results among shards, or a top-level
//     benchmark in two shards: a benchmark counted twice or not at all;
//   - shards run with a different --count, --seed or split (shard-by: a
//     hash of the names, or a deal by cost with a different fingerprint),
//     or of different commits on one side: not one run.
//
// What the files say about their run is what regress check writes in their
// header (runner.RunInfo: count, seed, shard, shard-by, and rounds-done and
// stopped for a run stopped early). A shard that stopped early is joined; the
// joined run is then incomplete with the fewest rounds of any shard, and
// stopped by a signal if any shard was.
package join

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// The files regress check --results writes into its directory.
const (
	BaselineFile = "baseline.bench"
	CurrentFile  = "current.bench"
	ReportFile   = "report.json"
)

// Shard is one shard's directory.
type Shard struct {
	Dir string
	// I and N place the shard: shard I of N; 1 of 1 for an unsharded run.
	I, N int
	// Files are the result files: [0] the baseline's, [1] the current's.
	Files [2]string
	// Header is what the current side's file says about its run (the
	// baseline's says the same about the run).
	Header runner.Header
	// Benchmarks counts the top-level benchmarks of each file.
	Benchmarks [2]int

	tops []string // top-level benchmarks of both files
}

// Set is a joined run.
type Set struct {
	Shards []Shard // in shard order
	Count  int     // rounds asked for (--count)
	Seed   uint64
	// Baseline and Current are the result files that hold at least one
	// result, in shard order: the two sides of the comparison. A shard may
	// hold no benchmark, or only benchmarks one side has.
	Baseline, Current []string
	// Failures are the benchmarks that failed in any shard, with Side set.
	Failures []runner.Failure
	// Rounds is the rounds every shard finished: Count unless Stopped.
	Rounds int
	// Stopped is runner.StopSignal when any shard was interrupted, else
	// runner.StopDeadline when any stopped at its deadline, else "".
	Stopped string
}

// Sides are the names of the sides, in the order of Shard.Files.
var Sides = [2]string{"baseline", "current"}

// Read reads the shard directories and joins them, or says why they are
// not one run. The directories are named in errors as given.
func Read(dirs []string) (*Set, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no shard directories")
	}
	set := &Set{}
	classes := [2]map[string]string{{}, {}} // class → first file with it, per side
	commits := [2]map[string]string{{}, {}}
	for _, dir := range dirs {
		sh := Shard{Dir: dir}
		var headers [2]runner.Header
		for side, name := range []string{BaselineFile, CurrentFile} {
			path := filepath.Join(dir, name)
			sh.Files[side] = path
			data, err := os.ReadFile(path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("%s: no %s (want the directory regress check --shard --results wrote)", dir, name)
				}
				return nil, err
			}
			h, err := runner.ReadHeader(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if h.Run.Count == 0 {
				return nil, fmt.Errorf("%s: no count: line: not the results of an interleaved regress check", path)
			}
			headers[side] = h
			if h.Class != "" {
				if _, ok := classes[side][h.Class]; !ok {
					classes[side][h.Class] = path
				}
			}
			if h.Commit != "" {
				if _, ok := commits[side][h.Commit]; !ok {
					commits[side][h.Commit] = path
				}
			}
			names, err := topLevel(data, path)
			if err != nil {
				return nil, err
			}
			sh.tops = append(sh.tops, names...)
			sh.Benchmarks[side] = len(names)
			for _, f := range runner.ReadFailures(data) {
				f.Side = Sides[side]
				set.Failures = append(set.Failures, f)
			}
		}
		if b, c := headers[0].Run, headers[1].Run; b != c {
			return nil, fmt.Errorf("%s and %s describe different runs (%s; %s)", sh.Files[0], sh.Files[1], describe(b), describe(c))
		}
		sh.Header = headers[1]
		sh.I, sh.N = 1, 1
		if s := sh.Header.Run.Shard; s != "" {
			fmt.Sscanf(s, "%d/%d", &sh.I, &sh.N) // ReadHeader checked the form
		}
		set.Shards = append(set.Shards, sh)
	}
	for side := range Sides {
		if err := one(classes[side], "hardware classes", "results of different machines are not joined"); err != nil {
			return nil, err
		}
		if err := one(commits[side], "commits", "the shards did not measure the same code"); err != nil {
			return nil, err
		}
	}
	if err := set.checkRun(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(set.Shards, func(a, b Shard) int { return a.I - b.I })
	if err := set.checkCover(); err != nil {
		return nil, err
	}
	// Hash shards never share a benchmark; files that were edited or
	// merged might.
	tops := map[string]string{} // top-level benchmark (and pkg) → directory
	for _, sh := range set.Shards {
		for _, key := range sh.tops {
			if other, ok := tops[key]; ok && other != sh.Dir {
				return nil, fmt.Errorf("%s and %s both hold Benchmark%s: the shards overlap", other, sh.Dir, strings.ReplaceAll(key, "\x00", " in package "))
			}
			tops[key] = sh.Dir
		}
	}
	set.Rounds = set.Count
	for _, sh := range set.Shards {
		for side := range Sides {
			if sh.Benchmarks[side] == 0 {
				continue
			}
			if side == 0 {
				set.Baseline = append(set.Baseline, sh.Files[0])
			} else {
				set.Current = append(set.Current, sh.Files[1])
			}
		}
		r := sh.Header.Run
		if r.Stopped == "" {
			continue
		}
		set.Rounds = min(set.Rounds, r.RoundsDone)
		if set.Stopped != runner.StopSignal {
			set.Stopped = r.Stopped
		}
	}
	return set, nil
}

// checkRun checks that the shards ran with the same --count and --seed.
func (set *Set) checkRun() error {
	first := set.Shards[0]
	set.Count, set.Seed = first.Header.Run.Count, first.Header.Run.Seed
	for _, sh := range set.Shards[1:] {
		r := sh.Header.Run
		if r.Count != set.Count {
			return fmt.Errorf("%s ran --count %d but %s --count %d: the shards are not one run", first.Dir, set.Count, sh.Dir, r.Count)
		}
		if r.Seed != set.Seed {
			return fmt.Errorf("%s ran --seed %d but %s --seed %d: the shards are not one run", first.Dir, set.Seed, sh.Dir, r.Seed)
		}
		if a, b := shardBy(first.Header.Run), shardBy(r); a != b {
			return fmt.Errorf("%s was split by %s but %s by %s: the shards did not split the same benchmarks the same way (a different stored baseline, --bench or --shard-by), so some may be in none or in two", first.Dir, a, sh.Dir, b)
		}
	}
	return nil
}

// shardBy is how a shard was chosen: "name" for files that do not say.
func shardBy(r runner.RunInfo) string {
	if r.ShardBy == "" {
		return "name"
	}
	return r.ShardBy
}

// checkCover checks that the shards, sorted, are shards 1 to n of one
// split, each once.
func (set *Set) checkCover() error {
	n := set.Shards[0].N
	for i, sh := range set.Shards {
		switch {
		case sh.Header.Run.Shard == "" && len(set.Shards) > 1:
			return fmt.Errorf("%s holds unsharded results (no shard: line): they overlap every other shard", sh.Dir)
		case sh.N != n:
			return fmt.Errorf("%s is shard %d/%d but %s is shard %d/%d: shards of different splits overlap", set.Shards[0].Dir, set.Shards[0].I, n, sh.Dir, sh.I, sh.N)
		case i > 0 && sh.I == set.Shards[i-1].I:
			return fmt.Errorf("%s and %s are both shard %d/%d: the shards overlap", set.Shards[i-1].Dir, sh.Dir, sh.I, n)
		}
	}
	var missing, have []string
	next := 0
	for i := 1; i <= n; i++ {
		if next < len(set.Shards) && set.Shards[next].I == i {
			have = append(have, fmt.Sprintf("%d/%d in %s", i, n, set.Shards[next].Dir))
			next++
		} else {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		what := "shard"
		if len(missing) > 1 {
			what = "shards"
		}
		return fmt.Errorf("missing %s %s (have %s)", what, strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	return nil
}

// one checks that values (value → the first file with it) holds at most
// one value.
func one(values map[string]string, what, why string) error {
	if len(values) < 2 {
		return nil
	}
	var list []string
	for v, file := range values {
		list = append(list, v+" in "+file)
	}
	slices.Sort(list)
	return fmt.Errorf("%s differ: %s: %s", what, strings.Join(list, ", "), why)
}

// describe renders a run's header for messages.
func describe(r runner.RunInfo) string {
	s := fmt.Sprintf("count %d, seed %d", r.Count, r.Seed)
	if r.Shard != "" {
		s += ", shard " + r.Shard
	}
	if r.Stopped != "" {
		s += fmt.Sprintf(", %s after %d rounds", r.Stopped, r.RoundsDone)
	}
	return s
}

// topLevel returns the distinct top-level benchmarks of a result file, as
// "X" or "X\x00pkg" when a pkg: line is in force. Syntax errors are left to
// the comparison, which reads every file strictly.
func topLevel(data []byte, path string) ([]string, error) {
	rd := benchfmt.NewReader(bytes.NewReader(data), path)
	seen := map[string]bool{}
	var out []string
	for rd.Scan() {
		r, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		key := string(r.Name.Base())
		if pkg := r.GetConfig("pkg"); pkg != "" {
			key += "\x00" + pkg
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

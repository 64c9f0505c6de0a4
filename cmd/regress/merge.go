package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const mergeSynopsis = "[--out OUT] FILE..."

const mergeHelp = `Combines result files (the shards of regress run --shard i/n) into one.
Each file keeps its own configuration lines: keys set by an earlier file are
cleared before the next one, so nothing leaks from one shard to another.
Every file must parse, and all must name the same hardware class (or none):
results of different machines are never mixed. Shards must be of one split
(their shard-by lines: by name, or the same deal by cost), since shards of
two deals can miss a benchmark or hold it twice.

Exit codes: 0 merged; 2 a file is unreadable, or the classes or splits
differ; 3 no file holds any result.
`

func newMergeFlags() (*flag.FlagSet, *string) {
	fs := newFlagSet("merge")
	out := new(string)
	fs.StringVar(out, "out", "", "`FILE` write the merged file here (atomically) instead of standard output; - is standard output")
	alias(fs, "o", "out")
	return fs, out
}

func runMerge(e *env, args []string) int {
	fs, outp := newMergeFlags()
	fail := failer(e, "merge")
	files, code, ok := parseArgs(e, "merge", fs, args)
	if !ok {
		return code
	}
	out := *outp
	if len(files) == 0 {
		return fail(usagef("no files to merge"))
	}
	parts := make([][]byte, len(files))
	class, classFile := "", ""
	split, splitFile := "", ""
	results := false
	for i, f := range files {
		path := absPath(e, f)
		// A shard may hold no benchmark (an empty share of the hash); any
		// other problem stops the merge.
		if _, err := parse.NewReader(nil).ReadSide([]string{path}); err == nil {
			results = true
		} else if !strings.HasSuffix(err.Error(), ": no benchmark results") {
			return fail(relErr(err, e.dir))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fail(relErr(err, e.dir))
		}
		classes := runner.Classes(data)
		switch {
		case len(classes) > 1:
			return fail(fmt.Errorf("%s: mixes hardware classes %s", f, strings.Join(classes, ", ")))
		case i == 0:
			if len(classes) == 1 {
				class = classes[0]
			}
			classFile = f
		case len(classes) == 0 && class != "" || len(classes) == 1 && classes[0] != class:
			got := "no class"
			if len(classes) == 1 {
				got = "class " + classes[0]
			}
			want := "no class"
			if class != "" {
				want = "class " + class
			}
			return fail(fmt.Errorf("%s has %s but %s has %s: results of different machines are not merged", f, got, classFile, want))
		}
		switch by := shardSplit(data); {
		case by == "":
		case split == "":
			split, splitFile = by, f
		case by != split:
			return fail(fmt.Errorf("%s was split by %s but %s by %s: not shards of one split (a different stored baseline, --bench or --shard-by), so a benchmark could be in none or in two", splitFile, split, f, by))
		}
		parts[i] = data
	}
	if !results {
		fmt.Fprintf(e.stderr, "%s merge: none of the %d files holds a benchmark result\n", programName, len(files))
		return exitNoData
	}
	write := func(w io.Writer) error { return runner.Concat(w, parts...) }
	var err error
	if out == "" || out == "-" {
		err = write(e.stdout)
	} else if err = writeAtomic(absPath(e, out), write); err != nil {
		err = fmt.Errorf("--out %s: %w", out, err)
	}
	if err != nil {
		return fail(err)
	}
	return exitPass
}

// shardSplit is how the shards in a result file were split: its shard-by
// lines (all of them, when it is itself a merge), "name" for a shard from
// before shard-by was written, "" when it holds no shard.
func shardSplit(data []byte) string {
	var by []string
	shard := false
	for l := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(l, "shard-by: "); ok {
			if v = strings.TrimSpace(v); !slices.Contains(by, v) {
				by = append(by, v)
			}
		}
		shard = shard || strings.HasPrefix(l, "shard: ")
	}
	switch {
	case len(by) > 0:
		return strings.Join(by, " and ")
	case shard:
		return "name"
	}
	return ""
}

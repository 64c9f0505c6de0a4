package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/render/html"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

const reportSynopsis = "--out OUT.html [flags] [REPORT.json]"

const reportHelp = `Renders one self-contained HTML page (inline SVG and CSS, no scripts, no
requests; readable without JavaScript) that leads with what needs
attention: the verdict of REPORT.json (regress check/compare --format json),
then its regressed and improved comparisons, worst first, each benchmark's
rows followed by its trend chart from the history (as regress history
builds it: steps marked, hover titles naming the commit and value of each
point), then everything else grouped by kernel family and folded, with a
pct-copy bar chart per kernel.

Without REPORT.json the page shows the history alone; with --no-history,
the report alone. When REPORT.json is given and no history flag is, the
history is that of the report's class, and the page goes without it if
there is none.

Exit codes: 0 written; 2 usage or input error; 3 neither a history nor a
report to show.
`

// reportFlags are report's flags: the history's, and the page's.
type reportFlags struct {
	h           historyFlags
	out, config string
	noHistory   bool
}

func newReportFlags() (*flag.FlagSet, *reportFlags) {
	fs := newFlagSet("report")
	r := &reportFlags{}
	r.h.register(fs)
	fs.StringVar(&r.out, "out", "", "`FILE` write the HTML page to this file (required)")
	alias(fs, "html", "out")
	fs.StringVar(&r.config, "config", "", "`FILE` benchmarks.yaml to use for the history (directions and gates; default: the one at the repository root)")
	fs.BoolVar(&r.noHistory, "no-history", false, "show the report alone")
	return fs, r
}

func runReport(e *env, args []string) int {
	fs, rf := newReportFlags()
	h := &rf.h
	fail := func(err error) int {
		code := failer(e, "report")(relErr(interrupted(err), e.dir))
		if errors.Is(err, errNoHistory) {
			return exitNoData
		}
		return code
	}
	pos, code, ok := parseArgs(e, "report", fs, args)
	if !ok {
		return code
	}
	out, configPath, noHistory := rf.out, rf.config, rf.noHistory
	explicit := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "class", "since", "ref", "baselines-ref", "dir":
			explicit = true
		}
	})
	switch {
	case out == "":
		return fail(usagef("--out OUT.html is required"))
	case len(pos) > 1:
		return fail(usagef("unexpected argument %q", pos[1]))
	case noHistory && explicit:
		return fail(usagef("--no-history goes without the history flags"))
	case noHistory && len(pos) == 0:
		return fail(usagef("--no-history needs a REPORT.json"))
	}
	var rep *report.Report
	if len(pos) == 1 {
		f, err := os.Open(absPath(e, pos[0]))
		if err != nil {
			return fail(fmt.Errorf("%s: %w", pos[0], unwrapPathErr(err)))
		}
		rep, err = report.Read(f, pos[0])
		f.Close()
		if err != nil {
			return fail(err)
		}
		if h.class == "" {
			h.class = rep.Current.Config["class"]
		}
	}
	var hist *history.History
	if !noHistory {
		cfg, err := loadConfig(e, configPath)
		if err != nil {
			return fail(err)
		}
		ctx, stop := notifyContext()
		hist, err = h.load(ctx, e, history.Options{Config: cfg})
		stop()
		if err != nil {
			if explicit || rep == nil {
				return fail(err)
			}
			fmt.Fprintf(e.stderr, "%s report: no history on the page: %v\n", programName, relErr(err, e.dir))
			hist = nil
		}
	}
	if err := writeAtomic(absPath(e, out), func(w io.Writer) error { return html.Write(w, hist, rep) }); err != nil {
		return fail(fmt.Errorf("--out %s: %w", out, err))
	}
	what := "the report"
	switch {
	case hist != nil && rep != nil:
		what = fmt.Sprintf("%d trend charts and the report", countBenchmarks(hist))
	case hist != nil:
		what = fmt.Sprintf("%d trend charts", countBenchmarks(hist))
	}
	fmt.Fprintf(e.stderr, "%s report: wrote %s (%s)\n", programName, out, what)
	return exitPass
}

// countBenchmarks is the number of distinct benchmarks of a history: one
// trend chart each.
func countBenchmarks(h *history.History) int {
	seen := map[string]bool{}
	for _, s := range h.Series {
		seen[s.Name] = true
	}
	return len(seen)
}

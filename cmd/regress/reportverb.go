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

const reportSynopsis = "--html OUT.html [REPORT.json] [--class C] [--since REF] [--baselines-ref REF | --dir DIR] [--no-history]"

const reportHelp = `Renders one self-contained HTML page (inline SVG and CSS, no scripts, no
requests; readable without JavaScript): a trend chart per benchmark from
the history (as regress history builds it), with its steps marked and hover
titles naming the commit and value of each point; the table of the
comparison in REPORT.json (regress check/compare --format json) with
verdict colours; and a pct-copy bar chart per kernel.

Without REPORT.json the page shows the history alone; with --no-history,
the report alone. When REPORT.json is given and no history flag is, the
history is that of the report's class, and the page goes without it if
there is none.

Exit codes: 0 written; 2 usage or input error; 3 neither a history nor a
report to show.
`

func runReport(e *env, args []string) int {
	fs := newFlagSet("report")
	var h historyFlags
	h.register(fs)
	var out, configPath string
	var noHistory bool
	fs.StringVar(&out, "html", "", "write the HTML page to this file (required)")
	fs.StringVar(&configPath, "config", "", "benchmarks.yaml to use for the history (directions and gates)")
	fs.BoolVar(&noHistory, "no-history", false, "show the report alone")
	fail := func(err error) int {
		fmt.Fprintf(e.stderr, "%s report: %v\n", programName, relErr(interrupted(err), e.dir))
		if errors.Is(err, errUsage) {
			fmt.Fprintf(e.stderr, "usage: %s report %s (see -h)\n", programName, reportSynopsis)
		}
		if errors.Is(err, errNoHistory) {
			return exitNoData
		}
		return exitError
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(fs, e.stdout, "report", reportSynopsis)
		fmt.Fprint(e.stdout, "\n"+reportHelp)
		return exitPass
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "class", "since", "ref", "baselines-ref", "dir":
			explicit = true
		}
	})
	switch {
	case err != nil:
		return fail(fmt.Errorf("%w: %w", err, errUsage))
	case out == "":
		return fail(fmt.Errorf("--html OUT.html is required: %w", errUsage))
	case len(pos) > 1:
		return fail(fmt.Errorf("unexpected argument %q: %w", pos[1], errUsage))
	case noHistory && explicit:
		return fail(fmt.Errorf("--no-history goes without the history flags: %w", errUsage))
	case noHistory && len(pos) == 0:
		return fail(fmt.Errorf("--no-history needs a REPORT.json: %w", errUsage))
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
		return fail(fmt.Errorf("--html %s: %w", out, err))
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

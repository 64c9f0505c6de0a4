package github

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Publication is everything Publish does with one report.
type Publication struct {
	Report *report.Report
	// ReportPath is the JSON report's path, for the report output.
	ReportPath string
	// Target is the repository, pull request and head commit.
	Target Target
	// Class keys the sticky comment; default the report's class.
	Class string
	// Comment posts or updates the sticky comment (pull requests only).
	Comment bool
	// StatusContext, when set, sets a commit status of that context on the
	// head commit.
	StatusContext string
	// ServerURL is GITHUB_SERVER_URL, for links.
	ServerURL string
	// SummaryPath (GITHUB_STEP_SUMMARY) and OutputPath (GITHUB_OUTPUT) are
	// written when set.
	SummaryPath, OutputPath string
}

// Outcome is what Publish did.
type Outcome struct {
	PR      int
	Comment Result
	Status  bool // a status was set
	Summary int  // bytes appended to the job summary
}

// Publish writes the job summary, posts the sticky comment and the commit
// status as asked, and writes the step outputs (verdict, regressions,
// comment-url, report) last, whatever failed. c may be nil when neither a
// comment nor a status is asked for.
func Publish(ctx context.Context, c *Client, p Publication) (Outcome, error) {
	var out Outcome
	var errs []error
	r := p.Report
	class := p.Class
	if class == "" {
		class = comment.ClassOf(r)
	}
	class = comment.Slug(class)
	opts := comment.Options{Class: class, HeadSHA: p.Target.HeadSHA, ServerURL: p.ServerURL,
		Repository: p.Target.Repo, RunURL: p.Target.RunURL(p.ServerURL)}
	logf := func(format string, args ...any) {
		if c != nil {
			c.logf(format, args...)
		}
	}

	if p.SummaryPath != "" {
		budget, err := SummaryBudget(p.SummaryPath)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("job summary: %w", err))
		case budget < 4096:
			logf("the job summary is full (%d bytes left of 1 MiB); not adding the report", budget)
		default:
			o := opts
			o.Budget = budget - 1
			text := comment.Summary(r, o)
			if err := AppendSummary(p.SummaryPath, text); err != nil {
				errs = append(errs, err)
			} else {
				out.Summary = len(text)
			}
		}
	}

	if (p.Comment || p.StatusContext != "") && c == nil {
		errs = append(errs, errors.New("no GitHub client: set GITHUB_TOKEN (or REGRESS_GITHUB_TOKEN)"))
	} else if p.Comment {
		out.PR = p.Target.PR
		if out.PR == 0 && p.Target.NeedsLookup() {
			n, err := c.FindPR(ctx, p.Target)
			if err != nil {
				errs = append(errs, err)
			}
			out.PR = n
		}
		switch {
		case out.PR != 0:
			res, err := c.Upsert(ctx, p.Target.Repo, out.PR, class, p.Target.HeadSHA, comment.Body(r, opts))
			if err != nil {
				errs = append(errs, err)
				break
			}
			out.Comment = res
			switch res.Action {
			case Created, Updated:
				c.logf("%s the %s comment on #%d: %s", res.Action, class, out.PR, res.URL)
			default:
				c.logf("left the %s comment on #%d %s: %s (%s)", class, out.PR, res.Action, res.Reason, res.URL)
			}
		case p.Target.NeedsLookup():
			// FindPR failed; its error is recorded.
		case p.Target.Event == "push":
			c.logf("a push has no pull request to comment on")
		default:
			errs = append(errs, fmt.Errorf("no pull request to comment on (event %q): give --pr, or --comment=false", p.Target.Event))
		}
	}

	if p.StatusContext != "" && c != nil {
		if p.Target.HeadSHA == "" {
			errs = append(errs, errors.New("no head commit for the status: give --sha"))
		} else if err := c.SetStatus(ctx, p.Target.Repo, p.Target.HeadSHA, p.StatusContext,
			comment.StatusState(r), comment.StatusDescription(r), opts.RunURL); err != nil {
			errs = append(errs, err)
		} else {
			out.Status = true
			c.logf("set status %s=%s on %s", p.StatusContext, comment.StatusState(r), short(p.Target.HeadSHA))
		}
	}

	if p.OutputPath != "" {
		err := WriteOutputs(p.OutputPath, []Output{
			{"verdict", r.Verdict},
			{"regressions", strconv.Itoa(len(r.Failing()))},
			{"comment-url", out.Comment.URL},
			{"report", p.ReportPath},
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
	ghpub "github.com/kernelwatch/kernelwatch/regress/publish/github"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

const commentSynopsis = "[flags] REPORT.json | --from-run [flags]"

const commentHelp = `Publishes a JSON report (regress check/compare --format json) on GitHub:

  - the sticky pull-request comment of the report's hardware class, created
    once and edited in place (never someone else's comment; not touched when
    unchanged or when it already reports a newer head commit);
  - the full report appended to $GITHUB_STEP_SUMMARY;
  - the step outputs verdict, regressions (comparisons failing the gate),
    comment-url and report written to $GITHUB_OUTPUT;
  - with --status-context, a commit status on the pull request's head commit.

The pull request and its head commit come from the flags, else from the
event ($GITHUB_EVENT_NAME, $GITHUB_EVENT_PATH: pull_request,
pull_request_target, workflow_run, push), else from an API lookup by head
commit and head repository (a fork's pull request seen from workflow_run).
The token comes from $REGRESS_GITHUB_TOKEN or $GITHUB_TOKEN only; the API
from $GITHUB_API_URL (GitHub Enterprise Server: https://HOST/api/v3).

The report may come from untrusted code (a fork's artifact): it is read as
a stream within size and count limits, validated against the schema, and
every text from it is escaped.

--from-run publishes the reports of the pull request's run that triggered
this workflow_run event (the publishing workflow, regress-comment.yml),
fetched from its artifacts through the API ($GITHUB_TOKEN with actions:
read). Only the allow-listed artifact names count, at most one report each:

  regress-report-cpu  status kernelwatch/cpu, classes cpu-*
  regress-report-gpu  status kernelwatch/gpu, classes gpu-*; from a fork's
                      run only when its GPU job (--approval-job) ran and the
                      run holds an approval of --approval-environment

Each zip must hold one report.json within the limits, of a class its name
allows. The pull request, head commit and status context come from the
event and the allow-list, never from the artifact or a flag. If any
artifact is refused, nothing is published and the exit code is 2.

Exit codes: the report's (0 pass, 1 fail, 3 nothing comparable or
inconclusive, 2 a run cut short: see regress help check) once everything
asked for is published; 2 when the report is invalid or publishing failed.
`

// publishFlags configure what is published where.
type publishFlags struct {
	repo, sha, headRepo string
	pr                  int
	class               string
	comment, summary    bool
	statusContext       string
	botLogin            string
	timeout, maxWait    time.Duration
	dryRun              bool
}

// githubDefaults are the publish settings of `regress comment` without
// flags, and of --github on the verbs that produce a report: everything
// from the environment, the comment and the job summary on, no status.
func githubDefaults() publishFlags {
	return publishFlags{comment: true, summary: true, timeout: 30 * time.Second, maxWait: 2 * time.Minute}
}

func (p *publishFlags) register(fs *flag.FlagSet) {
	d := githubDefaults()
	fs.StringVar(&p.repo, "repo", "", "`OWNER/NAME` repository owner/name (default $GITHUB_REPOSITORY or the event's)")
	fs.IntVar(&p.pr, "pr", 0, "`N` pull request number (default: from the event, else looked up by head commit)")
	fs.StringVar(&p.sha, "sha", "", "`SHA` the pull request's head commit the report is for (default: from the event)")
	fs.StringVar(&p.headRepo, "head-repo", "", "`OWNER/NAME` owner/name of the head repository, for the lookup (default: from the event)")
	fs.StringVar(&p.class, "class", "", "`CLASS` hardware class keying the sticky comment (default: the report's class)")
	fs.BoolVar(&p.comment, "comment", d.comment, "post or update the sticky pull-request comment")
	fs.BoolVar(&p.summary, "summary", d.summary, "append the report to $GITHUB_STEP_SUMMARY and write $GITHUB_OUTPUT, when set")
	fs.StringVar(&p.statusContext, "status-context", "", "`CONTEXT` also set a commit status with this context on the head commit")
	fs.StringVar(&p.botLogin, "bot-login", "", "`LOGIN` login our comments carry when the token is an installation token (default "+ghpub.DefaultBotLogin+"; a GitHub App: APP-SLUG[bot])")
	fs.DurationVar(&p.timeout, "timeout", d.timeout, "`D` time limit of each API request attempt")
	fs.DurationVar(&p.maxWait, "max-wait", d.maxWait, "`D` most time to spend waiting on retries, rate limits included")
	fs.BoolVar(&p.dryRun, "dry-run", false, "print the comment and the status description instead of publishing anything")
}

// commentFlags are comment's flags: what is published where, and the run
// that --from-run publishes.
type commentFlags struct {
	p        publishFlags
	fromRun  bool
	approval ghpub.Approval
}

func newCommentFlags() (*flag.FlagSet, *commentFlags) {
	fs := newFlagSet("comment")
	c := &commentFlags{approval: ghpub.DefaultApproval}
	c.p.register(fs)
	fs.BoolVar(&c.fromRun, "from-run", false, "publish the allow-listed report artifacts of the workflow_run event's run instead of a report file")
	fs.StringVar(&c.approval.Job, "approval-job", c.approval.Job, "`JOB` with --from-run: the job of a fork's run whose approval a GPU report needs")
	fs.StringVar(&c.approval.Environment, "approval-environment", c.approval.Environment, "`NAME` with --from-run: the environment whose approval a fork's GPU report needs")
	return fs, c
}

func runComment(e *env, args []string) int {
	fs, c := newCommentFlags()
	fail := failer(e, "comment")
	pos, code, ok := parseArgs(e, "comment", fs, args)
	if !ok {
		return code
	}
	p, approval := c.p, c.approval
	if c.fromRun {
		given := []string{}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "repo", "pr", "sha", "head-repo", "class", "status-context":
				given = append(given, "--"+f.Name)
			}
		})
		switch {
		case len(pos) > 0:
			return fail(usagef("--from-run takes no report file"))
		case len(given) > 0:
			return fail(usagef("--from-run takes the target from the event and the allow-list, not %s", strings.Join(given, ", ")))
		}
		return publishRun(e, p, approval, fail)
	}
	if len(pos) != 1 {
		return fail(usagef("want exactly one report file, got %d", len(pos)))
	}
	r, path, err := readReport(e, pos[0])
	if err != nil {
		return fail(err)
	}
	if err := publishReport(e, r, path, p); err != nil {
		return fail(err)
	}
	return r.ExitCode()
}

// readReport reads and validates a JSON report ("-" is standard input)
// as a stream, within report.DefaultLimits: a hostile report is refused
// where it breaks a rule or a limit, holding one comparison at a time.
func readReport(e *env, name string) (*report.Report, string, error) {
	var rd io.Reader = e.stdin
	path := name
	if name != "-" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, "", relErr(err, e.dir)
		}
		defer f.Close()
		rd = f
	}
	r, err := report.Read(rd, name)
	if err != nil {
		return nil, "", err
	}
	if name == "-" {
		path = ""
	}
	return r, path, nil
}

// publishReport publishes r as p says, with the token and the GitHub
// Actions settings from the environment. Progress goes to standard error,
// with the token, should it ever appear, replaced by ***.
func publishReport(e *env, r *report.Report, reportPath string, p publishFlags) error {
	token := ghpub.TokenFrom(e.getenv)
	logw := &redactWriter{w: e.stderr, secret: token}
	target, err := ghpub.TargetFrom(e.getenv, p.repo, p.pr, p.sha, p.headRepo)
	if err != nil {
		return err
	}
	server := e.getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	pub := ghpub.Publication{Report: r, ReportPath: reportPath, Target: target, Class: p.class,
		Comment: p.comment, StatusContext: p.statusContext, ServerURL: server}
	if p.summary {
		pub.SummaryPath, pub.OutputPath = e.getenv("GITHUB_STEP_SUMMARY"), e.getenv("GITHUB_OUTPUT")
	}
	if p.dryRun {
		return dryRun(e, pub)
	}
	var client *ghpub.Client
	if pub.Comment || pub.StatusContext != "" {
		client, err = ghpub.New(ghpub.Config{Token: token, APIURL: e.getenv("GITHUB_API_URL"), BotLogin: p.botLogin,
			Timeout: p.timeout, MaxWait: p.maxWait, Log: prefixWriter{logw, programName + " comment: "}})
		if err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// Bound the whole publication: every wait is capped, this is the backstop.
	ctx, cancel := context.WithTimeout(ctx, 4*p.maxWait+10*p.timeout+time.Minute)
	defer cancel()
	_, err = ghpub.Publish(ctx, client, pub)
	if err != nil {
		return errors.New(redact(err.Error(), token))
	}
	return nil
}

// publishRun publishes the allow-listed report artifacts of the
// workflow_run event's run (--from-run): all of them, or nothing when any
// is refused. It returns the exit code: the worst report's, 2 when
// anything failed.
func publishRun(e *env, p publishFlags, ap ghpub.Approval, fail func(error) int) int {
	name, path := e.getenv("GITHUB_EVENT_NAME"), e.getenv("GITHUB_EVENT_PATH")
	if name != "workflow_run" || path == "" {
		return fail(fmt.Errorf("--from-run publishes the run of a workflow_run event; this is %q (GITHUB_EVENT_NAME)", name))
	}
	t, err := ghpub.ReadEvent(name, path)
	if err != nil {
		return fail(err)
	}
	if t.HeadRepo == "" || t.RunID == 0 || !comment.IsRepository(t.Repo) {
		return fail(errors.New("the workflow_run event names no run, repository or head repository"))
	}
	token := ghpub.TokenFrom(e.getenv)
	logw := prefixWriter{&redactWriter{w: e.stderr, secret: token}, programName + " comment: "}
	client, err := ghpub.New(ghpub.Config{Token: token, APIURL: e.getenv("GITHUB_API_URL"), BotLogin: p.botLogin,
		Timeout: p.timeout, MaxWait: p.maxWait, Log: logw})
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 4*p.maxWait+20*p.timeout+time.Minute)
	defer cancel()
	reports, err := client.RunReports(ctx, t, ap)
	if err != nil {
		return fail(fmt.Errorf("run %d: nothing published: %w", t.RunID, errors.New(redact(err.Error(), token))))
	}
	if len(reports) == 0 {
		fmt.Fprintf(logw, "run %d has no report artifacts\n", t.RunID)
		return exitPass
	}
	// One lookup of a fork's pull request serves every report; without it
	// the statuses are still set, and the command fails.
	code := exitPass
	commentOn := p.comment
	if p.comment && t.NeedsLookup() && !p.dryRun {
		n, err := client.FindPR(ctx, t)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s comment: %s\n", programName, redact(err.Error(), token))
			commentOn, code = false, exitError
		}
		t.PR = n
	}
	server := e.getenv("GITHUB_SERVER_URL")
	if server == "" {
		server = "https://github.com"
	}
	for _, rr := range reports {
		pub := ghpub.Publication{Report: rr.Report, Target: t, Class: rr.Class, Comment: commentOn,
			StatusContext: rr.Artifact.StatusContext, ServerURL: server}
		if p.summary {
			pub.SummaryPath = e.getenv("GITHUB_STEP_SUMMARY") // no step outputs: one step, several reports
		}
		if p.dryRun {
			dryRun(e, pub)
		} else if _, err := ghpub.Publish(ctx, client, pub); err != nil {
			fmt.Fprintf(e.stderr, "%s comment: %s: %s\n", programName, rr.Artifact.Name, redact(err.Error(), token))
			code = max(code, exitError)
			continue
		}
		code = max(code, rr.Report.ExitCode())
	}
	return code
}

// dryRun prints what would be published.
func dryRun(e *env, pub ghpub.Publication) error {
	class := pub.Class
	if class == "" {
		class = comment.ClassOf(pub.Report)
	}
	opts := comment.Options{Class: class, HeadSHA: pub.Target.HeadSHA, ServerURL: pub.ServerURL,
		Repository: pub.Target.Repo, RunURL: pub.Target.RunURL(pub.ServerURL)}
	fmt.Fprintf(e.stdout, "== comment on %s#%d (class %s)\n%s", pub.Target.Repo, pub.Target.PR, comment.Slug(class), comment.Body(pub.Report, opts))
	fmt.Fprintf(e.stdout, "== status on %s: %s: %s\n", pub.Target.HeadSHA, comment.StatusState(pub.Report), comment.StatusDescription(pub.Report))
	return nil
}

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "***")
}

// redactWriter replaces secret in everything written through it.
type redactWriter struct {
	w      io.Writer
	secret string
}

func (r *redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redact(string(p), r.secret)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// prefixWriter starts every write with prefix (the client writes whole lines).
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

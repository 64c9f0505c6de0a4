package github

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// The reports of a pull request's run reach the publishing workflow as
// artifacts, and the pull request's own workflow names and fills them: a
// fork controls regress-pr.yml in its pull request, so any of its jobs can
// upload an artifact of any name holding any report. What an artifact may
// publish is therefore decided here, never by the artifact: its name must
// be on the allow-list, which fixes the status context it sets and the
// hardware classes its report may be of (the sticky comment is keyed on the
// class); and a GPU report of a fork's run is published only when the run's
// GPU job is confirmed through the API to have run after a maintainer
// approved the GPU environment — the one step of that run a fork cannot
// forge.

// ReportArtifact is one name on the allow-list of report artifacts, and
// what a report under that name may publish.
type ReportArtifact struct {
	// Name is the artifact's name.
	Name string
	// StatusContext is the commit status the report sets.
	StatusContext string
	// ClassPrefix starts every hardware class the report may be of.
	ClassPrefix string
	// NeedsApproval: from a fork's run, the report is published only when
	// ConfirmApproval confirms the run's approved GPU job.
	NeedsApproval bool
}

// ReportArtifacts is the allow-list: the artifacts regress-pr.yml uploads.
// A run publishes at most one report of each, so at most len(ReportArtifacts)
// comments and statuses, however many artifacts it made.
var ReportArtifacts = []ReportArtifact{
	{Name: "regress-report-cpu", StatusContext: "kernelwatch/cpu", ClassPrefix: "cpu-"},
	{Name: "regress-report-gpu", StatusContext: "kernelwatch/gpu", ClassPrefix: "gpu-", NeedsApproval: true},
}

// Approval names what stands behind a report that NeedsApproval: the job
// of the pull request's workflow that ran the GPU check (a matrix job's
// runs are named "JOB (…)") and the environment whose required reviewers
// hold it until a maintainer approves.
type Approval struct {
	Job, Environment string
}

// DefaultApproval is regress-pr.yml's GPU job and environment.
var DefaultApproval = Approval{Job: "gpu", Environment: "regress-gpu"}

// Limits on what RunReports reads.
const (
	// MaxArtifactZip bounds one artifact's zip, as listed and as
	// downloaded.
	MaxArtifactZip = 20 << 20
	// MaxRunArtifacts bounds the artifacts of one run; a run with more
	// (a GPU check of 99 shards makes 101) is refused.
	MaxRunArtifacts = 300
	// reportFile is the one file a report artifact holds.
	reportFile = "report.json"
)

// RunReport is one accepted report of a run.
type RunReport struct {
	Artifact ReportArtifact
	Report   *report.Report
	// Class is the report's hardware class slug, which keys its sticky
	// comment; it starts with Artifact.ClassPrefix.
	Class string
}

// RunReports returns the reports of the pull request's run that t names
// (the triggering run of a workflow_run event), one per allow-listed
// artifact name, after every check: the run's artifact count, each zip's
// size as listed and as downloaded, one regular file report.json in it,
// the report's schema and limits (report.Read), its classes against the
// name's, and for a fork's run the approval behind a GPU report. When any
// artifact fails a check, it returns no report at all and an error naming
// every refusal, so that nothing of a forged run is published.
func (c *Client) RunReports(ctx context.Context, t Target, ap Approval) ([]RunReport, error) {
	if t.Event != "workflow_run" || t.RunID <= 0 {
		return nil, fmt.Errorf("the reports of a run come from a workflow_run event (this is %q)", t.Event)
	}
	owner, name, err := splitRepo(t.Repo)
	if err != nil {
		return nil, err
	}
	all, err := c.listArtifacts(ctx, owner, name, t.RunID)
	if err != nil {
		return nil, err
	}
	picked, ignored := pickArtifacts(all, t.RunID)
	if len(ignored) > 0 {
		c.logf("ignoring %d artifacts of run %d named like reports but not on the allow-list: %s", len(ignored), t.RunID, quoteSome(ignored, 5))
	}
	var out []RunReport
	var errs []error
	for _, a := range ReportArtifacts {
		art := picked[a.Name]
		if art == nil {
			continue
		}
		rr, err := c.runReport(ctx, t, owner, name, a, art, ap)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a.Name, err))
			continue
		}
		out = append(out, rr)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// runReport checks, downloads and decodes one artifact.
func (c *Client) runReport(ctx context.Context, t Target, owner, name string, a ReportArtifact, art *gh.Artifact, ap Approval) (RunReport, error) {
	if n := art.GetSizeInBytes(); n > MaxArtifactZip || n < 0 {
		return RunReport{}, fmt.Errorf("%d bytes; the limit is %d", n, MaxArtifactZip)
	}
	if a.NeedsApproval && t.Fork {
		if err := c.ConfirmApproval(ctx, t.Repo, t.RunID, ap); err != nil {
			return RunReport{}, fmt.Errorf("not published for a fork's pull request: %w", err)
		}
	}
	zipped, err := c.downloadArtifact(ctx, owner, name, art.GetID())
	if err != nil {
		return RunReport{}, err
	}
	r, err := readReportZip(zipped, a.Name)
	if err != nil {
		return RunReport{}, err
	}
	class, err := CheckClass(r, a)
	if err != nil {
		return RunReport{}, err
	}
	return RunReport{Artifact: a, Report: r, Class: class}, nil
}

// CheckClass checks that every hardware class r names is one an artifact
// of a's name may hold, and returns the class slug that keys its comment.
// A report without a class is refused: its comment key would be chosen by
// nobody.
func CheckClass(r *report.Report, a ReportArtifact) (string, error) {
	if r.Current.Config["class"] == "" && r.Baseline.Config["class"] == "" {
		return "", fmt.Errorf("the report names no hardware class; %s may only hold classes %s*", a.Name, a.ClassPrefix)
	}
	for _, cfg := range []map[string]string{r.Current.Config, r.Baseline.Config} {
		if c, ok := cfg["class"]; ok && !strings.HasPrefix(comment.Slug(c), a.ClassPrefix) {
			return "", fmt.Errorf("the report is of class %q; %s may only hold classes %s*", truncateRunes(c, 100), a.Name, a.ClassPrefix)
		}
	}
	return comment.ClassOf(r), nil
}

// listArtifacts lists the run's artifacts, at most MaxRunArtifacts.
func (c *Client) listArtifacts(ctx context.Context, owner, name string, runID int64) ([]*gh.Artifact, error) {
	var all []*gh.Artifact
	opts := &gh.ListOptions{PerPage: 100}
	for page := 1; ; page++ {
		opts.Page = page
		list, resp, err := c.gh.Actions.ListWorkflowRunArtifacts(ctx, owner, name, runID, opts)
		if err != nil {
			return nil, c.explain(fmt.Sprintf("list the artifacts of run %d", runID), "actions: read", err)
		}
		if n := list.GetTotalCount(); n > MaxRunArtifacts {
			return nil, fmt.Errorf("run %d has %d artifacts; more than %d is not a run of regress-pr.yml", runID, n, MaxRunArtifacts)
		}
		all = append(all, list.Artifacts...)
		if len(all) > MaxRunArtifacts {
			return nil, fmt.Errorf("run %d lists more than %d artifacts", runID, MaxRunArtifacts)
		}
		if resp.NextPage == 0 {
			return all, nil
		}
	}
}

// pickArtifacts returns, for each name on the allow-list, the newest
// unexpired artifact of the run, and the names of the other artifacts that
// look like reports.
func pickArtifacts(all []*gh.Artifact, runID int64) (map[string]*gh.Artifact, []string) {
	picked := map[string]*gh.Artifact{}
	var ignored []string
	for _, art := range all {
		n := art.GetName()
		allowed := slices.ContainsFunc(ReportArtifacts, func(a ReportArtifact) bool { return a.Name == n })
		switch {
		case !allowed:
			if strings.HasPrefix(n, "regress-report") {
				ignored = append(ignored, n)
			}
		case art.GetExpired():
		case art.WorkflowRun != nil && art.WorkflowRun.GetID() != runID:
			// Listed for the run but made by another: not this run's.
		case picked[n] == nil || art.GetID() > picked[n].GetID():
			picked[n] = art // a re-run's upload is the newer
		}
	}
	return picked, ignored
}

// downloadArtifact asks the API for the artifact's download address and
// fetches the zip from there, at most MaxArtifactZip bytes. The address is
// signed; the token is not sent to it.
func (c *Client) downloadArtifact(ctx context.Context, owner, name string, id int64) ([]byte, error) {
	u, _, err := c.gh.Actions.DownloadArtifact(ctx, owner, name, id, 0)
	if err != nil {
		return nil, c.explain(fmt.Sprintf("download artifact %d", id), "actions: read", err)
	}
	if u == nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("artifact %d: the API gave no download address", id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.download.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the signed address is not for the log
		}
		return nil, fmt.Errorf("download artifact %d: %v", id, c.redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download artifact %d: %s", id, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArtifactZip+1))
	if err != nil {
		return nil, fmt.Errorf("download artifact %d: %v", id, err)
	}
	if len(data) > MaxArtifactZip {
		return nil, fmt.Errorf("download of artifact %d is over %d bytes", id, MaxArtifactZip)
	}
	return data, nil
}

// readReportZip decodes the one file report.json of an artifact's zip as
// a stream, whatever sizes the zip's headers claim.
func readReportZip(data []byte, artifact string) (*report.Report, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a zip: %v", err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != reportFile || !zr.File[0].Mode().IsRegular() {
		names := make([]string, 0, len(zr.File))
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		return nil, fmt.Errorf("must hold %s and nothing else; it holds %d files: %s", reportFile, len(zr.File), quoteSome(names, 5))
	}
	f := zr.File[0]
	if f.UncompressedSize64 > uint64(report.DefaultLimits.Bytes) {
		return nil, fmt.Errorf("%s is %d bytes; the limit is %d", reportFile, f.UncompressedSize64, report.DefaultLimits.Bytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", reportFile, err)
	}
	defer rc.Close()
	return report.Read(rc, artifact+"/"+reportFile)
}

// ConfirmApproval confirms that run runID of repo ran its GPU job behind
// the approval environment: the run's jobs (filter=latest) include ap.Job
// or a matrix run of it ("JOB (…)") that completed with success or
// failure, and the run's review history holds an approval of
// ap.Environment. The jobs API does not say which environment a job used;
// the review history is the record of the approval, which only the
// environment's required reviewers can write. A run without it — the
// environment has no required reviewers, the GPU job was skipped or never
// approved, or the fork rewrote its workflow — is not confirmed.
func (c *Client) ConfirmApproval(ctx context.Context, repo string, runID int64, ap Approval) error {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return err
	}
	ran := false
	opts := &gh.ListWorkflowJobsOptions{Filter: "latest", ListOptions: gh.ListOptions{PerPage: 100}}
	for page := 1; page <= 3 && !ran; page++ {
		opts.Page = page
		jobs, resp, err := c.gh.Actions.ListWorkflowJobs(ctx, owner, name, runID, opts)
		if err != nil {
			return c.explain(fmt.Sprintf("list the jobs of run %d", runID), "actions: read", err)
		}
		for _, j := range jobs.Jobs {
			n := j.GetName()
			if (n == ap.Job || strings.HasPrefix(n, ap.Job+" (")) && j.GetStatus() == "completed" &&
				(j.GetConclusion() == "success" || j.GetConclusion() == "failure") {
				ran = true
			}
		}
		if resp.NextPage == 0 {
			break
		}
	}
	if !ran {
		return fmt.Errorf("run %d has no job %q that ran to completion", runID, ap.Job)
	}
	req, err := c.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/actions/runs/%d/approvals", owner, name, runID), nil)
	if err != nil {
		return err
	}
	var reviews []struct {
		State        string `json:"state"`
		Environments []struct {
			Name string `json:"name"`
		} `json:"environments"`
	}
	if _, err := c.gh.Do(ctx, req, &reviews); err != nil {
		return c.explain(fmt.Sprintf("read the approvals of run %d", runID), "actions: read", err)
	}
	for _, r := range reviews {
		if r.State != "approved" {
			continue
		}
		for _, e := range r.Environments {
			if e.Name == ap.Environment {
				return nil
			}
		}
	}
	return fmt.Errorf("run %d has no approval of environment %q (give it required reviewers)", runID, ap.Environment)
}

// quoteSome quotes the first n names, and says how many more there are.
func quoteSome(names []string, n int) string {
	var q []string
	for i, s := range names {
		if i == n {
			q = append(q, fmt.Sprintf("and %d more", len(names)-n))
			break
		}
		q = append(q, fmt.Sprintf("%q", truncateRunes(s, 100)))
	}
	return strings.Join(q, ", ")
}

func truncateRunes(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n]) + "…"
}

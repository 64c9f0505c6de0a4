package github

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
)

// Target is what a report is published on.
type Target struct {
	// Repo is the repository the pull request belongs to (owner/name).
	Repo string
	// PR is the pull request number; 0 when there is none (a push) or it
	// is still to be looked up.
	PR int
	// HeadSHA is the commit the report measured: the pull request's head,
	// never the test merge commit GITHUB_SHA points at.
	HeadSHA string
	// HeadRepo (owner/name) and HeadBranch locate the head for a lookup; for
	// a fork they differ from Repo.
	HeadRepo, HeadBranch string
	// Event is the event name that produced the target, if any.
	Event string
	// RunID is the workflow run whose job summary has the full report: the
	// triggering run for workflow_run, else this run.
	RunID int64
	// Fork is set when the event says the head repository is not the base
	// repository, or does not say which it is: a pull request whose code
	// anyone may have written.
	Fork bool
}

// NeedsLookup reports whether the pull request must be found through the
// API by head commit: a workflow_run that did not name it (a fork's pull
// request arrives with an empty pull_requests list), or a head commit given
// by flag without a pull request.
func (t Target) NeedsLookup() bool {
	return t.PR == 0 && t.HeadSHA != "" && (t.Event == "workflow_run" || t.Event == "")
}

// maxEvent bounds the event payload read.
const maxEvent = 32 << 20

type repoJSON struct {
	ID       int64  `json:"id"`
	FullName string `json:"full_name"`
}

type refJSON struct {
	SHA  string    `json:"sha"`
	Ref  string    `json:"ref"`
	Repo *repoJSON `json:"repo"`
}

type eventJSON struct {
	Number      int      `json:"number"`
	After       string   `json:"after"`
	Repository  repoJSON `json:"repository"`
	PullRequest *struct {
		Number int     `json:"number"`
		Head   refJSON `json:"head"`
		Base   refJSON `json:"base"`
	} `json:"pull_request"`
	WorkflowRun *struct {
		ID             int64     `json:"id"`
		Event          string    `json:"event"`
		HeadSHA        string    `json:"head_sha"`
		HeadBranch     string    `json:"head_branch"`
		HeadRepository *repoJSON `json:"head_repository"`
		PullRequests   []struct {
			Number int     `json:"number"`
			Head   refJSON `json:"head"`
			Base   refJSON `json:"base"`
		} `json:"pull_requests"`
	} `json:"workflow_run"`
}

// ReadEvent reads the event payload at path (GITHUB_EVENT_PATH) of the
// event called name (GITHUB_EVENT_NAME). pull_request and
// pull_request_target name the pull request and its head; workflow_run
// names the triggering run's head commit and repository, and its pull
// request only when it is not a fork's; push names the pushed commit.
func ReadEvent(name, path string) (Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return Target{}, fmt.Errorf("event payload: %w", err)
	}
	defer f.Close()
	return parseEvent(name, io.LimitReader(f, maxEvent))
}

func parseEvent(name string, r io.Reader) (Target, error) {
	var ev eventJSON
	if err := json.NewDecoder(r).Decode(&ev); err != nil {
		return Target{}, fmt.Errorf("event payload of %s: %w", name, err)
	}
	t := Target{Repo: ev.Repository.FullName, Event: name}
	switch name {
	case "pull_request", "pull_request_target":
		pr := ev.PullRequest
		if pr == nil {
			return Target{}, fmt.Errorf("%s event without pull_request", name)
		}
		t.PR, t.HeadSHA, t.HeadBranch = pr.Number, pr.Head.SHA, pr.Head.Ref
		if pr.Head.Repo != nil {
			t.HeadRepo = pr.Head.Repo.FullName
		}
		t.Fork = !sameRepo(pr.Head.Repo, pr.Base.Repo)
	case "workflow_run":
		run := ev.WorkflowRun
		if run == nil {
			return Target{}, fmt.Errorf("workflow_run event without workflow_run")
		}
		t.HeadSHA, t.HeadBranch, t.RunID = run.HeadSHA, run.HeadBranch, run.ID
		if run.HeadRepository != nil {
			t.HeadRepo = run.HeadRepository.FullName
		}
		t.Fork = run.Event != "push" && !sameRepo(run.HeadRepository, &ev.Repository)
		// pull_requests may list pull requests of other repositories whose
		// head branch has the same name: keep only ours, for this commit.
		for _, pr := range run.PullRequests {
			if pr.Base.Repo != nil && pr.Base.Repo.ID == ev.Repository.ID && pr.Head.SHA == run.HeadSHA {
				t.PR = pr.Number
				break
			}
		}
		if run.Event == "push" && t.PR == 0 {
			t.Event = "push"
		}
	case "push":
		t.HeadSHA = ev.After
	default:
		// Any other event (schedule, workflow_dispatch, ...) names no pull
		// request; the job summary and a status on GITHUB_SHA still work.
	}
	if t.HeadSHA != "" && !comment.IsSHA(strings.ToLower(t.HeadSHA)) {
		return Target{}, fmt.Errorf("%s event: head commit %q is not a commit hash", name, t.HeadSHA)
	}
	t.HeadSHA = strings.ToLower(t.HeadSHA)
	return t, nil
}

// sameRepo reports whether a and b are known to be one repository: by id
// when both have one, else by name.
func sameRepo(a, b *repoJSON) bool {
	switch {
	case a == nil || b == nil:
		return false
	case a.ID != 0 && b.ID != 0:
		return a.ID == b.ID
	}
	return a.FullName != "" && strings.EqualFold(a.FullName, b.FullName)
}

// TargetFrom resolves the target from flags first, then the Actions
// environment (GITHUB_REPOSITORY, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH,
// GITHUB_RUN_ID). Zero flag values mean "not given".
func TargetFrom(getenv func(string) string, repo string, pr int, sha, headRepo string) (Target, error) {
	var t Target
	if path := getenv("GITHUB_EVENT_PATH"); path != "" && getenv("GITHUB_EVENT_NAME") != "" {
		ev, err := ReadEvent(getenv("GITHUB_EVENT_NAME"), path)
		// A flag-given pull request and commit need no event.
		if err != nil && (pr == 0 || sha == "") {
			return Target{}, err
		}
		if err == nil {
			t = ev
		}
	}
	if repo != "" {
		t.Repo = repo
	}
	if t.Repo == "" {
		t.Repo = getenv("GITHUB_REPOSITORY")
	}
	if pr != 0 {
		t.PR = pr
	}
	if sha != "" {
		t.HeadSHA = strings.ToLower(sha)
	}
	if headRepo != "" {
		t.HeadRepo = headRepo
	}
	if t.HeadRepo == "" {
		t.HeadRepo = t.Repo
	}
	if t.RunID == 0 {
		t.RunID, _ = strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
	}
	switch t.Event {
	case "pull_request", "pull_request_target", "workflow_run", "push":
	default:
		// GITHUB_SHA is the commit of the run only outside pull requests
		// (there it is a test merge commit).
		if t.HeadSHA == "" && comment.IsSHA(getenv("GITHUB_SHA")) {
			t.HeadSHA = getenv("GITHUB_SHA")
		}
	}
	if !comment.IsRepository(t.Repo) {
		return Target{}, fmt.Errorf("repository %q: want owner/name (--repo or GITHUB_REPOSITORY)", t.Repo)
	}
	if t.HeadSHA != "" && !comment.IsSHA(t.HeadSHA) {
		return Target{}, fmt.Errorf("--sha %q: want a commit hash", sha)
	}
	if pr < 0 {
		return Target{}, fmt.Errorf("--pr %d: want a pull request number", pr)
	}
	return t, nil
}

// RunURL links to the run whose job summary holds the full report.
func (t Target) RunURL(serverURL string) string {
	if t.RunID == 0 || serverURL == "" {
		return ""
	}
	return strings.TrimRight(serverURL, "/") + "/" + t.Repo + "/actions/runs/" + strconv.FormatInt(t.RunID, 10)
}

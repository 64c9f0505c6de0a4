package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEvents(t *testing.T) {
	for _, tc := range []struct {
		event, file string
		want        Target
		lookup      bool
	}{
		{"pull_request", "pull_request.same-repo.json",
			Target{Repo: baseRepo, PR: 7, HeadSHA: shaA, HeadRepo: baseRepo, HeadBranch: "faster-rmsnorm", Event: "pull_request", RunID: 42}, false},
		{"pull_request", "pull_request.fork.json",
			Target{Repo: baseRepo, PR: 8, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", Event: "pull_request", RunID: 42, Fork: true}, false},
		{"pull_request_target", "pull_request.fork.json",
			Target{Repo: baseRepo, PR: 8, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", Event: "pull_request_target", RunID: 42, Fork: true}, false},
		{"workflow_run", "workflow_run.fork.json",
			Target{Repo: baseRepo, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", Event: "workflow_run", RunID: 123456789, Fork: true}, true},
		// pull_requests lists a pull request of another repository with the
		// same branch name first: only ours counts.
		{"workflow_run", "workflow_run.same-repo.json",
			Target{Repo: baseRepo, PR: 7, HeadSHA: shaA, HeadRepo: baseRepo, HeadBranch: "faster-rmsnorm", Event: "workflow_run", RunID: 123456790}, false},
		{"push", "push.json", Target{Repo: baseRepo, HeadSHA: shaC, HeadRepo: baseRepo, Event: "push", RunID: 42}, false},
	} {
		t.Run(tc.event+"/"+tc.file, func(t *testing.T) {
			got, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": tc.event,
				"GITHUB_EVENT_PATH": filepath.Join("testdata", tc.file), "GITHUB_RUN_ID": "42", "GITHUB_REPOSITORY": "ignored/when-event"}), "", 0, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if got.NeedsLookup() != tc.lookup {
				t.Errorf("NeedsLookup = %v", got.NeedsLookup())
			}
		})
	}
}

func TestTargetFlagsWin(t *testing.T) {
	got, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "pull_request.same-repo.json")}), "other/repo", 9, strings.ToUpper(shaC), "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Repo != "other/repo" || got.PR != 9 || got.HeadSHA != shaC {
		t.Errorf("%+v", got)
	}
	// Flags alone, no Actions environment.
	got, err = TargetFrom(env(nil), "o/r", 3, shaA, "")
	if err != nil || got.PR != 3 || got.HeadRepo != "o/r" {
		t.Errorf("%+v, %v", got, err)
	}
}

func TestEventErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"pull_request": {"number": 1, "head": {"sha": "not a sha; rm -rf /"}}, "repository": {"full_name": "o/r"}}`), 0o644)
	for _, tc := range []struct{ event, path, want string }{
		{"pull_request", bad, "not a commit hash"},
		{"pull_request", filepath.Join(dir, "missing.json"), "event payload"},
		{"pull_request", filepath.Join("testdata", "push.json"), "without pull_request"},
	} {
		_, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": tc.event, "GITHUB_EVENT_PATH": tc.path}), "", 0, "", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.event, filepath.Base(tc.path), err, tc.want)
		}
	}
	if _, err := TargetFrom(env(nil), "not-a-repo", 1, shaA, ""); err == nil {
		t.Error("bad --repo accepted")
	}
	if _, err := TargetFrom(env(nil), "o/r", 1, "xyz", ""); err == nil {
		t.Error("bad --sha accepted")
	}
}

func TestOtherEvents(t *testing.T) {
	got, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_SHA": shaC,
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "push.json")}), "", 0, "", "")
	if err != nil || got.PR != 0 || got.HeadSHA != shaC || got.NeedsLookup() {
		t.Fatalf("%+v, %v", got, err)
	}
	c, _, _ := setup(t)
	_, err = Publish(ctx(t), c, Publication{Report: loadReport(t), Target: got, Comment: true})
	if err == nil || !strings.Contains(err.Error(), `no pull request to comment on (event "workflow_dispatch")`) {
		t.Errorf("comment without a pull request: %v", err)
	}
	// A pull request's GITHUB_SHA is a merge commit: never the head.
	got, _ = TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_SHA": shaC,
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "pull_request.same-repo.json")}), "", 0, "", "")
	if got.HeadSHA != shaA {
		t.Errorf("pull_request head %s, want the event's head", got.HeadSHA)
	}
}

func TestFindPR(t *testing.T) {
	c, f, _ := setup(t)
	f.prs = []fakePR{
		{Number: 5, HeadSHA: shaB, HeadRepo: "impostor/repo", HeadBranch: "main", State: "open"}, // same commit, other fork
		{Number: 6, HeadSHA: shaC, HeadRepo: "forker/repo", HeadBranch: "main", State: "open"},   // same fork and branch, other commit
		{Number: 8, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", State: "open"},
		{Number: 7, HeadSHA: shaA, HeadRepo: baseRepo, HeadBranch: "x", State: "open", AssociatedInCommit: true},
	}
	// A fork's pull request seen from workflow_run: not associated with the
	// commit in the base repository, found by head repository and branch.
	tg, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "workflow_run",
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "workflow_run.fork.json")}), "", 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.FindPR(ctx(t), tg)
	if err != nil || n != 8 {
		t.Fatalf("fork: #%d, %v", n, err)
	}
	wantLog(t, f, "GET /repos/base/repo/commits/"+shaB+"/pulls", "GET /repos/base/repo/pulls")
	if q := f.requests[1].Query; !strings.Contains(q, "head=forker%3Amain") || !strings.Contains(q, "state=open") {
		t.Errorf("query %q", q)
	}
	// Same repository: associated with the commit.
	n, err = c.FindPR(ctx(t), Target{Repo: baseRepo, HeadSHA: shaA, HeadRepo: baseRepo, Event: "workflow_run"})
	if err != nil || n != 7 {
		t.Errorf("same repo: #%d, %v", n, err)
	}
	// Branch unknown: all open pull requests.
	n, err = c.FindPR(ctx(t), Target{Repo: baseRepo, HeadSHA: shaB, HeadRepo: "forker/repo", Event: "workflow_run"})
	if err != nil || n != 8 {
		t.Errorf("no branch: #%d, %v", n, err)
	}
	// Nothing matches.
	if _, err := c.FindPR(ctx(t), Target{Repo: baseRepo, HeadSHA: "dddddddddddddddddddddddddddddddddddddddd", Event: "workflow_run"}); err == nil {
		t.Error("found a pull request for an unknown commit")
	}
}

func TestAcceptedPermissions(t *testing.T) {
	for in, want := range map[string]string{
		"issues=write; pull_requests=write": "issues: write or pull-requests: write",
		"contents=read,statuses=write":      "contents: read and statuses: write",
		"":                                  "",
		"garbage":                           "",
		"x=`rm`":                            "",
	} {
		if got := acceptedPermissions(in); got != want {
			t.Errorf("acceptedPermissions(%q) = %q, want %q", in, got, want)
		}
	}
}

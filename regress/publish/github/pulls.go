package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// maxPages bounds every paginated listing (100 items a page).
const maxPages = 50

// FindPR finds the open pull request of t's head commit, for events that do
// not name it (a fork's pull request seen from workflow_run): first the
// pull requests GitHub associates with the commit, then the open pull
// requests of the head branch, then all open pull requests. A pull request
// matches only if its head is exactly t.HeadSHA and, when known, comes from
// t.HeadRepo — never by branch name alone, which a fork can choose freely.
func (c *Client) FindPR(ctx context.Context, t Target) (int, error) {
	owner, name, err := splitRepo(t.Repo)
	if err != nil {
		return 0, err
	}
	match := func(prs []*gh.PullRequest) int {
		for _, pr := range prs {
			if pr.GetState() != "open" || pr.GetHead().GetSHA() != t.HeadSHA {
				continue
			}
			if t.HeadRepo != "" && !strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), t.HeadRepo) {
				continue
			}
			return pr.GetNumber()
		}
		return 0
	}
	prs, _, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, owner, name, t.HeadSHA, &gh.ListOptions{PerPage: 100})
	if err != nil {
		return 0, c.explain("look up the pull request of commit "+t.HeadSHA, "pull-requests: read", err)
	}
	if n := match(prs); n != 0 {
		return n, nil
	}
	opts := &gh.PullRequestListOptions{State: "open", ListOptions: gh.ListOptions{PerPage: 100}}
	if headOwner, _, err := splitRepo(t.HeadRepo); err == nil && t.HeadBranch != "" {
		opts.Head = headOwner + ":" + t.HeadBranch
		prs, _, err := c.gh.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return 0, c.explain("list the pull requests of "+opts.Head, "pull-requests: read", err)
		}
		if n := match(prs); n != 0 {
			return n, nil
		}
		opts.Head = ""
	}
	opts.Sort, opts.Direction = "updated", "desc"
	for page := 1; page <= maxPages; page++ {
		opts.Page = page
		prs, resp, err := c.gh.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return 0, c.explain("list the open pull requests", "pull-requests: read", err)
		}
		if n := match(prs); n != 0 {
			return n, nil
		}
		if resp.NextPage == 0 {
			break
		}
	}
	return 0, fmt.Errorf("no open pull request of %s has head commit %s", t.Repo, t.HeadSHA)
}

// newer reports whether ours is a newer report than theirs for pull
// request pr: ours is the pull request's current head, or theirs is not and
// ours descends from it. When it cannot be told, the answer is no: an
// existing comment is only replaced by a run known to be newer.
func (c *Client) newer(ctx context.Context, repo string, pr int, ours, theirs string) (bool, string, error) {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return false, "", err
	}
	p, _, err := c.gh.PullRequests.Get(ctx, owner, name, pr)
	if err != nil {
		return false, "", c.explain(fmt.Sprintf("read pull request #%d", pr), "pull-requests: read", err)
	}
	head := p.GetHead().GetSHA()
	switch {
	case sameCommit(ours, head):
		return true, "it reports the pull request's head", nil
	case sameCommit(theirs, head):
		return false, "the comment already reports the pull request's head " + short(head), nil
	}
	cmp, _, err := c.gh.Repositories.CompareCommits(ctx, owner, name, theirs, ours, &gh.ListOptions{PerPage: 1})
	if err != nil {
		c.logf("cannot tell whether %s is newer than %s: %v", short(ours), short(theirs), c.explain("compare", "contents: read", err))
		return false, "neither commit is the head and their order is unknown", nil
	}
	if cmp.GetStatus() == "ahead" {
		return true, short(ours) + " descends from " + short(theirs), nil
	}
	return false, fmt.Sprintf("%s does not descend from %s (%s)", short(ours), short(theirs), cmp.GetStatus()), nil
}

// sameCommit compares two hashes, either possibly abbreviated.
func sameCommit(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	n := min(len(a), len(b))
	return len(a) >= 7 && len(b) >= 7 && strings.EqualFold(a[:n], b[:n])
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

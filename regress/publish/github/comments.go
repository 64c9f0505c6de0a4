package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
)

// MaxCommentBytes is the largest body sent: GitHub rejects comments over
// 65,536 characters with 422, and bytes never undercount characters.
const MaxCommentBytes = 65536

// What Upsert did (Result.Action).
const (
	Created   = "created"
	Updated   = "updated"
	Unchanged = "unchanged"
	Skipped   = "skipped" // a newer head commit is already reported
)

// Result says what Upsert did.
type Result struct {
	Action string
	URL    string // the comment's address; empty when none exists
	ID     int64
	Reason string // why it was skipped or left unchanged
}

// Upsert makes body the sticky comment of class on pull request pr: the
// comment whose first line is the class's marker and whose author is this
// token's identity, searched over all pages of comments. It is created if
// none exists, left alone if its body is already body or if it reports a
// newer head commit than headSHA, and edited in place otherwise. Comments
// by anyone else are never touched, whatever they contain.
func (c *Client) Upsert(ctx context.Context, repo string, pr int, class, headSHA, body string) (Result, error) {
	if len(body) > MaxCommentBytes {
		return Result{}, fmt.Errorf("comment body is %d bytes; GitHub accepts at most %d", len(body), MaxCommentBytes)
	}
	if m, ok := comment.Parse(body); !ok || m.Class != class {
		return Result{}, fmt.Errorf("comment body does not start with the marker of class %q", class)
	}
	owner, name, err := splitRepo(repo)
	if err != nil {
		return Result{}, err
	}
	me, err := c.whoAmI(ctx)
	if err != nil {
		return Result{}, err
	}
	existing, err := c.find(ctx, owner, name, pr, class, me)
	if err != nil {
		return Result{}, err
	}
	if existing == nil {
		created, cerr := c.create(ctx, owner, name, pr, body)
		if cerr == nil {
			return Result{Action: Created, URL: created.GetHTMLURL(), ID: created.GetID()}, nil
		}
		if !uncertain(cerr) || ctx.Err() != nil {
			return Result{}, c.explain(fmt.Sprintf("comment on #%d", pr), "pull-requests: write", cerr)
		}
		// The create may have happened although we got no answer: look
		// before creating again.
		c.logf("creating the comment on #%d failed (%v); listing the comments again before retrying", pr,
			c.explain("comment", "", cerr))
		existing, err = c.find(ctx, owner, name, pr, class, me)
		if err != nil {
			return Result{}, errors.Join(cerr, err)
		}
		if existing == nil {
			created, err := c.create(ctx, owner, name, pr, body)
			if err != nil {
				return Result{}, c.explain(fmt.Sprintf("comment on #%d", pr), "pull-requests: write", err)
			}
			return Result{Action: Created, URL: created.GetHTMLURL(), ID: created.GetID()}, nil
		}
	}
	res := Result{URL: existing.GetHTMLURL(), ID: existing.GetID()}
	if normalize(existing.GetBody()) == normalize(body) {
		res.Action, res.Reason = Unchanged, "the comment already says this"
		return res, nil
	}
	if m, _ := comment.Parse(existing.GetBody()); m.HeadSHA != "" && headSHA != "" && !sameCommit(m.HeadSHA, headSHA) {
		ok, why, err := c.newer(ctx, repo, pr, headSHA, m.HeadSHA)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			res.Action, res.Reason = Skipped, why
			return res, nil
		}
	}
	edited, _, err := c.gh.Issues.EditComment(ctx, owner, name, existing.GetID(), &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return Result{}, c.explain(fmt.Sprintf("update comment %d on #%d", existing.GetID(), pr), "pull-requests: write", err)
	}
	res.Action, res.URL = Updated, edited.GetHTMLURL()
	return res, nil
}

func (c *Client) create(ctx context.Context, owner, name string, pr int, body string) (*gh.IssueComment, error) {
	created, _, err := c.gh.Issues.CreateComment(ctx, owner, name, pr, &gh.IssueComment{Body: gh.String(body)})
	return created, err
}

// find returns our comment for class on pr, reading every page; with
// several (left by an earlier race), the oldest.
func (c *Client) find(ctx context.Context, owner, name string, pr int, class string, me *identity) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	var found *gh.IssueComment
	dups := 0
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("pull request #%d has more than %d comments; not searching further", pr, maxPages*100)
		}
		opts.Page = page
		list, resp, err := c.gh.Issues.ListComments(ctx, owner, name, pr, opts)
		if err != nil {
			return nil, c.explain(fmt.Sprintf("list the comments of #%d", pr), "pull-requests: read", err)
		}
		for _, ic := range list {
			m, ok := comment.Parse(ic.GetBody())
			if !ok || m.Class != class || !me.owns(ic.GetUser()) {
				continue
			}
			if found == nil {
				found = ic
			} else {
				dups++
			}
		}
		if resp.NextPage == 0 {
			break
		}
	}
	if dups > 0 {
		c.logf("#%d has %d more kernelwatch comments for class %s; updating the oldest", pr, dups, class)
	}
	return found, nil
}

// normalize is how GitHub may give back a body we sent.
func normalize(s string) string {
	return strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n ")
}

// SetStatus sets the commit status context on sha. Repeating it is safe —
// the latest status of a context wins — so it is retried like a read.
func (c *Client) SetStatus(ctx context.Context, repo, sha, context, state, description, targetURL string) error {
	owner, name, err := splitRepo(repo)
	if err != nil {
		return err
	}
	st := &gh.RepoStatus{State: gh.String(state), Context: gh.String(context), Description: gh.String(description)}
	if targetURL != "" {
		st.TargetURL = gh.String(targetURL)
	}
	if _, _, err := c.gh.Repositories.CreateStatus(idempotent(ctx), owner, name, sha, st); err != nil {
		return c.explain("set the commit status "+context+" on "+short(sha), "statuses: write", err)
	}
	return nil
}

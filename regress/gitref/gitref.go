// Package gitref turns the refs a user names into commits and checks them out
// where regress can build them, leaving nothing behind.
//
// The baseline of a pull request is the merge base with main, not main's tip:
// comparing with the tip would charge the pull request for every change that
// landed on main since it branched (github-action-benchmark's complaint). Each
// commit is checked out in its own temporary `git worktree --detach`, so the
// user's working tree, index and branches are never touched, and both sides
// build side by side. A Worktree is removed with `git worktree remove --force`
// and its directory deleted, and callers defer that, so an error or a signal
// (which cancels the context every git command runs under) leaves neither a
// directory nor a worktree registration behind.
//
// Every function runs the git command-line tool; errors are one line naming
// the ref and git's own message.
package gitref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is a git repository, addressed by its top-level directory.
type Repo struct {
	Root string
}

// Open returns the repository that contains dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: not in a git repository: %w", dir, err)
	}
	return &Repo{Root: out}, nil
}

// Commit is a resolved ref.
type Commit struct {
	Ref string // what the user named: main, HEAD, a SHA
	SHA string // the full commit hash
}

// Short is the SHA's first 7 characters.
func (c Commit) Short() string {
	if len(c.SHA) > 7 {
		return c.SHA[:7]
	}
	return c.SHA
}

// Label is "ref@short", how reports name the side.
func (c Commit) Label() string { return c.Ref + "@" + c.Short() }

// Resolve returns the commit ref names. A branch missing locally is looked up
// on origin (origin/main), as in a fresh clone or a CI checkout.
func (r *Repo) Resolve(ctx context.Context, ref string) (Commit, error) {
	sha, err := git(ctx, r.Root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil && !strings.Contains(ref, "/") {
		if s, err2 := git(ctx, r.Root, "rev-parse", "--verify", "--quiet", "origin/"+ref+"^{commit}"); err2 == nil {
			sha, err = s, nil
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return Commit{}, ctx.Err()
		}
		return Commit{}, fmt.Errorf("%s: no such commit or branch here (in a shallow clone, fetch it first: git fetch origin %s)", ref, ref)
	}
	return Commit{Ref: ref, SHA: sha}, nil
}

// MergeBase returns the best common ancestor of a and b, keeping a's Ref.
func (r *Repo) MergeBase(ctx context.Context, a, b Commit) (Commit, error) {
	sha, err := git(ctx, r.Root, "merge-base", a.SHA, b.SHA)
	if err != nil {
		if ctx.Err() != nil {
			return Commit{}, ctx.Err()
		}
		return Commit{}, fmt.Errorf("%s and %s have no merge base (in a shallow clone, fetch more history; or compare with the tip: --baseline-tip)", a.Ref, b.Ref)
	}
	return Commit{Ref: a.Ref, SHA: sha}, nil
}

// Branch returns the branch checked out in dir, or "" when HEAD is detached
// or dir is not in a repository.
func Branch(ctx context.Context, dir string) string {
	b, err := git(ctx, dir, "symbolic-ref", "--short", "--quiet", "HEAD")
	if err != nil {
		return ""
	}
	return b
}

// Head returns the commit checked out in dir, or "" outside a repository.
func Head(ctx context.Context, dir string) string {
	sha, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return sha
}

// Dirty reports whether the working tree has uncommitted changes to tracked
// files.
func (r *Repo) Dirty(ctx context.Context) bool {
	out, err := git(ctx, r.Root, "status", "--porcelain", "--untracked-files=no")
	return err == nil && out != ""
}

// Show returns the contents of path (relative to the repository root) as it
// is at commit c; ok is false when the file does not exist there.
func (r *Repo) Show(ctx context.Context, c Commit, path string) (data []byte, ok bool, err error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "-e", c.SHA+":"+filepath.ToSlash(path))
	cmd.Dir = r.Root
	if cmd.Run() != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, nil
	}
	cmd = exec.CommandContext(ctx, "git", "show", c.SHA+":"+filepath.ToSlash(path))
	cmd.Dir = r.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err = cmd.Output()
	if err != nil {
		return nil, false, fmt.Errorf("git show %s:%s: %s", c.Short(), path, firstLine(stderr.String(), err))
	}
	return data, true, nil
}

// Worktree is a temporary, detached checkout of one commit.
type Worktree struct {
	Dir    string
	Commit Commit
	repo   *Repo
}

// AddWorktree checks c out into dir, which must not exist. Call Remove when
// done, also on error paths.
func (r *Repo) AddWorktree(ctx context.Context, c Commit, dir string) (*Worktree, error) {
	if _, err := git(ctx, r.Root, "worktree", "add", "--detach", "--quiet", dir, c.SHA); err != nil {
		// git may have registered the worktree before failing.
		w := &Worktree{Dir: dir, Commit: c, repo: r}
		w.Remove()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("checking out %s: %w", c.Label(), err)
	}
	return &Worktree{Dir: dir, Commit: c, repo: r}, nil
}

// Remove deletes the worktree's directory and its registration in the
// repository. It runs git without a context, so that it still works after the
// run was cancelled, and is safe to call more than once.
func (w *Worktree) Remove() error {
	if w == nil {
		return nil
	}
	_, err := git(context.Background(), w.repo.Root, "worktree", "remove", "--force", w.Dir)
	if rmErr := os.RemoveAll(w.Dir); err != nil && rmErr != nil {
		err = rmErr
	}
	// Drop a registration whose directory is gone (remove failed early).
	if _, perr := git(context.Background(), w.repo.Root, "worktree", "prune"); err == nil && perr != nil {
		err = perr
	}
	if _, statErr := os.Stat(w.Dir); errors.Is(statErr, os.ErrNotExist) && !w.registered() {
		return nil
	}
	return err
}

// registered reports whether git still lists the worktree.
func (w *Worktree) registered() bool {
	out, err := git(context.Background(), w.repo.Root, "worktree", "list", "--porcelain")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && sameFile(p, w.Dir) {
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// git runs a git command in dir and returns its trimmed standard output; an
// error carries the first line of git's standard error.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New(firstLine(stderr.String(), err))
	}
	return strings.TrimSpace(string(out)), nil
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return err.Error()
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "fatal: ")
}

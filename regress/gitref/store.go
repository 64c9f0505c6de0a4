package gitref

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A baselines branch (--baselines-ref) keeps stored results off main, where
// a protected main refuses the pushes of a workflow. It is written with git
// plumbing only — hash-object, a temporary index (GIT_INDEX_FILE),
// write-tree, commit-tree and a compare-and-swap update-ref — so the user's
// working tree, index, HEAD and every other branch stay as they were.

// Change is one commit that changed a file.
type Change struct {
	SHA     string
	Time    time.Time // committer time
	Subject string
}

// Short is the SHA's first 7 characters.
func (c Change) Short() string { return Commit{SHA: c.SHA}.Short() }

// FileLog returns the commits reachable from tip, and not from since when
// since is not empty, that changed path, oldest first (topological order,
// so a commit always comes after its parents).
func (r *Repo) FileLog(ctx context.Context, tip Commit, since, path string) ([]Change, error) {
	args := []string{"log", "--reverse", "--topo-order", "--format=%H%x00%ct%x00%s", tip.SHA}
	if since != "" {
		c, err := r.Resolve(ctx, since)
		if err != nil {
			return nil, err
		}
		args = append(args, "^"+c.SHA)
	}
	out, err := git(ctx, r.Root, append(args, "--", filepath.ToSlash(path))...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("git log %s -- %s: %w", tip.Label(), path, err)
	}
	var log []Change
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\x00", 3)
		if len(f) != 3 {
			continue
		}
		sec, _ := strconv.ParseInt(f[1], 10, 64)
		log = append(log, Change{SHA: f[0], Time: time.Unix(sec, 0).UTC(), Subject: f[2]})
	}
	return log, nil
}

// Stored is the outcome of StoreFiles.
type Stored struct {
	Commit  Commit // the branch's new tip (its old tip when nothing changed)
	Changed bool   // false when the files already had these contents
	Created bool   // the branch did not exist locally before
}

// StoreFiles commits files (path relative to the repository root →
// contents) onto branch, on top of its tip — or of origin/branch when there
// is no local branch, or as a first commit when neither exists — without
// touching the working tree, the index or HEAD. The branch is moved with a
// compare-and-swap, so a concurrent writer makes this fail instead of
// losing its commit. A branch checked out here is refused: its working tree
// would silently fall behind.
func (r *Repo) StoreFiles(ctx context.Context, branch string, files map[string][]byte, message string) (Stored, error) {
	var st Stored
	ref := "refs/heads/" + branch
	if _, err := git(ctx, r.Root, "check-ref-format", ref); err != nil || strings.HasPrefix(branch, "-") {
		return st, fmt.Errorf("%q is not a valid branch name", branch)
	}
	if head, err := git(ctx, r.Root, "symbolic-ref", "--quiet", "HEAD"); err == nil && head == ref {
		return st, fmt.Errorf("%s is the branch checked out here: store baselines on a branch kept off the working tree", branch)
	}
	old, _ := git(ctx, r.Root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	parent := old
	if parent == "" {
		st.Created = true
		parent, _ = git(ctx, r.Root, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+branch+"^{commit}")
	}

	tmp, err := os.MkdirTemp("", "regress-store-")
	if err != nil {
		return st, err
	}
	defer os.RemoveAll(tmp)
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(tmp, "index"))
	if ident(ctx, r.Root, "GIT_COMMITTER_IDENT") != nil || ident(ctx, r.Root, "GIT_AUTHOR_IDENT") != nil {
		env = append(env, "GIT_AUTHOR_NAME=kernelwatch", "GIT_AUTHOR_EMAIL=kernelwatch@localhost",
			"GIT_COMMITTER_NAME=kernelwatch", "GIT_COMMITTER_EMAIL=kernelwatch@localhost")
	}
	run := func(stdin []byte, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = r.Root, env
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("git %s: %s", args[0], firstLine(stderr.String(), err))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if parent != "" {
		_, err = run(nil, "read-tree", parent+"^{tree}")
	} else {
		_, err = run(nil, "read-tree", "--empty")
	}
	if err != nil {
		return st, err
	}
	for path, data := range files {
		blob, err := run(data, "hash-object", "-w", "--stdin")
		if err != nil {
			return st, err
		}
		if _, err := run(nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+filepath.ToSlash(path)); err != nil {
			return st, err
		}
	}
	tree, err := run(nil, "write-tree")
	if err != nil {
		return st, err
	}
	if parent != "" {
		if prev, _ := run(nil, "rev-parse", parent+"^{tree}"); prev == tree && !st.Created {
			st.Commit = Commit{Ref: branch, SHA: parent}
			return st, nil
		}
	}
	args := []string{"commit-tree", tree, "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	sha, err := run(nil, args...)
	if err != nil {
		return st, err
	}
	expect := old
	if expect == "" {
		expect = strings.Repeat("0", len(sha)) // the branch must not exist yet
	}
	if _, err := run(nil, "update-ref", "-m", "regress: "+message, ref, sha, expect); err != nil {
		return st, fmt.Errorf("updating %s (did another writer move it?): %w", branch, err)
	}
	st.Commit, st.Changed = Commit{Ref: branch, SHA: sha}, true
	return st, nil
}

// ident reports whether git knows who commits (user.name and user.email or
// their environment variables).
func ident(ctx context.Context, dir, which string) error {
	_, err := git(ctx, dir, "var", which)
	if err != nil {
		return errors.New("no git identity")
	}
	return nil
}

// StoredClasses lists the hardware classes with a baselines/<class>.bench
// at commit c.
func (r *Repo) StoredClasses(ctx context.Context, c Commit) ([]string, error) {
	out, err := git(ctx, r.Root, "ls-tree", "--name-only", c.SHA, "baselines/")
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s baselines/: %w", c.Label(), err)
	}
	var classes []string
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutSuffix(strings.TrimPrefix(l, "baselines/"), ".bench"); ok && name != "" {
			classes = append(classes, name)
		}
	}
	return classes, nil
}

// CommitPaths commits the current contents of paths (relative to the
// repository root) on the checked-out branch, and nothing else that may be
// staged: git add, then git commit --only.
func (r *Repo) CommitPaths(ctx context.Context, message string, paths ...string) (Commit, error) {
	if _, err := git(ctx, r.Root, append([]string{"add", "--"}, paths...)...); err != nil {
		return Commit{}, fmt.Errorf("git add: %w", err)
	}
	if out, _ := git(ctx, r.Root, append([]string{"diff", "--cached", "--name-only", "--"}, paths...)...); out == "" {
		head, err := r.Resolve(ctx, "HEAD")
		return head, err // unchanged
	}
	if _, err := git(ctx, r.Root, append([]string{"commit", "--quiet", "--only", "-m", message, "--"}, paths...)...); err != nil {
		return Commit{}, fmt.Errorf("git commit: %w", err)
	}
	return r.Resolve(ctx, "HEAD")
}

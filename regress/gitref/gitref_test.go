package gitref

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a repository with main (two commits) and a feature branch
// that forked from main's first commit.
func repo(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shas := map[string]string{}
	run("init", "-q", "-b", "main")
	write("a.txt", "one\n")
	write("baselines/cpu-x.bench", "class: cpu-x\n")
	run("add", "-A")
	run("commit", "-qm", "one")
	shas["one"] = run("rev-parse", "HEAD")
	run("checkout", "-qb", "feature")
	write("a.txt", "feature\n")
	run("commit", "-qam", "feature")
	shas["feature"] = run("rev-parse", "HEAD")
	run("checkout", "-q", "main")
	write("a.txt", "two\n")
	run("commit", "-qam", "two")
	shas["two"] = run("rev-parse", "HEAD")
	run("checkout", "-q", "feature")
	return dir, shas
}

func TestResolveAndMergeBase(t *testing.T) {
	dir, shas := repo(t)
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(dir, "baselines"))
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(dir); r.Root != dir && r.Root != real {
		t.Errorf("Root = %s, want %s", r.Root, dir)
	}
	main, err := r.Resolve(ctx, "main")
	if err != nil || main.SHA != shas["two"] || main.Label() != "main@"+shas["two"][:7] {
		t.Fatalf("Resolve(main) = %+v, %v", main, err)
	}
	head, _ := r.Resolve(ctx, "HEAD")
	mb, err := r.MergeBase(ctx, main, head)
	if err != nil || mb.SHA != shas["one"] || mb.Ref != "main" {
		t.Errorf("MergeBase = %+v, %v; want main at the fork point", mb, err)
	}
	if _, err := r.Resolve(ctx, "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch: no such commit") {
		t.Errorf("Resolve(nosuch) error = %v", err)
	}
	if b := Branch(ctx, dir); b != "feature" {
		t.Errorf("Branch = %q", b)
	}
	if h := Head(ctx, dir); h != shas["feature"] {
		t.Errorf("Head = %q", h)
	}
	if Head(ctx, t.TempDir()) != "" || Branch(ctx, t.TempDir()) != "" {
		t.Errorf("outside a repository Head and Branch should be empty")
	}
	if _, err := Open(ctx, t.TempDir()); err == nil {
		t.Errorf("Open outside a repository succeeded")
	}
	if r.Dirty(ctx) {
		t.Errorf("clean tree reported dirty")
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	if !r.Dirty(ctx) {
		t.Errorf("changed tree reported clean")
	}
}

func TestShow(t *testing.T) {
	dir, shas := repo(t)
	ctx := context.Background()
	r, _ := Open(ctx, dir)
	c := Commit{Ref: "main", SHA: shas["one"]}
	data, ok, err := r.Show(ctx, c, "baselines/cpu-x.bench")
	if err != nil || !ok || string(data) != "class: cpu-x\n" {
		t.Errorf("Show = %q, %v, %v", data, ok, err)
	}
	if _, ok, err := r.Show(ctx, c, "baselines/gpu-y.bench"); ok || err != nil {
		t.Errorf("Show of a missing file = %v, %v; want not ok, no error", ok, err)
	}
}

func TestWorktreeAddRemove(t *testing.T) {
	dir, shas := repo(t)
	ctx := context.Background()
	r, _ := Open(ctx, dir)
	wdir := filepath.Join(t.TempDir(), "wt")
	w, err := r.AddWorktree(ctx, Commit{Ref: "main", SHA: shas["two"]}, wdir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(wdir, "a.txt")); string(b) != "two\n" {
		t.Errorf("worktree holds %q, want main's a.txt", b)
	}
	if !w.registered() {
		t.Errorf("worktree not registered")
	}
	if err := w.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wdir); !os.IsNotExist(err) {
		t.Errorf("worktree directory left behind: %v", err)
	}
	if w.registered() {
		t.Errorf("worktree still registered")
	}
	if err := w.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	// The user's branch and files are untouched.
	if b := Branch(ctx, dir); b != "feature" {
		t.Errorf("Branch = %q after the worktree", b)
	}
}

func TestWorktreeCancelledLeavesNothing(t *testing.T) {
	dir, shas := repo(t)
	r, _ := Open(context.Background(), dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wdir := filepath.Join(t.TempDir(), "wt")
	if _, err := r.AddWorktree(ctx, Commit{Ref: "main", SHA: shas["two"]}, wdir); err == nil {
		t.Fatal("AddWorktree with a cancelled context succeeded")
	}
	if _, err := os.Stat(wdir); !os.IsNotExist(err) {
		t.Errorf("directory left behind: %v", err)
	}
	out, _ := exec.Command("git", "-C", dir, "worktree", "list").Output()
	if n := len(strings.Split(strings.TrimSpace(string(out)), "\n")); n != 1 {
		t.Errorf("git worktree list has %d entries:\n%s", n, out)
	}
}

// Package examples_test checks the examples of this directory: each is a module of its own, outside this
// module's ./..., so its tests run here the way a user's would, against this checkout.
package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// repoRoot is this checkout's root: the parent of this package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestHarnessDocShowsTheExample checks that the code in harness's package documentation is the example module's:
// each code block of the package comment, cut at its "// …" lines, appears in one of examples/go-module's files
// in order, so that what go doc shows compiles, passes its tests and is gated as TestGoModuleCheck shows.
func TestHarnessDocShowsTheExample(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "harness", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range []string{"scaleadd.go", "scaleadd_test.go"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "go-module", name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(b))
	}
	blocks := docCodeBlocks(string(doc))
	if len(blocks) < 2 {
		t.Fatalf("harness/doc.go has %d code blocks, want the example's two files", len(blocks))
	}
	for _, block := range blocks {
		if !slices.ContainsFunc(files, func(file string) bool { return containsInOrder(file, strings.Split(block, "// …\n")) }) {
			t.Errorf("a code block of harness/doc.go is not in examples/go-module (scaleadd.go, scaleadd_test.go):\n%s", block)
		}
	}
}

// docCodeBlocks returns the code blocks of the package comment of a Go file: runs of comment lines indented by a
// tab, blank comment lines inside a run kept, the tab removed.
func docCodeBlocks(src string) []string {
	var blocks []string
	var cur []string
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1] == "" {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		}
		cur = nil
	}
	for _, line := range strings.Split(src, "\n") {
		switch {
		case strings.HasPrefix(line, "//\t"):
			cur = append(cur, strings.TrimPrefix(line, "//\t"))
		case line == "//" && len(cur) > 0:
			cur = append(cur, "")
		case strings.HasPrefix(line, "package "):
			flush()
			return blocks
		default:
			flush()
		}
	}
	flush()
	return blocks
}

// containsInOrder reports whether every chunk occurs in s, each after the one before it.
func containsInOrder(s string, chunks []string) bool {
	for _, c := range chunks {
		i := strings.Index(s, strings.TrimLeft(c, "\t"))
		if i < 0 {
			return false
		}
		s = s[i+len(strings.TrimLeft(c, "\t")):]
	}
	return true
}

// TestGoModuleCheck treats examples/go-module as a user's repository of its own: it copies the module into a
// fresh git repository (its replace directive pointed at this checkout), runs its tests, and gates two changes
// with regress check: one that changes no code (an A/A check: exit 0) and one that makes the fused kernel do 20%
// more work (extraRows = 0.2: exit 1, every fail-gated regression a fused benchmark). The checks run the
// example's benchmarks.yaml: on a CPU runner, ten interleaved processes a side (up to twenty for the benchmarks
// that cannot yet detect their threshold, within 100 s: with ten alone the +20% check passed twice in three CI
// runs on a 2-core machine, its slowed rows +20–22% at p 0.11–0.31), 100 ms samples of 1M-element cases, a 10%
// threshold.
func TestGoModuleCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds regress and runs two checks of ten to twenty rounds a side (two to three minutes on two cores)")
	}
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: %v", tool, err)
		}
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	root, tmp := repoRoot(t), t.TempDir()
	regress := filepath.Join(tmp, "regress")
	run(ctx, t, root, "go", "build", "-o", regress, "./cmd/regress")

	repo := filepath.Join(tmp, "repo")
	copyModule(t, filepath.Join(root, "examples", "go-module"), repo, root)
	run(ctx, t, repo, "go", "vet", "./...")
	run(ctx, t, repo, "go", "test", "./...")
	git := func(args ...string) {
		run(ctx, t, repo, "git", append([]string{"-c", "user.name=kernelwatch", "-c", "user.email=kernelwatch@example.com",
			"-c", "commit.gpgsign=false"}, args...)...)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "A: the example")
	appendFile(t, filepath.Join(repo, "README.md"), "\nA line that changes no code.\n")
	git("commit", "-q", "-am", "A': no code changed")

	aa := check(ctx, t, regress, repo, "aa")
	if aa.code != 0 || aa.report.Verdict != "pass" {
		t.Errorf("A/A check: exit %d, verdict %s, want 0 and pass; stderr:\n%s", aa.code, aa.report.Verdict, aa.stderr)
	}

	src := filepath.Join(repo, "scaleadd.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const knob, slowed = "const extraRows = 0.0\n", "const extraRows = 0.2\n"
	if strings.Count(string(b), knob) != 1 {
		t.Fatalf("scaleadd.go has no line %q: the slowdown knob moved", knob)
	}
	if err := os.WriteFile(src, []byte(strings.Replace(string(b), knob, slowed, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "B: the fused kernel computes 20% of its rows twice")

	ab := check(ctx, t, regress, repo, "slowdown")
	if ab.code != 1 || ab.report.Verdict != "fail" {
		t.Errorf("+20%% check: exit %d, verdict %s, want 1 and fail; stderr:\n%s", ab.code, ab.report.Verdict, ab.stderr)
	}
	flagged := 0
	for _, c := range ab.report.Comparisons {
		if c.Verdict != "regression" || c.Gate != "fail" {
			continue
		}
		flagged++
		if !strings.HasSuffix(c.Name, "/impl=fused") || !strings.HasPrefix(c.Name, "ScaleAdd/") {
			t.Errorf("+20%% check flagged %s %s (%+.1f%%): only the fused kernel changed", c.Name, c.Unit, 100*c.Delta)
		}
	}
	if flagged == 0 {
		t.Error("+20% check: no fail-gated regression")
	}
}

// copyModule copies the module in src to dst, its replace directive pointed at this checkout.
func copyModule(t *testing.T, src, dst, root string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "go.mod" {
			const replace = "replace github.com/kernelwatch/kernelwatch => ../..\n"
			if !bytes.Contains(b, []byte(replace)) {
				return fmt.Errorf("%s has no line %q", path, replace)
			}
			b = bytes.Replace(b, []byte(replace), []byte("replace github.com/kernelwatch/kernelwatch => "+root+"\n"), 1)
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(text)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a command in dir and fails the test, with its output, if it fails.
func run(ctx context.Context, t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
}

// checkRun is one regress check of the repository's last commit against the one before it.
type checkRun struct {
	code   int
	stderr string
	report struct {
		Verdict     string
		Comparisons []struct {
			Name, Unit, Gate, Verdict string
			Delta                     float64
			P                         *float64
		}
	}
}

// check runs regress check --baseline HEAD~1 --current HEAD in repo and reads its JSON report; it logs each
// fused sec/op comparison and the time the check took.
func check(ctx context.Context, t *testing.T, regress, repo, name string) checkRun {
	t.Helper()
	out := filepath.Join(filepath.Dir(repo), name+".json")
	cmd := exec.CommandContext(ctx, regress, "check", "--baseline", "HEAD~1", "--current", "HEAD", "--format", "json", "--out", out)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	var r checkRun
	r.stderr = stderr.String()
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("regress check (%s): %v", name, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("regress check (%s) exit %d wrote no report: %v\n%s", name, r.code, err, r.stderr)
	}
	if err := json.Unmarshal(b, &r.report); err != nil {
		t.Fatalf("regress check (%s): %s: %v", name, out, err)
	}
	t.Logf("%s: exit %d, %s, in %s", name, r.code, r.report.Verdict, time.Since(start).Round(time.Second))
	for _, c := range r.report.Comparisons {
		if c.Unit == "sec/op" {
			p := "-"
			if c.P != nil {
				p = fmt.Sprintf("%.2g", *c.P)
			}
			t.Logf("  %-50s %+6.1f%%  p=%-7s %s (%s)", c.Name, 100*c.Delta, p, c.Verdict, c.Gate)
		}
	}
	return r
}

//go:build unix

package doctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// blockTimeout bounds one ```sh block; the blocks are meant to take seconds.
const blockTimeout = 5 * time.Minute

// TestDocs is the doc test: it checks README.md and docs/*.md against the
// rules of this package, then runs every ```sh block in order, each in a new
// bash (-e -o pipefail) started in the root of a fresh clone of the working
// tree (what `git add -A` would commit: tracked and untracked files that
// .gitignore does not exclude), with regress installed from that clone by
// go install ./cmd/regress into a temporary GOBIN first on PATH, GOPROXY=off
// (no network) and TMPDIR inside the test's temporary directory. A ```text
// output block must match the standard output of the ```sh block before it.
//
// ```sh gpu and ```sh github blocks are listed in the log, not run. ```sh ci
// blocks are not run either: they hold the main job (go run ./cmd/regress,
// 2–3 minutes) and go test ./... (which would run this test again), and
// .ci/run runs both itself — Check makes sure of that. With -short the
// rules are checked and no block is run; .ci/run runs go test ./... without
// -short, so CI runs them.
func TestDocs(t *testing.T) {
	if os.Getenv("KERNELWATCH_DOCTEST") != "" {
		t.Skip("inside a doc block: the doc test does not run itself")
	}
	root := repoRoot(t)
	blocks, problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	var run, listed []Block
	for _, b := range blocks {
		switch kind, tag, _ := Classify(b); kind {
		case Run:
			run = append(run, b)
		case Listed:
			listed = append(listed, b)
			t.Logf("not run: %s ```sh %s (%s): %s", b.Where(), tag, Tags[tag], firstCommand(b.Body))
		}
	}
	if testing.Short() {
		t.Logf("-short: %d sh blocks not run (.ci/run runs them)", len(run))
		return
	}
	if len(run) == 0 {
		t.Fatal("no ```sh block to run: the quick start is gone?")
	}
	if out, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output(); strings.TrimSpace(string(out)) == "true" {
		t.Fatalf("%s is a shallow clone: blocks read the repository's history (the stored baselines' snapshots), so the doc test needs all of it (git fetch --unshallow; in a workflow, actions/checkout with fetch-depth: 0)", root)
	}
	tmp := t.TempDir()
	clone := freshClone(t, root, filepath.Join(tmp, "kernelwatch"))
	bin, tmpdir := filepath.Join(tmp, "bin"), filepath.Join(tmp, "tmp")
	os.MkdirAll(tmpdir, 0o755)
	env := blockEnv(bin, tmpdir)
	start := time.Now()
	install := exec.Command("go", "install", "./cmd/regress")
	install.Dir, install.Env = clone, env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/regress in the clone: %v\n%s", err, out)
	}
	t.Logf("fresh clone and go install ./cmd/regress: %.1fs", time.Since(start).Seconds())
	var last []byte
	for _, b := range blocks {
		switch kind, _, _ := Classify(b); kind {
		case Run:
			start := time.Now()
			stdout, stderr, err := runBlock(b, clone, env, blockTimeout)
			t.Logf("ran %s in %.1fs: %s", b.Where(), time.Since(start).Seconds(), firstCommand(b.Body))
			if err != nil {
				t.Errorf("%s: %v\n--- the block:\n%s--- its output:\n%s%s", b.Where(), err, b.Body, tail(stdout, 60), tail(stderr, 30))
			}
			last = stdout
		case Output:
			if err := MatchOutput(b.Body, string(last)); err != nil {
				t.Errorf("%s: the output shown is not what the block before it prints: %v\n--- it printed:\n%s", b.Where(), err, last)
			}
		}
	}
}

// repoRoot is the root of the repository this package is in.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// freshClone clones root into dir and brings the clone to the state of
// root's working tree (tracked and untracked files .gitignore does not
// exclude), committed, so that nothing ignored — build outputs, binaries —
// reaches the blocks.
func freshClone(t *testing.T, root, dir string) string {
	t.Helper()
	git := func(dir string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=doctest", "GIT_AUTHOR_EMAIL=doctest@example.invalid",
			"GIT_COMMITTER_NAME=doctest", "GIT_COMMITTER_EMAIL=doctest@example.invalid")
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, ee.Stderr)
			}
			t.Fatalf("git %s in %s: %v", strings.Join(args, " "), dir, err)
		}
		return out
	}
	git(root, "clone", "--quiet", "--no-hardlinks", root, dir)
	want := map[string]bool{}
	for _, f := range strings.Split(string(git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")), "\x00") {
		if f == "" {
			continue
		}
		want[f] = true
		src, dst := filepath.Join(root, f), filepath.Join(dir, f)
		info, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			os.Remove(dst) // deleted in the working tree
			delete(want, f)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		os.Remove(dst)
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range strings.Split(string(git(dir, "ls-files", "-z")), "\x00") {
		if f != "" && !want[f] {
			os.Remove(filepath.Join(dir, f)) // removed from the index in the working tree
		}
	}
	if len(git(dir, "status", "--porcelain")) > 0 {
		git(dir, "add", "-A")
		git(dir, "commit", "--quiet", "--no-verify", "-m", "doctest: the working tree")
	}
	return dir
}

// blockEnv is the environment of the blocks: this process's, without
// anything of GitHub's or secret, with bin first on PATH and as GOBIN (a
// block's go install stays in the test's directory), no module downloads,
// TMPDIR in the test's directory, a git identity for commits, and
// KERNELWATCH_DOCTEST set so that a block running go test does not run this
// test again.
func blockEnv(bin, tmpdir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		switch {
		case strings.HasPrefix(u, "GITHUB_"), strings.HasPrefix(u, "RUNNER_"), strings.HasPrefix(u, "ACTIONS_"),
			strings.Contains(u, "TOKEN"), strings.Contains(u, "SECRET"), strings.HasPrefix(u, "GIT_"),
			strings.HasPrefix(u, "KERNELWATCH_"), u == "PATH", u == "GOBIN", u == "GOPROXY", u == "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+bin, "GOPROXY=off",
		"TMPDIR="+tmpdir, "GIT_AUTHOR_NAME=kernelwatch docs", "GIT_AUTHOR_EMAIL=docs@example.invalid",
		"GIT_COMMITTER_NAME=kernelwatch docs", "GIT_COMMITTER_EMAIL=docs@example.invalid", "KERNELWATCH_DOCTEST=1")
}

// runBlock runs a block's body with bash -e -o pipefail in dir, its own
// process group killed whole after timeout.
func runBlock(b Block, dir string, env []string, timeout time.Duration) (stdout, stderr []byte, err error) {
	script, err := os.CreateTemp("", "doctest-*.sh")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(script.Name())
	script.WriteString(b.Body)
	script.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-e", "-o", "pipefail", script.Name())
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: killed", timeout)
	} else if err != nil {
		err = fmt.Errorf("the block failed: %w", err)
	}
	return out.Bytes(), errOut.Bytes(), err
}

func firstCommand(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

func tail(b []byte, n int) string {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines]\n", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "")
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		info, body string
		kind       Kind
		tag        string
		bad        string // a part of the error, "" for none
	}{
		{"sh", "regress compare a b\n", Run, "", ""},
		{"sh", "code=0; regress compare a b || code=$?\ntest $code -eq 1\n", Run, "", ""},
		{"sh", "regress compare a b || test $? -eq 1\n", Run, "", "also passes when the command succeeds"},
		{"sh gpu", "./kernels.test\n", Listed, "gpu", ""},
		{"sh github", "gh release list\n", Listed, "github", ""},
		{"sh ci", "go run ./cmd/regress\n", Listed, "ci", ""},
		{"sh slow", "sleep 600\n", Other, "", "tagged gpu, github or ci"},
		{"sh gpu github", "x\n", Other, "", "tagged gpu, github or ci"},
		{"bash", "regress check\n", Other, "", "write commands as ```sh"},
		{"console", "$ regress check\n", Other, "", "write commands as ```sh"},
		{"text output", "PASS\n", Output, "", ""},
		{"text", "regress check [flags]\n", Other, "", ""},
		{"text foo", "x\n", Other, "", "only tag of a text block is output"},
		{"yaml", "version: 1\n", Other, "", ""},
		{"", "$ regress compare old.bench new.bench\n", Other, "", "holds a command"},
		{"", "  regress check --count 6\n", Other, "", "holds a command"},
		{"", "go test ./...\n", Other, "", "holds a command"},
		{"", "count: 10            rounds asked for\n", Other, "", ""},
	} {
		kind, tag, err := Classify(Block{File: "README.md", Line: 7, Info: tc.info, Body: tc.body})
		switch {
		case kind != tc.kind || tag != tc.tag:
			t.Errorf("```%s %q: kind %d tag %q, want %d %q", tc.info, tc.body, kind, tag, tc.kind, tc.tag)
		case tc.bad == "" && err != nil:
			t.Errorf("```%s %q: %v", tc.info, tc.body, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.HasPrefix(err.Error(), "README.md:7: ")):
			t.Errorf("```%s %q: error %v, want README.md:7: …%s…", tc.info, tc.body, err, tc.bad)
		}
	}
}

func TestParse(t *testing.T) {
	page := "# t\n\n```sh\necho one\n```\n\n- a list item:\n\n  ```sh gpu\n  ./x.test\n  ```\n\n````text\n```sh\nnot a block\n```\n````\n~~~\n$ y\n~~~\n"
	blocks, err := Parse("p.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{{"p.md", 3, "sh", "echo one\n"}, {"p.md", 9, "sh gpu", "./x.test\n"}, {"p.md", 13, "text", "```sh\nnot a block\n```\n"}, {"p.md", 18, "", "$ y\n"}}
	if fmt.Sprint(blocks) != fmt.Sprint(want) {
		t.Errorf("blocks\n%+v\nwant\n%+v", blocks, want)
	}
	if _, err := Parse("p.md", []byte("x\n```sh\necho\n")); err == nil || !strings.Contains(err.Error(), "p.md:2: ") {
		t.Errorf("unclosed block: %v", err)
	}
}

func TestMatchOutput(t *testing.T) {
	got := "baseline: a\ncurrent: b\n\nsec/op  x  y\nA  1  2  regression\nB  1  1  unchanged\nC  1  1  unchanged\n\nFAIL: 1 regression\n"
	for _, tc := range []struct {
		want string
		ok   bool
	}{
		{"sec/op  x  y\nA  1  2  regression\n", true},
		{"sec/op  x  y\nA  1  2  regression   \n…\nFAIL: 1 regression\n", true},
		{"baseline: a\n...\nC  1  1  unchanged\n", true},
		{"sec/op  x  y\nB  1  1  unchanged\n", false},          // a row left out without "…"
		{"A  1  2  regression\n…\nsec/op  x  y\n", false},      // out of order
		{"A  1  2  improvement\n", false},                      // not printed
		{"FAIL: 1 regression\n…\nFAIL: 1 regression\n", false}, // once only
	} {
		err := MatchOutput(tc.want, got)
		if (err == nil) != tc.ok {
			t.Errorf("MatchOutput(%q): %v, want ok %v", tc.want, err, tc.ok)
		}
	}
}

func TestAnchors(t *testing.T) {
	a := Anchors([]byte("# kernelwatch\n## `regress check` (and bare `regress`)\n```sh\n# not a heading\n```\n## Why a verdict can be trusted\n### Two setups\n### Two setups\n#hashtag\n"))
	for _, want := range []string{"kernelwatch", "regress-check-and-bare-regress", "why-a-verdict-can-be-trusted", "two-setups", "two-setups-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] || a["hashtag"] {
		t.Errorf("anchors of non-headings: %v", a)
	}
}

// TestCheckFindsProblems runs Check on a repository whose docs break every
// rule once, beside a page that breaks none: each problem is found, on its
// line, and the good page has none. This is how the doc test fails on an
// untagged command.
func TestCheckFindsProblems(t *testing.T) {
	root := t.TempDir()
	write := func(name, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".ci/run", "go test ./...\ngo run ./cmd/regress\n")
	write("README.md", strings.Join([]string{
		"# Tool",                                // 1
		"",                                      // 2
		"```",                                   // 3
		"$ regress compare old.bench new.bench", // 4
		"```",                                   // 5
		"```bash",                               // 6
		"regress check",                         // 7
		"```",                                   // 8
		"```text output",                        // 9
		"PASS",                                  // 10
		"```",                                   // 11
		"```sh ci",                              // 12
		"go run ./cmd/regress   # the main job", // 13
		"go vet ./...",                          // 14
		"```",                                   // 15
		"See [config](docs/config.md), [gone](docs/gone.md) and [nowhere](#nowhere), as design §5 says (issue 15).", // 16
		"```sh nightly", // 17
		"sleep 1",       // 18
		"```",           // 19
		"",
	}, "\n"))
	write("docs/config.md", "# Configuration\n\n## Keys\n\n```sh\ncode=0; regress compare a b || code=$?\ntest $code -eq 1\n```\n\n```text output\nFAIL\n```\n\nBack to [the tool](../README.md#tool), [keys](#keys).\n\n```sh ci\ngo test ./...\n```\n")
	_, problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(problems, "\n")
	t.Logf("problems:\n%s", got)
	for _, want := range []string{
		"README.md:3: a block without a language holds a command",
		"README.md:6: ```bash: write commands as ```sh",
		"README.md:9: a ```text output block must follow the ```sh block",
		`README.md:12: ` + "```sh ci, but .ci/run does not run \"go vet ./...\"",
		"README.md:16: link docs/gone.md: no such file docs/gone.md",
		"README.md:16: link #nowhere: README.md has no heading #nowhere",
		`README.md:16: "design §"`,
		`README.md:16: "issue 15"`,
		"README.md:17: ```sh nightly: a sh block is run unless tagged gpu, github or ci",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Check missed %q", want)
		}
	}
	if strings.Contains(got, "docs/config.md") {
		t.Errorf("Check found problems in a page without any")
	}
	if n := len(problems); n != 9 {
		t.Errorf("%d problems, want 9", n)
	}
	write("README.md", "# Tool\n"+strings.Repeat("line\n", MaxReadmeLines))
	if _, problems, _ := Check(root); len(problems) != 1 || !strings.Contains(problems[0], "README.md: 251 lines") {
		t.Errorf("a README of %d lines: %q", MaxReadmeLines+1, problems)
	}
}

func TestRunBlock(t *testing.T) {
	dir := t.TempDir()
	env := blockEnv(t.TempDir(), t.TempDir())
	b := Block{File: "README.md", Line: 3, Body: "echo one\nregress_missing_command_xyz\necho never\n"}
	out, errOut, err := runBlock(b, dir, env, time.Minute)
	if err == nil || string(out) != "one\n" || !strings.Contains(string(errOut), "regress_missing_command_xyz") {
		t.Errorf("a failing command: err %v, stdout %q, stderr %q; want the block to stop there and fail", err, out, errOut)
	}
	b.Body = "false || test $? -eq 1\necho \"$KERNELWATCH_DOCTEST $PWD\"\n"
	if out, _, err := runBlock(b, dir, env, time.Minute); err != nil || string(out) != "1 "+dir+"\n" {
		t.Errorf("an expected failure: err %v, stdout %q", err, out)
	}
	start := time.Now()
	b.Body = "sleep 30 &\nsleep 30\n"
	if _, _, err := runBlock(b, dir, env, 500*time.Millisecond); err == nil || !strings.Contains(err.Error(), "killed") || time.Since(start) > 15*time.Second {
		t.Errorf("a block past its time: %v after %v", err, time.Since(start))
	}
}

package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	ghpub "github.com/kernelwatch/kernelwatch/regress/publish/github"
)

const secretToken = "ghp_cmdTestSecretNeverPrinted42"

// invokeEnv runs the command in-process with an environment.
func invokeEnv(t *testing.T, dir string, envm map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return envm[k] }, dir: dir}
	code := run(e, args)
	res := result{code, out.String(), errb.String()}
	if strings.Contains(res.stdout+res.stderr, secretToken) {
		t.Errorf("the token appears in the output:\n%s\n%s", res.stdout, res.stderr)
	}
	return res
}

func failReportFile(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "regress", "publish", "comment", "testdata", "fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	return write(t, dir, "report.json", string(data))
}

// miniGitHub answers the calls of one comment and one status.
func miniGitHub(t *testing.T, echo bool) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+secretToken {
			w.WriteHeader(401)
			io.WriteString(w, `{"message":"Bad credentials"}`)
			return
		}
		if echo { // a hostile or broken server that repeats the credentials
			w.WriteHeader(403)
			json.NewEncoder(w).Encode(map[string]string{"message": "Resource not accessible by integration " + r.Header.Get("Authorization")})
			return
		}
		switch {
		case r.Method == "GET" && r.URL.Path == "/api/v3/user":
			w.WriteHeader(403)
			io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
		case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/comments"):
			io.WriteString(w, `[]`)
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/comments"):
			var in map[string]string
			json.Unmarshal(body, &in)
			w.WriteHeader(201)
			json.NewEncoder(w).Encode(map[string]any{"id": 1, "body": in["body"], "html_url": "https://github.example/o/r/pull/7#issuecomment-1",
				"user": map[string]string{"login": "github-actions[bot]", "type": "Bot"}})
		case r.Method == "POST" && strings.Contains(r.URL.Path, "/statuses/"):
			w.WriteHeader(201)
			io.WriteString(w, `{}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestCommentPublishes(t *testing.T) {
	dir := t.TempDir()
	rep := failReportFile(t, dir)
	srv, calls := miniGitHub(t, false)
	envm := map[string]string{"GITHUB_TOKEN": secretToken, "GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY": "o/r",
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"), "GITHUB_OUTPUT": filepath.Join(dir, "output"),
		"GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "99"}
	res := invokeEnv(t, dir, envm, "comment", "--pr", "7", "--sha", strings.Repeat("a", 40), "--status-context", "kernelwatch", rep)
	if res.code != exitFail {
		t.Fatalf("exit %d, want 1 (the report fails); stderr:\n%s", res.code, res.stderr)
	}
	want := []string{"GET /api/v3/user", "GET /api/v3/repos/o/r/issues/7/comments", "POST /api/v3/repos/o/r/issues/7/comments",
		"POST /api/v3/repos/o/r/statuses/" + strings.Repeat("a", 40)}
	if strings.Join(*calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s", strings.Join(*calls, "\n"))
	}
	if !strings.Contains(res.stderr, "created the gpu-nvidia-h100-80gb-hbm3 comment on #7") {
		t.Errorf("stderr:\n%s", res.stderr)
	}
	out, _ := os.ReadFile(envm["GITHUB_OUTPUT"])
	for _, w := range []string{"verdict<<", "\nfail\n", "comment-url<<", "https://github.example/o/r/pull/7#issuecomment-1", "report<<", rep} {
		if !strings.Contains(string(out), w) {
			t.Errorf("outputs lack %q:\n%s", w, out)
		}
	}
	if sum, _ := os.ReadFile(envm["GITHUB_STEP_SUMMARY"]); !bytes.HasPrefix(sum, []byte("### ❌ FAIL")) {
		t.Errorf("summary:\n%.200s", sum)
	}
}

func TestCommentErrors(t *testing.T) {
	dir := t.TempDir()
	rep := failReportFile(t, dir)
	srv, _ := miniGitHub(t, true)
	base := map[string]string{"GITHUB_REPOSITORY": "o/r"}
	withToken := map[string]string{"GITHUB_REPOSITORY": "o/r", "REGRESS_GITHUB_TOKEN": secretToken, "GITHUB_API_URL": srv.URL}
	bad := write(t, dir, "bad.json", `{"schema":"kernelwatch.regress/v1","verdict":"pass","comparisons":[],"counts":{"regression":3}}`)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no token", base, []string{"comment", "--pr", "1", rep}, "no GitHub token: set GITHUB_TOKEN"},
		{"no file", base, []string{"comment"}, "want exactly one report file"},
		{"invalid report", base, []string{"comment", bad}, "counts"},
		{"token is not a flag", base, []string{"comment", "--token", "x", rep}, "flag --token: not a flag of regress comment"},
		{"echoing server", withToken, []string{"comment", "--pr", "1", "--sha", strings.Repeat("b", 40), rep}, "Bearer ***: the token lacks the permission pull-requests: read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := invokeEnv(t, dir, tc.env, tc.args...)
			if res.code != exitError || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", res.code, res.stderr, tc.want)
			}
		})
	}
}

func TestCommentDryRun(t *testing.T) {
	dir := t.TempDir()
	rep := failReportFile(t, dir)
	res := invokeEnv(t, dir, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "comment", "--dry-run", "--pr", "3", rep)
	if res.code != exitFail || !strings.Contains(res.stdout, "<!-- kernelwatch:v1 class=gpu-nvidia-h100-80gb-hbm3 -->") ||
		!strings.Contains(res.stdout, "== status on : failure: FAIL") {
		t.Errorf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestCompareGitHub checks that --github on compare publishes the report it
// just made, with the pull request taken from the Actions event.
func TestCompareGitHub(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+"class: cpu-amd64-test\n"+samples("A", 10, 1000, ""))
	slow := write(t, dir, "slow.txt", good+"class: cpu-amd64-test\n"+samples("A", 10, 1300, ""))
	event := write(t, dir, "event.json", `{"number": 7, "pull_request": {"number": 7,
		"head": {"sha": "`+strings.Repeat("b", 40)+`", "repo": {"full_name": "o/r"}},
		"base": {"sha": "`+strings.Repeat("1", 40)+`", "repo": {"full_name": "o/r"}}}, "repository": {"full_name": "o/r"}}`)
	srv, calls := miniGitHub(t, false)
	envm := map[string]string{"GITHUB_TOKEN": secretToken, "GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY": "o/r",
		"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": event,
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"), "GITHUB_OUTPUT": filepath.Join(dir, "output")}
	res := invokeEnv(t, dir, envm, "compare", "--config", "none", "--github", "--format", "json", "--out", "r.json", base, slow)
	if res.code != exitFail {
		t.Fatalf("exit %d, want 1 (a 30%% regression); stderr:\n%s", res.code, res.stderr)
	}
	if got := strings.Join(*calls, "\n"); !strings.Contains(got, "POST /api/v3/repos/o/r/issues/7/comments") {
		t.Errorf("no comment was posted on #7; calls:\n%s", got)
	}
	out, _ := os.ReadFile(envm["GITHUB_OUTPUT"])
	if !strings.Contains(string(out), filepath.Join(dir, "r.json")) || !strings.Contains(string(out), "\nfail\n") {
		t.Errorf("outputs:\n%s", out)
	}
	// Without a token the report is still written, and the failure to
	// publish is an error naming the flag.
	delete(envm, "GITHUB_TOKEN")
	res = invokeEnv(t, dir, envm, "compare", "--config", "none", "--github", base, slow)
	if res.code != exitError || !strings.Contains(res.stderr, "--github") || !strings.Contains(res.stdout, "regression") {
		t.Errorf("no token: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}

// workflowCommands returns the lines of out that the Actions runner would
// execute as workflow commands: it ends a line at LF or CR and accepts
// "::name::" after leading white space or "##[name]" anywhere in a line.
func workflowCommands(out string) []string {
	var cmds []string
	for _, l := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		t := strings.TrimLeft(l, " \t\u00a0\u2003\u0085")
		i := strings.Index(l, "##[")
		if strings.HasPrefix(t, "::") && strings.Contains(t[2:], "::") || i >= 0 && strings.Contains(l[i:], "]") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

// TestCommentLogInjection feeds regress comment reports and arguments
// whose names carry workflow commands, and checks that nothing it prints
// would be executed by the runner: neither errors that quote the name nor
// errors that repeat it as it is (a file name).
func TestCommentLogInjection(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "regress", "publish", "comment", "testdata", "fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(good, &r); err != nil {
		t.Fatal(err)
	}
	names := []string{
		"x\n::error title=Forged::the GPU check passed",
		"y\r::add-mask::ghs_",
		"z\n  ::stop-commands::tok",
		"w ##[error]legacy",
	}
	for i, name := range names {
		c := r["comparisons"].([]any)[0].(map[string]any)
		c["name"], c["gate"] = name, "loud" // an invalid gate: the error names the comparison
		data, _ := json.Marshal(r)
		rep := write(t, dir, fmt.Sprintf("r%d.json", i), string(data))
		res := invokeEnv(t, dir, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "comment", "--dry-run", rep)
		if res.code != exitError || !strings.Contains(res.stderr, "unknown gate") {
			t.Errorf("%q: exit %d\n%s", name, res.code, res.stderr)
		}
		if c := workflowCommands(res.stderr); len(c) > 0 {
			t.Errorf("%q: the runner would execute %q", name, c)
		}
	}
	// An error that repeats its argument as given: a missing file.
	res := invokeEnv(t, dir, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "comment", "--dry-run", "missing\n::error title=Forged::x.json")
	if res.code != exitError || len(workflowCommands(res.stderr)) > 0 {
		t.Errorf("missing file: exit %d, commands %q\n%s", res.code, workflowCommands(res.stderr), res.stderr)
	}
}

// runGitHub serves a pull request run's artifacts (name → zip) and
// records every request; comments, statuses and the pull-request lookup
// answer as GitHub would.
func runGitHub(t *testing.T, artifacts map[string][]byte) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var calls []string
	var srv *httptest.Server
	names := slices.Sorted(maps.Keys(artifacts))
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if id, ok := strings.CutPrefix(r.URL.Path, "/blob/"); ok {
			n, _ := strconv.Atoi(id)
			w.Write(artifacts[names[n]])
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+secretToken {
			w.WriteHeader(401)
			return
		}
		p := strings.TrimPrefix(r.URL.Path, "/api/v3")
		switch {
		case p == "/repos/base/repo/actions/runs/123456789/artifacts":
			var list []map[string]any
			for i, n := range names {
				list = append(list, map[string]any{"id": i, "name": n, "size_in_bytes": len(artifacts[n]), "workflow_run": map[string]any{"id": 123456789}})
			}
			json.NewEncoder(w).Encode(map[string]any{"total_count": len(list), "artifacts": list})
		case strings.HasPrefix(p, "/repos/base/repo/actions/artifacts/") && strings.HasSuffix(p, "/zip"):
			id := strings.TrimSuffix(strings.TrimPrefix(p, "/repos/base/repo/actions/artifacts/"), "/zip")
			w.Header().Set("Location", srv.URL+"/blob/"+id)
			w.WriteHeader(302)
		case strings.HasSuffix(p, "/jobs"):
			io.WriteString(w, `{"total_count": 1, "jobs": [{"name": "cpu", "status": "completed", "conclusion": "success"}]}`)
		case strings.HasSuffix(p, "/approvals"):
			io.WriteString(w, `[]`)
		case strings.HasPrefix(p, "/repos/base/repo/commits/"):
			io.WriteString(w, `[{"number": 8, "state": "open", "head": {"sha": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "repo": {"full_name": "forker/repo"}}}]`)
		case p == "/user":
			w.WriteHeader(403)
			io.WriteString(w, `{"message":"Resource not accessible by integration"}`)
		case r.Method == "GET" && strings.HasSuffix(p, "/comments"):
			io.WriteString(w, `[]`)
		case r.Method == "POST" && strings.HasSuffix(p, "/comments"):
			w.WriteHeader(201)
			io.WriteString(w, `{"id": 1, "html_url": "https://github.example/base/repo/pull/8#issuecomment-1", "user": {"login": "github-actions[bot]", "type": "Bot"}}`)
		case r.Method == "POST" && strings.Contains(p, "/statuses/"):
			w.WriteHeader(201)
			io.WriteString(w, `{}`)
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func zipReport(t *testing.T, report []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("report.json")
	w.Write(report)
	zw.Close()
	return buf.Bytes()
}

// reportOfClass is a testdata report with both sides' class set.
func reportOfClass(t *testing.T, file, class string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "regress", "publish", "comment", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	json.Unmarshal(data, &r)
	for _, side := range []string{"baseline", "current"} {
		r[side].(map[string]any)["config"].(map[string]any)["class"] = class
	}
	out, _ := json.Marshal(r)
	return out
}

// TestCommentFromRunForgery replays the review's attack end to end: a
// fork's run uploads a passing report of the GPU class under the CPU
// artifact's name, and under the GPU artifact's name without the approved
// GPU job. regress comment --from-run refuses it with exit 2 and writes
// nothing to GitHub; a genuine CPU report of the same run is published
// with the status context its name gives.
func TestCommentFromRunForgery(t *testing.T) {
	dir := t.TempDir()
	event, err := filepath.Abs(filepath.Join("..", "..", "regress", "publish", "github", "testdata", "workflow_run.fork.json"))
	if err != nil {
		t.Fatal(err)
	}
	forged := reportOfClass(t, "pass.json", "gpu-nvidia-h100-80gb-hbm3")
	for _, tc := range []struct {
		name      string
		artifacts map[string][]byte
		want      string
	}{
		{"CPU name", map[string][]byte{"regress-report-cpu": zipReport(t, forged)},
			`regress-report-cpu: the report is of class "gpu-nvidia-h100-80gb-hbm3"; regress-report-cpu may only hold classes cpu-*`},
		{"GPU name", map[string][]byte{"regress-report-gpu": zipReport(t, forged),
			"regress-report-cpu": zipReport(t, reportOfClass(t, "pass.json", "cpu-amd64-x"))},
			`regress-report-gpu: not published for a fork's pull request: run 123456789 has no job "gpu" that ran to completion`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := runGitHub(t, tc.artifacts)
			envm := map[string]string{"GITHUB_TOKEN": secretToken, "GITHUB_API_URL": srv.URL, "GITHUB_EVENT_NAME": "workflow_run",
				"GITHUB_EVENT_PATH": event, "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md")}
			res := invokeEnv(t, dir, envm, "comment", "--from-run")
			if res.code != exitError || !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "nothing published") {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", res.code, res.stderr, tc.want)
			}
			for _, c := range *calls {
				if !strings.HasPrefix(c, "GET ") {
					t.Errorf("wrote to GitHub: %s", c)
				}
			}
		})
	}

	srv, calls := runGitHub(t, map[string][]byte{"regress-report-cpu": zipReport(t, reportOfClass(t, "pass.json", "cpu-amd64-x"))})
	envm := map[string]string{"GITHUB_TOKEN": secretToken, "GITHUB_API_URL": srv.URL, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": event}
	res := invokeEnv(t, dir, envm, "comment", "--from-run")
	got := strings.Join(*calls, "\n")
	if res.code != exitPass || !strings.Contains(got, "POST /api/v3/repos/base/repo/statuses/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") ||
		!strings.Contains(got, "POST /api/v3/repos/base/repo/issues/8/comments") || !strings.Contains(res.stderr, "set status kernelwatch/cpu=success") {
		t.Errorf("genuine CPU report: exit %d\n%s\ncalls:\n%s", res.code, res.stderr, got)
	}

	// The help states the allow-list the code applies.
	help := invokeEnv(t, dir, nil, "comment", "-h").stdout
	for _, a := range ghpub.ReportArtifacts {
		if !regexp.MustCompile(regexp.QuoteMeta(a.Name) + `\s+status ` + regexp.QuoteMeta(a.StatusContext) + `, classes ` + regexp.QuoteMeta(a.ClassPrefix) + `\*`).MatchString(help) {
			t.Errorf("comment -h does not state %+v:\n%s", a, help)
		}
	}

	// The target and the status context are not the caller's to choose.
	res = invokeEnv(t, dir, envm, "comment", "--from-run", "--status-context", "kernelwatch/gpu")
	if res.code != exitError || !strings.Contains(res.stderr, "not --status-context") {
		t.Errorf("--status-context with --from-run: exit %d\n%s", res.code, res.stderr)
	}
}

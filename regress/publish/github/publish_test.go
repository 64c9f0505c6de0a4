package github

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

func loadReport(t *testing.T) *report.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "comment", "testdata", "fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.Read(f, "fail.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readOutputs parses a GITHUB_OUTPUT file.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	re := regexp.MustCompile(`(?s)([a-z-]+)<<(ghadelimiter_[0-9a-f]+)\n(.*?)\n(ghadelimiter_[0-9a-f]+)\n`)
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		if m[2] != m[4] {
			t.Fatalf("delimiters differ: %q", m[0])
		}
		out[m[1]] = m[3]
	}
	return out
}

func TestPublish(t *testing.T) {
	c, f, log := setup(t)
	f.prs = []fakePR{{Number: 8, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", State: "open"}}
	dir := t.TempDir()
	summary, outputs := filepath.Join(dir, "summary.md"), filepath.Join(dir, "output")
	os.WriteFile(summary, []byte("# earlier step\n"), 0o644)
	tg, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "workflow_run",
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "workflow_run.fork.json")}), "", 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p := Publication{Report: loadReport(t), ReportPath: "/tmp/report.json", Target: tg, Comment: true,
		StatusContext: "kernelwatch / gpu", ServerURL: "https://github.example", SummaryPath: summary, OutputPath: outputs}
	out, err := Publish(ctx(t), c, p)
	if err != nil {
		t.Fatal(err)
	}
	if out.PR != 8 || out.Comment.Action != Created || !out.Status {
		t.Errorf("outcome %+v", out)
	}
	post := f.last("POST")
	testMethod(t, post, "POST")
	if post.Path != "/repos/base/repo/statuses/"+shaB {
		t.Errorf("status posted to %s, want the head commit", post.Path)
	}
	st := f.statuses[0]
	if st["state"] != "failure" || st["context"] != "kernelwatch / gpu" ||
		st["target_url"] != "https://github.example/base/repo/actions/runs/123456789" ||
		st["description"] != comment.StatusDescription(p.Report) {
		t.Errorf("status %v", st)
	}
	body := f.comments[8][0].Body
	if !strings.Contains(body, "[job summary](https://github.example/base/repo/actions/runs/123456789)") ||
		!strings.HasPrefix(body, comment.Marker("gpu-nvidia-h100-80gb-hbm3")+"\n<!-- kernelwatch:head sha="+shaB+" -->\n") {
		t.Errorf("comment body:\n%s", body)
	}
	sum, _ := os.ReadFile(summary)
	if !strings.HasPrefix(string(sum), "# earlier step\n### ❌ FAIL") || strings.Contains(string(sum), "kernelwatch:v1") {
		t.Errorf("summary:\n%.300s", sum)
	}
	got := readOutputs(t, outputs)
	want := map[string]string{"verdict": "fail", "regressions": "5", "comment-url": out.Comment.URL, "report": "/tmp/report.json"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("output %s = %q, want %q", k, got[k], v)
		}
	}
	if !strings.Contains(log.String(), "created the gpu-nvidia-h100-80gb-hbm3 comment on #8") {
		t.Errorf("log:\n%s", log)
	}

	// The same run again: nothing changes on GitHub.
	n := f.count("PATCH")
	if out, err := Publish(ctx(t), c, p); err != nil || out.Comment.Action != Unchanged || f.count("PATCH") != n {
		t.Errorf("rerun: %+v, %v", out, err)
	}
}

func TestPublishPushAndSummaryOnly(t *testing.T) {
	c, f, _ := setup(t)
	tg, err := TargetFrom(env(map[string]string{"GITHUB_EVENT_NAME": "push",
		"GITHUB_EVENT_PATH": filepath.Join("testdata", "push.json")}), "", 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Publish(ctx(t), c, Publication{Report: loadReport(t), Target: tg, Comment: true, StatusContext: "kw"})
	if err != nil || out.PR != 0 || !out.Status {
		t.Fatalf("%+v, %v", out, err)
	}
	wantLog(t, f, "POST /repos/base/repo/statuses/"+shaC)

	// No client at all: the summary and the outputs still work.
	dir := t.TempDir()
	out, err = Publish(ctx(t), nil, Publication{Report: loadReport(t), Target: tg,
		SummaryPath: filepath.Join(dir, "s"), OutputPath: filepath.Join(dir, "o")})
	if err != nil || out.Summary == 0 {
		t.Fatalf("%+v, %v", out, err)
	}
	if o := readOutputs(t, filepath.Join(dir, "o")); o["verdict"] != "fail" || o["comment-url"] != "" {
		t.Errorf("outputs %v", o)
	}
}

func TestSummaryBudget(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	os.WriteFile(full, bytes.Repeat([]byte("x"), comment.SummaryBudget-1000), 0o644)
	out, err := Publish(ctx(t), nil, Publication{Report: loadReport(t), Target: Target{Repo: baseRepo}, SummaryPath: full})
	if err != nil || out.Summary != 0 {
		t.Errorf("full summary: %+v, %v", out, err)
	}
	half := filepath.Join(dir, "half")
	os.WriteFile(half, bytes.Repeat([]byte("x"), comment.SummaryBudget-6000), 0o644)
	big := loadReport(t)
	for i := 0; i < 100; i++ {
		c := big.Comparisons[len(big.Comparisons)-1] // unchanged
		big.Comparisons = append(big.Comparisons, c)
		big.Counts.Add(c.Verdict)
	}
	if _, err := Publish(ctx(t), nil, Publication{Report: big, Target: Target{Repo: baseRepo}, SummaryPath: half}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(half)
	if len(data) > comment.SummaryBudget || !strings.Contains(string(data), "not shown here") {
		t.Errorf("summary %d bytes, truncation noted %v", len(data), strings.Contains(string(data), "not shown here"))
	}
}

func TestOutputsCannotInject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o")
	if err := WriteOutputs(path, []Output{{"report", "a\nverdict=pass\nghadelimiter_x"}}); err != nil {
		t.Fatal(err)
	}
	got := readOutputs(t, path)
	if len(got) != 1 || got["report"] != "a\nverdict=pass\nghadelimiter_x" {
		t.Errorf("outputs %q", got)
	}
	if err := WriteOutputs(path, []Output{{"a\nb", "x"}}); err == nil {
		t.Error("bad output name accepted")
	}
}

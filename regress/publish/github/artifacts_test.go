package github

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const runID = 123456789 // the run of testdata/workflow_run.fork.json

// reportJSON is a testdata report with its classes set to class ("" keeps
// them) and, with pass, its verdict forged to a pass.
func reportJSON(t *testing.T, file, class string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "comment", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if class == "" {
		return data
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"baseline", "current"} {
		r[side].(map[string]any)["config"].(map[string]any)["class"] = class
	}
	out, _ := json.Marshal(r)
	return out
}

// zipOf zips files (name, content, name, content, ...).
func zipOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// forkRun is the target of a fork's pull request #8 seen from regress-comment.
func forkRun(t *testing.T, f *fakeGitHub) Target {
	t.Helper()
	f.prs = []fakePR{{Number: 8, HeadSHA: shaB, HeadRepo: "forker/repo", HeadBranch: "main", State: "open"}}
	tg, err := ReadEvent("workflow_run", filepath.Join("testdata", "workflow_run.fork.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !tg.Fork || tg.RunID != runID {
		t.Fatalf("target %+v", tg)
	}
	return tg
}

// approve makes the fake's run look like one whose GPU job ran after a
// maintainer approved environment regress-gpu.
func approve(f *fakeGitHub) {
	f.jobs = []map[string]any{
		{"id": 1, "name": "cpu", "status": "completed", "conclusion": "success"},
		{"id": 2, "name": "gpu (1)", "status": "completed", "conclusion": "success"},
		{"id": 3, "name": "gpu-join", "status": "completed", "conclusion": "success"},
	}
	f.approvals = []map[string]any{{"state": "approved", "comment": "", "user": map[string]any{"login": "maintainer"},
		"environments": []map[string]any{{"id": 5, "name": "regress-gpu"}}}}
}

// publishRun publishes what RunReports accepts, as regress comment
// --from-run does.
func publishRun(t *testing.T, c *Client, tg Target) error {
	t.Helper()
	reports, err := c.RunReports(ctx(t), tg, DefaultApproval)
	if err != nil {
		return err
	}
	for _, rr := range reports {
		if _, err := Publish(ctx(t), c, Publication{Report: rr.Report, Target: tg, Class: rr.Class, Comment: true,
			StatusContext: rr.Artifact.StatusContext}); err != nil {
			return err
		}
	}
	return nil
}

// TestForgedGPUStatus is the attack: a fork's hosted CPU job uploads
// artifacts with a passing report of the GPU class, under the GPU name and
// under the CPU name. Neither may touch the GPU comment or set a status.
func TestForgedGPUStatus(t *testing.T) {
	forged := reportJSON(t, "pass.json", "gpu-nvidia-h100-80gb-hbm3")
	for _, tc := range []struct {
		name, artifact, want string
	}{
		{"GPU name, no approval", "regress-report-gpu", `no job "gpu" that ran to completion`},
		{"CPU name, GPU class", "regress-report-cpu", `the report is of class "gpu-nvidia-h100-80gb-hbm3"; regress-report-cpu may only hold classes cpu-*`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, _ := setup(t)
			tg := forkRun(t, f)
			gpuComment := f.addComment(8, "octo-user", "User", body(shaB, "FAIL: the real GPU check"))
			f.artifacts = []fakeArtifact{
				{ID: 10, Name: tc.artifact, RunID: runID, Zip: zipOf(t, "report.json", string(forged))},
				{ID: 11, Name: "regress-report-cpu-extra", RunID: runID, Zip: zipOf(t, "report.json", string(forged))},
			}
			if tc.artifact == "regress-report-gpu" {
				f.artifacts = append(f.artifacts, fakeArtifact{ID: 12, Name: "regress-report-cpu", RunID: runID,
					Zip: zipOf(t, "report.json", string(reportJSON(t, "pass.json", "")))})
			}
			err := publishRun(t, c, tg)
			if err == nil || !strings.Contains(err.Error(), tc.artifact+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if n := f.count("POST") + f.count("PATCH"); n != 0 {
				t.Errorf("%d writes to GitHub; want none:\n%s", n, strings.Join(f.log(), "\n"))
			}
			if gpuComment.Body != body(shaB, "FAIL: the real GPU check") || len(f.statuses) != 0 {
				t.Errorf("GPU comment %q, statuses %v", gpuComment.Body, f.statuses)
			}
		})
	}
}

// TestApprovedGPUReport publishes a fork's GPU report once the run's GPU
// job ran behind the approved environment, and refuses it when any part
// of that is missing.
func TestApprovedGPUReport(t *testing.T) {
	gpu := reportJSON(t, "fail.json", "")
	for _, tc := range []struct {
		name    string
		tamper  func(f *fakeGitHub)
		wantErr string
	}{
		{"approved", func(f *fakeGitHub) {}, ""},
		{"no approval", func(f *fakeGitHub) { f.approvals = nil }, `no approval of environment "regress-gpu"`},
		{"another environment approved", func(f *fakeGitHub) {
			f.approvals[0]["environments"] = []map[string]any{{"name": "staging"}}
		}, `no approval of environment "regress-gpu"`},
		{"rejected", func(f *fakeGitHub) { f.approvals[0]["state"] = "rejected" }, `no approval`},
		{"GPU job skipped", func(f *fakeGitHub) { f.jobs[1]["conclusion"] = "skipped" }, `no job "gpu" that ran`},
		{"GPU job renamed", func(f *fakeGitHub) { f.jobs[1]["name"] = "gpux" }, `no job "gpu" that ran`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, _ := setup(t)
			tg := forkRun(t, f)
			approve(f)
			tc.tamper(f)
			f.artifacts = []fakeArtifact{{ID: 20, Name: "regress-report-gpu", RunID: runID, Zip: zipOf(t, "report.json", string(gpu))}}
			err := publishRun(t, c, tg)
			if tc.wantErr == "" {
				if err != nil || len(f.statuses) != 1 || f.statuses[0]["context"] != "kernelwatch/gpu" || f.statuses[0]["state"] != "failure" {
					t.Fatalf("error %v, statuses %v", err, f.statuses)
				}
				if f.count("GET /repos/base/repo/actions/runs/123456789/jobs") != 1 || f.count("GET /repos/base/repo/actions/runs/123456789/approvals") != 1 {
					t.Errorf("the approval was not confirmed through the API:\n%s", strings.Join(f.log(), "\n"))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || f.count("POST") != 0 {
				t.Errorf("error %v, want %q; requests:\n%s", err, tc.wantErr, strings.Join(f.log(), "\n"))
			}
			if downloads(f) != 0 {
				t.Error("the artifact was downloaded before its approval was confirmed")
			}
		})
	}

	// A same-repository pull request's run needs no approval record.
	c, f, _ := setup(t)
	tg, err := ReadEvent("workflow_run", filepath.Join("testdata", "workflow_run.same-repo.json"))
	if err != nil || tg.Fork {
		t.Fatalf("%+v, %v", tg, err)
	}
	f.prs = []fakePR{{Number: 7, HeadSHA: shaA, HeadRepo: baseRepo, HeadBranch: "faster-rmsnorm", State: "open"}}
	f.artifacts = []fakeArtifact{{ID: 21, Name: "regress-report-gpu", RunID: tg.RunID, Zip: zipOf(t, "report.json", string(gpu))}}
	if err := publishRun(t, c, tg); err != nil || len(f.statuses) != 1 || f.count("GET /repos/base/repo/actions/runs/123456790/approvals") != 0 {
		t.Errorf("same-repo run: %v, statuses %v\n%s", err, f.statuses, strings.Join(f.log(), "\n"))
	}
}

// TestRunArtifactCap gives a run 30 artifacts named like reports: at most
// one comment and one status per allow-listed name, and a bounded number
// of API calls.
func TestRunArtifactCap(t *testing.T) {
	c, f, log := setup(t)
	tg := forkRun(t, f)
	approve(f)
	cpu := string(reportJSON(t, "pass.json", ""))
	gpu := string(reportJSON(t, "fail.json", ""))
	for i := 0; i < 28; i++ {
		f.artifacts = append(f.artifacts, fakeArtifact{ID: int64(100 + i), Name: fmt.Sprintf("regress-report-x%d", i), RunID: runID,
			Zip: zipOf(t, "report.json", cpu)})
	}
	f.artifacts = append(f.artifacts,
		fakeArtifact{ID: 200, Name: "regress-report-cpu", RunID: runID, Zip: zipOf(t, "report.json", cpu)},
		fakeArtifact{ID: 201, Name: "regress-report-gpu", RunID: runID, Zip: zipOf(t, "report.json", gpu)},
	)
	if err := publishRun(t, c, tg); err != nil {
		t.Fatal(err)
	}
	comments, statuses := len(f.comments[8]), len(f.statuses)
	calls := len(f.log())
	t.Logf("30 artifacts: %d comments, %d statuses, %d requests", comments, statuses, calls)
	if comments != len(ReportArtifacts) || statuses != len(ReportArtifacts) || downloads(f) != 2 {
		t.Errorf("%d comments, %d statuses, %d downloads; want at most %d each", comments, statuses, downloads(f), len(ReportArtifacts))
	}
	if calls > 20 {
		t.Errorf("%d requests:\n%s", calls, strings.Join(f.log(), "\n"))
	}
	if !strings.Contains(log.String(), `ignoring 28 artifacts of run 123456789 named like reports but not on the allow-list: "regress-report-x0"`) {
		t.Errorf("log:\n%s", log)
	}

	// More artifacts than any run of regress-pr.yml makes: refused whole.
	c, f, _ = setup(t)
	tg = forkRun(t, f)
	for i := 0; i <= MaxRunArtifacts; i++ {
		f.artifacts = append(f.artifacts, fakeArtifact{ID: int64(1000 + i), Name: fmt.Sprintf("a%d", i), RunID: runID, Zip: []byte("x")})
	}
	if err := publishRun(t, c, tg); err == nil || !strings.Contains(err.Error(), "more than 300") || f.count("GET") > 2 {
		t.Errorf("error %v after %d requests", err, len(f.log()))
	}
}

// TestRunArtifactChecks refuses artifacts that are not one report.json
// within the size limits, and checks that the token never goes to the
// download address.
func TestRunArtifactChecks(t *testing.T) {
	cpu := string(reportJSON(t, "pass.json", ""))
	for _, tc := range []struct {
		name string
		art  fakeArtifact
		want string
	}{
		{"listed too large", fakeArtifact{Size: MaxArtifactZip + 1, Zip: zipOf(t, "report.json", cpu)}, "bytes; the limit is"},
		{"two files", fakeArtifact{Zip: zipOf(t, "report.json", cpu, "x", "y")}, "must hold report.json and nothing else; it holds 2 files"},
		{"other name", fakeArtifact{Zip: zipOf(t, "../report.json", cpu)}, `"../report.json"`},
		{"not a zip", fakeArtifact{Zip: []byte("PK not really")}, "not a zip"},
		{"invalid report", fakeArtifact{Zip: zipOf(t, "report.json", `{"schema":"kernelwatch.regress/v1","comparisons":[{}]}`)}, "regress-report-cpu/report.json: comparison 0"},
		{"no class", fakeArtifact{Zip: zipOf(t, "report.json", strings.ReplaceAll(cpu, `"class"`, `"klass"`))}, "names no hardware class"},
		{"downloaded too large", fakeArtifact{Size: 100, Zip: bytes.Repeat([]byte("x"), MaxArtifactZip+10)}, "over 20971520 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, _ := setup(t)
			tg := forkRun(t, f)
			tc.art.ID, tc.art.Name, tc.art.RunID = 30, "regress-report-cpu", runID
			f.artifacts = []fakeArtifact{tc.art}
			err := publishRun(t, c, tg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || f.count("POST") != 0 {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}

	c, f, _ := setup(t)
	tg := forkRun(t, f)
	f.artifacts = []fakeArtifact{
		{ID: 40, Name: "regress-report-cpu", RunID: runID, Zip: zipOf(t, "report.json", cpu)},
		{ID: 41, Name: "regress-report-cpu", RunID: runID, Expired: true, Zip: []byte("expired")},
		{ID: 39, Name: "regress-report-cpu", RunID: runID, Zip: []byte("an older attempt's")},
	}
	if err := publishRun(t, c, tg); err != nil || len(f.statuses) != 1 || f.statuses[0]["context"] != "kernelwatch/cpu" {
		t.Fatalf("%v, statuses %v", err, f.statuses)
	}
	for _, r := range f.requests {
		if strings.HasPrefix(r.Path, "/blob/") && (r.Auth != "" || r.Path != "/blob/40") {
			t.Errorf("download %s with Authorization %q", r.Path, r.Auth)
		}
	}
}

// downloads counts the requests for artifact zips at their storage address.
func downloads(f *fakeGitHub) int {
	n := 0
	for _, l := range f.log() {
		if strings.HasPrefix(l, "GET /blob/") {
			n++
		}
	}
	return n
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// modeProcesses renders one result line per process of RoPE: fast of them
// at 720 µs, slow at 837 µs, each within ±0.2%.
func modeProcesses(fast, slow int) string {
	var b strings.Builder
	b.WriteString(good + "class: gpu-nvidia-h100-80gb-hbm3\n")
	for i := 0; i < fast+slow; i++ {
		ns := 720000.0
		if i >= fast {
			ns = 837000
		}
		ns *= 1 + 0.001*float64(i%2*2-1)
		b.WriteString("BenchmarkRoPE/dtype=bf16/rows=1024/cols=262144/heads=2048/impl=fused-16\t1\t" + ftoa(ns) + " ns/op\n")
	}
	return b.String()
}

// TestTwoModesInEveryOutput: a change in the mix of two modes (8 fast of 10
// processes, then 2) passes, and every output says the benchmark has two
// modes: text, markdown, JSON, the pull-request comment and the HTML page.
func TestTwoModesInEveryOutput(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", modeProcesses(8, 2))
	cur := write(t, dir, "cur.txt", modeProcesses(2, 8))
	args := []string{"compare", "--config", "none", "--threshold", "0.5%", base, cur}
	const note = "two modes: baseline 720.0µs ×8, 837.0µs ×2; current 720.0µs ×2, 837.0µs ×8"
	for _, format := range []string{"text", "markdown"} {
		res := invoke(t, dir, "", append(args, "--format", format)...)
		if res.code != exitPass || !strings.Contains(res.stdout, note) || !strings.Contains(res.stdout, "only because the mix changed") {
			t.Errorf("%s: exit %d, want 0 and %q\n%s%s", format, res.code, note, res.stdout, res.stderr)
		}
	}
	res := invoke(t, dir, "", append(args, "--format", "json", "--out", "r.json")...)
	if res.code != exitPass {
		t.Fatalf("json: exit %d\n%s", res.code, res.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	c := r.Comparisons[0]
	if c.Verdict != report.Unchanged || len(c.Baseline.Modes) != 2 || c.Baseline.Modes[0].N != 8 || len(c.Current.Modes) != 2 || c.Current.Modes[1].N != 8 {
		t.Errorf("json: verdict %s, modes %+v / %+v", c.Verdict, c.Baseline.Modes, c.Current.Modes)
	}
	if !strings.Contains(string(data), `"modes": [`) {
		t.Errorf("json: no modes field:\n%s", data)
	}
	com := invokeEnv(t, dir, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "comment", "--dry-run", "--pr", "3", "r.json")
	if com.code != exitPass || !strings.Contains(com.stdout, note) {
		t.Errorf("comment: exit %d, want 0 and %q\n%s%s", com.code, note, com.stdout, com.stderr)
	}
	page := invoke(t, dir, "", "report", "--html", "r.html", "--no-history", "r.json")
	html, _ := os.ReadFile(filepath.Join(dir, "r.html"))
	if page.code != exitPass || !strings.Contains(string(html), note) {
		t.Errorf("html: exit %d, want the page to hold %q\n%s", page.code, note, page.stderr)
	}
}

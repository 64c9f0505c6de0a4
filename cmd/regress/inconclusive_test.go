package main

import (
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// TestAllInconclusiveExits3 compares two sides of 2 samples each, as a
// check with --count 2 measures them: nothing gated can be judged, so it
// is not a pass. Every output agrees: the text and markdown headlines, the
// JSON verdict, standard error, the PR comment and the commit status.
func TestAllInconclusiveExits3(t *testing.T) {
	dir := t.TempDir()
	const unit = "Unit scratch-B better=lower assume=exact\n"
	base := write(t, dir, "base.txt", good+unit+samples("A", 2, 1000, " 64 scratch-B")+samples("B", 2, 2000, " 0 scratch-B"))
	cur := write(t, dir, "cur.txt", good+unit+samples("A", 2, 1010, " 64 scratch-B")+samples("B", 2, 1990, " 0 scratch-B"))
	const why = "no gated comparison could be judged: need ≥ 6 samples a side (have 2)"

	res := invoke(t, dir, "", "compare", "--config", "none", base, cur)
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "\nINCONCLUSIVE: "+why+" — 2 inconclusive, 2 unchanged (") {
		t.Errorf("text headline:\n%s", res.stdout)
	}
	if want := "regress compare: INCONCLUSIVE, exit 3: " + why + "; record each side with 6 samples or more\n"; res.stderr != want {
		t.Errorf("stderr %q, want %q", res.stderr, want)
	}

	md := invoke(t, dir, "", "compare", "--config", "none", "--format", "markdown", base, cur)
	if md.code != 3 || !strings.HasPrefix(md.stdout, "### ⚠️ INCONCLUSIVE: "+why) {
		t.Errorf("markdown: exit %d\n%s", md.code, md.stdout)
	}

	js := invoke(t, dir, "", "compare", "--config", "none", "--format", "json", "--out", "report.json", base, cur)
	if js.code != 3 {
		t.Fatalf("json: exit %d %s", js.code, js.stderr)
	}
	r, _, err := readReport(&env{dir: dir}, "report.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != report.Inconclusive || r.Unjudged == nil || *r.Unjudged != (report.Unjudged{Count: 2, Of: 2, NeedSamples: 6, HaveSamples: 2}) {
		t.Errorf("JSON verdict %q, unjudged %+v", r.Verdict, r.Unjudged)
	}

	pub := invokeEnv(t, dir, map[string]string{"GITHUB_REPOSITORY": "o/r"}, "comment", "--dry-run", "--pr", "3", "report.json")
	if pub.code != 3 || !strings.Contains(pub.stdout, "### ⚠️ INCONCLUSIVE: "+why) ||
		!strings.Contains(pub.stdout, ": error: INCONCLUSIVE: "+why) {
		t.Errorf("comment: exit %d\n%s%s", pub.code, pub.stdout, pub.stderr)
	}

	// With enough samples on both sides the same comparison passes.
	base10 := write(t, dir, "base10.txt", good+samples("A", 10, 1000, ""))
	cur10 := write(t, dir, "cur10.txt", good+samples("A", 10, 1001, ""))
	if res := invoke(t, dir, "", "compare", "--config", "none", base10, cur10); res.code != 0 || res.stderr != "" {
		t.Errorf("10 samples a side: exit %d %s", res.code, res.stderr)
	}
}

// TestPartlyInconclusiveSaysSo: when some gated comparisons were judged and
// others could not be, the verdict stands and the summary says how many
// could not be judged.
func TestPartlyInconclusiveSaysSo(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, "")+samples("B", 3, 2000, ""))
	cur := write(t, dir, "cur.txt", good+samples("A", 10, 1001, "")+samples("B", 3, 2001, ""))
	res := invoke(t, dir, "", "compare", "--config", "none", base, cur)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "PASS: 0 regressions, 1 inconclusive, 1 unchanged — but 1 of 2 gated comparisons could not be judged (need ≥ 6 samples a side, have 3)") {
		t.Errorf("summary:\n%s", res.stdout)
	}
}

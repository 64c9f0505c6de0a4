package comment

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func load(t *testing.T, name string) *report.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.Read(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./regress/publish/comment -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

var opts = Options{
	HeadSHA:    "9a8b7c6d5e4f30211203f4e5d6c7b8a9f0e1d2c3",
	ServerURL:  "https://github.example.com",
	Repository: "kernelwatch/kernelwatch",
	RunURL:     "https://github.example.com/kernelwatch/kernelwatch/actions/runs/42",
}

// blind is the pass report where one gated comparison could not have
// detected its 5% threshold (26% at its spread) and one could (0.6%): the
// heading, the status and that row must say so.
func blind(t *testing.T) *report.Report {
	r := load(t, "pass")
	no, yes := report.Number(0.26), report.Number(0.006)
	r.Comparisons[0].Detectable, r.Comparisons[1].Detectable = &no, &yes
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"fail", "pass", "nodata", "incomplete", "blind"} {
		t.Run(name, func(t *testing.T) {
			var r *report.Report
			if name == "blind" {
				r = blind(t)
			} else {
				r = load(t, name)
			}
			golden(t, name+".comment.md", Body(r, opts))
			golden(t, name+".summary.md", Summary(r, opts))
			golden(t, name+".status.txt", StatusState(r)+"\n"+StatusDescription(r)+"\n")
		})
	}
}

func TestBodyIsDeterministic(t *testing.T) {
	r := load(t, "fail")
	if Body(r, opts) != Body(r, opts) {
		t.Fatal("two bodies of one report differ: an unchanged report would be re-posted")
	}
}

func TestMarker(t *testing.T) {
	r := load(t, "fail")
	body := Body(r, opts)
	m, ok := Parse(body)
	if !ok || m.Class != "gpu-nvidia-h100-80gb-hbm3" || m.HeadSHA != opts.HeadSHA {
		t.Fatalf("Parse = %+v, %v", m, ok)
	}
	if !strings.HasPrefix(body, Marker("gpu-nvidia-h100-80gb-hbm3")+"\n") {
		t.Fatalf("body does not start with the marker:\n%s", body[:200])
	}
	for _, bad := range []string{
		"",
		"hello\n" + Marker("x"),                      // marker not first
		"<!-- kernelwatch:v1 class=A B -->\n",        // not a slug
		"<!-- kernelwatch:v1 class= -->\n",           // empty
		"<!-- kernelwatch:v2 class=cpu -->\n",        // other version
		" <!-- kernelwatch:v1 class=cpu -->\nbody\n", // indented
	} {
		if m, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %+v, want no marker", bad, m)
		}
	}
	m, ok = Parse("<!-- kernelwatch:v1 class=cpu -->\r\n<!-- kernelwatch:head sha=NOTHEX -->\r\n")
	if !ok || m.Class != "cpu" || m.HeadSHA != "" {
		t.Errorf("Parse with a bad sha = %+v, %v", m, ok)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"gpu-nvidia-h100-80gb-hbm3":    "gpu-nvidia-h100-80gb-hbm3",
		"CPU AMD64 EPYC":               "cpu-amd64-epyc",
		"x --> <script>":               "x-script",
		"":                             "default",
		"@@@":                          "default",
		strings.Repeat("a", 300):       strings.Repeat("a", 100),
		"gpu-\u202envidia":             "gpu-nvidia",
		"a -->\n<!-- kernelwatch:v1 x": "a-kernelwatch-v1-x",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

const hostile = "Weird/q=a|b/html=<script>alert(1)</script>/cmd=`rm`/user=@octocat/issue=#12/x=\"]\n```"

// synthetic builds a valid report of n comparisons, every k-th a failing
// regression, with names made of pad.
func synthetic(n, k int, pad string) *report.Report {
	r := &report.Report{
		Schema:   report.Schema,
		Verdict:  report.Pass,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@1f2e3d4", Config: map[string]string{"class": "cpu-amd64-x", "commit": "1f2e3d4c5b6a79881726354453627180a9b8c7d6"}},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: map[string]string{"class": "cpu-amd64-x"}},
	}
	for i := 0; i < n; i++ {
		v, d := report.Unchanged, 0.001*float64(i%7)
		if k > 0 && i%k == 0 {
			v, d = report.Regression, 0.06+float64(i)*1e-5
			r.Verdict = report.Fail
		}
		s := func(c float64) *report.Summary {
			return &report.Summary{Center: report.Number(c), Lo: report.Number(c * 0.99), Hi: report.Number(c * 1.01), N: 10}
		}
		r.Comparisons = append(r.Comparisons, report.Comparison{
			Name: fmt.Sprintf("%s/i=%05d", pad, i), Config: map[string]string{}, Unit: "sec/op", Better: report.Lower,
			Baseline: s(1e-6), Current: s(1e-6 * (1 + d)), Delta: report.Number(d), DeltaLo: report.Number(d - 0.01),
			DeltaHi: report.Number(d + 0.01), P: 0.001, PAdjusted: 0.002, Threshold: 0.05, Gate: report.GateFail, Verdict: v,
		})
		r.Counts.Add(v)
	}
	if err := r.Validate(); err != nil {
		panic(err)
	}
	return r
}

func TestBudgetManyMultibyteNames(t *testing.T) {
	pad := strings.Repeat("正規化/größe=日本語", 12) // 264 bytes, multibyte throughout
	r := synthetic(5000, 10, pad)              // 500 regressions
	body := Body(r, opts)
	if len(body) > Budget {
		t.Fatalf("body is %d bytes, budget %d", len(body), Budget)
	}
	failing := render.Ordered(r)[:r.Counts.Regression]
	shown := 0
	for shown < len(failing) && strings.Contains(body, render.EscapeMarkdown(failing[shown].Name)+" |") {
		shown++
	}
	if shown == 0 || shown == len(failing) {
		t.Fatalf("%d of %d regressions shown; want some, cut", shown, len(failing))
	}
	for _, c := range failing[shown:] {
		if strings.Contains(body, render.EscapeMarkdown(c.Name)+" |") {
			t.Fatalf("regression %s shown after a gap: rows must be a prefix", c.Name)
		}
	}
	note := fmt.Sprintf("…and %d more failing or warned comparisons not shown here", len(failing)-shown)
	if !strings.Contains(body, note) {
		t.Errorf("body lacks the truncation note %q", note)
	}
	if !strings.Contains(body, "…and 4500 more comparisons not shown here") {
		t.Errorf("body lacks the note for the folded rows")
	}
	// Every regression that fits: the next row would not have.
	next := render.NewMarkdownTable(r).Row(failing[shown])
	if free := Budget - len(body); free >= len(next) {
		t.Errorf("%d bytes free, yet the next regression row (%d bytes) was left out", free, len(next))
	}
	if strings.Count(body, "<details>") != strings.Count(body, "</details>") {
		t.Error("unbalanced <details>")
	}

	// The summary has the full table when it fits in 1 MiB, and a note when not.
	sum := Summary(r, opts)
	if len(sum) > SummaryBudget || !strings.Contains(sum, "more comparisons not shown here") {
		t.Errorf("summary: %d bytes, note present %v", len(sum), strings.Contains(sum, "not shown here"))
	}
	small := synthetic(200, 10, "RMSNorm")
	if s := Summary(small, opts); strings.Contains(s, "not shown here") || strings.Count(s, "\n| RMSNorm") != 200 {
		t.Errorf("summary of 200 rows is cut or incomplete")
	}
}

func TestBudgetTiny(t *testing.T) {
	r := synthetic(50, 2, "X")
	for _, b := range []int{3000, 4000, 8000} {
		o := opts
		o.Budget = b
		if body := Body(r, o); len(body) > b {
			t.Errorf("budget %d: body is %d bytes", b, len(body))
		}
	}
}

func TestHostileText(t *testing.T) {
	r := synthetic(30, 3, "K")
	r.Comparisons[0].Name = hostile
	r.Comparisons[1].Name = hostile
	r.Comparisons[0].Warnings = []string{"see @octocat <img src=x>"}
	r.Warnings = []string{"warning with `code` and @admin and </details><script>"}
	r.Baseline.Label = "main@<b>x</b>"
	r.Current.Config["class"] = "gpu -->\n<!-- kernelwatch:v1 class=other"
	o := opts
	o.RunURL = "javascript:alert(1)"
	o.ServerURL = "https://github.com/ (evil)"
	for _, out := range []string{Body(r, o), Summary(r, o)} {
		for _, bad := range []string{"<script>", "@octocat", "@admin", "#12", "`rm`", "<b>", "<img", "javascript:", "(evil)", "class=other"} {
			if strings.Contains(out, bad) {
				t.Errorf("output contains raw %q", bad)
			}
		}
		if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
			t.Errorf("unbalanced <details>: %d open, %d close", strings.Count(out, "<details>"), strings.Count(out, "</details>"))
		}
	}
	// The chart labels keep only safe characters.
	c := chart(r)
	for _, line := range strings.Split(c, "\n") {
		if strings.HasPrefix(line, "  x-axis") && strings.Count(line, `"`)%2 != 0 {
			t.Errorf("chart labels break out of their quotes: %s", line)
		}
	}
	if strings.Contains(c, "<") || strings.Contains(c, "`rm") {
		t.Errorf("chart contains raw text:\n%s", c)
	}
	d := StatusDescription(r)
	if strings.ContainsAny(d, "\n\r") {
		t.Errorf("status description has a line break: %q", d)
	}
}

func TestStatusDescriptionFits(t *testing.T) {
	for _, pad := range []string{"A", strings.Repeat("x", 300), strings.Repeat("😀", 200), strings.Repeat("日本", 100)} {
		for _, k := range []int{0, 1, 3} {
			r := synthetic(20, k, pad)
			d := StatusDescription(r)
			if utf16Len(d) > StatusLimit || d == "" {
				t.Errorf("pad %.10q k=%d: %d UTF-16 units: %q", pad, k, utf16Len(d), d)
			}
			if k > 0 && !strings.HasPrefix(d, "FAIL") || k == 0 && !strings.HasPrefix(d, "PASS") {
				t.Errorf("description %q does not start with the outcome", d)
			}
		}
	}
}

func TestChart(t *testing.T) {
	r := load(t, "fail")
	c := chart(r)
	if !strings.HasPrefix(c, "```mermaid\nxychart-beta horizontal\n") || strings.Count(c, "▲") < 3 || !strings.Contains(c, "▼") {
		t.Errorf("chart:\n%s", c)
	}
	if got := chart(synthetic(5, 0, "A")); got != "" {
		t.Errorf("chart of unchanged benchmarks = %q, want none", got)
	}
	none := load(t, "nodata")
	if got := chart(none); got != "" {
		t.Errorf("nodata chart = %q, want none", got)
	}
	if math.IsNaN(worse(&report.Comparison{Delta: 0.1, Better: report.Lower})) {
		t.Error("worse of a lower-is-better delta is NaN")
	}
}

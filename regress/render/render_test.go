package render

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var nan = report.Number(math.NaN())

// sum is a summary with center c, interval [lo, hi] and n samples.
func sum(c, lo, hi float64, n int) *report.Summary {
	v := make([]float64, n)
	for i := range v {
		v[i] = c
	}
	return &report.Summary{Center: report.Number(c), Lo: report.Number(lo), Hi: report.Number(hi), N: n, Values: v}
}

// cmp is a two-sided comparison.
func cmp(name, unit, better, gate, verdict string, base, cur *report.Summary, d, dlo, dhi, p, padj float64) report.Comparison {
	return report.Comparison{Name: name, Config: map[string]string{}, Unit: unit, Better: better,
		Baseline: base, Current: cur, Delta: report.Number(d), DeltaLo: report.Number(dlo), DeltaHi: report.Number(dhi),
		P: report.Number(p), PAdjusted: report.Number(padj), Threshold: 0.05, Gate: gate, Verdict: verdict}
}

// one is a one-sided (added or removed) comparison.
func one(name, unit, better, gate, verdict string, base, cur *report.Summary) report.Comparison {
	return report.Comparison{Name: name, Config: map[string]string{}, Unit: unit, Better: better,
		Baseline: base, Current: cur, Delta: nan, DeltaLo: nan, DeltaHi: nan, P: nan, PAdjusted: nan,
		Threshold: 0.05, Gate: gate, Verdict: verdict}
}

func finish(t *testing.T, r *report.Report) *report.Report {
	t.Helper()
	r.Schema = report.Schema
	for _, c := range r.Comparisons {
		r.Counts.Add(c.Verdict)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("test report invalid: %v", err)
	}
	return r
}

const hostile = "Weird/q=a|b/html=<script>alert(1)</script>/cmd=`rm`/user=@octocat/issue=#12"

func failReport(t *testing.T) *report.Report {
	const rms = "RMSNorm/dtype=bf16/rows=32768/cols=4096/impl=fused"
	cfg := func(commit string) map[string]string {
		return map[string]string{"goos": "linux", "goarch": "amd64", "class": "gpu-nvidia-h100-80gb-hbm3",
			"cpu": "AMD EPYC 9654 96-Core Processor", "commit": commit}
	}
	r := &report.Report{
		Verdict:  report.Fail,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@1f2e3d4", Config: cfg("1f2e3d4c")},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: cfg("9a8b7c6d")},
		Warnings: []string{"3 result lines without a unit were skipped", "current config has note: rerun after driver update"},
	}
	r.Current.Config["note"] = "rerun"
	tooFew := "need at least 6 samples per side to reach alpha 0.05, have 3+3"
	r.Comparisons = []report.Comparison{
		cmp(rms, "sec/op", report.Lower, report.GateFail, report.Unchanged,
			sum(93.12e-6, 92.5e-6, 94.0e-6, 10), sum(93.60e-6, 92.9e-6, 94.4e-6, 10), 0.0052, -0.004, 0.013, 0.436, 1),
		cmp("Softmax/rows=1024", "sec/op", report.Lower, report.GateFail, report.Improvement,
			sum(1.701e-6, 1.66e-6, 1.74e-6, 10), sum(1.52e-6, 1.50e-6, 1.55e-6, 10), -0.1064, -0.13, -0.08, 0.00018, 0.0009),
		cmp("Softmax/rows=1024", "sec/op", report.Lower, report.GateFail, report.Regression,
			sum(46.55e-9, 44e-9, 48e-9, 10), sum(52.0e-9, 51e-9, 53e-9, 8), 0.1171, 0.08, 0.15, 0.00004, 0.0004),
		cmp("LSTM/batch=1/impl=naive", "sec/op", report.Lower, report.GateWarn, report.Regression,
			sum(40.1e-3, 39.5e-3, 41e-3, 10), sum(43.7e-3, 43e-3, 44.2e-3, 10), 0.0898, 0.07, 0.11, 0.00002, 0.0003),
		cmp("LSTM/batch=1/impl=fused", "sec/op", report.Lower, report.GateFail, report.OverBudget,
			sum(16.2e-3, 16.0e-3, 16.4e-3, 10), sum(17.1e-3, 16.9e-3, 17.3e-3, 10), 0.0556, 0.04, 0.07, 0.0004, 0.0024),
		one("LayerNorm/rows=8", "sec/op", report.Lower, report.GateFail, report.Removed, sum(2.5e-6, 2.4e-6, 2.6e-6, 10), nil),
		one("Attention/seq=4096/impl=flash", "sec/op", report.Lower, report.GateFail, report.Added, nil, sum(1.25e-3, 1.2e-3, 1.3e-3, 10)),
		cmp(hostile, "sec/op", report.Lower, report.GateFail, report.Unchanged,
			sum(5.0e-6, 4.9e-6, 5.1e-6, 10), sum(5.06e-6, 4.95e-6, 5.2e-6, 10), 0.012, -0.01, 0.03, 0.43, 1),
		cmp("Grüße/größe=日本語", "sec/op", report.Lower, report.GateFail, report.Inconclusive,
			sum(12.3e-6, math.NaN(), math.NaN(), 3), sum(13.9e-6, math.NaN(), math.NaN(), 3), 0.13, math.NaN(), math.NaN(), 0.1, 0.1),
		cmp("GELU/n=4096", "sec/op", report.Lower, report.GateFail, report.Inconclusive,
			sum(812e-9, math.NaN(), math.NaN(), 3), sum(790e-9, math.NaN(), math.NaN(), 3), -0.027, math.NaN(), math.NaN(), 0.4, 0.4),
		cmp(rms, "B/s", report.Higher, report.GateFail, report.Regression,
			sum(2883.1e9, 2870e9, 2895e9, 10), sum(2709.2e9, 2690e9, 2720e9, 10), -0.0603, -0.068, -0.052, 0.00001, 0.0002),
		cmp("Softmax/rows=1024", "B/s", report.Higher, report.GateFail, report.Unchanged,
			sum(340e6, 330e6, 350e6, 10), sum(342e6, 333e6, 351e6, 10), 0.0059, -0.02, 0.03, 0.7, 1),
		cmp(rms, "B/op", report.Lower, report.GateFail, report.Regression,
			sum(4096, 4096, 4096, 10), sum(8192, 8192, 8192, 10), 1, 1, 1, math.NaN(), math.NaN()),
	}
	r.Comparisons[1].Config = map[string]string{"pkg": "github.com/kernelwatch/kernelwatch/kernels"}
	r.Comparisons[2].Config = map[string]string{"pkg": "github.com/kernelwatch/kernelwatch/cpukernels"}
	r.Comparisons[8].Warnings = []string{tooFew}
	r.Comparisons[9].Warnings = []string{tooFew}
	r.Comparisons[12].Warnings = []string{"exact unit B/op: any difference is a change"}
	budget := 16.67e-3
	r.Comparisons[4].Budget = &budget
	return finish(t, r)
}

func passReport(t *testing.T) *report.Report {
	cfg := map[string]string{"goos": "linux", "goarch": "amd64", "class": "cpu-amd64-amd-epyc-9654"}
	r := &report.Report{
		Verdict:  report.Pass,
		Settings: report.Settings{Alpha: 0.01, Confidence: 0.95, Threshold: 0.015, Correction: report.Holm, MinSamples: 6},
		Baseline: report.Side{Label: "old.txt", Config: cfg},
		Current:  report.Side{Label: "new.txt", Config: cfg},
		Comparisons: []report.Comparison{
			cmp("MatMul/n=512", "sec/op", report.Lower, report.GateFail, report.Unchanged,
				sum(2.34e-3, 2.33e-3, 2.36e-3, 10), sum(2.345e-3, 2.33e-3, 2.36e-3, 10), 0.0021, -0.004, 0.008, 0.52, 1),
			cmp("MatMul/n=1024", "sec/op", report.Lower, report.GateFail, report.Improvement,
				sum(18.9e-3, 18.7e-3, 19.1e-3, 10), sum(17.2e-3, 17.1e-3, 17.4e-3, 10), -0.0899, -0.1, -0.08, 0.00001, 0.00002),
			cmp("MatMul/n=1024", "allocs/op", report.Lower, report.GateFail, report.Unchanged,
				sum(0, 0, 0, 10), sum(0, 0, 0, 10), math.NaN(), math.NaN(), math.NaN(), 1, 1),
		},
		Warnings: []string{},
	}
	return finish(t, r)
}

func noDataReport(t *testing.T) *report.Report {
	r := &report.Report{
		Verdict:  report.NoData,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.BH, MinSamples: 6},
		Baseline: report.Side{Label: "baselines/gpu-nvidia-h100-80gb-hbm3.bench", Config: map[string]string{"class": "gpu-nvidia-h100-80gb-hbm3"}},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: map[string]string{"class": "gpu-nvidia-h200"}},
		Comparisons: []report.Comparison{
			one("Attention/seq=4096/impl=flash", "sec/op", report.Lower, report.GateFail, report.Added, nil, sum(1.25e-3, 1.2e-3, 1.3e-3, 10)),
		},
		Warnings: []string{"class differs: gpu-nvidia-h100-80gb-hbm3 → gpu-nvidia-h200 (use --force-class to compare anyway)"},
	}
	return finish(t, r)
}

// incompleteReport is passReport from a check interrupted after 3 of its 10
// rounds.
func incompleteReport(t *testing.T) *report.Report {
	r := passReport(t)
	r.Incomplete = &report.Incomplete{Rounds: 3, Planned: 10, Reason: report.StopSignal}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// blindReport is passReport where one gated comparison could not have
// detected its threshold (26% at 10 samples of its spread) and one could
// (0.6%): the summary line and its row must say so.
func blindReport(t *testing.T) *report.Report {
	r := passReport(t)
	blind, able := report.Number(0.26), report.Number(0.006)
	r.Comparisons[0].Detectable = &blind
	r.Comparisons[1].Detectable = &able
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

// inconclusiveReport is a check run with --count 2: no gated timing could
// be judged; the exact scratch-B comparison beside it was.
func inconclusiveReport(t *testing.T) *report.Report {
	cfg := map[string]string{"goos": "linux", "goarch": "amd64", "class": "cpu-amd64-amd-epyc-9654"}
	tooFew := "need ≥ 6 samples per side for a verdict, have 2+2"
	r := &report.Report{
		Verdict:  report.Inconclusive,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@1f2e3d4", Config: cfg},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: cfg},
		Comparisons: []report.Comparison{
			cmp("RMSNorm/dtype=fp32/impl=fused", "sec/op", report.Lower, report.GateFail, report.Inconclusive,
				sum(241.4e-6, math.NaN(), math.NaN(), 2), sum(233.7e-6, math.NaN(), math.NaN(), 2), -0.0317, math.NaN(), math.NaN(), 0.67, math.NaN()),
			cmp("GELU/dtype=fp32/impl=fused", "sec/op", report.Lower, report.GateFail, report.Inconclusive,
				sum(1.235e-3, math.NaN(), math.NaN(), 2), sum(1.272e-3, math.NaN(), math.NaN(), 2), 0.0303, math.NaN(), math.NaN(), 0.67, math.NaN()),
			cmp("RMSNorm/dtype=fp32/impl=fused", "scratch-B", report.Lower, report.GateFail, report.Unchanged,
				sum(0, 0, 0, 2), sum(0, 0, 0, 2), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()),
		},
		Warnings: []string{},
		Unjudged: &report.Unjudged{Count: 2, Of: 2, NeedSamples: 6, HaveSamples: 2},
	}
	r.Comparisons[0].Warnings = []string{tooFew}
	r.Comparisons[1].Warnings = []string{tooFew}
	return finish(t, r)
}

// partialReport is blindReport with one more gated comparison that could
// not be judged (4 samples on one side): the verdict stands, and the summary
// says what could not be judged and what could not be detected.
func partialReport(t *testing.T) *report.Report {
	r := blindReport(t)
	c := cmp("MatMul/n=2048", "sec/op", report.Lower, report.GateFail, report.Inconclusive,
		sum(151e-3, math.NaN(), math.NaN(), 10), sum(150e-3, math.NaN(), math.NaN(), 4), -0.0066, math.NaN(), math.NaN(), 0.8, math.NaN())
	c.Warnings = []string{"need ≥ 6 samples per side for a verdict, have 10+4"}
	r.Comparisons = append(r.Comparisons, c)
	r.Counts = report.Counts{}
	r.Unjudged = &report.Unjudged{Count: 1, Of: 3, NeedSamples: 6, HaveSamples: 4}
	return finish(t, r)
}

// sequentialReport is blindReport from a check that sampled further: the
// blind comparison's benchmark got 40 rounds and still cannot detect 5%, a
// second benchmark (two modes) got 16 and now can.
func sequentialReport(t *testing.T) *report.Report {
	r := blindReport(t)
	weak, able := report.Number(0.081), report.Number(0.031)
	r.Sequential = &report.Sequential{Rounds: 10, MaxRounds: 40, BudgetSeconds: 240, Stopped: report.SeqMaxRounds,
		Benchmarks: []report.SequentialBenchmark{
			{Name: "MatMul/n=512", Rounds: 40, Reason: report.SeqUnderpowered, Underpowered: true, Detectable: &weak},
			{Name: "MatMul/n=1024", Rounds: 16, Reason: report.SeqTwoMode, Detectable: &able},
		}}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

var exts = map[string]string{"text": "txt", "markdown": "md", "json": "json", "csv": "csv"}

func TestGolden(t *testing.T) {
	reports := map[string]func(*testing.T) *report.Report{"fail": failReport, "pass": passReport, "nodata": noDataReport,
		"incomplete": incompleteReport, "blind": blindReport, "inconclusive": inconclusiveReport, "partial": partialReport, "sequential": sequentialReport}
	for name, mk := range reports {
		for _, format := range Formats {
			t.Run(name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := Write(&buf, mk(t), format); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", name+"."+exts[format]+".golden")
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./regress/render -update)", err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Errorf("%s differs from the golden file; got:\n%s", path, buf.String())
				}
			})
		}
	}
}

// cells splits a markdown table row at its unescaped pipes.
func cells(row string) []string {
	var out []string
	start := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			out = append(out, row[start:i])
			start = i + 1
		}
	}
	return append(out, row[start:])
}

func tableRows(md string) []string {
	var rows []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestMarkdownEscaping(t *testing.T) {
	r := failReport(t)
	r.Comparisons[7].Warnings = []string{"line one\nline two | <b>@octocat</b>"}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	rows := tableRows(md)
	if len(rows) != len(r.Comparisons)+2 {
		t.Fatalf("%d table rows, want %d", len(rows), len(r.Comparisons)+2)
	}
	for _, row := range rows {
		if n := len(cells(row)); n != 10 { // 8 columns between 9 pipes
			t.Errorf("row has %d unescaped-pipe fields, want 10: %s", n, row)
		}
	}
	for _, bad := range []string{"<script>", "@octocat", "#12", "`rm`", "line one\n"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown contains raw %q", bad)
		}
	}
	for _, good := range []string{`a\|b`, "&lt;script&gt;", "<code>@</code>octocat", "<code>#</code>12", "\\`rm\\`", "line one line two"} {
		if !strings.Contains(md, good) {
			t.Errorf("markdown lacks escaped %q", good)
		}
	}
}

func TestMarkdownOrder(t *testing.T) {
	r := failReport(t)
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	var verdicts []string
	for _, row := range tableRows(buf.String())[2:] {
		verdicts = append(verdicts, strings.TrimSpace(cells(row)[8]))
	}
	want := []string{
		"❌ regression",                  // B/op +100%
		"❌ regression",                  // Softmax +11.7%
		"❌ regression",                  // B/s −6.03%: 6.03% worse
		"❌ over-budget (budget 16.67m)", // +5.56%
		"❌ removed",                     // no delta: last of the failing
		"⚠️ regression",
		"improvement",
	}
	for i, w := range want {
		if !strings.HasPrefix(verdicts[i], w) {
			t.Errorf("row %d verdict %q, want %q (all: %q)", i, verdicts[i], w, verdicts)
		}
	}
	last := verdicts[len(verdicts)-1]
	if last != "unchanged" {
		t.Errorf("last row %q, want unchanged", last)
	}
}

func TestCSVParses(t *testing.T) {
	for _, r := range []*report.Report{failReport(t), passReport(t), noDataReport(t)} {
		var buf bytes.Buffer
		if err := CSV(&buf, r); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(r.Comparisons)+1 {
			t.Fatalf("%d records, want %d", len(recs), len(r.Comparisons)+1)
		}
		for _, rec := range recs {
			if len(rec) != len(csvHeader) {
				t.Errorf("%d columns, want %d: %q", len(rec), len(csvHeader), rec)
			}
			for _, f := range rec {
				if strings.Contains(f, "NaN") || strings.Contains(f, "Inf") {
					t.Errorf("cell %q in %q", f, rec)
				}
			}
		}
		for i, c := range r.Comparisons {
			if got := recs[i+1][0]; got != c.Name {
				t.Errorf("name %q, want %q", got, c.Name)
			}
		}
	}
}

func TestCSVFormula(t *testing.T) {
	r := passReport(t)
	r.Comparisons[0].Name = "=HYPERLINK(\"x\")"
	var buf bytes.Buffer
	if err := CSV(&buf, r); err != nil {
		t.Fatal(err)
	}
	recs, _ := csv.NewReader(&buf).ReadAll()
	if got := recs[1][0]; got != "'=HYPERLINK(\"x\")" {
		t.Errorf("formula name rendered %q", got)
	}
}

func TestUnknownFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, passReport(t), "html"); err == nil {
		t.Error("Write with format html: no error")
	}
	if buf.Len() != 0 {
		t.Errorf("unknown format wrote %q", buf.String())
	}
}

func TestNoNaN(t *testing.T) {
	for _, r := range []*report.Report{failReport(t), passReport(t), noDataReport(t)} {
		for _, format := range []string{"text", "markdown"} {
			var buf bytes.Buffer
			if err := Write(&buf, r, format); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"NaN", "Inf", "%!"} {
				if strings.Contains(buf.String(), bad) {
					t.Errorf("%s output contains %q:\n%s", format, bad, buf.String())
				}
			}
		}
	}
	// The exact unit's missing p prints as —.
	var buf bytes.Buffer
	if err := TextWith(&buf, failReport(t), Options{Wide: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "p=—") {
		t.Errorf("missing p not rendered as —:\n%s", buf.String())
	}
}

func TestTextAlignment(t *testing.T) {
	var buf bytes.Buffer
	if err := TextWith(&buf, failReport(t), Options{Wide: true}); err != nil {
		t.Fatal(err)
	}
	// Within each table, every row's " ± ", "p=" and "n=" start in the same
	// terminal column, whatever the name's characters.
	tables := 0
	for _, block := range strings.Split(buf.String(), "\n\n") {
		cols := map[string]int{}
		for _, l := range strings.Split(block, "\n") {
			if !strings.Contains(l, " p=") {
				continue
			}
			for _, tok := range []string{" p=", " n=", " ± "} {
				i := strings.Index(l, tok)
				if tok == " ± " && strings.Contains(l, "    —  ") {
					continue // the baseline side is missing
				}
				w := width(l[:i])
				if c, ok := cols[tok]; ok && c != w {
					t.Errorf("%q at column %d, want %d: %s", tok, w, c, l)
				}
				cols[tok] = w
			}
		}
		if len(cols) > 0 {
			tables++
		}
	}
	if tables != 3 {
		t.Errorf("%d tables, want 3", tables)
	}
}

func TestWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "µ±—✗¹": 5, "日本語": 6, "e\u0301": 1, "한국": 4, "ｆｕｌｌ": 8} {
		if got := width(s); got != want {
			t.Errorf("width(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	got := clean("a\x1b[31mb\nc\u202ed")
	if want := `a\x1b[31mb\x0ac\u202ed`; got != want {
		t.Errorf("clean = %q, want %q", got, want)
	}
}

func TestSummaryLine(t *testing.T) {
	for _, tc := range []struct {
		r    *report.Report
		want string
	}{
		{failReport(t), "FAIL: 4 regressions, 1 over budget, 1 removed, 1 improvement, 2 inconclusive, 1 added, 3 unchanged (alpha 0.05, threshold 5%, correction floor-holm)"},
		{passReport(t), "PASS: 0 regressions, 1 improvement, 2 unchanged (alpha 0.01, threshold 1.5%, correction holm)"},
		{noDataReport(t), "NO DATA: nothing was comparable — 1 added (alpha 0.05, threshold 5%, correction bh)"},
	} {
		var buf bytes.Buffer
		if err := Text(&buf, tc.r); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if got := lines[len(lines)-1]; got != tc.want {
			t.Errorf("summary\n got %s\nwant %s", got, tc.want)
		}
	}
}

// TestIncompleteHeadline checks the outcome line of runs cut short: one
// whose verdict does not stand says INCOMPLETE first; one stopped at its
// deadline with enough rounds keeps its verdict and says how far it got.
func TestIncompleteHeadline(t *testing.T) {
	for _, tc := range []struct {
		in   report.Incomplete
		want string
	}{
		{report.Incomplete{Rounds: 3, Planned: 10, Reason: report.StopSignal}, "INCOMPLETE (3 of 10 rounds, interrupted): 0 regressions, 1 improvement, 2 unchanged"},
		{report.Incomplete{Rounds: 8, Planned: 10, Reason: report.StopSignal}, "INCOMPLETE (8 of 10 rounds, interrupted): 0 regressions, 1 improvement, 2 unchanged"},
		{report.Incomplete{Rounds: 5, Planned: 10, Reason: report.StopDeadline}, "INCOMPLETE (5 of 10 rounds, stopped at the deadline): 0 regressions, 1 improvement, 2 unchanged"},
		{report.Incomplete{Rounds: 6, Planned: 10, Reason: report.StopDeadline}, "PASS: 0 regressions, 1 improvement, 2 unchanged (6 of 10 rounds, stopped at the deadline)"},
	} {
		r := passReport(t)
		r.Incomplete = &tc.in
		if got := Headline(r); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.in, got, tc.want)
		}
		wantCode := 2
		if tc.in.Rounds >= 6 && tc.in.Reason == report.StopDeadline {
			wantCode = 0
		}
		if code := r.ExitCode(); code != wantCode {
			t.Errorf("%+v: exit code %d, want %d", tc.in, code, wantCode)
		}
	}
}

// TestDetectsAgreesWithTheSummary: a row whose detectable change rounds to
// its threshold (5.2% against 5%) is counted among those that could not
// detect 5%, so its note must not read "≥ 5%".
func TestDetectsAgreesWithTheSummary(t *testing.T) {
	for _, tc := range []struct {
		detectable float64
		note       string
	}{
		{0.052, "(detects ≥ 5.2%)"},
		{0.05001, "(detects ≥ 5.1%)"},
		{0.05, ""}, // detects its threshold: no note, not counted
		{0.26, "(detects ≥ 26%)"},
		{0.2601, "(detects ≥ 27%)"},
		{1.5, "(detects ≥ 150%)"},
	} {
		r := passReport(t)
		d := report.Number(tc.detectable)
		c := &r.Comparisons[0]
		c.Detectable = &d
		if got := detects(c); got != tc.note {
			t.Errorf("detectable %v: note %q, want %q", tc.detectable, got, tc.note)
		}
		counted := strings.Contains(headline(r), "1 of 1 gated comparisons could not detect 5%")
		if counted != (tc.note != "") {
			t.Errorf("detectable %v: note %q but headline %q", tc.detectable, tc.note, headline(r))
		}
	}
}

// TestRatesCarryTheirUnit: a rate whose unit has its own prefix is scaled
// as one number, never as "535.6m GB/s".
func TestRatesCarryTheirUnit(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{0.5356, "GB/s", "535.6 MB/s"},
		{2883.1, "GB/s", "2.883 TB/s"},
		{123.3, "GB/s", "123.3 GB/s"},
		{340e6, "B/s", "340.0 MB/s"},
		{0.75, "TFLOP/s", "750.0 GFLOP/s"},
		{93.12e-6, "sec/op", "93.12µ"},
		{95.7, "pct-copy", "95.70"},
	} {
		if got := scaleValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("%v %s: %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

// suiteReport is a check of the CPU kernel suite at one shape, as the main
// job runs it: 28 benchmarks whose names all hold rows=256/cols=4096, in
// sec/op and GB/s, 10 samples a side; one regression, some rows that could
// not detect 5%, and a rate below 1 GB/s.
func suiteReport(t *testing.T) *report.Report {
	cfg := map[string]string{"goos": "linux", "goarch": "amd64", "class": "cpu-amd64-amd-epyc", "device": "cpu"}
	r := &report.Report{
		Verdict:  report.Fail,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@1f2e3d4 (merge base)", Config: cfg},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: cfg},
		Warnings: []string{},
	}
	type fam struct{ name, extra string }
	fams := []fam{{"Copy", ""}, {"RMSNorm", ""}, {"LayerNorm", ""}, {"Softmax", ""}, {"CrossEntropy", ""},
		{"FP8Quant", "/scale=row"}, {"FP8Quant", "/scale=block128"}}
	k := 0
	for _, unit := range []string{"sec/op", "GB/s"} {
		for _, f := range fams {
			for _, dtype := range []string{"fp32", "bf16"} {
				for _, impl := range []string{"fused", "naive"} {
					k++
					name := f.name + "/dtype=" + dtype + "/rows=256/cols=4096" + f.extra + "/impl=" + impl
					base := 1e-4 * float64(1+k%7)
					d, p, padj, verdict := 0.004*float64(k%5-2), 0.3+0.05*float64(k%9), 1.0, report.Unchanged
					if f.name == "Softmax" && dtype == "fp32" && impl == "fused" {
						d, p, padj, verdict = 0.118, 0.00002, 0.0008, report.Regression
					}
					better := report.Lower
					if unit == "GB/s" {
						base, d, better = 0.5356*float64(1+k%40), -d/(1+d), report.Higher
					}
					c := cmp(name, unit, better, report.GateFail, verdict,
						sum(base, base*0.98, base*1.03, 10), sum(base*(1+d), base*(1+d)*0.97, base*(1+d)*1.02, 10),
						d, d-0.021, d+0.034, p, padj)
					if impl == "naive" {
						c.Gate = report.GateWarn
						c.PAdjusted = nan
					}
					if k%3 == 0 && c.Gate == report.GateFail {
						det := report.Number(0.05 + 0.01*float64(k%4) + 0.002)
						c.Detectable = &det
					}
					r.Comparisons = append(r.Comparisons, c)
				}
			}
		}
	}
	return finish(t, r)
}

// TestTextFits120Columns renders reports whose full tables are wider than
// 120 columns: every table line fits by default (testdata/suite.txt.golden
// shows how), the legend maps short names back, and --wide
// (testdata/suite.wide.txt.golden) prints full names and every column.
func TestTextFits120Columns(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) *report.Report{"suite": suiteReport, "fail": failReport} {
		var narrow, wide bytes.Buffer
		if err := TextWith(&narrow, mk(t), Options{}); err != nil {
			t.Fatal(err)
		}
		if err := TextWith(&wide, mk(t), Options{Wide: true}); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, l := range strings.Split(wide.String(), "\n") {
			widest = max(widest, width(l))
		}
		if widest <= TextWidth {
			t.Fatalf("%s: the full tables are %d wide: nothing to fit", name, widest)
		}
		tables := strings.Split(narrow.String(), "\n")
		for _, l := range tables {
			if strings.HasPrefix(l, "warning: ") || strings.HasPrefix(l, "FAIL: ") {
				continue // not a table
			}
			if width(l) > TextWidth {
				t.Errorf("%s: line of %d columns:\n%s", name, width(l), l)
			}
		}
		if !strings.Contains(narrow.String(), "; --wide shows everything\n") {
			t.Errorf("%s: no legend line pointing at --wide:\n%s", name, narrow.String())
		}
		for _, c := range mk(t).Comparisons {
			if !strings.Contains(wide.String(), "\n"+clean(configName(&c))+" ") {
				t.Errorf("%s --wide lacks the full name %s", name, configName(&c))
			}
		}
	}
	r := suiteReport(t)
	for _, opt := range []struct {
		file string
		opt  Options
	}{{"suite.txt.golden", Options{}}, {"suite.wide.txt.golden", Options{Wide: true}}} {
		var buf bytes.Buffer
		if err := TextWith(&buf, r, opt.opt); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", opt.file)
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./regress/render -update)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs; got:\n%s", path, buf.String())
		}
	}
}

// TestCutNameKeepsEverySegment: a name cut to fit keeps the start of each
// segment, and a path in its configuration keeps its last element.
func TestCutNameKeepsEverySegment(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		want string
	}{
		{"LinearRecurrence/fp32/8/65536/1536/complex/fused", 41, "LinearRe…/fp32/8/65536/1536/complex/fused"},
		{"Softmax/1024 [pkg=github.com/kernelwatch/kernelwatch/kernels]", 40, "Softmax/1024 [pkg=…/kernels]"},
		{"Short/name", 20, "Short/name"},
	} {
		if got := cutName(tc.name, tc.max); got != tc.want || width(got) > tc.max {
			t.Errorf("cutName(%q, %d) = %q, want %q", tc.name, tc.max, got, tc.want)
		}
	}
}

// TestInconclusiveByModes: a report left inconclusive by two-mode rows,
// not by too few samples, says where the reason is instead of a sample
// count.
func TestInconclusiveByModes(t *testing.T) {
	r := inconclusiveReport(t)
	r.Unjudged = &report.Unjudged{Count: 2, Of: 2}
	want := "INCONCLUSIVE: no gated comparison could be judged: each row's note says why — 2 inconclusive, 1 unchanged"
	if got := headline(r); got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
}

// TestTextNoWorkflowCommands renders a report whose names, labels and
// warnings carry workflow commands as text, the format a CI log shows,
// and checks that no line would be executed by the Actions runner.
func TestTextNoWorkflowCommands(t *testing.T) {
	r := failReport(t)
	r.Comparisons[0].Name = "::error title=Forged::x"
	r.Comparisons[1].Name = "ok ##[add-mask]secret"
	r.Current.Label = "::warning::label"
	r.Warnings = append(r.Warnings, "::stop-commands::tok", "a\r::notice::b")
	var buf bytes.Buffer
	if err := Write(&buf, r, "text"); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "::") || strings.Contains(l, "##[") {
			t.Errorf("the runner would execute %q", l)
		}
	}
	if !strings.Contains(buf.String(), `:\x3aerror title=Forged::x`) {
		t.Errorf("the name is not shown escaped:\n%s", buf.String())
	}
}

// TestPercent pins how thresholds read: configured values as written, thresholds derived from measured noise
// (noise and cross-host floors) to two decimals rather than every digit of the floor.
func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0.05, "5%"}, {0.005, "0.5%"}, {0.015, "1.5%"}, {0.0051, "0.51%"}, {0.0920634, "9.21%"},
		{0.257, "25.7%"}, {1.0, "100%"}, {0, "0%"}, {0.07506747, "7.51%"},
	} {
		if got := percent(tc.f); got != tc.want {
			t.Errorf("percent(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

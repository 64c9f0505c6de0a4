package html

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

var firstScreenShot = flag.String("first-screen", "", "also save the first-screen test's 1280×800 screenshot (with history) to this PNG file")

// suiteFamilies are the families of the failing-suite fixture in suite
// order: unchanged Copy first, as in the kernel suite.
var suiteFamilies = []string{"Copy", "RMSNorm", "LayerNorm", "Softmax", "GELU", "SwiGLU", "RoPE", "CrossEntropy", "FP8Quant", "Attention"}

// failingSuite is a whole-suite check that fails the way a real one does:
// 400 benchmarks (10 families × 2 dtypes × 10 shapes × 2 impls) × 5 units,
// of which 14 fused benchmarks of late families regressed in sec/op, GB/s
// and pct-copy (42 comparisons), one improved, and everything else is
// unchanged; with a history of 12 snapshots of sec/op and pct-copy of every
// benchmark. worst names the benchmark whose sec/op regressed most.
func failingSuite(t testing.TB) (h *history.History, r *report.Report, worst string) {
	rng := rand.New(rand.NewPCG(7, 7))
	r = &report.Report{Schema: report.Schema, Verdict: report.Fail,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.015, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@1f2e3d4", Config: map[string]string{"class": "gpu-test"}},
		Current:  report.Side{Label: "HEAD@9a8b7c6", Config: map[string]string{"class": "gpu-test"}}}
	h = &history.History{Schema: history.Schema, Class: "gpu-test", Source: "main:baselines/gpu-test.bench",
		Settings: history.Settings{Method: "e-divisive means", Alpha: 0.01, Permutations: 199, MinSegment: 3, Window: 30, Confidence: 0.95}}
	const snapshots = 12
	for i := range snapshots {
		h.Snapshots = append(h.Snapshots, history.SnapshotInfo{Label: fmt.Sprintf("c%06d", i), Commit: fmt.Sprintf("c%06d%033d", i, i),
			Time: time.Date(2026, 11, 1+i, 12, 0, 0, 0, time.UTC)})
	}
	sum := func(c float64) *report.Summary {
		vs := make([]float64, 10)
		for i := range vs {
			vs[i] = c * math.Exp(rng.NormFloat64()*0.003)
		}
		return &report.Summary{Center: report.Number(c), Lo: report.Number(c * 0.997), Hi: report.Number(c * 1.003), N: 10, Values: vs}
	}
	regressed := map[string]float64{} // name → slowdown
	worstDelta := 0.0
	n := 0
	for fi, fam := range suiteFamilies {
		for _, dt := range []string{"fp32", "bf16"} {
			for s := range 10 {
				for _, impl := range []string{"fused", "naive"} {
					name := fmt.Sprintf("%s/dtype=%s/rows=%d/cols=%d/impl=%s", fam, dt, 1<<(5+s), 4096, impl)
					slow := 0.0
					if fi >= 3 && impl == "fused" && s%3 == 0 && n < 14 {
						slow = 0.02 + 0.01*float64(n%7)
						if n == 9 {
							slow = 0.125 // the worst, deep in the suite
						}
						regressed[name] = slow
						if slow > worstDelta {
							worst, worstDelta = name, slow
						}
						n++
					}
					improved := fam == "RoPE" && dt == "bf16" && s == 9 && impl == "naive"
					ns := 1e-5 * float64(1+s) * float64(1+fi%3)
					for _, u := range []struct {
						unit, better string
						value        float64
					}{{"sec/op", report.Lower, ns}, {"B/s", report.Higher, 1e8 / ns}, {"pct-copy", report.Higher, 0.9 / ns * 1e-5 * 100},
						{"p99-sec", report.Lower, ns * 1.3}, {"scratch-B", report.Lower, 0}} {
						base, cur, d, verdict := u.value, u.value, 0.0, report.Unchanged
						gate := report.GateFail
						if impl == "naive" || u.unit == "p99-sec" {
							gate = report.GateWarn
						}
						change := 0.0
						switch {
						case slow > 0 && u.unit != "p99-sec" && u.unit != "scratch-B":
							change, verdict = slow, report.Regression
						case improved && u.unit == "sec/op":
							change, verdict = -0.2, report.Improvement
						}
						if u.better == report.Lower {
							cur = base * (1 + change)
						} else {
							cur = base / (1 + change)
						}
						d = cur/base - 1
						c := report.Comparison{Name: name, Config: map[string]string{}, Unit: u.unit, Better: u.better,
							Baseline: sum(base), Current: sum(cur), Delta: report.Number(d), DeltaLo: report.Number(d - 0.002),
							DeltaHi: report.Number(d + 0.002), P: 0.4, PAdjusted: 1, Threshold: 0.015, Gate: gate, Verdict: verdict}
						if verdict != report.Unchanged {
							c.P, c.PAdjusted = 0.0001, 0.004
						}
						r.Comparisons = append(r.Comparisons, c)
						r.Counts.Add(verdict)
						if u.unit == "sec/op" || u.unit == "pct-copy" {
							ser := history.Series{Name: name, Unit: u.unit, Better: u.better, Gate: gate}
							for i := range snapshots {
								v := base * math.Exp(rng.NormFloat64()*0.002)
								ser.Points = append(ser.Points, history.Point{Snapshot: i, Center: report.Number(v),
									Lo: report.Number(v * 0.998), Hi: report.Number(v * 1.002), N: 10})
							}
							h.Series = append(h.Series, ser)
						}
					}
				}
			}
		}
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Counts.Regression != 42 || r.Counts.Improvement != 1 || len(r.Comparisons) != 2000 {
		t.Fatalf("fixture: %d regressions, %d improvements of %d comparisons, want 42, 1 of 2000", r.Counts.Regression, r.Counts.Improvement, len(r.Comparisons))
	}
	return h, r, worst
}

// TestFailingPageOrder checks the order of a failing whole-suite page
// without a browser: the verdict, then the worst regression's row and its
// chart, every changed comparison before the first unchanged one, and the
// unchanged comparisons only inside closed family folds in suite order.
func TestFailingPageOrder(t *testing.T) {
	h, r, worst := failingSuite(t)
	var b bytes.Buffer
	if err := Write(&b, h, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := func(s string) int {
		t.Helper()
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("page lacks %q", s)
		}
		return i
	}
	verdict := at(`<p class="verdict fail">`)
	firstRow := at(`<tr class="regression">`)
	worstRow := at(`<tr class="regression"><td class="name">` + esc(worst) + `</td><td>sec/op</td>`)
	chart := at(`<svg class="trend" role="img" width="560" height="170" viewBox="0 0 560 170"><title>` + esc(worst) + ` sec/op</title>`)
	improvement := at(`<tr class="improvement">`)
	families := at(`<h2 id="families">`)
	firstUnchanged := at(`<tr class="unchanged">`)
	copyFold := at(`<details class="family"><summary><b>Copy</b>`)
	attentionFold := at(`<details class="family"><summary><b>Attention</b>`)
	if !(verdict < firstRow && firstRow == worstRow && worstRow < chart && chart < improvement && improvement < families &&
		families < copyFold && copyFold < firstUnchanged && copyFold < attentionFold) {
		t.Errorf("page order: verdict %d, first regression row %d (the worst's %d), its chart %d, improvement %d, families %d, Copy fold %d, first unchanged row %d, Attention fold %d",
			verdict, firstRow, worstRow, chart, improvement, families, copyFold, firstUnchanged, attentionFold)
	}
	if n := strings.Count(page[:families], `<tr class="regression">`); n != 42 {
		t.Errorf("%d regression rows before the families, want 42", n)
	}
	if n := strings.Count(page[families:], `<tr class="regression">`); n != 0 {
		t.Errorf("%d regression rows repeated in the families", n)
	}
	if n := strings.Count(page[:families], `<svg class="trend"`); n != 15 {
		t.Errorf("%d charts in the changed section, want one per changed benchmark (15)", n)
	}
	if n := strings.Count(page, `<svg class="trend"`); n != 400 {
		t.Errorf("%d trend charts on the page, want one per benchmark (400)", n)
	}
	if n := strings.Count(page, `<details class="family">`); n != len(suiteFamilies) {
		t.Errorf("%d family folds, want %d", n, len(suiteFamilies))
	}
	if strings.Contains(page, "<details open") || strings.Contains(page, " open>") {
		t.Errorf("a family fold is open")
	}
}

// TestFirstScreenInChromium is the acceptance test of the page's order in
// a browser: in a 1280×800 viewport at the top of a failing whole-suite
// page, the worst regression's row and its chart are fully visible, no
// unchanged comparison is, and every family fold is closed. With a history
// the chart is the benchmark's trend with the current side last; without
// one, the samples of both sides. It saves the first screen (with history)
// to -first-screen FILE.
func TestFirstScreenInChromium(t *testing.T) {
	bin := chromiumBinary(t)
	h, r, worst := failingSuite(t)
	const probe = `(() => {
  const box = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
  const row = document.querySelector("tr.regression");
  let chart = null;
  for (let e = row && row.nextElementSibling; e; e = e.nextElementSibling) {
    if (e.classList.contains("chart")) { chart = e.querySelector("svg"); break; }
  }
  const visible = [...document.querySelectorAll("tr")].filter(tr => {
    const b = tr.getBoundingClientRect();
    return b.height > 0 && b.bottom > 0 && b.top < innerHeight;
  });
  return {
    width: innerWidth, height: innerHeight, scroll: scrollY,
    row: row && box(row), rowName: row && row.querySelector("td.name").textContent, rowUnit: row && row.children[1].textContent,
    chart: chart && box(chart), chartClass: chart && chart.getAttribute("class"), chartTitle: chart && chart.querySelector("title").textContent,
    visibleRows: visible.map(tr => tr.className),
    open: document.querySelectorAll("details[open]").length,
    folds: document.querySelectorAll("details.family").length,
  };
})()`
	type box struct{ Top, Bottom, Left, Right float64 }
	var screen struct {
		Width, Height, Scroll int
		Row                   *box
		RowName, RowUnit      string
		Chart                 *box
		ChartClass            string
		ChartTitle            string
		VisibleRows           []string
		Open, Folds           int
	}
	for _, tc := range []struct {
		name  string
		h     *history.History
		chart string
	}{{"with history", h, "trend"}, {"without history", nil, "samples"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.html")
			var b bytes.Buffer
			if err := Write(&b, tc.h, r); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "first-screen.png")
			if *firstScreenShot != "" && tc.h != nil {
				out = *firstScreenShot
			}
			res := openInChromium(t, bin, path, out, probe)
			if err := json.Unmarshal(res.firstScreen, &screen); err != nil {
				t.Fatalf("probe result %s: %v", res.firstScreen, err)
			}
			t.Logf("first screen %d×%d of a %d px page: %s %s row at %+v, %s chart %q at %+v; rows in view %q; %d folds, %d open; screenshot %s",
				screen.Width, screen.Height, res.height, screen.RowName, screen.RowUnit, screen.Row, screen.ChartClass, screen.ChartTitle, screen.Chart, screen.VisibleRows, screen.Folds, screen.Open, out)
			for _, p := range res.problems {
				t.Errorf("console: %s", p)
			}
			for _, u := range res.requests {
				t.Errorf("network request: %s", u)
			}
			if screen.Width != 1280 || screen.Height != 800 || screen.Scroll != 0 {
				t.Fatalf("viewport %d×%d scrolled to %d, want 1280×800 at the top", screen.Width, screen.Height, screen.Scroll)
			}
			in := func(b *box) bool { return b != nil && b.Top >= 0 && b.Bottom <= 800 && b.Left >= 0 && b.Right <= 1280 }
			if screen.RowName != worst || screen.RowUnit != "sec/op" || !in(screen.Row) {
				t.Errorf("first regression row %q %q at %+v: want %q sec/op inside the first screen", screen.RowName, screen.RowUnit, screen.Row, worst)
			}
			if !in(screen.Chart) || screen.ChartClass != tc.chart || !strings.HasPrefix(screen.ChartTitle, worst+" sec/op") ||
				screen.Row == nil || screen.Chart.Top < screen.Row.Bottom {
				t.Errorf("its chart: %s %q at %+v, want the %s chart of %s sec/op below the row, inside the first screen", screen.ChartClass, screen.ChartTitle, screen.Chart, tc.chart, worst)
			}
			for _, cls := range screen.VisibleRows {
				if cls == "unchanged" {
					t.Errorf("an unchanged comparison is in the first screen: rows %q", screen.VisibleRows)
					break
				}
			}
			if screen.Folds != len(suiteFamilies) || screen.Open != 0 {
				t.Errorf("%d family folds, %d open; want %d, all closed", screen.Folds, screen.Open, len(suiteFamilies))
			}
		})
	}
}

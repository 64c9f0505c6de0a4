package html

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/history"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

var screenshot = flag.String("screenshot", "", "also save the browser test's screenshot to this PNG file")

const hostile = `Evil/name=<script>alert(1)</script>/q="x"&y`

// fixture is a history of 4 benchmarks (sec/op and pct-copy) over 30
// snapshots, RMSNorm fused slowing by 10% at snapshot 20 and GELU naive
// speeding up by 30% at snapshot 12, and a report of the latest
// comparison.
func fixture(t testing.TB) (*history.History, *report.Report) {
	rng := rand.New(rand.NewPCG(4, 4))
	names := []string{"RMSNorm/dtype=fp32/rows=256/cols=4096/impl=fused", "RMSNorm/dtype=fp32/rows=256/cols=4096/impl=naive",
		"GELU/dtype=bf16/rows=256/cols=4096/impl=naive", hostile}
	var snaps []history.Snapshot
	for i := 0; i < 30; i++ {
		var b strings.Builder
		b.WriteString("class: cpu-test\nUnit pct-copy better=higher\n")
		for j, n := range names {
			ns := 40000 * float64(j+1)
			if j == 0 && i >= 20 {
				ns *= 1.10
			}
			if j == 2 && i >= 12 {
				ns /= 1.30
			}
			for k := 0; k < 5; k++ {
				v := ns * math.Exp(rng.NormFloat64()*0.01)
				fmt.Fprintf(&b, "Benchmark%s-2\t100\t%.1f ns/op\t%.2f pct-copy\n", n, v, 4e6/v)
			}
		}
		sha := fmt.Sprintf("%07x%033x", 0xabc0000+i, i)
		snaps = append(snaps, history.Snapshot{Name: sha[:7], Label: sha[:7], Commit: sha,
			Time: time.Date(2026, 11, 1+i/2, 12, 0, 0, 0, time.UTC), Data: []byte(b.String())})
	}
	h, err := history.Build(snaps, history.Options{Class: "cpu-test", Source: "main:baselines/cpu-test.bench"})
	if err != nil {
		t.Fatal(err)
	}
	det, small := report.Number(0.31), report.Number(0.02)
	r := &report.Report{Schema: report.Schema, Verdict: report.Fail,
		Settings: report.Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: report.FloorHolm, MinSamples: 6},
		Baseline: report.Side{Label: "main@abc0013", Config: map[string]string{"class": "cpu-test"}},
		Current:  report.Side{Label: "HEAD@abc001d", Config: map[string]string{"class": "cpu-test"}},
		Warnings: []string{"a warning with <b>markup</b>"}}
	sum := func(c float64) *report.Summary {
		return &report.Summary{Center: report.Number(c), Lo: report.Number(c * 0.99), Hi: report.Number(c * 1.01), N: 10, Values: []float64{c}}
	}
	for j, n := range names {
		for _, unit := range []string{"sec/op", "pct-copy"} {
			base, cur := 40e-6*float64(j+1), 40e-6*float64(j+1)
			verdict, d := report.Unchanged, 0.0
			if j == 0 {
				cur *= 1.1
				verdict, d = report.Regression, 0.1
			}
			better := report.Lower
			if unit == "pct-copy" {
				base, cur, better, d = 4e-3/base, 4e-3/cur, report.Higher, -d/(1+d)
			}
			c := report.Comparison{Name: n, Config: map[string]string{}, Unit: unit, Better: better,
				Baseline: sum(base), Current: sum(cur), Delta: report.Number(d), DeltaLo: report.Number(d - 0.01),
				DeltaHi: report.Number(d + 0.01), P: 0.0001, PAdjusted: 0.001, Threshold: 0.05, Gate: report.GateFail, Verdict: verdict}
			c.Detectable = &small
			if j == 3 {
				c.Detectable, c.Verdict = &det, report.Unchanged
			}
			r.Comparisons = append(r.Comparisons, c)
			r.Counts.Add(c.Verdict)
		}
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return h, r
}

func TestPageIsSelfContained(t *testing.T) {
	h, r := fixture(t)
	var b bytes.Buffer
	if err := Write(&b, h, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "http://", "https://", "url(", "@import", " src=", " href=", "<img", "<link", "<iframe", "<alert"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := strings.Count(page, `<svg class="trend"`); n != 4 {
		t.Errorf("%d trend charts, want one per benchmark (4)", n)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("hostile benchmark name not escaped")
	}
	if !strings.Contains(page, "but 2 of 8 gated comparisons could not detect 5%") {
		t.Errorf("page lacks the honest-pass note")
	}
	if Write(&b, nil, nil) == nil {
		t.Errorf("Write with nothing: no error")
	}
}

// TestHistoryPageLeadsWithSteps checks a page of a history alone: the
// benchmarks whose history has steps come first, unfolded; the others are
// folded by family.
func TestHistoryPageLeadsWithSteps(t *testing.T) {
	h, _ := fixture(t)
	var b bytes.Buffer
	if err := Write(&b, h, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	steps, families := strings.Index(page, `<h2 id="changed">Steps in the history</h2>`), strings.Index(page, `<h2 id="families">`)
	if steps < 0 || families < steps {
		t.Fatalf("steps section at %d, families at %d", steps, families)
	}
	for _, name := range []string{"RMSNorm/dtype=fp32/rows=256/cols=4096/impl=fused", "GELU/dtype=bf16/rows=256/cols=4096/impl=naive"} {
		if i := strings.Index(page, `<title>`+name+` sec/op</title>`); i < steps || i > families {
			t.Errorf("the chart of %s (a step) is at %d, not between %d and %d", name, i, steps, families)
		}
	}
	if i := strings.Index(page, `<title>RMSNorm/dtype=fp32/rows=256/cols=4096/impl=naive sec/op</title>`); i < families {
		t.Errorf("the chart of a benchmark without steps is at %d, before the families (%d)", i, families)
	}
	if n := strings.Count(page, `<svg class="trend"`); n != 4 {
		t.Errorf("%d trend charts, want 4", n)
	}
}

// TestPageInChromium is the browser test of the HTML report: headless Chromium opens the page with no console errors and no
// network requests, shows one trend chart per benchmark, and takes a
// screenshot (saved with -screenshot FILE). It skips only when Chromium is
// not installed (.ci/run installs it).
func TestPageInChromium(t *testing.T) {
	bin := chromiumBinary(t)
	h, r := fixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := Write(&b, h, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.png")
	if *screenshot != "" {
		out = *screenshot
	}
	res := openInChromium(t, bin, path, out, "")
	benchmarks := map[string]bool{}
	for _, s := range h.Series {
		benchmarks[s.Name] = true
	}
	t.Logf("chromium: %d trend charts for %d benchmarks, %d points with hover titles, %d step markers, %d console problems, %d network requests; screenshot %s (%d bytes, page height %d px)",
		res.charts, len(benchmarks), res.titled, res.steps, len(res.problems), len(res.requests), out, res.png, res.height)
	if res.charts != len(benchmarks) {
		t.Errorf("%d trend charts, want one per benchmark (%d)", res.charts, len(benchmarks))
	}
	if res.titled != 4*30 || res.steps < 1 {
		t.Errorf("%d titled points (want 120), %d step markers (want ≥ 1)", res.titled, res.steps)
	}
	for _, p := range res.problems {
		t.Errorf("console: %s", p)
	}
	for _, u := range res.requests {
		t.Errorf("network request: %s", u)
	}
}

// TestChromiumHarnessSeesProblems checks the harness itself on a page that
// logs a console error and requests an image: both must be seen, or the
// test above could not fail.
func TestChromiumHarnessSeesProblems(t *testing.T) {
	bin := chromiumBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.html")
	os.WriteFile(path, []byte(`<!doctype html><title>bad</title><svg class="trend"></svg><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>`), 0o644)
	res := openInChromium(t, bin, path, filepath.Join(dir, "bad.png"), "")
	t.Logf("bad page: %d charts, problems %q, requests %q", res.charts, res.problems, res.requests)
	if res.charts != 1 || len(res.requests) == 0 || len(res.problems) == 0 {
		t.Errorf("the harness missed a problem: charts %d, problems %q, requests %q", res.charts, res.problems, res.requests)
	}
}

func chromiumBinary(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (Debian: apt-get install chromium)")
	return ""
}

// loaded is what the browser saw of a page.
type loaded struct {
	charts, titled, steps, height, png int
	problems, requests                 []string
	// firstScreen is the value of the probe expression in a 1280×800
	// viewport scrolled to the top, when one was given.
	firstScreen json.RawMessage
}

// openInChromium loads path in headless Chromium over the DevTools
// protocol, collects console errors and warnings, exceptions, log errors
// and every network request other than the page itself until 500 ms after
// the load event, counts the charts and saves a full-page screenshot to
// out. With a probe (a JavaScript expression), it instead evaluates the
// probe in a 1280×800 viewport at the top of the page and saves that first
// screen.
func openInChromium(t *testing.T, bin, path, out, probe string) loaded {
	var res loaded
	// Not t.TempDir: Chromium's helper processes outlive the killed browser for a moment and keep writing to
	// the profile, which made TempDir's cleanup fail the test now and then. Removed with retries instead.
	dir, err := os.MkdirTemp("", "kernelwatch-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("left %s behind: Chromium still writing to it", dir)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd, ws, err := startChromium(ctx, bin, filepath.Join(dir, "profile"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c, err := dialCDP(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := c.call(ctx, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	pageURL := "file://" + path
	if err := c.call(ctx, "Page.navigate", map[string]any{"url": pageURL}, nil); err != nil {
		t.Fatal(err)
	}
	loaded := false
	var quiet <-chan time.Time
	for done := false; !done; {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatal("DevTools connection closed")
			}
			var p struct {
				Type    string                            `json:"type"`
				Args    []struct{ Value any }             `json:"args"`
				Entry   struct{ Level, Text, URL string } `json:"entry"`
				Request struct{ URL string }              `json:"request"`
				Details struct{ Text string }             `json:"exceptionDetails"`
			}
			json.Unmarshal(ev.Params, &p)
			switch ev.Method {
			case "Runtime.consoleAPICalled":
				if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
					res.problems = append(res.problems, fmt.Sprintf("console.%s %v", p.Type, p.Args))
				}
			case "Runtime.exceptionThrown":
				res.problems = append(res.problems, "exception: "+p.Details.Text)
			case "Log.entryAdded":
				if p.Entry.Level == "error" || p.Entry.Level == "warning" {
					res.problems = append(res.problems, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
				}
			case "Network.requestWillBeSent":
				if p.Request.URL != pageURL {
					res.requests = append(res.requests, p.Request.URL)
				}
			case "Page.loadEventFired":
				loaded = true
				quiet = time.After(500 * time.Millisecond) // late errors and requests
			}
		case <-quiet:
			// The load event may have been about:blank's: wait for the page.
			var ready struct {
				Result struct{ Value bool } `json:"result"`
			}
			expr := fmt.Sprintf("document.readyState === %q && location.href === %q", "complete", pageURL)
			if err := c.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &ready); err != nil {
				t.Fatal(err)
			}
			if done = ready.Result.Value; !done {
				quiet = time.After(200 * time.Millisecond)
			}
		case <-ctx.Done():
			t.Fatalf("page did not load: %v", ctx.Err())
		}
	}
	if !loaded {
		t.Fatal("no load event")
	}
	var eval struct {
		Result struct{ Value json.RawMessage } `json:"result"`
	}
	count := func(expr string) int {
		if err := c.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &eval); err != nil {
			t.Fatal(err)
		}
		var n int
		json.Unmarshal(eval.Result.Value, &n)
		return n
	}
	res.charts = count(`document.querySelectorAll("svg.trend").length`)
	res.titled = count(`document.querySelectorAll("svg.trend circle.pt title").length`)
	res.steps = count(`document.querySelectorAll("svg.trend line.step").length`)
	if err := c.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	res.height = count(`Math.ceil(document.documentElement.scrollHeight)`)
	if probe != "" {
		if err := c.call(ctx, "Runtime.evaluate", map[string]any{"expression": "window.scrollTo(0, 0); JSON.stringify(" + probe + ")", "returnByValue": true}, &eval); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := json.Unmarshal(eval.Result.Value, &s); err != nil {
			t.Fatalf("probe: %v (%s)", err, eval.Result.Value)
		}
		res.firstScreen = json.RawMessage(s)
	} else if err := c.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": res.height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	var shot struct{ Data string }
	if err := c.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot is not a PNG (%v)", err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	res.png = len(png)
	return res
}

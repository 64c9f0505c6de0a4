package regress

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/synth"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// These tests are the comparator's regression tests for its error rates
// (issue: A/A and power properties). They run the whole pipeline on
// synthetic suites from regress/synth, written to files and parsed back.

// suites is the number of suites per property: 20 in CI, more with
// -suites=N for a sharper measurement of the rates.
var suitesFlag = flag.Int("suites", 20, "synthetic suites per error-rate test")

var suites = 20

// compareSynth generates one suite and compares its two sides.
func compareSynth(t testing.TB, s synth.Suite, effects map[int]synth.Effect, correction string) *report.Report {
	t.Helper()
	bf, cf := writeSides(t, s, effects)
	r, err := Compare(Input{Baseline: []string{bf}, Current: []string{cf}},
		verdict.Options{Config: config.Default(), Correction: correction})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeSides writes the two sides of a synthetic suite to result files.
func writeSides(t testing.TB, s synth.Suite, effects map[int]synth.Effect) (base, cur string) {
	t.Helper()
	b, c := s.Generate(effects)
	dir := t.TempDir()
	base, cur = filepath.Join(dir, "base.txt"), filepath.Join(dir, "cur.txt")
	if err := os.WriteFile(base, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur, c, 0o644); err != nil {
		t.Fatal(err)
	}
	return base, cur
}

// benchIndex recovers the synthetic benchmark number of a comparison.
func benchIndex(t testing.TB, name string, n int) int {
	for i := 0; i < n; i++ {
		if synth.Name(i) == name {
			return i
		}
	}
	t.Fatalf("unknown synthetic benchmark %q", name)
	return -1
}

func TestAAIdenticalSuitesStayQuiet(t *testing.T) {
	suites = *suitesFlag
	failed := 0
	for seed := uint64(1); seed <= uint64(suites); seed++ {
		r := compareSynth(t, synth.Default(seed), nil, "")
		if len(r.Comparisons) != 300 {
			t.Fatalf("suite %d: %d comparisons, want 100 benchmarks × 3 units", seed, len(r.Comparisons))
		}
		if r.Verdict == report.Fail {
			failed++
			for _, c := range r.Failing() {
				t.Logf("suite %d: false %s %s %s %+.2f%% p=%.2g adj=%.2g", seed, c.Verdict, c.Name, c.Unit, float64(c.Delta)*100, float64(c.P), float64(c.PAdjusted))
			}
		}
	}
	t.Logf("A/A: %d of %d identical-code suites failed the gate", failed, suites)
	if failed > 1 {
		t.Errorf("A/A: %d of %d identical-code suites failed the gate, want ≤ 1", failed, suites)
	}
}

// powerEffects injects 12 regressions of 12%, 12 improvements of 12% and 4
// bandwidth drops of 12% with unchanged time.
func powerEffects() (map[int]synth.Effect, func(i int) string) {
	eff := map[int]synth.Effect{}
	for i := 0; i < 12; i++ {
		eff[i] = synth.Effect{Time: 1.12}
		eff[12+i] = synth.Effect{Time: 1 / 1.12}
	}
	for i := 24; i < 28; i++ {
		eff[i] = synth.Effect{Rate: 0.88}
	}
	kind := func(i int) string {
		switch {
		case i < 12:
			return "slower"
		case i < 24:
			return "faster"
		case i < 28:
			return "rate-drop"
		}
		return "same"
	}
	return eff, kind
}

type powerResult struct {
	found, injected     int // injected slowdowns found as sec/op regressions
	rateFound, rateDrop int // B/s drops found as B/s regressions
	falseRegressions    int
	improvementsAsRegr  int
}

func measurePower(t testing.TB, correction string) powerResult {
	eff, kind := powerEffects()
	var pr powerResult
	for seed := uint64(101); seed < 101+uint64(suites); seed++ {
		s := synth.Default(seed)
		r := compareSynth(t, s, eff, correction)
		for _, c := range r.Comparisons {
			i := benchIndex(t, c.Name, s.Benchmarks)
			reg := c.Verdict == report.Regression
			switch k := kind(i); {
			case k == "slower" && c.Unit == "sec/op":
				pr.injected++
				if reg {
					pr.found++
				}
			case k == "slower" && c.Unit == "B/s":
				// Expected too: the same slowdown seen as bandwidth.
			case k == "rate-drop" && c.Unit == "B/s":
				pr.rateDrop++
				if reg {
					pr.rateFound++
				}
			case k == "faster" && reg:
				pr.improvementsAsRegr++
				pr.falseRegressions++
			case reg:
				pr.falseRegressions++
				t.Logf("suite %d: false regression %s %s %+.2f%% p=%.2g adj=%.2g", seed, c.Name, c.Unit, float64(c.Delta)*100, float64(c.P), float64(c.PAdjusted))
			}
		}
	}
	return pr
}

func TestPowerFindsInjectedRegressions(t *testing.T) {
	suites = *suitesFlag
	pr := measurePower(t, "")
	t.Logf("power: %d/%d 12%% slowdowns found, %d/%d bandwidth drops found, %d false regressions in %d suites",
		pr.found, pr.injected, pr.rateFound, pr.rateDrop, pr.falseRegressions, suites)
	if pr.found*100 < pr.injected*95 {
		t.Errorf("found %d of %d injected 12%% regressions, want ≥ 95%%", pr.found, pr.injected)
	}
	if pr.rateFound*100 < pr.rateDrop*95 {
		t.Errorf("found %d of %d 12%% bandwidth drops with unchanged time, want ≥ 95%%", pr.rateFound, pr.rateDrop)
	}
	if pr.improvementsAsRegr > 0 {
		t.Errorf("%d improvements were called regressions", pr.improvementsAsRegr)
	}
	if pr.falseRegressions*10 > suites {
		t.Errorf("%d false regressions in %d suites, want ≤ 1 per 10 suites", pr.falseRegressions, suites)
	}
}

// TestCorrectionChoice records the measurement the default correction was
// chosen by (design §4): every method on the same A/A and power suites. It
// asserts only that the default meets the targets at least as well as Holm
// over everything; run with -v to see the table.
func TestCorrectionChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: compares every correction")
	}
	suites = *suitesFlag
	var rows []string
	miss := map[string]int{}
	for _, m := range []string{report.FloorHolm, report.Holm, report.BH, report.NoCorrect} {
		aa := 0
		for seed := uint64(1); seed <= uint64(suites); seed++ {
			if compareSynth(t, synth.Default(seed), nil, m).Verdict == report.Fail {
				aa++
			}
		}
		pr := measurePower(t, m)
		miss[m] = pr.injected - pr.found
		rows = append(rows, strings.Join([]string{m,
			"A/A failing suites", itoa(aa), "/", itoa(suites),
			"| 12% slowdowns missed", itoa(pr.injected - pr.found), "/", itoa(pr.injected),
			"| false regressions", itoa(pr.falseRegressions)}, " "))
	}
	t.Log("\n" + strings.Join(rows, "\n"))
	if miss[report.FloorHolm] > miss[report.Holm] {
		t.Errorf("floor-holm missed %d, more than holm's %d", miss[report.FloorHolm], miss[report.Holm])
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

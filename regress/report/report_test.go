package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func sample() *Report {
	r := &Report{
		Schema: Schema, Verdict: Fail,
		Settings: Settings{Alpha: 0.05, Confidence: 0.95, Threshold: 0.05, Correction: FloorHolm, MinSamples: 6},
		Baseline: Side{Label: "main", Config: map[string]string{}},
		Current:  Side{Label: "HEAD", Config: map[string]string{}},
		Comparisons: []Comparison{{
			Name: "A", Config: map[string]string{}, Unit: "sec/op", Better: Lower,
			Baseline: &Summary{Center: 1, Lo: Number(math.Inf(-1)), Hi: 2, N: 3, Values: []float64{1, 1, 2}},
			Current:  &Summary{Center: 2, Lo: 1, Hi: 3, N: 3, Values: []float64{1, 2, 3}},
			Delta:    1, DeltaLo: Number(math.NaN()), DeltaHi: Number(math.NaN()),
			P: 0.01, PAdjusted: 0.02, Threshold: 0.05, Gate: GateFail, Verdict: Regression,
		}},
		Warnings: []string{},
	}
	r.Counts.Add(Regression)
	return r
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"lo": null`) || !strings.Contains(buf.String(), `"delta_lo": null`) {
		t.Errorf("non-finite numbers must encode as null:\n%s", buf.String())
	}
	r, err := Read(&buf, "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode() != 1 || !math.IsNaN(float64(r.Comparisons[0].DeltaLo)) || r.Comparisons[0].Current.Center != 2 {
		t.Errorf("round trip changed the report: %+v", r.Comparisons[0])
	}
}

func TestReadRejects(t *testing.T) {
	var good bytes.Buffer
	if err := sample().Write(&good); err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"wrong schema":       strings.Replace(good.String(), Schema, "other/v9", 1),
		"unknown field":      strings.Replace(good.String(), `"verdict": "fail"`, `"verdict": "fail", "extra": 1`, 1),
		"unknown verdict":    strings.Replace(good.String(), `"verdict": "regression"`, `"verdict": "meh"`, 1),
		"counts mismatch":    strings.Replace(good.String(), `"regression": 1`, `"regression": 2`, 1),
		"pass with failures": strings.Replace(good.String(), `"verdict": "fail"`, `"verdict": "pass"`, 1),
		"trailing data":      good.String() + "{}",
		"not json":           "<html>",
	}
	for name, in := range tests {
		if _, err := Read(strings.NewReader(in), "r.json"); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.HasPrefix(err.Error(), "r.json: ") {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

// inconclusive is a report whose one gated comparison was not judged.
func inconclusive() *Report {
	r := sample()
	c := &r.Comparisons[0]
	c.Verdict, c.PAdjusted = Inconclusive, Number(math.NaN())
	r.Counts = Counts{Inconclusive: 1}
	r.Verdict = Inconclusive
	r.Unjudged = &Unjudged{Count: 1, Of: 1, NeedSamples: 6, HaveSamples: 3}
	return r
}

func TestInconclusiveReport(t *testing.T) {
	var buf bytes.Buffer
	if err := inconclusive().Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"verdict": "inconclusive",`) || !strings.Contains(buf.String(), `"need_samples": 6`) {
		t.Errorf("JSON:\n%s", buf.String())
	}
	r, err := Read(strings.NewReader(buf.String()), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode() != 3 {
		t.Errorf("exit code %d, want 3", r.ExitCode())
	}
	for name, in := range map[string]string{
		"pass with nothing judged": strings.Replace(buf.String(), `"verdict": "inconclusive",`, `"verdict": "pass",`, 1),
		"more unjudged than gated": strings.Replace(buf.String(), `"of": 1`, `"of": 0`, 1),
	} {
		if _, err := Read(strings.NewReader(in), "r.json"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	without := inconclusive()
	without.Unjudged = nil
	if err := without.Validate(); err == nil {
		t.Errorf("an inconclusive report that does not say what went unjudged was accepted")
	}
}

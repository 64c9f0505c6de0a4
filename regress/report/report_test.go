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

// comparisonsJSON is a report whose comparisons are n copies of one.
func comparisonsJSON(t *testing.T, n int) string {
	t.Helper()
	r := sample()
	r.Verdict = Pass
	r.Counts = Counts{}
	c := r.Comparisons[0]
	c.Verdict, c.Gate = Unchanged, GateFail
	r.Comparisons = nil
	for i := 0; i < n; i++ {
		r.Comparisons = append(r.Comparisons, c)
		r.Counts.Add(c.Verdict)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestReadLimits(t *testing.T) {
	ten := comparisonsJSON(t, 10)
	if _, err := ReadLimited(strings.NewReader(ten), "r.json", DefaultLimits); err != nil {
		t.Fatalf("a report within the limits: %v", err)
	}
	lim := func(f func(*Limits)) Limits { l := DefaultLimits; f(&l); return l }
	big := `{"schema": "` + Schema + `", "warnings": ["` + strings.Repeat("x", 2<<20) + `"]}`
	for _, tc := range []struct {
		name string
		in   string
		lim  Limits
		want string
	}{
		{"comparisons", ten, lim(func(l *Limits) { l.Comparisons = 9 }), "more than 9 comparisons"},
		{"samples", ten, lim(func(l *Limits) { l.Samples = 59 }), "more than 59 samples"},
		{"bytes", ten, lim(func(l *Limits) { l.Bytes = 1000 }), "larger than 0 MiB"},
		{"element", big, lim(func(l *Limits) { l.Element = 1 << 20 }), "a value larger than 1 MiB"},
		{"warnings", `{"warnings": ["a", "b", "c"]}`, lim(func(l *Limits) { l.Warnings = 2 }), "more than 2 warnings"},
		{"repeated field", `{"comparisons": [], "comparisons": []}`, DefaultLimits, `field "comparisons" appears twice`},
		{"empty comparison", `{"schema": "` + Schema + `", "comparisons": [{}, {}, {}]}`, DefaultLimits, `comparison 0 (""): unknown verdict ""`},
		{"not an object", `[1]`, DefaultLimits, "not a kernelwatch report"},
		{"truncated", ten[:len(ten)/2], DefaultLimits, "not a kernelwatch report"},
	} {
		_, err := ReadLimited(strings.NewReader(tc.in), "r.json", tc.lim)
		if err == nil || !strings.HasPrefix(err.Error(), "r.json: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadRejectsEarly checks that a report is refused where it breaks a
// rule, without reading the rest: here a reader that fails the test if
// more than 1 MiB of a 1 GiB stream of empty comparisons is read.
func TestReadRejectsEarly(t *testing.T) {
	rd := &endlessComparisons{head: `{"schema": "` + Schema + `", "comparisons": [`}
	_, err := Read(rd, "r.json")
	if err == nil || !strings.Contains(err.Error(), "unknown verdict") {
		t.Fatalf("error %v", err)
	}
	if rd.n > 1<<20 {
		t.Errorf("read %d bytes before refusing the first comparison", rd.n)
	}
}

type endlessComparisons struct {
	head string
	n    int
}

func (e *endlessComparisons) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if e.n < len(e.head) {
			p[k] = e.head[e.n]
		} else {
			p[k] = "{},"[(e.n-len(e.head))%3]
		}
		k++
		e.n++
	}
	return k, nil
}

// TestErrorsQuoteNames checks that a name from the input cannot start a
// line of its own in an error.
func TestErrorsQuoteNames(t *testing.T) {
	in := strings.Replace(comparisonsJSON(t, 1), `"name": "A"`, `"name": "x\n::error title=Forged::y"`, 1)
	in = strings.Replace(in, `"gate": "fail"`, `"gate": "loud"`, 1)
	_, err := Read(strings.NewReader(in), "r.json")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `"x\n::error title=Forged::y"`) {
		t.Errorf("error %q", err)
	}
}

// TestWriteLegacyCommand checks that "##[" in a string is written so that
// no log line contains it, and reads back unchanged.
func TestWriteLegacyCommand(t *testing.T) {
	r := sample()
	r.Comparisons[0].Name = "##[error]forged"
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "##[") {
		t.Fatalf("written report contains ##[:\n%s", buf.String())
	}
	back, err := Read(&buf, "r.json")
	if err != nil || back.Comparisons[0].Name != "##[error]forged" {
		t.Errorf("read back %v, %v", back, err)
	}
}

// TestSequentialRoundTrip: the sequential section survives JSON, and a
// section that contradicts itself is refused.
func TestSequentialRoundTrip(t *testing.T) {
	r := sample()
	d := Number(0.08)
	r.Sequential = &Sequential{Rounds: 10, MaxRounds: 30, BudgetSeconds: 240, Stopped: SeqBudget,
		Benchmarks: []SequentialBenchmark{{Name: "A", Rounds: 24, Reason: SeqUnderpowered, Underpowered: true, Detectable: &d}}}
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	if sq := got.Sequential; sq == nil || sq.Stopped != SeqBudget || len(sq.Benchmarks) != 1 || sq.Benchmarks[0].Rounds != 24 || *sq.Benchmarks[0].Detectable != 0.08 {
		t.Errorf("round trip: %+v", got.Sequential)
	}
	for name, in := range map[string]string{
		"unknown stop":          strings.Replace(buf.String(), `"stopped": "budget"`, `"stopped": "bored"`, 1),
		"more than max_rounds":  strings.Replace(buf.String(), `"rounds": 24`, `"rounds": 31`, 1),
		"fewer than configured": strings.Replace(buf.String(), `"rounds": 24`, `"rounds": 9`, 1),
		"unknown reason":        strings.Replace(buf.String(), `"reason": "underpowered"`, `"reason": "whim"`, 1),
		"max below rounds":      strings.Replace(buf.String(), `"max_rounds": 30`, `"max_rounds": 5`, 1),
	} {
		if _, err := Read(strings.NewReader(in), "r.json"); err == nil || !strings.Contains(err.Error(), "sequential") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

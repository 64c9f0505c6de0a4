// Package report is the data model of one kernelwatch comparison: the JSON
// report of schema kernelwatch.regress/v1 (design §6) that the verdict step
// produces and that every later step (rendering, GitHub publishing, history)
// consumes.
//
// A Report is self-contained: it carries the raw samples of both sides, the
// settings the verdicts were reached under and every warning raised on the way,
// so it can be re-analysed or re-rendered later without the result files.
// Numbers that do not exist (the confidence interval of a one-sample summary,
// the delta against a zero baseline) are encoded as JSON null, never as a
// made-up value.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Schema is the value of Report.Schema for this version of the format.
const Schema = "kernelwatch.regress/v1"

// Overall outcomes of a report (Report.Verdict): pass, fail, no-data, and
// Inconclusive, the word of the comparison verdict, when comparisons were
// made but not one gated comparison the statistics test could be judged
// (too few samples): never a pass.
const (
	Pass   = "pass"    // something was compared, gated comparisons were judged, and nothing gated failed
	Fail   = "fail"    // at least one gated comparison failed
	NoData = "no-data" // nothing was comparable: never a pass
)

// Verdict of one comparison (Comparison.Verdict).
const (
	Regression   = "regression"   // significantly worse than baseline by more than the threshold
	Improvement  = "improvement"  // significantly better by more than the threshold
	Unchanged    = "unchanged"    // no change larger than the threshold could be shown
	Inconclusive = "inconclusive" // too few samples for the test to ever reach significance
	Added        = "added"        // present only in the current results
	Removed      = "removed"      // present only in the baseline results
	OverBudget   = "over-budget"  // current median misses the rule's absolute budget
	Failed       = "failed"       // the benchmark failed or panicked on one side
)

// Verdicts lists every comparison verdict in the order reports present them:
// the ones that can fail a gate first.
var Verdicts = []string{Regression, Failed, OverBudget, Removed, Improvement, Inconclusive, Added, Unchanged}

// Gate policies (Comparison.Gate).
const (
	GateFail = "fail" // a failing verdict fails the report
	GateWarn = "warn" // a failing verdict is shown but does not fail the report
	GateOff  = "off"  // reported only
)

// Directions of a unit (Comparison.Better).
const (
	Lower   = "lower"
	Higher  = "higher"
	Unknown = "unknown" // no metadata, no config and no default: never gated
)

// Multiple-comparison corrections (Settings.Correction).
const (
	Holm      = "holm"       // Holm–Bonferroni over every gated comparison
	BH        = "bh"         // Benjamini–Hochberg over every gated comparison
	FloorHolm = "floor-holm" // Holm over only the gated comparisons whose delta passes the threshold
	NoCorrect = "none"       // p_adjusted = p
)

// Report is one comparison of a baseline with a current set of results.
type Report struct {
	Schema string `json:"schema"`
	// Verdict is pass, fail, no-data or inconclusive.
	Verdict     string       `json:"verdict"`
	Settings    Settings     `json:"settings"`
	Baseline    Side         `json:"baseline"`
	Current     Side         `json:"current"`
	Comparisons []Comparison `json:"comparisons"`
	Counts      Counts       `json:"counts"`
	Warnings    []string     `json:"warnings"`
	// Costs, from regress check and run, says where the command's time went.
	Costs *Costs `json:"costs,omitempty"`
	// Incomplete is set when the run stopped before all its rounds; the
	// comparisons use the rounds that finished.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// Unjudged is set when some gated comparison the statistics test
	// could not be judged; when none could, the verdict is inconclusive.
	Unjudged *Unjudged `json:"unjudged,omitempty"`
	// Sequential is set when regress check could add rounds beyond the
	// configured ones (suite.max_rounds): which benchmarks got them, how
	// many, and which still cannot detect their threshold.
	Sequential *Sequential `json:"sequential,omitempty"`
}

// Unjudged counts the gated comparisons (gate fail, both sides, a unit
// tested by the statistics rather than exactly) whose verdict is
// inconclusive, and says what those short of samples lacked: "need ≥
// NeedSamples samples a side (have HaveSamples)"; NeedSamples is 0 when
// none was (two modes on a side left them inconclusive). A report whose
// every such comparison is unjudged is not a pass: nothing it gates on was
// judged.
type Unjudged struct {
	// Count of Of gated comparisons could not be judged.
	Count int `json:"count"`
	Of    int `json:"of"`
	// NeedSamples is the most samples a side any of them needs (the
	// min_samples of the configuration, or more where the correction
	// needs more); HaveSamples the fewest a side any of them has.
	NeedSamples int `json:"need_samples"`
	HaveSamples int `json:"have_samples"`
}

// AllUnjudged reports whether no gated comparison could be judged.
func (u *Unjudged) AllUnjudged() bool { return u != nil && u.Of > 0 && u.Count == u.Of }

// Sequential describes the rounds regress check added, after the
// configured ones, for the benchmarks whose gated comparisons could not yet
// detect their threshold. Which benchmarks got more rounds depended only on
// the spread of both sides' samples taken together and their count, never
// on their deltas or p-values (package sequential says why).
type Sequential struct {
	// Rounds is how many rounds every benchmark got (--count).
	Rounds int `json:"rounds"`
	// MaxRounds is the most rounds a benchmark could get (max_rounds).
	MaxRounds int `json:"max_rounds"`
	// BudgetSeconds is how long the check could run, from its start,
	// before it stopped adding rounds (suite.budget); 0 for no budget.
	BudgetSeconds float64 `json:"budget_s,omitempty"`
	// Stopped is why no further round was added: SeqDetectable,
	// SeqMaxRounds, SeqBudget, SeqDeadline or SeqSignal.
	Stopped string `json:"stopped"`
	// Benchmarks lists, in report order, every benchmark that wanted more
	// rounds than Rounds.
	Benchmarks []SequentialBenchmark `json:"benchmarks"`
}

// Why a check stopped adding rounds (Sequential.Stopped).
const (
	SeqDetectable = "detectable" // no benchmark wanted more: every gated comparison could detect its threshold
	SeqMaxRounds  = "max-rounds" // the benchmarks left had MaxRounds rounds
	SeqBudget     = "budget"     // the next round would not have finished within the budget
	SeqDeadline   = "deadline"   // nor before --deadline
	SeqSignal     = "signal"     // interrupted: the rounds that finished on both sides are kept
)

// SequentialBenchmark is one benchmark that wanted more rounds.
type SequentialBenchmark struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config,omitempty"`
	// Rounds is how many rounds it got in all.
	Rounds int `json:"rounds"`
	// Reason is why it wanted more: SeqUnderpowered or SeqTwoMode.
	Reason string `json:"reason"`
	// Underpowered is set when, after its last round, one of its gated
	// comparisons still could not detect its threshold.
	Underpowered bool `json:"underpowered"`
	// Detectable is the largest smallest-detectable change of its gated
	// comparisons after its last round (their weakest); null when one of
	// them could detect nothing.
	Detectable *Number `json:"detectable,omitempty"`
}

// Why a benchmark wanted more rounds (SequentialBenchmark.Reason).
const (
	SeqUnderpowered = "underpowered" // a gated comparison could not detect its threshold
	SeqTwoMode      = "two-mode"     // its samples fall in two modes, which more rounds tell apart
)

// Costs is where a command's wall time went: WallSeconds is the whole
// command's, Phases what each part took (building, each phase of the test
// binary processes as they account for themselves, regress's own work), in
// seconds; with parallel lanes (--gpus) the processes' phases are summed
// over the lanes and so may add up to more than the wall time.
type Costs struct {
	WallSeconds float64 `json:"wall_s"`
	Phases      []Phase `json:"phases"`
}

// Phase is one named part of Costs.
type Phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Incomplete describes an interleaved run (regress check) that stopped
// before all its planned rounds. A run cut short never passes: its report
// exits 2 whatever its verdict (Stands), unless it stopped at the deadline
// it was given with at least min_samples rounds, the amount the statistics
// were configured to need.
type Incomplete struct {
	// Rounds is how many rounds finished on both sides for every
	// benchmark (of every shard, for a joined report).
	Rounds int `json:"rounds"`
	// Planned is how many rounds were asked for (--count).
	Planned int `json:"planned"`
	// Reason is StopSignal or StopDeadline (for a joined report, the
	// signal when any shard had one).
	Reason string `json:"reason"`
}

// Why a run stopped early (Incomplete.Reason).
const (
	StopSignal   = "signal"   // interrupted: Ctrl-C, SIGTERM (a CI job's timeout or cancellation)
	StopDeadline = "deadline" // regress check --deadline
)

// Stands reports whether the verdict of a report cut short still gates:
// only when the run stopped at its deadline after at least minSamples
// rounds.
func (in *Incomplete) Stands(minSamples int) bool {
	return in.Reason == StopDeadline && in.Rounds >= minSamples
}

// Settings records the statistical settings the verdicts were reached under.
// Rules in benchmarks.yaml may override Threshold and Alpha per comparison;
// each Comparison records the threshold it was judged by.
type Settings struct {
	Alpha      float64 `json:"alpha"`
	Confidence float64 `json:"confidence"`
	Threshold  float64 `json:"threshold"`
	Correction string  `json:"correction"`
	MinSamples int     `json:"min_samples"`
	// NoiseFile is the calibrated noise file the thresholds were raised
	// from, and NoiseK the multiplier of its 99th percentiles.
	NoiseFile string  `json:"noise_file,omitempty"`
	NoiseK    float64 `json:"noise_k,omitempty"`
	// FloorsFile is the cross-host floors file (regress calibrate
	// --across-history) a stored check's thresholds were raised from.
	FloorsFile string `json:"floors_file,omitempty"`
}

// Side describes one side of the comparison.
type Side struct {
	// Label names the side for people: "main@1f2e3d4", or the file names.
	Label string `json:"label"`
	// Config holds the configuration lines shared by every result of the side.
	Config map[string]string `json:"config"`
	// Files lists the result files read for this side.
	Files []string `json:"files,omitempty"`
}

// Comparison is the judgement of one (benchmark, distinguishing config, unit).
type Comparison struct {
	// Name is the benchmark name without the "Benchmark" prefix and the
	// "-N" GOMAXPROCS suffix.
	Name string `json:"name"`
	// Config holds the configuration keys that distinguish this comparison
	// from others of the same name (for example pkg), empty otherwise.
	Config map[string]string `json:"config"`
	// Unit is the benchunit-tidied unit (sec/op, B/s, GB/s, ...).
	Unit string `json:"unit"`
	// Better is the direction of the unit: lower, higher or unknown.
	Better string `json:"better"`
	// Baseline and Current summarize each side; nil when the side lacks it.
	Baseline *Summary `json:"baseline"`
	Current  *Summary `json:"current"`
	// Delta is current median / baseline median − 1; DeltaLo and DeltaHi
	// bound it at the report's confidence level.
	Delta   Number `json:"delta"`
	DeltaLo Number `json:"delta_lo"`
	DeltaHi Number `json:"delta_hi"`
	// P is the two-sided Mann–Whitney U p-value; PAdjusted the p-value
	// after the report's multiple-comparison correction.
	P         Number `json:"p"`
	PAdjusted Number `json:"p_adjusted"`
	// Threshold is the effect floor this comparison was judged by.
	Threshold float64 `json:"threshold"`
	// Gate is fail, warn or off.
	Gate string `json:"gate"`
	// Verdict is one of the Verdicts.
	Verdict string `json:"verdict"`
	// Budget is the rule's absolute budget in this comparison's unit, if any.
	Budget *float64 `json:"budget,omitempty"`
	// Warnings are problems that did not stop this comparison.
	Warnings []string `json:"warnings,omitempty"`
	// ThresholdFrom says which threshold applied when a noise or floors
	// file was read: "config" (benchmarks.yaml or the flags), "noise" (the
	// calibrated noise floor K × NoiseP99 was larger) or "hosts" (the
	// cross-host floor of a stored check was); empty without either.
	ThresholdFrom string `json:"threshold_from,omitempty"`
	// ConfiguredThreshold is the threshold the configuration asked for,
	// when a noise or cross-host floor replaced it.
	ConfiguredThreshold *float64 `json:"configured_threshold,omitempty"`
	// NoiseP99 is the calibrated 99th percentile of |Δ| between A/A rounds.
	NoiseP99 *float64 `json:"noise_p99,omitempty"`
	// Unstable marks a benchmark whose noise floor exceeds the unstable
	// limit; its gate is the configuration's unstable gate.
	Unstable bool `json:"unstable,omitempty"`
	// Detectable is the smallest relative change the test could have
	// detected (power 0.8) given the samples' spread and count, at the
	// gate's alpha and correction; null when it could detect none.
	Detectable *Number `json:"detectable,omitempty"`
	// DetectableAlpha is the significance level Detectable was computed
	// at: the gate's alpha over the size of the corrected family.
	DetectableAlpha *float64 `json:"detectable_alpha,omitempty"`
}

// Blind reports whether c is gated and could not have detected a change
// of its threshold's size.
func (c *Comparison) Blind() bool {
	return c.Gate == GateFail && c.Detectable != nil && !(float64(*c.Detectable) <= c.Threshold)
}

// Summary summarizes the samples of one side.
type Summary struct {
	Center Number    `json:"center"`
	Lo     Number    `json:"lo"`
	Hi     Number    `json:"hi"`
	N      int       `json:"n"`
	Values []float64 `json:"values"`
	// Rounds, when present, holds the round of regress check's
	// interleaved run that each of Values came from (Rounds[i] for
	// Values[i]).
	Rounds []int `json:"rounds,omitempty"`
	// Modes, when present, are the two modes the values fall in, lower
	// first (package stats decides when a side has two); absent for a side
	// of one mode.
	Modes []Mode `json:"modes,omitempty"`
}

// Mode is one of the two clusters of a side whose values fall in two modes.
type Mode struct {
	// Center is the median of the mode's values.
	Center float64 `json:"center"`
	// N is how many of the side's values fall in the mode.
	N int `json:"n"`
}

// Counts counts the comparisons of a report by verdict.
type Counts struct {
	Regression   int `json:"regression"`
	Improvement  int `json:"improvement"`
	Unchanged    int `json:"unchanged"`
	Inconclusive int `json:"inconclusive"`
	Added        int `json:"added"`
	Removed      int `json:"removed"`
	OverBudget   int `json:"over-budget"`
	Failed       int `json:"failed"`
}

// Add counts one comparison with the given verdict.
func (c *Counts) Add(verdict string) {
	switch verdict {
	case Regression:
		c.Regression++
	case Improvement:
		c.Improvement++
	case Unchanged:
		c.Unchanged++
	case Inconclusive:
		c.Inconclusive++
	case Added:
		c.Added++
	case Removed:
		c.Removed++
	case OverBudget:
		c.OverBudget++
	case Failed:
		c.Failed++
	}
}

// Of returns the count for one verdict.
func (c Counts) Of(verdict string) int {
	switch verdict {
	case Regression:
		return c.Regression
	case Improvement:
		return c.Improvement
	case Unchanged:
		return c.Unchanged
	case Inconclusive:
		return c.Inconclusive
	case Added:
		return c.Added
	case Removed:
		return c.Removed
	case OverBudget:
		return c.OverBudget
	case Failed:
		return c.Failed
	}
	return 0
}

// Bad reports whether verdict is one that fails a gate set to "fail".
func Bad(verdict string) bool {
	switch verdict {
	case Regression, Removed, OverBudget, Failed:
		return true
	}
	return false
}

// Fails reports whether this comparison fails the report: a bad verdict
// under a "fail" gate.
func (c *Comparison) Fails() bool { return c.Gate == GateFail && Bad(c.Verdict) }

// Warns reports whether this comparison has a bad verdict that its gate only
// warns about.
func (c *Comparison) Warns() bool { return c.Gate == GateWarn && Bad(c.Verdict) }

// Failing returns the comparisons that fail the report, in report order.
func (r *Report) Failing() []*Comparison {
	var out []*Comparison
	for i := range r.Comparisons {
		if r.Comparisons[i].Fails() {
			out = append(out, &r.Comparisons[i])
		}
	}
	return out
}

// CutShort reports whether the report comes from a run cut short whose
// verdict does not stand (Incomplete.Stands): the gate reports an error
// whatever the comparisons say.
func (r *Report) CutShort() bool {
	return r.Incomplete != nil && !r.Incomplete.Stands(r.Settings.MinSamples)
}

// ExitCode maps the report's verdict to the exit codes of design §3:
// 0 pass, 1 fail, 3 nothing comparable or inconclusive; 2 for a run cut
// short whose verdict does not stand (Incomplete.Stands).
func (r *Report) ExitCode() int {
	if r.CutShort() {
		return 2
	}
	switch r.Verdict {
	case Pass:
		return 0
	case Fail:
		return 1
	}
	return 3 // no-data, inconclusive
}

// Number is a float64 that encodes NaN and ±Inf as JSON null (and decodes
// null as NaN), since JSON has no spelling for them.
type Number float64

// Valid reports whether n is a finite number.
func (n Number) Valid() bool {
	f := float64(n)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	if !n.Valid() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", strconv.Quote(truncate(string(b), 80))) // one line, whatever b holds
	}
	*n = Number(f)
	return nil
}

// Write encodes r as indented JSON. "##[" (which can only occur inside a
// string) is written as "##\u005b", the same text to a JSON decoder, so
// that a report printed to a CI log cannot carry the legacy form of a
// workflow command; a line of the output never starts with "::", since
// strings hold no raw line breaks.
func (r *Report) Write(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("##["), []byte(`##\u005b`)))
	return err
}

// Limits bound what Read accepts. They are checked while the report is
// decoded, so a hostile report is refused after reading at most about one
// Element past the point where it broke a limit, and memory stays a small
// multiple of Element plus what the accepted comparisons hold, whatever
// the input claims.
type Limits struct {
	// Bytes bounds the whole report as JSON text.
	Bytes int64
	// Element bounds one comparison, one warning and every other
	// top-level field as JSON text: what the decoder holds at once.
	Element int64
	// Comparisons bounds the number of comparisons.
	Comparisons int
	// Samples bounds the values and rounds of every summary, together.
	Samples int
	// Warnings bounds the report's and the comparisons' warnings, together.
	Warnings int
}

// DefaultLimits are the limits of Read: several times the largest report a
// suite of 5,000 benchmarks × 3 units × 100 samples per side makes (about
// 30 MB, 15,000 comparisons, 3 million values and as many rounds).
var DefaultLimits = Limits{Bytes: 128 << 20, Element: 4 << 20, Comparisons: 50_000, Samples: 10_000_000, Warnings: 100_000}

// Read decodes and validates a JSON report within DefaultLimits. Unknown or
// repeated fields, a different schema, unknown verdicts or gates,
// inconsistent counts and a report past a limit are errors: a report may
// come from an untrusted artifact.
func Read(rd io.Reader, name string) (*Report, error) {
	return ReadLimited(rd, name, DefaultLimits)
}

// ReadLimited is Read within lim. It decodes the report as a stream, one
// comparison at a time, validating each as it arrives and never holding
// more than one copy of the input's text.
func ReadLimited(rd io.Reader, name string, lim Limits) (*Report, error) {
	g := &limitedReader{r: rd, lim: lim}
	dec := json.NewDecoder(g)
	g.dec = dec
	dec.DisallowUnknownFields()
	r, err := decode(dec, lim)
	if err == nil {
		// Nothing may follow the report.
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("trailing data after the report")
		}
	}
	if g.err != nil {
		err = g.err // the limit, not the decoder's view of the cut
	}
	if err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: not a kernelwatch report: %w", name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// limitedReader enforces Limits.Bytes and Limits.Element under the
// decoder: the bytes read but not yet consumed by the decoder are the value
// it is decoding.
type limitedReader struct {
	r   io.Reader
	dec *json.Decoder
	lim Limits
	n   int64
	err error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	switch {
	case l.err != nil:
		return 0, l.err
	case l.n > l.lim.Bytes:
		l.err = fmt.Errorf("larger than %d MiB; not a report kernelwatch wrote", l.lim.Bytes>>20)
		return 0, l.err
	case l.dec != nil && l.n-l.dec.InputOffset() > l.lim.Element:
		l.err = fmt.Errorf("a value larger than %d MiB at byte %d; not a report kernelwatch wrote", l.lim.Element>>20, l.dec.InputOffset())
		return 0, l.err
	}
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// decode reads the top-level object field by field, streaming the
// comparisons and the warnings.
func decode(dec *json.Decoder, lim Limits) (*Report, error) {
	if err := delim(dec, '{', "a JSON object"); err != nil {
		return nil, fmt.Errorf("not a kernelwatch report: %w", err)
	}
	var r Report
	seen := map[string]bool{}
	samples, warnings := 0, 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("field %q appears twice", key)
		}
		seen[key] = true
		switch key {
		case "schema":
			if err := dec.Decode(&r.Schema); err != nil {
				return nil, err
			}
			if r.Schema != Schema {
				return nil, fmt.Errorf("schema %q, want %q", r.Schema, Schema)
			}
		case "verdict":
			err = dec.Decode(&r.Verdict)
		case "settings":
			err = dec.Decode(&r.Settings)
		case "baseline":
			err = dec.Decode(&r.Baseline)
		case "current":
			err = dec.Decode(&r.Current)
		case "counts":
			err = dec.Decode(&r.Counts)
		case "costs":
			err = dec.Decode(&r.Costs)
		case "incomplete":
			err = dec.Decode(&r.Incomplete)
		case "unjudged":
			err = dec.Decode(&r.Unjudged)
		case "sequential":
			if err = dec.Decode(&r.Sequential); err == nil && r.Sequential != nil && len(r.Sequential.Benchmarks) > lim.Comparisons {
				err = fmt.Errorf("sequential: more than %d benchmarks", lim.Comparisons)
			}
		case "warnings":
			err = array(dec, "warnings", func() error {
				if warnings++; warnings > lim.Warnings {
					return fmt.Errorf("more than %d warnings", lim.Warnings)
				}
				var w string
				if err := dec.Decode(&w); err != nil {
					return err
				}
				r.Warnings = append(r.Warnings, w)
				return nil
			})
		case "comparisons":
			err = array(dec, "comparisons", func() error {
				i := len(r.Comparisons)
				if i >= lim.Comparisons {
					return fmt.Errorf("more than %d comparisons", lim.Comparisons)
				}
				var c Comparison
				if err := dec.Decode(&c); err != nil {
					return fmt.Errorf("comparison %d: %w", i, err)
				}
				if err := c.validate(i); err != nil {
					return err
				}
				for _, s := range []*Summary{c.Baseline, c.Current} {
					if s != nil {
						samples += len(s.Values) + len(s.Rounds)
					}
				}
				if samples > lim.Samples {
					return fmt.Errorf("more than %d samples", lim.Samples)
				}
				if warnings += len(c.Warnings); warnings > lim.Warnings {
					return fmt.Errorf("more than %d warnings", lim.Warnings)
				}
				r.Comparisons = append(r.Comparisons, c)
				return nil
			})
		default:
			return nil, fmt.Errorf("unknown field %q", key)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := delim(dec, '}', "the end of the report"); err != nil {
		return nil, err
	}
	return &r, nil
}

// delim reads the delimiter want.
func delim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("want %s (%q), got %v", what, string(want), tokenWords(tok))
	}
	return nil
}

// array calls each for every element of the JSON array named field, whose
// '[' is next; null is an empty array.
func array(dec *json.Decoder, field string, each func() error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("%s: want an array, got %v", field, tokenWords(tok))
	}
	for dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err = dec.Token() // ']'
	return err
}

// tokenWords describes a JSON token in an error, quoted: it comes from the
// input.
func tokenWords(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return strconv.Quote(string(v))
	case string:
		return "the string " + strconv.Quote(truncate(v, 80))
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// validate checks the invariants of one comparison, the i-th. Its name
// comes from the input and is quoted in errors.
func (c *Comparison) validate(i int) error {
	known := false
	for _, v := range Verdicts {
		known = known || v == c.Verdict
	}
	if !known {
		return fmt.Errorf("comparison %d (%q): unknown verdict %q", i, truncate(c.Name, 200), c.Verdict)
	}
	switch c.Gate {
	case GateFail, GateWarn, GateOff:
	default:
		return fmt.Errorf("comparison %d (%q): unknown gate %q", i, truncate(c.Name, 200), c.Gate)
	}
	switch c.Better {
	case Lower, Higher, Unknown:
	default:
		return fmt.Errorf("comparison %d (%q): unknown direction %q", i, truncate(c.Name, 200), c.Better)
	}
	if c.Baseline == nil && c.Current == nil {
		return fmt.Errorf("comparison %d (%q): neither side has a summary", i, truncate(c.Name, 200))
	}
	for _, s := range []*Summary{c.Baseline, c.Current} {
		if s != nil && s.Rounds != nil && len(s.Rounds) != len(s.Values) {
			return fmt.Errorf("comparison %d (%q): %d rounds for %d values", i, truncate(c.Name, 200), len(s.Rounds), len(s.Values))
		}
		if s != nil && s.Modes != nil && (len(s.Modes) != 2 || s.Modes[0].N < 1 || s.Modes[1].N < 1 || s.Modes[0].N+s.Modes[1].N != s.N) {
			return fmt.Errorf("comparison %d (%q): modes %+v do not split its %d values in two", i, truncate(c.Name, 200), s.Modes, s.N)
		}
	}
	return nil
}

// Validate checks the invariants of the schema.
func (r *Report) Validate() error {
	if r.Schema != Schema {
		return fmt.Errorf("schema %q, want %q", r.Schema, Schema)
	}
	switch r.Verdict {
	case Pass, Fail, NoData, Inconclusive:
	default:
		return fmt.Errorf("unknown report verdict %q", r.Verdict)
	}
	var counts Counts
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		if err := c.validate(i); err != nil {
			return err
		}
		counts.Add(c.Verdict)
	}
	if counts != r.Counts {
		return fmt.Errorf("counts %+v do not match the comparisons %+v", r.Counts, counts)
	}
	if in := r.Incomplete; in != nil {
		if in.Reason != StopSignal && in.Reason != StopDeadline {
			return fmt.Errorf("incomplete: unknown reason %q", in.Reason)
		}
		if in.Rounds < 0 || in.Rounds >= in.Planned {
			return fmt.Errorf("incomplete: %d of %d rounds", in.Rounds, in.Planned)
		}
	}
	if err := r.Sequential.validate(); err != nil {
		return err
	}
	// A no-data report may list removed benchmarks without failing.
	failing := len(r.Failing()) > 0
	if r.Verdict == Fail && !failing || (r.Verdict == Pass || r.Verdict == Inconclusive) && failing {
		return fmt.Errorf("verdict %q inconsistent with %d failing comparisons", r.Verdict, len(r.Failing()))
	}
	if u := r.Unjudged; u != nil {
		if u.Count < 1 || u.Count > u.Of || u.Count > r.Counts.Inconclusive || u.NeedSamples == 1 || u.NeedSamples < 0 || u.HaveSamples < 0 {
			return fmt.Errorf("unjudged %+v inconsistent with %d inconclusive comparisons", *u, r.Counts.Inconclusive)
		}
	}
	if (r.Verdict == Inconclusive) != (r.Unjudged.AllUnjudged() && !failing) && r.Verdict != NoData {
		return fmt.Errorf("verdict %q inconsistent with unjudged %+v", r.Verdict, r.Unjudged)
	}
	return nil
}

// validate checks the invariants of a Sequential section; nil is valid.
func (sq *Sequential) validate() error {
	if sq == nil {
		return nil
	}
	switch sq.Stopped {
	case SeqDetectable, SeqMaxRounds, SeqBudget, SeqDeadline, SeqSignal:
	default:
		return fmt.Errorf("sequential: unknown stop %q", sq.Stopped)
	}
	if sq.Rounds < 1 || sq.MaxRounds < sq.Rounds || sq.BudgetSeconds < 0 {
		return fmt.Errorf("sequential: %d rounds, at most %d, budget %vs", sq.Rounds, sq.MaxRounds, sq.BudgetSeconds)
	}
	for _, b := range sq.Benchmarks {
		if b.Rounds < sq.Rounds || b.Rounds > sq.MaxRounds {
			return fmt.Errorf("sequential: %s got %d rounds, outside %d–%d", b.Name, b.Rounds, sq.Rounds, sq.MaxRounds)
		}
		if b.Reason != SeqUnderpowered && b.Reason != SeqTwoMode {
			return fmt.Errorf("sequential: %s: unknown reason %q", b.Name, b.Reason)
		}
	}
	return nil
}

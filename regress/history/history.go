// Package history turns a sequence of result files — the versions of
// baselines/<class>.bench along main, or a directory of runs — into one time
// series per (benchmark, unit) and finds the steps in each.
//
// The opinion: a pull-request gate sees only changes larger than what it can
// detect, so slow drifts and steps that slip in below the threshold one pull
// request at a time must be found in history, after the fact. Each snapshot
// becomes one point per series: the median of its samples (benchmath
// AssumeNothing, as everywhere in kernelwatch). Steps are the change points
// of the points' logarithms (of the points themselves when a value is ≤ 0)
// found by package changepoint: E-divisive means, a permutation test at
// changepoint.Defaults (p < 0.01, 199 permutations, seed 1) and segments of
// at least 3 points, so the same history always gives the same steps.
//
// A step's size is the change between the medians of the points of the
// segment before it and of the segment after it (at most Window points on
// each side, up to the neighbouring steps), with the Hodges–Lehmann
// interval of package stats over those points — points, not samples, since
// the samples of one run share that run's drift. A step is worse when it
// goes against the unit's direction.
//
// A history holds thousands of series, and the search lists a step in
// about 1 of 200 series without any change (p < 0.01 from 199 shuffles),
// so a step alerts under the discipline of a comparison (package verdict),
// not on its own p:
//
//   - it must be larger than the benchmark's threshold (benchmarks.yaml
//     rules, by name, class and unit, as a comparison of that benchmark
//     would be judged);
//   - its p-value is corrected across the history's series as a report's
//     comparisons are, with the same code (verdict.Correct): per gate, by
//     the configured correction (floor-holm unless set: only the steps past
//     their threshold form the family), the units of one benchmark stepping
//     at one snapshot counting as one hypothesis. The search's p cannot go
//     below 1/200, too coarse for a family of k steps (Holm needs
//     p < alpha/k), so each step in a family is re-tested in its segment
//     (changepoint.SegmentP) with 2k/alpha shuffles, up to MaxPermutations,
//     and its p is that test's;
//   - it is gated when it is worse, past its threshold, its adjusted p is
//     below the benchmark's alpha, and its gate is fail.
package history

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/changepoint"
	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/stats"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// Schema is the value of History.Schema.
const Schema = "kernelwatch.history/v1"

// Window is the largest number of points on each side of a step that its
// size is measured over.
const Window = 30

// MaxPermutations bounds the shuffles of one step's re-test (enough for a
// family of 500 steps at alpha 0.05).
const MaxPermutations = 20000

// stopAfter is the number of shuffles reaching a step's statistic after
// which its re-test stops (changepoint.SegmentP).
const stopAfter = 10

// Snapshot is one result file in the history: one version of a stored
// baseline, or one run.
type Snapshot struct {
	// Name locates the data in messages: "1f2e3d4:baselines/cpu.bench".
	Name string
	// Label names the point for people: a short commit or a file name.
	Label string
	// Commit is the commit the snapshot was stored in or measured at.
	Commit string
	// Time is when it was stored or measured; zero when unknown.
	Time time.Time
	// Data is the content of the result file.
	Data []byte
}

// History is the time series of a hardware class and their steps.
type History struct {
	Schema   string   `json:"schema"`
	Class    string   `json:"class"`
	Source   string   `json:"source"`
	Settings Settings `json:"settings"`
	// Snapshots lists the points in order: Series[i].Points[j] refers to
	// Snapshots[Points[j].Snapshot].
	Snapshots []SnapshotInfo `json:"snapshots"`
	Series    []Series       `json:"series"`
	// Steps lists every step of every series, gated ones first.
	Steps    []Step   `json:"steps"`
	Warnings []string `json:"warnings"`
}

// Settings records how steps were found.
type Settings struct {
	Method       string  `json:"method"`
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
	Seed         uint64  `json:"seed"`
	MinSegment   int     `json:"min_segment"`
	Window       int     `json:"window"`
	Confidence   float64 `json:"confidence"`
	// Correction is the multiple-comparison correction of the steps'
	// p-values across series (report.FloorHolm, Holm, BH or NoCorrect).
	Correction string `json:"correction"`
}

// SnapshotInfo is a Snapshot without its data.
type SnapshotInfo struct {
	Label  string    `json:"label"`
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// Series is the history of one (benchmark, unit).
type Series struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Better string `json:"better"`
	Gate   string `json:"gate"`
	// Threshold and Alpha are the benchmark's, from benchmarks.yaml: a
	// step must be larger than Threshold and its adjusted p below Alpha to
	// be gated.
	Threshold float64 `json:"threshold"`
	Alpha     float64 `json:"alpha"`
	Points    []Point `json:"points"`
}

// Point is one snapshot's summary of a series.
type Point struct {
	Snapshot int           `json:"snapshot"`
	Center   report.Number `json:"center"`
	Lo       report.Number `json:"lo"`
	Hi       report.Number `json:"hi"`
	N        int           `json:"n"`
	// Code is the code fingerprint the snapshot's samples of the benchmark carry (the harness's code config
	// line), "" when they carry none, "none", or more than one.
	Code string `json:"code,omitempty"`
}

// Step is a change point of one series.
type Step struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Series indexes History.Series; Point is the index in its Points of
	// the first point after the step.
	Series int `json:"series"`
	Point  int `json:"point"`
	// Label and Commit name the first snapshot after the step.
	Label  string `json:"label"`
	Commit string `json:"commit,omitempty"`
	// Before and After are the medians of the points on each side.
	Before report.Number `json:"before"`
	After  report.Number `json:"after"`
	// Delta = After/Before − 1 with its confidence interval.
	Delta   report.Number `json:"delta"`
	DeltaLo report.Number `json:"delta_lo"`
	DeltaHi report.Number `json:"delta_hi"`
	// P is the permutation test's p-value: the search's, or for a step in
	// a corrected family its re-test's (see the package comment).
	P float64 `json:"p"`
	// PAdjusted is P after the correction across series; null for a step
	// outside every family (within its threshold, or not gated).
	PAdjusted report.Number `json:"p_adjusted"`
	// Threshold is the series' threshold; PastThreshold says the step is
	// larger.
	Threshold     float64 `json:"threshold"`
	PastThreshold bool    `json:"past_threshold"`
	// Worse says the step goes against the unit's direction; Gated that it
	// is worse, past its threshold, significant after the correction, and
	// the benchmark's gate is fail.
	Worse bool `json:"worse"`
	Gated bool `json:"gated"`
}

// Options control Build.
type Options struct {
	Class  string
	Source string // what the snapshots are: "main:baselines/cpu.bench", a directory
	Config *config.Config
	// ChangePoint overrides changepoint.Defaults.
	ChangePoint changepoint.Options
}

// Build reads the snapshots, oldest first, finds the steps of every
// series and gates them (see the package comment). A snapshot that is not
// a valid result file is an error naming it.
func Build(snaps []Snapshot, opt Options) (*History, error) {
	h, err := Collect(snaps, opt)
	if err != nil {
		return nil, err
	}
	cp := opt.ChangePoint
	if cp == (changepoint.Options{}) {
		cp = changepoint.Defaults
	}
	found := make([]segments, len(h.Series))
	for i := range h.Series {
		steps, seg, err := findSteps(&h.Series[i], i, h, cp)
		if err != nil {
			return nil, err
		}
		h.Steps = append(h.Steps, steps...)
		found[i] = seg
	}
	gate(h, found, cp)
	sort.SliceStable(h.Steps, func(i, j int) bool { return h.Steps[i].Gated && !h.Steps[j].Gated })
	return h, nil
}

// Collect reads the snapshots, oldest first, into one series per
// (benchmark, unit) without looking for steps: what regress calibrate
// --across-history measures the spread of.
func Collect(snaps []Snapshot, opt Options) (*History, error) {
	cfg := opt.Config
	if cfg == nil {
		cfg = config.Default()
	}
	cp := opt.ChangePoint
	if cp == (changepoint.Options{}) {
		cp = changepoint.Defaults
	}
	conf := cfg.Confidence
	if conf == 0 {
		conf = 0.95
	}
	corr := cfg.Correction
	if corr == "" {
		corr = verdict.DefaultCorrection
	}
	h := &History{
		Schema: Schema, Class: opt.Class, Source: opt.Source,
		Settings: Settings{Method: "e-divisive means, permutation test", Alpha: cp.Alpha, Permutations: cp.Permutations,
			Seed: cp.Seed, MinSegment: cp.MinSize, Window: Window, Confidence: conf, Correction: corr},
		Snapshots: []SnapshotInfo{}, Series: []Series{}, Steps: []Step{}, Warnings: []string{},
	}
	type key struct{ name, unit string }
	index := map[key]int{}
	for si, snap := range snaps {
		rd := parse.NewReader(bytes.NewReader(snap.Data))
		side, err := rd.ReadSide([]string{"-"})
		if err != nil {
			msg := err.Error()
			if strings.HasPrefix(msg, "-") {
				msg = snap.Name + strings.TrimPrefix(msg, "-")
			} else {
				msg = snap.Name + ": " + msg
			}
			return nil, fmt.Errorf("%s", msg)
		}
		if c := classOf(side); c != "" && opt.Class != "" && c != opt.Class {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s is of class %s, not %s", snap.Name, c, opt.Class))
		}
		h.Snapshots = append(h.Snapshots, SnapshotInfo{Label: snap.Label, Commit: snap.Commit, Time: snap.Time})
		values := map[key][]float64{}
		var order []key
		codes := codesOf(side)
		for i := range side.Results {
			r := &side.Results[i]
			for _, v := range side.Values(r) {
				k := key{r.Name, v.Unit}
				if _, ok := values[k]; !ok {
					order = append(order, k)
				}
				values[k] = append(values[k], v.Value)
			}
		}
		units := rd.Units()
		for _, k := range order {
			idx, ok := index[k]
			if !ok {
				idx = len(h.Series)
				index[k] = idx
				better := cfg.Direction(k.unit)
				if better == "" {
					switch units.GetBetter(k.unit) {
					case 1:
						better = report.Higher
					case -1:
						better = report.Lower
					default:
						better = verdict.DefaultDirection(k.unit)
					}
				}
				pol := cfg.Resolve(k.name, opt.Class, k.unit)
				gate := string(pol.Gate)
				if better == report.Unknown {
					gate = report.GateOff
				}
				h.Series = append(h.Series, Series{Name: k.name, Unit: k.unit, Better: better, Gate: gate,
					Threshold: pol.Threshold, Alpha: pol.Alpha})
			}
			sum := stats.Summarize(values[k], false, conf)
			h.Series[idx].Points = append(h.Series[idx].Points, Point{Snapshot: si,
				Center: report.Number(sum.Center), Lo: report.Number(sum.Lo), Hi: report.Number(sum.Hi), N: len(sum.Values),
				Code: codes[k.name]})
		}
	}
	return h, nil
}

// codesOf maps each benchmark of side to the one code fingerprint all its results carry, or "" when they carry
// none, "none" or several.
func codesOf(side *parse.Side) map[string]string {
	codes, mixed := map[string]string{}, map[string]bool{}
	for i := range side.Results {
		r := &side.Results[i]
		c := side.Configs[r.Config].Get(group.CodeKey)
		if c == group.CodeNone {
			c = ""
		}
		if prev, seen := codes[r.Name]; seen && prev != c {
			mixed[r.Name] = true
		}
		codes[r.Name] = c
	}
	for name := range mixed {
		codes[name] = ""
	}
	return codes
}

func classOf(side *parse.Side) string {
	for _, c := range side.Configs {
		if v := c.Get("class"); v != "" {
			return v
		}
	}
	return ""
}

// segments is what the search left of one series: the values it ran on
// and its change points, for the re-tests, and for a series without a
// step its best split (changepoint.Best), at -1 when there is none, and
// whether that split's change is past the series' threshold.
type segments struct {
	z        []float64
	cps      []changepoint.Point
	best     int
	bestPast bool
}

// findSteps runs the change-point search on one series.
func findSteps(s *Series, si int, h *History, opt changepoint.Options) ([]Step, segments, error) {
	centers := make([]float64, len(s.Points))
	positive := true
	for i, p := range s.Points {
		centers[i] = float64(p.Center)
		positive = positive && centers[i] > 0
	}
	z := centers
	if positive {
		z = make([]float64, len(centers))
		for i, c := range centers {
			z[i] = math.Log(c)
		}
	}
	cps, err := changepoint.Find(z, opt)
	if err != nil {
		return nil, segments{}, fmt.Errorf("%s %s: %w", s.Name, s.Unit, err)
	}
	// change measures the step at idx between the neighbouring change
	// points lo and hi.
	change := func(lo, idx, hi int) (before, after stats.Summary, ch stats.Change) {
		lo, hi = max(lo, idx-Window), min(hi, idx+Window)
		before = stats.Summarize(append([]float64(nil), centers[lo:idx]...), false, h.Settings.Confidence)
		after = stats.Summarize(append([]float64(nil), centers[idx:hi]...), false, h.Settings.Confidence)
		return before, after, stats.Compare(before, after, false, 0.05, h.Settings.Confidence)
	}
	seg := segments{z: z, cps: cps, best: -1}
	if len(cps) == 0 {
		if tau, _ := changepoint.Best(z, opt.MinSize); tau >= 0 {
			// Only the size is needed: the medians, without the tests.
			d := median(centers[max(0, tau-Window):tau])
			d = median(centers[tau:min(len(centers), tau+Window)])/d - 1
			seg.best, seg.bestPast = tau, math.Abs(d) > s.Threshold && s.Better != report.Unknown
		}
	}
	var steps []Step
	for k, cp := range cps {
		lo, hi := 0, len(centers)
		if k > 0 {
			lo = cps[k-1].Index
		}
		if k+1 < len(cps) {
			hi = cps[k+1].Index
		}
		before, after, ch := change(lo, cp.Index, hi)
		snap := h.Snapshots[s.Points[cp.Index].Snapshot]
		st := Step{Name: s.Name, Unit: s.Unit, Series: si, Point: cp.Index, Label: snap.Label, Commit: snap.Commit,
			Before: report.Number(before.Center), After: report.Number(after.Center),
			Delta: report.Number(ch.Delta), DeltaLo: report.Number(ch.DeltaLo), DeltaHi: report.Number(ch.DeltaHi), P: cp.P,
			PAdjusted: report.Number(math.NaN()), Threshold: s.Threshold,
			PastThreshold: math.Abs(ch.Delta) > s.Threshold && s.Better != report.Unknown}
		switch s.Better {
		case report.Lower:
			st.Worse = ch.Delta > 0
		case report.Higher:
			st.Worse = ch.Delta < 0
		}
		steps = append(steps, st)
	}
	return steps, seg, nil
}

// gate corrects the steps' p-values across series (verdict.Correct), after
// re-testing those in a family with enough shuffles, and decides which are
// gated (see the package comment).
//
// The family is every series the search looked at, not only those where it
// found a step: a series without a step joins it (at p = 1, which is all
// Holm and Benjamini–Hochberg need of it) when its best split is past its
// threshold (under floor-holm; always under the others). Counting only
// the series with a significant step would select the family by p and let
// pure noise through: in 2,000 series of noise, the 11 listed steps
// corrected among themselves gave adjusted p-values of 0.025.
func gate(h *History, found []segments, cp changepoint.Options) {
	tests := make([]verdict.Test, len(h.Steps))
	gateOf := func(s *Series) string {
		if s.Gate == report.GateOff {
			return ""
		}
		return s.Gate
	}
	for i, st := range h.Steps {
		s := &h.Series[st.Series]
		tests[i] = verdict.Test{P: st.P, Gate: gateOf(s), Hypothesis: fmt.Sprintf("%s@%d", st.Name, s.Points[st.Point].Snapshot), PastFloor: st.PastThreshold}
	}
	for si, seg := range found {
		if s := &h.Series[si]; seg.best >= 0 {
			tests = append(tests, verdict.Test{P: 1, Gate: gateOf(s), Hypothesis: fmt.Sprintf("%s@%d", s.Name, s.Points[seg.best].Snapshot), PastFloor: seg.bestPast})
		}
	}
	method := h.Settings.Correction
	adjusted, families := verdict.Correct(tests, method)
	for i := range h.Steps {
		st := &h.Steps[i]
		if math.IsNaN(adjusted[i]) {
			continue
		}
		s := &h.Series[st.Series]
		k := max(families[tests[i].Gate], 1)
		perms := min(max(int(math.Ceil(2*float64(k)/s.Alpha))-1, cp.Permutations), MaxPermutations)
		seg := found[st.Series]
		lo, hi := 0, len(seg.z)
		for _, c := range seg.cps {
			if c.Index < st.Point {
				lo = c.Index
			}
			if c.Index > st.Point && hi == len(seg.z) {
				hi = c.Index
			}
		}
		st.P = changepoint.SegmentP(seg.z[lo:hi], cp.MinSize, perms, stopAfter, cp.Seed)
		tests[i].P = st.P
	}
	adjusted, _ = verdict.Correct(tests, method)
	for i := range h.Steps {
		st := &h.Steps[i]
		s := &h.Series[st.Series]
		st.PAdjusted = report.Number(adjusted[i])
		st.Gated = st.Worse && st.PastThreshold && s.Gate == report.GateFail && adjusted[i] < s.Alpha
	}
}

// median is the median of values, which it does not modify.
func median(values []float64) float64 {
	v := slices.Sorted(slices.Values(values))
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Gated returns the steps that fail a --gate.
func (h *History) Gated() []Step {
	var out []Step
	for _, s := range h.Steps {
		if s.Gated {
			out = append(out, s)
		}
	}
	return out
}

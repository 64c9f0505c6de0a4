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
// the samples of one run share that run's drift. Its p is the permutation
// test's. A step is worse when it goes against the unit's direction, and
// gated when it is worse and the benchmark's gate (benchmarks.yaml) is fail.
package history

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/changepoint"
	"github.com/kernelwatch/kernelwatch/regress/config"
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
}

// SnapshotInfo is a Snapshot without its data.
type SnapshotInfo struct {
	Label  string    `json:"label"`
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// Series is the history of one (benchmark, unit).
type Series struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Better string  `json:"better"`
	Gate   string  `json:"gate"`
	Points []Point `json:"points"`
}

// Point is one snapshot's summary of a series.
type Point struct {
	Snapshot int           `json:"snapshot"`
	Center   report.Number `json:"center"`
	Lo       report.Number `json:"lo"`
	Hi       report.Number `json:"hi"`
	N        int           `json:"n"`
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
	// P is the permutation test's p-value.
	P float64 `json:"p"`
	// Worse says the step goes against the unit's direction; Gated that it
	// is worse and the benchmark's gate is fail.
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

// Build reads the snapshots, oldest first, and finds the steps of every
// series. A snapshot that is not a valid result file is an error naming it.
func Build(snaps []Snapshot, opt Options) (*History, error) {
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
	h := &History{
		Schema: Schema, Class: opt.Class, Source: opt.Source,
		Settings: Settings{Method: "e-divisive means, permutation test", Alpha: cp.Alpha, Permutations: cp.Permutations,
			Seed: cp.Seed, MinSegment: cp.MinSize, Window: Window, Confidence: conf},
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
				gate := string(cfg.Resolve(k.name, opt.Class, k.unit).Gate)
				if better == report.Unknown {
					gate = report.GateOff
				}
				h.Series = append(h.Series, Series{Name: k.name, Unit: k.unit, Better: better, Gate: gate})
			}
			sum := stats.Summarize(values[k], false, conf)
			h.Series[idx].Points = append(h.Series[idx].Points, Point{Snapshot: si,
				Center: report.Number(sum.Center), Lo: report.Number(sum.Lo), Hi: report.Number(sum.Hi), N: len(sum.Values)})
		}
	}
	for i := range h.Series {
		steps, err := findSteps(&h.Series[i], i, h, cp)
		if err != nil {
			return nil, err
		}
		h.Steps = append(h.Steps, steps...)
	}
	sort.SliceStable(h.Steps, func(i, j int) bool { return h.Steps[i].Gated && !h.Steps[j].Gated })
	return h, nil
}

func classOf(side *parse.Side) string {
	for _, c := range side.Configs {
		if v := c.Get("class"); v != "" {
			return v
		}
	}
	return ""
}

// findSteps runs the change-point search on one series.
func findSteps(s *Series, si int, h *History, opt changepoint.Options) ([]Step, error) {
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
		return nil, fmt.Errorf("%s %s: %w", s.Name, s.Unit, err)
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
		lo, hi = max(lo, cp.Index-Window), min(hi, cp.Index+Window)
		before := stats.Summarize(append([]float64(nil), centers[lo:cp.Index]...), false, h.Settings.Confidence)
		after := stats.Summarize(append([]float64(nil), centers[cp.Index:hi]...), false, h.Settings.Confidence)
		ch := stats.Compare(before, after, false, 0.05, h.Settings.Confidence)
		snap := h.Snapshots[s.Points[cp.Index].Snapshot]
		st := Step{Name: s.Name, Unit: s.Unit, Series: si, Point: cp.Index, Label: snap.Label, Commit: snap.Commit,
			Before: report.Number(before.Center), After: report.Number(after.Center),
			Delta: report.Number(ch.Delta), DeltaLo: report.Number(ch.DeltaLo), DeltaHi: report.Number(ch.DeltaHi), P: cp.P}
		switch s.Better {
		case report.Lower:
			st.Worse = ch.Delta > 0
		case report.Higher:
			st.Worse = ch.Delta < 0
		}
		st.Gated = st.Worse && s.Gate == report.GateFail
		steps = append(steps, st)
	}
	return steps, nil
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

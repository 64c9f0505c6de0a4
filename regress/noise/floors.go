package noise

// Cross-host floors.
//
// A stored baseline (regress check --mode stored) was recorded on some
// host on some day; the current side runs on another. Interleaving cannot
// cancel what differs between the two — the host's memory clock, the
// placement its driver chose, the day's thermals — and an A/A run on one
// host (the noise floor above) does not see it: stored checks on an H100
// failed 15 benchmarks of 2,162 by up to 16% against a baseline from
// another H100, with the same binary. So stored checks judge each series
// by max(threshold, noise floor, cross-host floor), the last learned from
// main's own history: every commit of baselines/<class>.bench is a
// snapshot of the suite from some host and day.
//
// For each (benchmark, unit) with at least 2 snapshots, Shift is the
// largest relative difference between two snapshots' medians,
// max |m_s/m_t − 1|. Its Floor is max(Shift, its family's floor): a
// benchmark's own shift from 2 or 3 snapshots is one or three draws of
// what a new host may do, while its family (same kernel, same unit: ten to
// forty benchmarks) shows what hosts do to that kind of kernel. The
// family's floor is the 99th percentile of |shift| that the bulk of its
// shifts implies, e^(2.576·σ) − 1 with σ = 1.4826 × the median of
// log(1 + |shift|) (|shift| of a normal shift has median 0.6745 σ): as
// for the A/A noise floor, the percentile the gate needs is estimated from
// the median, which the few two-mode benchmarks of a family (shifts of
// 10–16% from a change in the mix of modes alone) do not move, where the
// empirical 90th percentile of 28 shifts is set by them. No 0.5 factor
// here: a shift between two snapshots is already a shift between medians.
// A series with fewer than 2 snapshots gets its family's floor, or the
// class's in that unit when its family has none (From says which).
// Snapshots differ in code as well as host (every commit that re-recorded
// the file), so a real change between two of them would pass for host
// noise and raise its benchmark's floor. Where the snapshots carry the
// harness's code fingerprint (the code config line before each GPU
// benchmark: the modules, kernels, launch shapes and scalar arguments it
// ran), two snapshots of a series are compared only when it ran the same
// code in both: Shift is the largest shift within a group of snapshots of
// one fingerprint. Snapshots without one are one group, compared as they
// always were: for them, compute floors over a stretch of history without
// a kernel change (--since), or accept the coarser floor.
//
// Normalized figures: pct-copy divides a memory-bound kernel's bandwidth
// by the copy bandwidth measured in the same process, pct-mma a
// tensor-core kernel's throughput by the same process's mma probe, and
// pct-cublas a GEMM family's by cuBLASLt running the same GEMMs, so a host
// whose memory or tensor cores are faster moves the kernel and its
// reference together. A family takes the closest reference it reports:
// pct-cublas, then pct-mma, then pct-copy. Where a family's median shift
// is at least SteadierBy smaller in its normalized unit than in sec/op, stored checks
// gate the family on the normalized unit: its raw units (sec/op and the
// rates computed from it, GB/s and TFLOP/s) get Gate "warn" and say which
// unit gates instead (GatedBy).

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// FloorsSchema is the value of Floors.Schema.
const FloorsSchema = "kernelwatch.floors/v1"

// robustFloor is the 99th percentile of |shift| implied by the median of
// shifts (see the comment at the top of this file).
func robustFloor(shifts []float64) float64 {
	logs := make([]float64, len(shifts))
	for i, s := range shifts {
		logs[i] = math.Log1p(s)
	}
	return math.Expm1(z99 * 1.4826 * Quantile(logs, 0.5))
}

// SteadierBy is how much smaller a family's median shift must be in its
// normalized unit than in sec/op for stored checks to gate on it: 20%, so
// that a difference within the scatter of a few snapshots does not switch
// the gate.
const SteadierBy = 0.2

// Floors is baselines/<class>.floors.json.
type Floors struct {
	Schema string `json:"schema"`
	Class  string `json:"class"`
	// Source is the history the floors come from: "HEAD:baselines/c.bench".
	Source    string          `json:"source"`
	Snapshots []FloorSnapshot `json:"snapshots"`
	// Pairs says how far each pair of snapshots is apart, per unit: the
	// pair that stands out is the snapshot from another host.
	Pairs    []Pair       `json:"pairs"`
	Families []Family     `json:"families"`
	Entries  []FloorEntry `json:"benchmarks"`
}

// Pair is the spread between two snapshots in one unit: the median and
// largest |shift| over the series both hold with the same code (or both
// without a fingerprint).
type Pair struct {
	A, B   int // indexes into Snapshots, A < B
	Unit   string
	Series int
	Median float64
	Max    float64
}

// FloorSnapshot names one snapshot of the history.
type FloorSnapshot struct {
	Label  string    `json:"label"`
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

// Family summarizes the shifts of one kernel family (the benchmark name up
// to its first slash).
type Family struct {
	Name string `json:"name"`
	// Benchmarks counts the family's benchmarks with a sec/op shift.
	Benchmarks int `json:"benchmarks"`
	// RawShift is the median sec/op shift of the family's benchmarks.
	RawShift float64 `json:"raw_shift"`
	// Normalized is the family's normalized unit (pct-copy or pct-mma),
	// "" when it has none; NormalizedShift its median shift over the
	// benchmarks that report both, and RawShiftBoth the sec/op median over
	// the same benchmarks.
	Normalized      string  `json:"normalized,omitempty"`
	NormalizedShift float64 `json:"normalized_shift,omitempty"`
	RawShiftBoth    float64 `json:"raw_shift_both,omitempty"`
	// Steadier counts the benchmarks whose normalized shift is smaller
	// than their sec/op shift.
	Steadier int `json:"steadier,omitempty"`
	// GatedBy is the unit stored checks gate the family on: Normalized
	// when it is steadier by SteadierBy, else "sec/op".
	GatedBy string `json:"gated_by"`
}

// FloorEntry is the cross-host floor of one (benchmark, unit).
type FloorEntry struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Snapshots is how many snapshots hold the series.
	Snapshots int `json:"snapshots"`
	// Shift is max |m_s/m_t − 1| over the snapshots' medians; absent with
	// fewer than 2 snapshots.
	Shift *float64 `json:"shift,omitempty"`
	// Floor is the least threshold a stored check judges the series by.
	Floor float64 `json:"floor"`
	// From is "benchmark" (its own shift set the floor), "family" or
	// "class" (a percentile of the family's or the class's shifts did).
	From string `json:"from"`
	// Gate is "warn" when stored checks gate the benchmark on GatedBy
	// instead of this unit; "" leaves the configured gate.
	Gate    string `json:"gate,omitempty"`
	GatedBy string `json:"gated_by,omitempty"`
}

// SeriesHistory is one series' snapshot medians: Centers[i] is the median
// of snapshot Snapshots[i].
type SeriesHistory struct {
	Name, Unit string
	Snapshots  []int
	Centers    []float64
	// Codes, when set, parallels Centers: the code fingerprint of each
	// snapshot's samples, "" for none (history.Point.Code).
	Codes []string
}

// code is the fingerprint of the series' i-th center, "" when it has none.
func (s SeriesHistory) code(i int) string {
	if i < len(s.Codes) {
		return s.Codes[i]
	}
	return ""
}

// shift is the series' Shift: the largest maxShift within a group of its
// snapshots that ran the same code (see the top of this file); false when
// no group has 2 positive centers.
func (s SeriesHistory) shift() (float64, bool) {
	groups := map[string][]float64{}
	for i, c := range s.Centers {
		groups[s.code(i)] = append(groups[s.code(i)], c)
	}
	best, any := 0.0, false
	for _, g := range groups {
		if sh, ok := maxShift(g); ok {
			best, any = math.Max(best, sh), true
		}
	}
	return best, any
}

// FamilyOf is the kernel family of a benchmark: its name up to the first
// slash.
func FamilyOf(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

// rawUnits are the units computed from a benchmark's time alone, which a
// family gated on its normalized unit stops gating in stored checks.
var rawUnits = []string{"sec/op", "GB/s", "B/s", "TFLOP/s"}

// normalizedUnits are the in-run-referenced units: the kernel over the
// same process's copy, mma probe, or vendor library doing the same work
// (pct-cublas: cuBLASLt running the family's GEMMs).
var normalizedUnits = []string{"pct-copy", "pct-mma", "pct-cublas"}

// normalizedPreference is the order in which a family's normalized unit is
// chosen among those it reports: the reference closest to the kernel's own
// work first.
var normalizedPreference = []string{"pct-cublas", "pct-mma", "pct-copy"}

// Across measures the cross-host floors of a class from its snapshots'
// series (see the comment at the top of this file).
func Across(class, source string, snaps []FloorSnapshot, series []SeriesHistory) *Floors {
	f := &Floors{Schema: FloorsSchema, Class: class, Source: source, Snapshots: snaps, Pairs: []Pair{}, Families: []Family{}, Entries: []FloorEntry{}}
	f.Pairs = pairs(len(snaps), series, append([]string{"sec/op"}, normalizedUnits...))
	type fu struct{ family, unit string }
	shifts := map[fu][]float64{}
	byUnit := map[string][]float64{}
	shiftOf := map[[2]string]float64{}
	for _, s := range series {
		e := FloorEntry{Name: s.Name, Unit: s.Unit, Snapshots: len(s.Centers)}
		if sh, ok := s.shift(); ok {
			e.Shift = &sh
			k := fu{FamilyOf(s.Name), s.Unit}
			shifts[k] = append(shifts[k], sh)
			byUnit[s.Unit] = append(byUnit[s.Unit], sh)
			shiftOf[[2]string{s.Name, s.Unit}] = sh
		}
		f.Entries = append(f.Entries, e)
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		fam, ok := shifts[fu{FamilyOf(e.Name), e.Unit}]
		switch {
		case ok:
			e.Floor, e.From = robustFloor(fam), "family"
		case len(byUnit[e.Unit]) > 0:
			e.Floor, e.From = robustFloor(byUnit[e.Unit]), "class"
		}
		if e.Shift != nil && *e.Shift >= e.Floor {
			e.Floor, e.From = *e.Shift, "benchmark"
		}
		e.Floor = round(e.Floor)
	}
	// Families: which unit gates each.
	names := map[string]bool{}
	for _, s := range series {
		names[FamilyOf(s.Name)] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		fam := Family{Name: name, GatedBy: "sec/op"}
		raw := shifts[fu{name, "sec/op"}]
		fam.Benchmarks = len(raw)
		if len(raw) > 0 {
			fam.RawShift = round(Quantile(raw, 0.5))
		}
		for _, nu := range familyNormalized(name, series) {
			var rawBoth, norm []float64
			for _, s := range series {
				if FamilyOf(s.Name) != name || s.Unit != nu {
					continue
				}
				n, ok1 := shiftOf[[2]string{s.Name, nu}]
				r, ok2 := shiftOf[[2]string{s.Name, "sec/op"}]
				if ok1 && ok2 {
					norm, rawBoth = append(norm, n), append(rawBoth, r)
					if n < r {
						fam.Steadier++
					}
				}
			}
			if len(norm) == 0 {
				continue
			}
			fam.Normalized = nu
			fam.NormalizedShift, fam.RawShiftBoth = round(Quantile(norm, 0.5)), round(Quantile(rawBoth, 0.5))
			if fam.NormalizedShift < (1-SteadierBy)*fam.RawShiftBoth {
				fam.GatedBy = nu
			}
			break
		}
		f.Families = append(f.Families, fam)
	}
	gatedBy := map[string]string{}
	for _, fam := range f.Families {
		gatedBy[fam.Name] = fam.GatedBy
	}
	// A family gated on its normalized unit stops gating the raw units of
	// those of its benchmarks that report the normalized one.
	has := map[[2]string]bool{}
	for _, e := range f.Entries {
		has[[2]string{e.Name, e.Unit}] = true
	}
	// And the other way round: a normalized unit that does not gate its family only warns, since across
	// hosts it carries its reference's shift as well as the kernel's (measured on two H200 hosts, the same
	// binary: the copy reference moved -1.5% and the mma probe +1.8% while Attention's time held, and its
	// pct-copy and pct-mma failed a stored check).
	for i := range f.Entries {
		e := &f.Entries[i]
		by := gatedBy[FamilyOf(e.Name)]
		switch {
		case by != "sec/op" && slices.Contains(rawUnits, e.Unit) && has[[2]string{e.Name, by}]:
			e.Gate, e.GatedBy = "warn", by
		case by != "" && by != e.Unit && slices.Contains(normalizedUnits, e.Unit):
			e.Gate, e.GatedBy = "warn", by
		}
	}
	return f
}

// familyNormalized is the normalized unit a family could be gated on: pct-cublas for a family whose
// benchmarks report it (GEMMs against cuBLASLt's own, in the same process: the same work on the same
// clocks), else pct-mma (tensor-core kernels: their reference is the mma probe, not the copy, whatever
// they also report), else pct-copy; none when the family reports none of them.
func familyNormalized(family string, series []SeriesHistory) []string {
	has := map[string]bool{}
	for _, s := range series {
		if FamilyOf(s.Name) == family {
			has[s.Unit] = true
		}
	}
	for _, nu := range normalizedPreference {
		if has[nu] {
			return []string{nu}
		}
	}
	return nil
}

// pairs measures the spread between each pair of snapshots in units.
func pairs(n int, series []SeriesHistory, units []string) []Pair {
	out := []Pair{}
	for _, u := range units {
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				var sh []float64
				for _, s := range series {
					if s.Unit != u {
						continue
					}
					ia, ib := slices.Index(s.Snapshots, a), slices.Index(s.Snapshots, b)
					if ia < 0 || ib < 0 || s.code(ia) != s.code(ib) {
						continue
					}
					if d, ok := maxShift([]float64{s.Centers[ia], s.Centers[ib]}); ok {
						sh = append(sh, d)
					}
				}
				if len(sh) > 0 {
					out = append(out, Pair{A: a, B: b, Unit: u, Series: len(sh), Median: round(Quantile(sh, 0.5)), Max: round(slices.Max(sh))})
				}
			}
		}
	}
	return out
}

// maxShift is max |a/b − 1| over the pairs of centers, the larger ratio
// over the smaller: false with fewer than 2 positive centers.
func maxShift(centers []float64) (float64, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, c := range centers {
		if c > 0 && !math.IsInf(c, 0) {
			lo, hi = math.Min(lo, c), math.Max(hi, c)
			n++
		}
	}
	if n < 2 {
		return 0, false
	}
	return hi/lo - 1, true
}

// Lookup returns the entry of a (benchmark, unit).
func (f *Floors) Lookup(name, unit string) (FloorEntry, bool) {
	if f == nil {
		return FloorEntry{}, false
	}
	for _, e := range f.Entries {
		if e.Name == name && e.Unit == unit {
			return e, true
		}
	}
	return FloorEntry{}, false
}

// Family returns the summary of a family.
func (f *Floors) Family(name string) (Family, bool) {
	for _, fam := range f.Families {
		if fam.Name == name {
			return fam, true
		}
	}
	return Family{}, false
}

// FloorsPath is where the floors of a class live, relative to the
// repository root.
func FloorsPath(class string) string { return "baselines/" + class + ".floors.json" }

// Write encodes f as indented JSON.
func (f *Floors) Write(w io.Writer) error { return writeJSON(w, f) }

// ReadFloors decodes and checks a floors file; name names it in errors.
func ReadFloors(r io.Reader, name string) (*Floors, error) {
	var f Floors
	if err := readJSON(r, name, "floors", FloorsSchema, &f, func() string { return f.Schema }); err != nil {
		return nil, err
	}
	for i, e := range f.Entries {
		if e.Name == "" || e.Unit == "" || !(e.Floor >= 0) || math.IsInf(e.Floor, 0) || e.Gate != "" && e.Gate != "warn" || (e.Gate == "warn") != (e.GatedBy != "") {
			return nil, fmt.Errorf("%s: benchmark %d (%q %q): want a name, a unit, a floor ≥ 0, and gate \"warn\" exactly with gated_by", name, i, e.Name, e.Unit)
		}
	}
	return &f, nil
}

// LoadFloors reads the floors file at path; a missing file is (nil, nil).
func LoadFloors(path string) (*Floors, error) { return loadFile(path, ReadFloors) }

// SpreadRow is one unit's line of the spread table: how far the series of
// that unit moved between snapshots.
type SpreadRow struct {
	Unit        string
	Series      int
	Median, Max float64
	MaxName     string
}

// Spread summarizes f's shifts per unit, in the order of units given
// (units without shifts are left out).
func (f *Floors) Spread(units ...string) []SpreadRow {
	var rows []SpreadRow
	for _, u := range units {
		var sh []float64
		row := SpreadRow{Unit: u, Max: -1}
		for _, e := range f.Entries {
			if e.Unit != u || e.Shift == nil {
				continue
			}
			sh = append(sh, *e.Shift)
			if *e.Shift > row.Max {
				row.Max, row.MaxName = *e.Shift, e.Name
			}
		}
		if len(sh) == 0 {
			continue
		}
		row.Series, row.Median = len(sh), Quantile(sh, 0.5)
		rows = append(rows, row)
	}
	return rows
}

// Largest returns the n entries of unit with the largest shifts, largest
// first.
func (f *Floors) Largest(unit string, n int) []FloorEntry {
	var out []FloorEntry
	for _, e := range f.Entries {
		if e.Unit == unit && e.Shift != nil {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].Shift > *out[j].Shift })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

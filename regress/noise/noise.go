// Package noise measures and stores each benchmark's noise floor: how much
// identical code moves between the interleaved rounds of an A/A run, so
// that the comparator's threshold fits each benchmark instead of one number
// per class.
//
// Measurement (regress calibrate): the current code runs against itself for
// R interleaved rounds, one sample per side per round, each its own process.
// For each (benchmark, unit) the per-round relative difference is
// Δ_r = b_r / a_r − 1, and the file records:
//
//   - P99: the 99th percentile of |Δ_r| that the bulk of the rounds
//     implies, e^(2.576·σ) − 1, where σ is the robust standard deviation
//     of log(b_r/a_r) (1.4826 × its median absolute deviation). The gate
//     compares medians, which an outlier round barely moves, while the
//     empirical 99th percentile of single rounds is set by outliers: with 5%
//     of samples slowed by up to 30% it is about 27% even for a benchmark
//     whose other samples vary by 1%. With fewer than 100 rounds the
//     empirical percentile also lies between the two largest |Δ_r|. It is
//     recorded as Observed, for people;
//   - Spread: the robust standard deviation of the log samples of both
//     sides (package power), for people.
//
// Use (package verdict): the effective threshold of a comparison is
// max(configured threshold, K × P99) with K = 0.5. The gate compares
// medians, not single rounds: the median of n independent samples varies
// √(π/2)/√n ≈ 1.2533/√n as much as one sample, which is ≤ 0.51 for the
// min_samples of 6 and more, so a difference of medians beyond 0.5 × P99 is
// as rare under identical code as one round beyond P99 — about 1% — while a
// real change of twice the round-to-round noise still clears it. Noise that
// a whole side shares (drift between stored runs) is not averaged away by
// medians; that is what interleaving is for. A benchmark whose floor
// K × P99 exceeds UnstableLimit is marked unstable: it cannot see changes
// smaller than that, so its verdicts are reported and gated as the
// configuration's defaults.unstable says (warn unless set).
package noise

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/power"
)

// Schema is the value of File.Schema.
const Schema = "kernelwatch.noise/v1"

// K multiplies P99 into the noise floor (see the package comment).
const K = 0.5

// z99 is the standard normal 99th percentile of |x|: Φ⁻¹(0.995).
const z99 = 2.5758

// UnstableLimit is the noise floor above which a benchmark is unstable.
const UnstableLimit = 0.25

// File is baselines/<class>.noise.json.
type File struct {
	Schema  string    `json:"schema"`
	Class   string    `json:"class"`
	Commit  string    `json:"commit,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	Rounds  int       `json:"rounds"`
	K       float64   `json:"k"`
	Entries []Entry   `json:"benchmarks"`
}

// Entry is the noise of one (benchmark, unit).
type Entry struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Rounds   int     `json:"rounds"`
	Spread   float64 `json:"spread"`
	P99      float64 `json:"p99"`
	Observed float64 `json:"p99_observed"`
}

// Floor is K × P99, the least threshold the entry allows.
func (e Entry) Floor() float64 { return K * e.P99 }

// Unstable reports whether the floor exceeds UnstableLimit.
func (e Entry) Unstable() bool { return e.Floor() > UnstableLimit }

// Path is where the noise file of a class lives, relative to the
// repository root.
func Path(class string) string { return "baselines/" + class + ".noise.json" }

// Measure computes the noise of every series of an A/A grouping whose
// samples carry their rounds (regress check's round: lines). Series
// without rounds on both sides, or with fewer than 2 paired rounds, are
// skipped.
func Measure(g *group.Grouping, class string) *File {
	f := &File{Schema: Schema, Class: class, K: K, Entries: []Entry{}}
	for _, s := range g.Series {
		if len(s.BaseRounds) != len(s.Base) || len(s.CurRounds) != len(s.Cur) {
			continue
		}
		cur := map[int]float64{}
		for i, r := range s.CurRounds {
			cur[r] = s.Cur[i]
		}
		var deltas, ratios []float64
		for i, r := range s.BaseRounds {
			if c, ok := cur[r]; ok && s.Base[i] != 0 {
				deltas = append(deltas, math.Abs(c/s.Base[i]-1))
				if c > 0 && s.Base[i] > 0 {
					ratios = append(ratios, c/s.Base[i])
				}
			}
		}
		if len(deltas) < 2 {
			continue
		}
		both := append(slices.Clone(s.Base), s.Cur...)
		observed := Quantile(deltas, 0.99)
		p99 := observed
		if len(ratios) == len(deltas) {
			// power.Spread of the ratios is 1.4826 × MAD of their logs.
			p99 = math.Expm1(z99 * power.Spread(ratios))
		}
		f.Entries = append(f.Entries, Entry{Name: s.Name, Unit: s.Unit, Rounds: len(deltas),
			Spread: round(power.Spread(both)), P99: round(p99), Observed: round(observed)})
		f.Rounds = max(f.Rounds, len(deltas))
	}
	return f
}

func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// Quantile is the q-quantile of values with linear interpolation between
// order statistics (type 7, as R and NumPy default to).
func Quantile(values []float64, q float64) float64 {
	v := slices.Clone(values)
	slices.Sort(v)
	if len(v) == 0 {
		return math.NaN()
	}
	h := q * float64(len(v)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[lo] + (h-float64(lo))*(v[lo+1]-v[lo])
}

// Lookup returns the entry of a (benchmark, unit).
func (f *File) Lookup(name, unit string) (Entry, bool) {
	if f == nil {
		return Entry{}, false
	}
	for _, e := range f.Entries {
		if e.Name == name && e.Unit == unit {
			return e, true
		}
	}
	return Entry{}, false
}

// Write encodes f as indented JSON.
func (f *File) Write(w io.Writer) error { return writeJSON(w, f) }

// writeJSON encodes v as indented JSON, HTML characters unescaped.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// readJSON decodes a file of schema into v, refusing unknown fields; what
// names the kind of file and name the file in errors.
func readJSON(r io.Reader, name, what, schema string, v any, got func() string) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: not a kernelwatch %s file: %w", name, what, err)
	}
	if s := got(); s != schema {
		return fmt.Errorf("%s: schema %q, want %q", name, s, schema)
	}
	return nil
}

// loadFile reads the file at path with read; a missing file is (nil, nil).
func loadFile[T any](path string, read func(io.Reader, string) (*T, error)) (*T, error) {
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return read(fh, path)
}

// Read decodes and checks a noise file; name names it in errors.
func Read(r io.Reader, name string) (*File, error) {
	var f File
	if err := readJSON(r, name, "noise", Schema, &f, func() string { return f.Schema }); err != nil {
		return nil, err
	}
	for i, e := range f.Entries {
		if e.Name == "" || e.Unit == "" || !(e.P99 >= 0) || math.IsInf(e.P99, 0) || e.Rounds < 2 {
			return nil, fmt.Errorf("%s: benchmark %d (%q %q): want a name, a unit, p99 ≥ 0 and at least 2 rounds", name, i, e.Name, e.Unit)
		}
	}
	return &f, nil
}

// Load reads the noise file at path; a missing file is (nil, nil).
func Load(path string) (*File, error) { return loadFile(path, Read) }

package config

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchunit"
)

// Budget is an absolute target for the current median of a benchmark, such
// as "16.67ms" (one 60 FPS frame), "2.5TB/s" or "95 pct-copy".
//
// Whether a budget is met depends on the direction of its unit: a time budget
// is missed when the median is above it, a byte-rate budget when the median
// is below it, and for any other unit the caller supplies the direction.
type Budget struct {
	Text  string  // as written
	Value float64 // in units of Dim
	Dim   string  // "sec/op" for times, "B/s" for byte rates, else the tidied literal unit
}

// Time and byte-rate units a budget may be written in, as multiples of the
// base unit of their dimension.
var (
	timeUnits = map[string]float64{
		"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1,
	}
	rateUnits = map[string]float64{
		"B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
		"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30, "TiB/s": 1 << 40,
	}
)

// ParseBudget parses a budget: a positive number followed by a time unit
// (ns, us, µs, ms, s) or a byte rate (B/s, kB/s, MB/s, GB/s, TB/s, KiB/s,
// MiB/s, GiB/s, TiB/s), optionally separated by a space, or a number, a space
// and any other unit, such as "95 pct-copy".
func ParseBudget(s string) (Budget, error) {
	text := strings.TrimSpace(s)
	num := number.FindString(text)
	rest := text[len(num):]
	unit := strings.TrimSpace(rest)
	spaced := unit != rest
	v, err := parseNumber(num)
	if err != nil || unit == "" || strings.ContainsAny(unit, " \t\n") {
		return Budget{}, fmt.Errorf("%q: want a number and a unit, like 16.67ms, 2.5TB/s or 95 pct-copy", s)
	}
	if !(v > 0) {
		return Budget{}, fmt.Errorf("%q: want a positive number", s)
	}
	b := Budget{Text: text}
	if f, ok := timeUnits[unit]; ok {
		b.Value, b.Dim = v*f, "sec/op"
	} else if f, ok := rateUnits[unit]; ok {
		b.Value, b.Dim = v*f, "B/s"
	} else if spaced {
		b.Value, b.Dim = benchunit.Tidy(v, unit)
	} else {
		return Budget{}, fmt.Errorf("%q: unknown unit %q (times: ns, us, ms, s; rates: B/s, MB/s, GB/s, GiB/s, ...; for other units write a space: \"95 %s\")", s, unit, unit)
	}
	if math.IsInf(b.Value, 0) || b.Value == 0 {
		return Budget{}, fmt.Errorf("%q: out of range", s)
	}
	return b, nil
}

// In returns the budget expressed in unit and whether it applies to unit at
// all. A time budget applies to sec/op, a byte-rate budget to B/s and to
// scaled rates such as GB/s (giving the value in GB/s), and any other budget
// only to its own unit.
func (b Budget) In(unit string) (value float64, ok bool) {
	f, tidy := benchunit.Tidy(1, unit) // 1 unit = f tidy
	if tidy == b.Dim {
		return b.Value / f, true
	}
	if b.Dim == "B/s" {
		if m, ok := rateUnits[tidy]; ok {
			return b.Value / m / f, true
		}
	}
	return 0, false
}

func (b Budget) String() string { return b.Text }

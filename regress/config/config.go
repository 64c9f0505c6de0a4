// Package config loads benchmarks.yaml, the file that says which benchmarks
// kernelwatch runs and how strictly it judges them, and resolves the policy
// for one comparison.
//
// A comparison is identified by benchmark name, hardware class and unit. Its
// policy is decided in this order, each step overriding the one before:
//
//  1. the built-in defaults: threshold 5%, alpha 0.05, gate fail,
//     min_samples 6, tolerance 0;
//  2. the file's defaults section;
//  3. the gate of the unit, from the units section;
//  4. every rule that matches, in file order. A rule changes only the
//     fields it sets, so for each field the last matching rule wins.
//
// A rule matches when its match pattern matches the whole benchmark name,
// its class pattern (if any) the hardware class and its unit pattern (if any)
// the unit. Patterns are globs in which * matches any run of characters,
// slashes included, ? one character and [...] one of a class; a pattern
// written /like this/ is instead a regular expression, searched unanchored.
// A rule with a class pattern never matches when the class is unknown.
//
// A budget is an absolute target for the current median, and applies only to
// units it can be expressed in: a time to sec/op, a byte rate to B/s and
// scaled rates such as GB/s, anything else to exactly the unit it names. A
// matching rule whose budget does not apply to the unit still contributes
// its other fields.
//
// Unit names are tidied as by benchunit.Tidy, so ns/op in the file and in
// the results both mean sec/op.
//
// The suite section says what regress runs: packages and build tags, or a
// command and the format of its output; the -bench selection, -count and
// -benchtime. Its classes entries change the selection, count, benchtime,
// max_rounds and budget for the hardware classes their class glob matches,
// in order, the last match winning per field (Suite.ForClass): a 2-core
// CPU runner and an H100 do not want the same suite.
//
// max_rounds and budget let regress check sample further where count
// rounds were not enough: after the count rounds, the benchmarks whose
// gated comparisons cannot yet detect their threshold get more interleaved
// rounds, up to max_rounds rounds in all, while the check is within budget
// (a duration from its start, such as 4m). max_rounds at or below count
// adds none; without budget only max_rounds and --deadline bound them.
//
// The file is strict: unknown or duplicate keys, values of the wrong type or
// out of range are errors, and every error is one line naming the file and
// the line of the offending key or value.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"
)

// FileName is the name of the configuration file at the repository root.
const FileName = "benchmarks.yaml"

// SuiteFormats are the values of suite.format: Go benchmark format, or the
// JSON of a harness that regress/convert reads.
var SuiteFormats = []string{"go", "pytest-benchmark", "gbench", "nvbench"}

// Gate says what a regression does to the run: fail it, warn about it, or
// nothing at all.
type Gate string

const (
	GateFail Gate = "fail"
	GateWarn Gate = "warn"
	GateOff  Gate = "off"
)

// Config is a loaded benchmarks.yaml.
type Config struct {
	Source     string // file path, "" for the built-in defaults
	Suite      Suite
	Defaults   Policy                // built-in defaults overlaid with the file's
	Correction string                // multiple-comparison correction; "" lets the caller choose
	Confidence float64               // confidence level of reported intervals
	Units      map[string]UnitPolicy // keyed by tidied unit
	Rules      []Rule

	// Unstable is the gate of benchmarks whose calibrated noise floor
	// exceeds the unstable limit (baselines/<class>.noise.json); "" means
	// warn: they are reported but do not fail the report.
	Unstable Gate
}

// Suite says which benchmarks to run and how: Go packages, built with
// go test -c and run as test binaries, or a command.
type Suite struct {
	Packages []string // nil for a command suite
	Tags     []string
	// Command is suite.command: the program and its arguments, run in
	// each side's checkout once per sample instead of a test binary. It
	// prints its results on standard output (or writes them to
	// $KERNELWATCH_OUT) in Format.
	Command []string
	// Format is suite.format: "go" (Go benchmark format) or a format of
	// regress/convert; set only with Command.
	Format    string
	Count     int
	Benchtime string // a Go duration, "<N>x", or "" for go test's own
	Bench     string // -bench regexp; "" selects every benchmark
	// MaxRounds is how many rounds regress check may give a benchmark in
	// all, Count included, while its gated comparisons cannot detect their
	// threshold; at or below Count (0: unset), none beyond Count.
	MaxRounds int
	// Budget is how long a check may take, from its start, before it stops
	// adding rounds beyond Count; 0 sets no limit but MaxRounds.
	Budget time.Duration
	// Classes override Bench, Count, Benchtime, MaxRounds and Budget for
	// the hardware classes they match, in file order, the last match
	// winning for each field it sets (see ForClass).
	Classes []SuiteClass
}

// SuiteClass is one entry of suite.classes: settings for the hardware
// classes its Class glob matches. Empty fields are not set.
type SuiteClass struct {
	Line      int // line of the entry in the file
	Class     string
	Bench     string
	Count     int
	Benchtime string
	MaxRounds int
	Budget    time.Duration

	class *regexp.Regexp
}

// ForClass returns the suite to run on hardware class class: s with the
// fields set by every matching suite.classes entry, in order. The class is
// the one the run will have, predicted before it starts (cpu-<goarch>-<model>
// on the CPU); "" matches no entry.
func (s Suite) ForClass(class string) Suite {
	out := s
	out.Classes = nil
	if class == "" {
		return out
	}
	for _, c := range s.Classes {
		re := c.class
		if re == nil {
			var err error
			if re, err = compilePattern(c.Class); err != nil {
				continue
			}
		}
		if !re.MatchString(class) {
			continue
		}
		if c.Bench != "" {
			out.Bench = c.Bench
		}
		if c.Count != 0 {
			out.Count = c.Count
		}
		if c.Benchtime != "" {
			out.Benchtime = c.Benchtime
		}
		if c.MaxRounds != 0 {
			out.MaxRounds = c.MaxRounds
		}
		if c.Budget != 0 {
			out.Budget = c.Budget
		}
	}
	return out
}

// Policy is how one comparison is judged.
type Policy struct {
	Threshold  float64 // smallest relative change that counts
	Alpha      float64 // significance level
	Gate       Gate
	MinSamples int
	Tolerance  float64 // relative difference allowed before an exact unit changes verdict
}

// UnitPolicy holds what is known about one unit. Empty fields are not set.
type UnitPolicy struct {
	Better string // "higher" or "lower"
	Assume string // "exact" or "nothing"
	Gate   Gate
}

// Rule overrides the policy for the comparisons it matches.
// Nil fields are not set by the rule.
type Rule struct {
	Line                        int // line of the rule in the file
	Match, Class, Unit          string
	Threshold, Alpha, Tolerance *float64
	Gate                        *Gate
	MinSamples                  *int
	Budget                      *Budget

	name, class, unit *regexp.Regexp // compiled patterns; nil if absent
}

// Resolved is the policy of one comparison.
type Resolved struct {
	Policy
	Budget *Budget // nil unless a matching rule sets a budget that applies to the unit
	Rules  []int   // lines of the matching rules, in order
}

// Default returns the configuration used when there is no file.
func Default() *Config {
	return &Config{
		Suite:      Suite{Packages: []string{"./..."}, Count: 10},
		Defaults:   Policy{Threshold: 0.05, Alpha: 0.05, Gate: GateFail, MinSamples: 6},
		Confidence: 0.95,
		Units:      map[string]UnitPolicy{},
	}
}

// Resolve returns the policy for comparing benchmark name on hardware class
// in unit: the defaults, then the unit's gate, then every matching rule in
// order, the last match winning for each field.
func (c *Config) Resolve(name, class, unit string) Resolved {
	if c == nil {
		c = Default()
	}
	_, unit = benchunit.Tidy(1, unit)
	r := Resolved{Policy: c.Defaults}
	if u, ok := c.Units[unit]; ok && u.Gate != "" {
		r.Gate = u.Gate
	}
	for i := range c.Rules {
		rule := &c.Rules[i]
		if !rule.matches(name, class, unit) {
			continue
		}
		r.Rules = append(r.Rules, rule.Line)
		rule.apply(&r.Policy)
		if rule.Budget != nil {
			if _, ok := rule.Budget.In(unit); ok {
				r.Budget = rule.Budget
			}
		}
	}
	return r
}

// Direction returns which way is better for unit, "higher" or "lower",
// or "" if the file does not say.
func (c *Config) Direction(unit string) string {
	if c == nil {
		return ""
	}
	_, unit = benchunit.Tidy(1, unit)
	return c.Units[unit].Better
}

// Exact reports whether unit is declared exact (assume: exact), and whether
// the file says anything about it at all.
func (c *Config) Exact(unit string) (exact, set bool) {
	if c == nil {
		return false, false
	}
	_, unit = benchunit.Tidy(1, unit)
	a := c.Units[unit].Assume
	return a == "exact", a != ""
}

// apply overlays the fields the rule sets onto p.
func (r *Rule) apply(p *Policy) {
	set(&p.Threshold, r.Threshold)
	set(&p.Alpha, r.Alpha)
	set(&p.Gate, r.Gate)
	set(&p.MinSamples, r.MinSamples)
	set(&p.Tolerance, r.Tolerance)
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// matches reports whether the rule applies to a comparison. Rules built by
// hand rather than parsed have their patterns compiled on each call.
func (r *Rule) matches(name, class, unit string) bool {
	match := func(re *regexp.Regexp, pat, s string) bool {
		if re == nil {
			var err error
			if re, err = compilePattern(pat); err != nil {
				return false
			}
		}
		return re.MatchString(s)
	}
	if !match(r.name, r.Match, name) {
		return false
	}
	if r.Class != "" && (class == "" || !match(r.class, r.Class, class)) {
		return false
	}
	if r.Unit != "" && !match(r.unit, unitPattern(r.Unit), unit) {
		return false
	}
	return true
}

// unitPattern tidies a unit pattern that is a plain unit name, so that a rule
// for ns/op matches sec/op.
func unitPattern(pat string) string {
	if strings.ContainsAny(pat, "*?[") || isRegexpPattern(pat) {
		return pat
	}
	_, u := benchunit.Tidy(1, pat)
	return u
}

func isRegexpPattern(pat string) bool {
	return len(pat) >= 2 && pat[0] == '/' && pat[len(pat)-1] == '/'
}

// compilePattern compiles a glob, or a /regexp/, into a regexp.
func compilePattern(pat string) (*regexp.Regexp, error) {
	if isRegexpPattern(pat) {
		re, err := regexp.Compile(pat[1 : len(pat)-1])
		if err != nil {
			return nil, fmt.Errorf("invalid regexp %q: %v", pat, regexpReason(err))
		}
		return re, nil
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(rs) {
				return nil, fmt.Errorf("invalid glob %q: trailing backslash", pat)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			j := i + 1
			b.WriteByte('[')
			if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
				b.WriteByte('^')
				j++
			}
			for first := true; ; first = false {
				if j == len(rs) {
					return nil, fmt.Errorf("invalid glob %q: unterminated [", pat)
				}
				c := rs[j]
				if c == ']' && !first {
					break
				}
				if c == '\\' && j+1 < len(rs) {
					j++
					c = rs[j]
				}
				if strings.ContainsRune(`\[]^`, c) {
					b.WriteByte('\\')
				}
				b.WriteRune(c)
				j++
			}
			b.WriteByte(']')
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("invalid glob %q: %v", pat, regexpReason(err))
	}
	return re, nil
}

// regexpReason is the gist of a regexp compilation error.
func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return se.Code.String()
	}
	return err.Error()
}

// Find walks up from dir to the first directory containing .git and returns
// the path of its benchmarks.yaml, if that file exists.
func Find(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			p := filepath.Join(dir, FileName)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p, true
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Load reads and parses the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return Parse(data, path)
}

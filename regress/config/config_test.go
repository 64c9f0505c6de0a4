package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

const example = `version: 1
suite:
  packages: [./kernels/...]
  tags: []            # e.g. [cuda] on GPU runners
  count: 10
  benchtime: 200ms
defaults: {threshold: 5%, alpha: 0.05, gate: fail, min_samples: 6}
units:
  pct-copy: {better: higher}
  rel-err: {better: lower, gate: warn}
rules:                # applied in order; the last matching rule wins for each field it sets
  - match: "*"
    class: "gpu-*"
    threshold: 1.5%
  - match: "RMSNorm/*"
    threshold: 3%
  - match: "*/impl=naive"
    gate: warn
  - match: "LSTM/*/batch=1/*"
    budget: 16.67ms   # one 60 FPS frame
`

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }
func gp(g Gate) *Gate       { return &g }

// exported returns the rules without their compiled patterns, for comparison.
func exported(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.name, r.class, r.unit = nil, nil, nil
		out[i] = r
	}
	return out
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), "benchmarks.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestParseExample(t *testing.T) {
	c := mustParse(t, example)
	if c.Source != "benchmarks.yaml" {
		t.Errorf("Source = %q", c.Source)
	}
	wantSuite := Suite{Packages: []string{"./kernels/..."}, Tags: []string{}, Count: 10, Benchtime: "200ms"}
	if !reflect.DeepEqual(c.Suite, wantSuite) {
		t.Errorf("Suite = %#v, want %#v", c.Suite, wantSuite)
	}
	wantDefaults := Policy{Threshold: 0.05, Alpha: 0.05, Gate: GateFail, MinSamples: 6, Tolerance: 0}
	if c.Defaults != wantDefaults {
		t.Errorf("Defaults = %+v, want %+v", c.Defaults, wantDefaults)
	}
	if c.Correction != "" || c.Confidence != 0.95 {
		t.Errorf("Correction, Confidence = %q, %v; want \"\", 0.95", c.Correction, c.Confidence)
	}
	wantUnits := map[string]UnitPolicy{
		"pct-copy": {Better: "higher"},
		"rel-err":  {Better: "lower", Gate: GateWarn},
	}
	if !reflect.DeepEqual(c.Units, wantUnits) {
		t.Errorf("Units = %+v, want %+v", c.Units, wantUnits)
	}
	wantRules := []Rule{
		{Line: 12, Match: "*", Class: "gpu-*", Threshold: fp(0.015)},
		{Line: 15, Match: "RMSNorm/*", Threshold: fp(0.03)},
		{Line: 17, Match: "*/impl=naive", Gate: gp(GateWarn)},
		{Line: 19, Match: "LSTM/*/batch=1/*", Budget: &Budget{Text: "16.67ms", Value: 16.67e-3, Dim: "sec/op"}},
	}
	got := exported(c.Rules)
	if len(got) == len(wantRules) {
		// Compare the budget value with a tolerance, then exactly the rest.
		if b := got[3].Budget; b != nil && math.Abs(b.Value-0.01667) < 1e-15 {
			got[3].Budget = &Budget{Text: b.Text, Value: 16.67e-3, Dim: b.Dim}
		}
	}
	if !reflect.DeepEqual(got, wantRules) {
		t.Errorf("Rules =\n%s\nwant\n%s", dumpRules(got), dumpRules(wantRules))
	}
	for i, r := range c.Rules {
		if r.name == nil {
			t.Errorf("rule %d: pattern not compiled at load time", i)
		}
	}
}

func dumpRules(rules []Rule) string {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString("  line " + strconv.Itoa(r.Line) + " match=" + r.Match + " class=" + r.Class + " unit=" + r.Unit)
		if r.Threshold != nil {
			b.WriteString(" threshold=" + strconv.FormatFloat(*r.Threshold, 'g', -1, 64))
		}
		if r.Gate != nil {
			b.WriteString(" gate=" + string(*r.Gate))
		}
		if r.Budget != nil {
			b.WriteString(" budget=" + r.Budget.Text + "/" + strconv.FormatFloat(r.Budget.Value, 'g', -1, 64) + " " + r.Budget.Dim)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestSuiteClasses(t *testing.T) {
	c := mustParse(t, `version: 1
suite:
  packages: [./kernels/...]
  count: 10
  benchtime: 100ms
  classes:
    - class: "cpu-*"
      bench: "/dtype=fp32/"
      count: 8
      benchtime: 50ms
    - class: "cpu-arm64-*"
      count: 6
      max_rounds: 30
      budget: 4m
    - class: "/^gpu-nvidia-h(100|200)/"
      benchtime: 1x
`)
	if n := len(c.Suite.Classes); n != 3 || c.Suite.Classes[0].Line != 7 || c.Suite.Classes[2].Line != 15 {
		t.Fatalf("Classes = %+v", c.Suite.Classes)
	}
	for _, tc := range []struct {
		class string
		want  Suite
	}{
		{"", Suite{Packages: []string{"./kernels/..."}, Count: 10, Benchtime: "100ms"}},
		{"cpu-amd64-amd-epyc", Suite{Packages: []string{"./kernels/..."}, Count: 8, Benchtime: "50ms", Bench: "/dtype=fp32/"}},
		{"cpu-arm64-neoverse-v2", Suite{Packages: []string{"./kernels/..."}, Count: 6, Benchtime: "50ms", Bench: "/dtype=fp32/", MaxRounds: 30, Budget: 4 * time.Minute}},
		{"gpu-nvidia-h200", Suite{Packages: []string{"./kernels/..."}, Count: 10, Benchtime: "1x"}},
		{"gpu-nvidia-l4", Suite{Packages: []string{"./kernels/..."}, Count: 10, Benchtime: "100ms"}},
	} {
		if got := c.Suite.ForClass(tc.class); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ForClass(%q) = %+v, want %+v", tc.class, got, tc.want)
		}
	}
	// An entry built by hand (no compiled pattern) matches the same way.
	s := Suite{Count: 3, Classes: []SuiteClass{{Class: "cpu-*", Count: 5}}}
	if got := s.ForClass("cpu-x").Count; got != 5 {
		t.Errorf("hand-built entry: Count = %d, want 5", got)
	}
}

func TestParseAllFields(t *testing.T) {
	c := mustParse(t, `version: 1
suite: {packages: [./a/..., ./b], tags: [cuda], count: 3, benchtime: 100x, max_rounds: 12, budget: 90s}
defaults:
  threshold: 0.1
  alpha: 0.01
  gate: warn
  min_samples: 4
  tolerance: 1%
  correction: floor-holm
  confidence: 0.9
units:
  ns/op: {better: lower, assume: nothing}
  MB/s: {better: higher}
  GB/s: {better: higher}
  allocs/op: {assume: exact, gate: off}
rules:
  - match: "*"
    unit: "B/*"
    alpha: 0.2
    min_samples: 10
    tolerance: 0.5%
`)
	want := Suite{Packages: []string{"./a/...", "./b"}, Tags: []string{"cuda"}, Count: 3, Benchtime: "100x", MaxRounds: 12, Budget: 90 * time.Second}
	if !reflect.DeepEqual(c.Suite, want) {
		t.Errorf("Suite = %+v, want %+v", c.Suite, want)
	}
	if d := (Policy{Threshold: 0.1, Alpha: 0.01, Gate: GateWarn, MinSamples: 4, Tolerance: 0.01}); c.Defaults != d {
		t.Errorf("Defaults = %+v, want %+v", c.Defaults, d)
	}
	if c.Correction != "floor-holm" || c.Confidence != 0.9 {
		t.Errorf("Correction, Confidence = %q, %v", c.Correction, c.Confidence)
	}
	wantUnits := map[string]UnitPolicy{
		"sec/op":    {Better: "lower", Assume: "nothing"},
		"B/s":       {Better: "higher"},
		"GB/s":      {Better: "higher"},
		"allocs/op": {Assume: "exact", Gate: GateOff},
	}
	if !reflect.DeepEqual(c.Units, wantUnits) {
		t.Errorf("Units = %+v, want %+v", c.Units, wantUnits)
	}
	wantRule := Rule{Line: 17, Match: "*", Unit: "B/*", Alpha: fp(0.2), MinSamples: ip(10), Tolerance: fp(0.005)}
	if got := exported(c.Rules); len(got) != 1 || !reflect.DeepEqual(got[0], wantRule) {
		t.Errorf("Rules = %s, want %s", dumpRules(got), dumpRules([]Rule{wantRule}))
	}
	for _, tc := range []struct {
		unit        string
		dir         string
		exact, set  bool
		description string
	}{
		{"sec/op", "lower", false, true, "tidied key"},
		{"ns/op", "lower", false, true, "untidied query"},
		{"B/s", "higher", false, false, "MB/s stored as B/s"},
		{"GB/s", "higher", false, false, "GB/s stays"},
		{"allocs/op", "", true, true, "exact"},
		{"B/op", "", false, false, "unknown unit"},
	} {
		if got := c.Direction(tc.unit); got != tc.dir {
			t.Errorf("%s: Direction(%q) = %q, want %q", tc.description, tc.unit, got, tc.dir)
		}
		if exact, set := c.Exact(tc.unit); exact != tc.exact || set != tc.set {
			t.Errorf("%s: Exact(%q) = %v, %v, want %v, %v", tc.description, tc.unit, exact, set, tc.exact, tc.set)
		}
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	want := &Config{
		Suite:      Suite{Packages: []string{"./..."}, Count: 10},
		Defaults:   Policy{Threshold: 0.05, Alpha: 0.05, Gate: GateFail, MinSamples: 6},
		Confidence: 0.95,
		Units:      map[string]UnitPolicy{},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Default() = %+v, want %+v", c, want)
	}
	// A minimal file gets exactly the built-in defaults.
	m := mustParse(t, "version: 1\n")
	m.Source = ""
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Parse(version: 1) = %+v, want %+v", m, want)
	}
	// So does a nil *Config.
	var nilc *Config
	if r := nilc.Resolve("X", "", "sec/op"); r.Policy != want.Defaults {
		t.Errorf("nil Resolve = %+v", r)
	}
}

func TestResolve(t *testing.T) {
	c := mustParse(t, `version: 1
defaults: {threshold: 4%, alpha: 0.1, gate: fail, min_samples: 5, tolerance: 0.001}
units:
  rel-err: {better: lower, gate: warn}
  B/op: {gate: off}
rules:
  - match: "*"
    class: "gpu-*"
    threshold: 1.5%
  - match: "RMSNorm/*"
    threshold: 3%
    min_samples: 8
  - match: "*/impl=naive"
    gate: warn
  - match: "RMSNorm/*/impl=naive"
    gate: fail
    alpha: 0.01
  - match: "*"
    unit: "rel-err"
    tolerance: 2%
  - match: "LSTM/*/batch=1/*"
    budget: 16.67ms
  - match: "LSTM/*"
    unit: "B/s"
    budget: 2GB/s
  - match: "LSTM/*/batch=1/*"
    budget: 95 pct-copy
`)
	def := Policy{Threshold: 0.04, Alpha: 0.1, Gate: GateFail, MinSamples: 5, Tolerance: 0.001}
	with := func(f func(*Policy)) Policy { p := def; f(&p); return p }
	const rms = "RMSNorm/dtype=bf16/rows=32768/cols=4096/impl=fused"
	const rmsNaive = "RMSNorm/dtype=bf16/rows=32768/cols=4096/impl=naive"
	const gpu = "gpu-nvidia-h100-80gb-hbm3"
	for _, tc := range []struct {
		desc              string
		name, class, unit string
		want              Policy
		budget            string // Budget.Text or ""
		rules             []int
	}{
		{"defaults only", "Other/x", "", "sec/op", def, "", nil},
		{"unit gate", "Other/x", "", "rel-err", with(func(p *Policy) { p.Gate = GateWarn; p.Tolerance = 0.02 }), "", []int{18}},
		{"unit gate via untidied name", "Other/x", "", "B/op", with(func(p *Policy) { p.Gate = GateOff }), "", nil},
		{"rule beats unit gate", "X/impl=naive", "", "B/op", with(func(p *Policy) { p.Gate = GateWarn }), "", []int{13}},
		{"class rule on matching class", "Other/x", gpu, "sec/op", with(func(p *Policy) { p.Threshold = 0.015 }), "", []int{7}},
		{"class rule needs a class", "Other/x", "", "sec/op", def, "", nil},
		{"class rule on other class", "Other/x", "cpu-amd-epyc", "sec/op", def, "", nil},
		{"later rule wins", rms, gpu, "sec/op", with(func(p *Policy) { p.Threshold = 0.03; p.MinSamples = 8 }), "", []int{7, 10}},
		{"last match per field", rmsNaive, gpu, "sec/op",
			with(func(p *Policy) { p.Threshold = 0.03; p.MinSamples = 8; p.Gate = GateFail; p.Alpha = 0.01 }), "", []int{7, 10, 13, 15}},
		{"naive elsewhere", "Softmax/impl=naive", "", "sec/op", with(func(p *Policy) { p.Gate = GateWarn }), "", []int{13}},
		{"unit rule other unit", "Softmax/impl=naive", "", "rel-err",
			with(func(p *Policy) { p.Gate = GateWarn; p.Tolerance = 0.02 }), "", []int{13, 18}},
		{"time budget", "LSTM/h=512/batch=1/seq=64", "", "sec/op", def, "16.67ms", []int{21, 26}},
		{"time budget via ns/op", "LSTM/h=512/batch=1/seq=64", "", "ns/op", def, "16.67ms", []int{21, 26}},
		{"rate budget, unit rule", "LSTM/h=512/batch=1/seq=64", "", "B/s", def, "2GB/s", []int{21, 23, 26}},
		{"literal budget", "LSTM/h=512/batch=1/seq=64", "", "pct-copy", def, "95 pct-copy", []int{21, 26}},
		{"no budget for other unit", "LSTM/h=512/batch=1/seq=64", "", "B/op", with(func(p *Policy) { p.Gate = GateOff }), "", []int{21, 26}},
		{"budget rule not matching", "LSTM/h=512/batch=8/seq=64", "", "sec/op", def, "", nil},
	} {
		r := c.Resolve(tc.name, tc.class, tc.unit)
		if r.Policy != tc.want {
			t.Errorf("%s: Resolve(%q, %q, %q).Policy = %+v, want %+v", tc.desc, tc.name, tc.class, tc.unit, r.Policy, tc.want)
		}
		var budget string
		if r.Budget != nil {
			budget = r.Budget.Text
		}
		if budget != tc.budget {
			t.Errorf("%s: budget = %q, want %q", tc.desc, budget, tc.budget)
		}
		if !reflect.DeepEqual(r.Rules, tc.rules) {
			t.Errorf("%s: rules = %v, want %v", tc.desc, r.Rules, tc.rules)
		}
	}
}

// TestResolveTidy checks that units are tidied both in the file and in queries.
func TestResolveTidy(t *testing.T) {
	c := mustParse(t, `version: 1
units:
  MB/s: {gate: warn}
rules:
  - match: "*"
    unit: ns/op
    threshold: 2%
`)
	for _, tc := range []struct {
		unit      string
		gate      Gate
		threshold float64
	}{
		{"ns/op", GateFail, 0.02},
		{"sec/op", GateFail, 0.02},
		{"MB/s", GateWarn, 0.05},
		{"B/s", GateWarn, 0.05},
		{"GB/s", GateFail, 0.05},
	} {
		if r := c.Resolve("X", "", tc.unit); r.Gate != tc.gate || r.Threshold != tc.threshold {
			t.Errorf("Resolve(X, , %q) = %+v, want gate %s threshold %v", tc.unit, r.Policy, tc.gate, tc.threshold)
		}
	}
}

// TestResolveHandBuilt checks that rules built without Parse still match.
func TestResolveHandBuilt(t *testing.T) {
	c := Default()
	c.Rules = []Rule{{Line: 1, Match: "A/*", Threshold: fp(0.5)}, {Line: 2, Match: "[", Threshold: fp(0.9)}}
	if got := c.Resolve("A/b/c", "", "sec/op"); got.Threshold != 0.5 || !reflect.DeepEqual(got.Rules, []int{1}) {
		t.Errorf("Resolve = %+v", got)
	}
	// A class pattern, even "*", never matches an unknown class.
	c.Rules = []Rule{{Line: 3, Match: "*", Class: "*", Gate: gp(GateWarn)}}
	if got := c.Resolve("A", "", "sec/op"); got.Gate != GateFail || got.Rules != nil {
		t.Errorf("Resolve with unknown class = %+v, want no rule", got)
	}
	if got := c.Resolve("A", "cpu", "sec/op"); got.Gate != GateWarn {
		t.Errorf("Resolve with class = %+v, want gate warn", got)
	}
}

func TestPattern(t *testing.T) {
	const rms = "RMSNorm/dtype=bf16/rows=32768/cols=4096/impl=fused"
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true},
		{"*", "A/b/c", true},
		{"RMSNorm/*", rms, true},
		{"RMSNorm/*", "RMSNormX/a", false},
		{"RMSNorm/*", "Fused/RMSNorm/a", false},
		{"RMSNorm", rms, false},
		{"*/impl=naive", "RMSNorm/rows=1/impl=naive", true},
		{"*/impl=naive", "RMSNorm/rows=1/impl=naive2", false},
		{"*/impl=naive", "impl=naive", false},
		{"LSTM/*/batch=1/*", "LSTM/h=512/batch=1/seq=64", true},
		{"LSTM/*/batch=1/*", "LSTM/h=512/l=2/batch=1/seq=64/x", true},
		{"LSTM/*/batch=1/*", "LSTM/h=512/batch=16/seq=64", false},
		{"LSTM/*/batch=1/*", "LSTM/batch=1/seq=64", false},
		{"A?C", "ABC", true},
		{"A?C", "A/C", true},
		{"A?C", "AC", false},
		{"A?C", "ABBC", false},
		{"x?", "xµ", true},
		{"[ab]x", "ax", true},
		{"[ab]x", "bx", true},
		{"[ab]x", "cx", false},
		{"[!ab]x", "cx", true},
		{"[!ab]x", "ax", false},
		{"[a-c]", "b", true},
		{"[]]", "]", true},
		{"[\\]]", "]", true},
		{"a.c", "abc", false},
		{"a+", "aa", false},
		{"a\\*", "a*", true},
		{"a\\*", "ab", false},
		{"(x)", "(x)", true},
		{"/impl=(naive|ref)$/", "X/impl=ref", true},
		{"/impl=(naive|ref)$/", "X/impl=refx", false},
		{"/batch=1/", "LSTM/batch=16", true},
		{"/^LSTM/", "X/LSTM", false},
		{"gpu-*", "gpu-nvidia-h100-80gb-hbm3", true},
		{"gpu-*", "cpu-amd", false},
		{"/", "/", true},
		{"/", "a", false},
	} {
		re, err := compilePattern(tc.pat)
		if err != nil {
			t.Errorf("compilePattern(%q): %v", tc.pat, err)
			continue
		}
		if got := re.MatchString(tc.s); got != tc.want {
			t.Errorf("pattern %q on %q = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
	for _, bad := range []string{"[", "a[b", "[z-a]", "a\\", "/(/", "/a**/"} {
		if _, err := compilePattern(bad); err == nil {
			t.Errorf("compilePattern(%q) succeeded, want error", bad)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		desc string
		src  string
		line int // 0: the error names no line
		want string
	}{
		{"empty file", "", 0, "empty file"},
		{"comment only", "# nothing\n", 0, "empty file"},
		{"missing version", "suite: {count: 3}\n", 0, "missing version"},
		{"version 2", "version: 2\n", 1, `unsupported version "2"`},
		{"version list", "version: [1]\n", 1, "version: want a single value, got a list"},
		{"top is list", "- a\n", 1, "want a mapping"},
		{"top-level unknown key", "version: 1\nsuites: {}\n", 2, `unknown key "suites" at top level (allowed: version, suite, defaults, units, rules)`},
		{"suite unknown key", "version: 1\nsuite:\n  count: 3\n  benchmem: true\n", 4, `unknown key "benchmem" in suite (allowed: packages, tags, command, format, count, benchtime, bench, max_rounds, budget, classes)`},
		{"defaults unknown key", "version: 1\ndefaults:\n  treshold: 5%\n", 3, `unknown key "treshold" in defaults (allowed: threshold, alpha, gate, min_samples, tolerance, correction, confidence, unstable)`},
		{"rule unknown key", "version: 1\nrules:\n  - match: \"*\"\n    threshold: 1%\n  - match: x\n    treshold: 3%\n", 6,
			`unknown key "treshold" in rule (allowed: match, class, unit, threshold, alpha, gate, min_samples, tolerance, budget)`},
		{"unit unknown key", "version: 1\nunits:\n  ns/op:\n    better: lower\n    worse: higher\n", 5, `unknown key "worse" in unit "ns/op" (allowed: better, assume, gate)`},
		{"duplicate top-level key", "version: 1\nrules: []\nrules: []\n", 3, `duplicate key "rules" at top level (first at line 2)`},
		{"duplicate rule key", "version: 1\nrules:\n  - match: a\n    gate: warn\n    gate: off\n", 5, `duplicate key "gate" in rule`},
		{"duplicate unit", "version: 1\nunits:\n  x: {}\n  x: {}\n", 4, `duplicate key "x" in units`},
		{"duplicate unit once tidied", "version: 1\nunits:\n  ns/op: {}\n  sec/op: {}\n", 4, `same unit as line 3`},
		{"threshold 5 percent", "version: 1\ndefaults:\n  threshold: 5 percent\n", 3, `threshold "5 percent": want a fraction like 0.05 or a percentage like 5%`},
		{"threshold -1%", "version: 1\ndefaults: {threshold: -1%}\n", 2, `threshold "-1%": want at least 0`},
		{"threshold abc", "version: 1\ndefaults: {threshold: abc}\n", 2, `threshold "abc": want a fraction`},
		{"threshold 5%%", "version: 1\ndefaults: {threshold: 5%%}\n", 2, `threshold "5%%": want a fraction`},
		{"threshold 5 %%", "version: 1\ndefaults: {threshold: 5 %%}\n", 2, `threshold "5 %%": want a fraction`},
		{"threshold empty", "version: 1\ndefaults: {threshold: ''}\n", 2, `threshold "": want a fraction`},
		{"threshold null", "version: 1\ndefaults:\n  threshold:\n", 3, `threshold: missing value`},
		{"threshold 1000%", "version: 1\nrules:\n  - match: a\n    threshold: 1000%\n", 4, `threshold "1000%": want at least 0 and less than 10`},
		{"threshold in rule", "version: 1\nrules:\n  - match: a\n    threshold: 5 percent\n", 4, `threshold "5 percent"`},
		{"tolerance bad", "version: 1\ndefaults: {tolerance: x}\n", 2, `tolerance "x": want a fraction`},
		{"alpha 0", "version: 1\ndefaults:\n  alpha: 0\n", 3, `alpha "0": want a number between 0 and 1`},
		{"alpha 1", "version: 1\ndefaults:\n  alpha: 1\n", 3, `alpha "1": want a number between 0 and 1`},
		{"alpha 2", "version: 1\nrules:\n  - match: a\n    alpha: 2\n", 4, `alpha "2": want a number between 0 and 1`},
		{"confidence 1", "version: 1\ndefaults: {confidence: 1}\n", 2, `confidence "1"`},
		{"correction", "version: 1\ndefaults: {correction: bonferroni}\n", 2, `correction "bonferroni": want holm, bh, floor-holm or none`},
		{"bad gate", "version: 1\ndefaults: {gate: block}\n", 2, `gate "block": want fail, warn or off`},
		{"bad gate in rule", "version: 1\nrules:\n- match: a\n  gate: yes\n", 4, `gate "yes"`},
		{"bad gate in unit", "version: 1\nunits:\n  x: {gate: maybe}\n", 3, `gate "maybe"`},
		{"bad better", "version: 1\nunits:\n  x: {better: bigger}\n", 3, `better "bigger": want higher or lower`},
		{"bad assume", "version: 1\nunits:\n  x: {assume: normal}\n", 3, `assume "normal": want exact or nothing`},
		{"budget fast", "version: 1\nrules:\n  - match: a\n    budget: fast\n", 4, `budget "fast": want a number and a unit`},
		{"budget -3ms", "version: 1\nrules:\n  - match: a\n    budget: -3ms\n", 4, `budget "-3ms": want a positive number`},
		{"budget 0 ms", "version: 1\nrules:\n  - match: a\n    budget: 0 ms\n", 4, `budget "0 ms": want a positive number`},
		{"budget no unit", "version: 1\nrules:\n  - match: a\n    budget: 12\n", 4, `budget "12": want a number and a unit`},
		{"budget unit with space", "version: 1\nrules:\n  - match: a\n    budget: 12 light years\n", 4, `budget "12 light years": want a number and a unit`},
		{"budget unknown unit without space", "version: 1\nrules:\n  - match: a\n    budget: 12parsecs\n", 4, `budget "12parsecs": unknown unit "parsecs"`},
		{"malformed YAML", "version: 1\nsuite: x: y\n", 2, "malformed YAML: mapping values are not allowed"},
		{"malformed YAML tab", "version: 1\nsuite:\n\tcount: 1\n", 3, "malformed YAML: "},
		{"malformed YAML no line", "version: 1\x00\n", 0, "malformed YAML: control characters"},
		{"two documents", "version: 1\n---\nversion: 1\n", 2, "more than one YAML document"},
		{"count ten", "version: 1\nsuite:\n  count: ten\n", 3, `count "ten": want an integer`},
		{"count 0", "version: 1\nsuite:\n  count: 0\n", 3, `count 0: want at least 1`},
		{"min_samples 1", "version: 1\ndefaults:\n  min_samples: 1\n", 3, `min_samples 1: want at least 2`},
		{"packages scalar", "version: 1\nsuite:\n  packages: ./...\n", 3, `packages: want a list, got "./..."`},
		{"packages empty", "version: 1\nsuite:\n  packages: []\n", 3, `packages: want at least one`},
		{"tags map", "version: 1\nsuite:\n  tags: {cuda: true}\n", 3, `tags: want a list, got a mapping`},
		{"tag list in list", "version: 1\nsuite:\n  tags:\n    - [cuda]\n", 4, `tags: want a single value, got a list`},
		{"suite list", "version: 1\nsuite: [a]\n", 2, `in suite: want a mapping, got a list`},
		{"units list", "version: 1\nunits:\n  - ns/op\n", 3, `in units: want a mapping, got a list`},
		{"unit scalar", "version: 1\nunits:\n  ns/op: lower\n", 3, `in unit "ns/op": want a mapping, got "lower"`},
		{"rules map", "version: 1\nrules:\n  match: a\n", 3, `rules: want a list, got a mapping`},
		{"rule scalar", "version: 1\nrules:\n  - a\n", 3, `rule: want a mapping, got "a"`},
		{"rule without match", "version: 1\nrules:\n  - match: a\n    gate: warn\n  - gate: warn\n", 5, `rule without match`},
		{"rule sets nothing", "version: 1\nrules:\n  - match: a\n    class: b\n", 3, `rule "a" sets nothing`},
		{"empty match", "version: 1\nrules:\n  - match: ''\n    gate: warn\n", 3, `match: empty pattern`},
		{"benchtime bad", "version: 1\nsuite:\n  benchtime: 10\n", 3, `benchtime "10": want a duration`},
		{"benchtime 0x", "version: 1\nsuite:\n  benchtime: 0x\n", 3, `benchtime "0x"`},
		{"benchtime negative", "version: 1\nsuite:\n  benchtime: -1s\n", 3, `benchtime "-1s"`},
		{"bench empty", "version: 1\nsuite:\n  bench: ''\n", 3, `bench: empty regexp`},
		{"bench invalid", "version: 1\nsuite:\n  bench: 'RMS(Norm'\n", 3, `bench "RMS(Norm": invalid regexp: missing closing )`},
		{"classes map", "version: 1\nsuite:\n  classes: {class: cpu-*}\n", 3, `classes: want a list, got a mapping`},
		{"classes scalar entry", "version: 1\nsuite:\n  classes:\n    - cpu-*\n", 4, `classes entry: want a mapping, got "cpu-*"`},
		{"classes unknown key", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      tags: [cuda]\n", 5, `unknown key "tags" in classes entry (allowed: class, bench, count, benchtime, max_rounds, budget)`},
		{"max_rounds 0", "version: 1\nsuite:\n  max_rounds: 0\n", 3, `max_rounds 0: want at least 1`},
		{"max_rounds below count", "version: 1\nsuite:\n  count: 10\n  max_rounds: 8\n", 4, `max_rounds 8 is below count 10: no round beyond count could run`},
		{"budget not a duration", "version: 1\nsuite:\n  budget: 4\n", 3, `budget "4": want a positive duration such as 4m or 90s`},
		{"budget negative", "version: 1\nsuite:\n  budget: -1m\n", 3, `budget "-1m": want a positive duration`},
		{"classes max_rounds below count", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      max_rounds: 4\n      count: 6\n", 5, `max_rounds 4 is below count 6`},
		{"classes bad budget", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      budget: soon\n", 5, `budget "soon": want a positive duration`},
		{"classes without class", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      count: 3\n    - count: 4\n", 6, `classes entry without class`},
		{"classes sets nothing", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n", 4, `classes entry "cpu-*" sets nothing`},
		{"classes bad count", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      count: 0\n", 5, `count 0: want at least 1`},
		{"classes bad benchtime", "version: 1\nsuite:\n  classes:\n    - class: cpu-*\n      benchtime: fast\n", 5, `benchtime "fast"`},
		{"classes bad glob", "version: 1\nsuite:\n  classes:\n    - class: \"cpu-[\"\n      count: 3\n", 4, `class: invalid glob "cpu-[": unterminated [`},
		{"invalid regexp", "version: 1\nrules:\n  - match: \"/impl=(naive/\"\n    gate: warn\n", 3, `match: invalid regexp "/impl=(naive/": missing closing )`},
		{"invalid glob", "version: 1\nrules:\n  - match: a\n    class: \"gpu-[\"\n    gate: warn\n", 4, `class: invalid glob "gpu-[": unterminated [`},
		{"invalid unit regexp", "version: 1\nrules:\n  - match: a\n    unit: /+/\n    gate: warn\n", 4, `unit: invalid regexp`},
		{"complex key", "version: 1\n? [a]\n: b\n", 2, `key must be a plain string`},
	} {
		c, err := Parse([]byte(tc.src), "benchmarks.yaml")
		if err == nil {
			t.Errorf("%s: Parse succeeded (%+v), want error", tc.desc, c)
			continue
		}
		msg := err.Error()
		prefix := "benchmarks.yaml: "
		if tc.line > 0 {
			prefix = "benchmarks.yaml:" + strconv.Itoa(tc.line) + ": "
		}
		if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error\n\t%s\nwant one line starting %q and containing %q", tc.desc, msg, prefix, tc.want)
		}
		var e *Error
		if !errors.As(err, &e) || e.File != "benchmarks.yaml" || e.Line != tc.line {
			t.Errorf("%s: error %#v, want *Error with line %d", tc.desc, err, tc.line)
		}
	}
}

func TestParseFraction(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5%", 0.05, true},
		{"1.5%", 0.015, true},
		{"0.05", 0.05, true},
		{"0", 0, true},
		{"0%", 0, true},
		{".5%", 0.005, true},
		{" 5% ", 0.05, true},
		{"999%", 9.99, true},
		{"0.999", 0.999, true},
		{"1e-2", 0.01, true},
		{"150%", 1.5, true},
		// 1 or more without % would be 100% or more: refused, not read as 500%.
		{"5", 0, false},
		{"1", 0, false},
		{"9.5", 0, false},
		{"10", 0, false},
		{"1000%", 0, false},
		{"-1%", 0, false},
		{"-0.1", 0, false},
		{"5 %", 0, false},
		{"5 %%", 0, false},
		{"5%%", 0, false},
		{"%", 0, false},
		{"", 0, false},
		{"abc", 0, false},
		{"5 percent", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"0x1p-4", 0, false},
		{"1_0%", 0, false},
	} {
		got, err := ParseFraction(tc.in)
		if (err == nil) != tc.ok || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("ParseFraction(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestThresholdWithoutPercent checks that a threshold of 1 or more without
// % is refused with both spellings of what was probably meant, in the flag
// parser and in benchmarks.yaml (with the file and line).
func TestThresholdWithoutPercent(t *testing.T) {
	for in, want := range map[string]string{
		"5":   `"5" is 500% as a fraction: write 5% or 0.05`,
		"1.5": `"1.5" is 150% as a fraction: write 1.5% or 0.015`,
		"1":   `"1" is 100% as a fraction: write 1% or 0.01`,
	} {
		if _, err := ParseFraction(in); err == nil || err.Error() != want {
			t.Errorf("ParseFraction(%q): %v, want %q", in, err, want)
		}
	}
	for _, key := range []string{"threshold", "tolerance"} {
		_, err := Parse([]byte("version: 1\nrules:\n  - match: \"*\"\n    "+key+": 5\n"), "bench.yaml")
		want := "bench.yaml:4: " + key + ` "5" is 500% as a fraction: write 5% or 0.05`
		if err == nil || err.Error() != want {
			t.Errorf("%s: 5: %v, want %q", key, err, want)
		}
	}
}

func TestBudget(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }
	for _, tc := range []struct {
		text  string
		dim   string
		value float64
		in    map[string]float64 // unit -> value; units absent from the map must not apply
	}{
		{"16.67ms", "sec/op", 0.01667, map[string]float64{"sec/op": 0.01667, "ns/op": 16.67e6}},
		{"16.67 ms", "sec/op", 0.01667, map[string]float64{"sec/op": 0.01667, "ns/op": 16.67e6}},
		{"250µs", "sec/op", 250e-6, map[string]float64{"sec/op": 250e-6, "ns/op": 250e3}},
		{"250us", "sec/op", 250e-6, map[string]float64{"sec/op": 250e-6, "ns/op": 250e3}},
		{"3ns", "sec/op", 3e-9, map[string]float64{"sec/op": 3e-9, "ns/op": 3}},
		{"2s", "sec/op", 2, map[string]float64{"sec/op": 2, "ns/op": 2e9}},
		{"2.5TB/s", "B/s", 2.5e12, map[string]float64{"B/s": 2.5e12, "GB/s": 2500, "MB/s": 2.5e6, "GiB/s": 2.5e12 / (1 << 30)}},
		{"1GiB/s", "B/s", 1 << 30, map[string]float64{"B/s": 1 << 30, "GiB/s": 1, "GB/s": 1.073741824, "MB/s": 1073.741824}},
		{"800 kB/s", "B/s", 8e5, map[string]float64{"B/s": 8e5, "MB/s": 0.8, "GB/s": 8e-4, "GiB/s": 8e5 / (1 << 30)}},
		{"95 pct-copy", "pct-copy", 95, map[string]float64{"pct-copy": 95}},
		{"12 TFLOP/s", "TFLOP/s", 12, map[string]float64{"TFLOP/s": 12}},
		{"12 parsecs", "parsecs", 12, map[string]float64{"parsecs": 12}},
	} {
		b, err := ParseBudget(tc.text)
		if err != nil {
			t.Errorf("ParseBudget(%q): %v", tc.text, err)
			continue
		}
		if b.Text != tc.text || b.Dim != tc.dim || !near(b.Value, tc.value) {
			t.Errorf("ParseBudget(%q) = %+v, want value %v dim %q", tc.text, b, tc.value, tc.dim)
		}
		for _, unit := range []string{"sec/op", "ns/op", "B/s", "MB/s", "GB/s", "GiB/s", "pct-copy", "TFLOP/s", "parsecs", "B/op", "allocs/op"} {
			want, applies := tc.in[unit]
			got, ok := b.In(unit)
			if ok != applies || (ok && !near(got, want)) {
				t.Errorf("ParseBudget(%q).In(%q) = %v, %v; want %v, %v", tc.text, unit, got, ok, want, applies)
			}
		}
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	bare := filepath.Join(root, "bare")
	sub := filepath.Join(bare, "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, sub} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bare, ".git"), []byte("gitdir: elsewhere\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(repo, FileName)
	if got, ok := Find(deep); ok {
		t.Errorf("Find without file = %q, true", got)
	}
	if err := os.WriteFile(want, []byte("version: 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	// A benchmarks.yaml outside the repository root is not looked at.
	if err := os.WriteFile(filepath.Join(deep, FileName), []byte("version: 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want string
		ok   bool
	}{
		{deep, want, true},
		{repo, want, true},
		{sub, "", false}, // .git file, no benchmarks.yaml
		{root, "", false},
	} {
		got, ok := Find(tc.dir)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Find(%q) = %q, %v; want %q, %v", tc.dir, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.yaml")
	if _, err := Load(missing); err == nil || !strings.HasPrefix(err.Error(), missing+": ") {
		t.Errorf("Load(missing) = %v, want error naming %s", err, missing)
	}
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(example), 0o666); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.Source != path || len(c.Rules) != 4 {
		t.Errorf("Load(example) = %+v, %v", c, err)
	}
	if err := os.WriteFile(path, []byte("version: 1\ndefaults:\n  gate: nope\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+":3: ") {
		t.Errorf("Load(bad) = %v, want error at %s:3", err, path)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	for _, s := range []string{
		"", "version: 1\n", "version: 2\n", "suite: {}\n", "version: 1\nx: &a [*a, *a]\n",
		"version: 1\nsuite: x: y\n", "version: 1\nrules: [{match: '/(/', gate: warn}]\n",
		"version: 1\nrules: [{match: '[', gate: warn}]\n", "version: 1\ndefaults: {threshold: 5%%}\n",
		"version: 1\nrules:\n  - match: a\n    budget: 16.67ms\n", "version: 1\nunits: {ns/op: {gate: warn}}\n",
		"version: 1\n---\n", "version: 1\nrules: &r [{match: a, gate: warn}]\nsuite: *r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		for _, unit := range []string{"sec/op", "B/s", "x"} {
			c.Resolve("A/b", "gpu-x", unit)
			c.Direction(unit)
			c.Exact(unit)
		}
	})
}

package config

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"
	"gopkg.in/yaml.v3"
)

// Error is a configuration error. Line is 0 when the error concerns the
// file as a whole.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Allowed keys of each mapping in the file.
var (
	topKeys      = []string{"version", "suite", "defaults", "units", "rules"}
	suiteKeys    = []string{"packages", "tags", "command", "format", "count", "benchtime", "bench", "max_rounds", "budget", "classes"}
	classKeys    = []string{"class", "bench", "count", "benchtime", "max_rounds", "budget"}
	defaultsKeys = []string{"threshold", "alpha", "gate", "min_samples", "tolerance", "correction", "confidence", "unstable"}
	unitKeys     = []string{"better", "assume", "gate"}
	ruleKeys     = []string{"match", "class", "unit", "threshold", "alpha", "gate", "min_samples", "tolerance", "budget"}
	corrections  = []string{"holm", "bh", "floor-holm", "none"}
)

// Parse parses the contents of a configuration file. Source names the file
// in errors and in Config.Source.
func Parse(data []byte, source string) (cfg *Config, err error) {
	p := &parser{file: source}
	if p.file == "" {
		p.file = FileName
	}
	defer func() {
		switch r := recover().(type) {
		case nil:
		case *Error:
			cfg, err = nil, r
		default:
			panic(r) // a bug in this package: let it show, especially to FuzzParse
		}
	}()
	doc := p.decode(data)
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		p.fail(nil, "empty file")
	}
	cfg = Default()
	cfg.Source = source
	p.top(doc.Content[0], cfg)
	return cfg, nil
}

// decode decodes the single YAML document in data.
func (p *parser) decode(data []byte) *yaml.Node {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*Error); !ok { // yaml.v3 has panicked on odd input before
				r = &Error{p.file, 0, fmt.Sprintf("malformed YAML: %v", r)}
			}
			panic(r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		p.fail(nil, "empty file")
	} else if err != nil {
		p.yamlError(err)
	}
	if err := dec.Decode(&extra); err != nil && err != io.EOF {
		p.yamlError(err)
	} else if err == nil {
		p.fail(&extra, "more than one YAML document")
	}
	return &doc
}

// parser walks the YAML node tree of one file. The walk follows the schema,
// so its depth is bounded whatever the input. Errors are raised with fail
// and recovered by Parse.
type parser struct {
	file string
}

func (p *parser) fail(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	panic(&Error{p.file, line, fmt.Sprintf(format, args...)})
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError reports an error from yaml.v3 ("yaml: line N: msg") as
// "file:N: malformed YAML: msg".
func (p *parser) yamlError(err error) {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		panic(&Error{p.file, line, "malformed YAML: " + m[2]})
	}
	panic(&Error{p.file, 0, "malformed YAML: " + strings.TrimPrefix(msg, "yaml: ")})
}

func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "an alias"
}

// mapping calls f for each key and value of the mapping n (null meaning
// empty), in file order, after checking that the key is unique and, if
// allowed is not nil, allowed.
func (p *parser) mapping(n *yaml.Node, where string, allowed []string, f func(k, v *yaml.Node)) {
	if n = deref(n); isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s: want a mapping, got %s", where, describe(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		switch line, dup := seen[k.Value]; {
		case k.Kind != yaml.ScalarNode:
			p.fail(k, "%s: key must be a plain string, got %s", where, describe(k))
		case allowed != nil && !contains(allowed, k.Value):
			p.fail(k, "unknown key %q %s (allowed: %s)", k.Value, where, strings.Join(allowed, ", "))
		case dup:
			p.fail(k, "duplicate key %q %s (first at line %d)", k.Value, where, line)
		}
		seen[k.Value] = k.Line
		f(k, n.Content[i+1])
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns the node and text of a single value.
func (p *parser) scalar(n *yaml.Node, what string) (*yaml.Node, string) {
	if n = deref(n); n.Kind != yaml.ScalarNode {
		p.fail(n, "%s: want a single value, got %s", what, describe(n))
	} else if n.Tag == "!!null" {
		p.fail(n, "%s: missing value", what)
	}
	return n, n.Value
}

func (p *parser) list(n *yaml.Node, what string) []string {
	list := []string{}
	if n = deref(n); isNull(n) {
		return list
	} else if n.Kind != yaml.SequenceNode {
		p.fail(n, "%s: want a list, got %s", what, describe(n))
	}
	for _, e := range n.Content {
		e, s := p.scalar(e, what)
		if s == "" || strings.ContainsAny(s, " \t,") {
			p.fail(e, "%s: invalid entry %q", what, s)
		}
		list = append(list, s)
	}
	return list
}

func (p *parser) int(n *yaml.Node, what string, min int) int {
	n, s := p.scalar(n, what)
	v, err := strconv.Atoi(s)
	if err != nil {
		p.fail(n, "%s %q: want an integer", what, s)
	} else if v < min {
		p.fail(n, "%s %d: want at least %d", what, v, min)
	}
	return v
}

func (p *parser) fraction(n *yaml.Node, what string) float64 {
	n, s := p.scalar(n, what)
	v, err := ParseFraction(s)
	if err != nil {
		p.fail(n, "%s %v", what, err)
	}
	return v
}

// probability parses a number strictly between 0 and 1.
func (p *parser) probability(n *yaml.Node, what string) float64 {
	n, s := p.scalar(n, what)
	v, err := parseNumber(s)
	if err != nil || !(v > 0 && v < 1) {
		p.fail(n, "%s %q: want a number between 0 and 1, exclusive", what, s)
	}
	return v
}

// choice parses one of a fixed set of words.
func (p *parser) choice(n *yaml.Node, what string, choices ...string) string {
	n, s := p.scalar(n, what)
	if !contains(choices, s) {
		last := len(choices) - 1
		p.fail(n, "%s %q: want %s or %s", what, s, strings.Join(choices[:last], ", "), choices[last])
	}
	return s
}

func (p *parser) gate(n *yaml.Node) Gate {
	return Gate(p.choice(n, "gate", string(GateFail), string(GateWarn), string(GateOff)))
}

func ptr[T any](v T) *T { return &v }

// top parses the top-level mapping into cfg, which holds the built-in defaults.
func (p *parser) top(n *yaml.Node, cfg *Config) {
	if n = deref(n); n.Kind != yaml.MappingNode {
		p.fail(n, "want a mapping with version, suite, defaults, units and rules at top level, got %s", describe(n))
	}
	version := false
	p.mapping(n, "at top level", topKeys, func(k, v *yaml.Node) {
		switch k.Value {
		case "version":
			if v, s := p.scalar(v, "version"); s != "1" {
				p.fail(v, "unsupported version %q (want 1)", s)
			}
			version = true
		case "suite":
			p.suite(v, &cfg.Suite)
		case "defaults":
			var r Rule
			p.mapping(v, "in defaults", defaultsKeys, func(k, v *yaml.Node) {
				switch k.Value {
				case "correction":
					cfg.Correction = p.choice(v, "correction", corrections...)
				case "confidence":
					cfg.Confidence = p.probability(v, "confidence")
				case "unstable":
					cfg.Unstable = Gate(p.choice(v, "unstable", "fail", "warn", "off"))
				default:
					p.policyField(&r, k.Value, v)
				}
			})
			r.apply(&cfg.Defaults)
		case "units":
			p.units(v, cfg)
		case "rules":
			p.rules(v, cfg)
		}
	})
	if !version {
		p.fail(nil, "missing version (want version: 1)")
	}
}

func (p *parser) suite(n *yaml.Node, s *Suite) {
	keys := map[string]*yaml.Node{}
	var maxRounds *yaml.Node
	p.mapping(n, "in suite", suiteKeys, func(k, v *yaml.Node) {
		keys[k.Value] = k
		switch k.Value {
		case "packages":
			if s.Packages = p.list(v, "packages"); len(s.Packages) == 0 {
				p.fail(v, "packages: want at least one package pattern")
			}
		case "tags":
			s.Tags = p.list(v, "tags")
		case "command":
			s.Command = p.argv(v)
		case "format":
			s.Format = p.choice(v, "format", SuiteFormats...)
		case "count":
			s.Count = p.int(v, "count", 1)
		case "benchtime":
			s.Benchtime = p.benchtime(v)
		case "bench":
			s.Bench = p.benchRegexp(v)
		case "max_rounds":
			s.MaxRounds, maxRounds = p.int(v, "max_rounds", 1), v
		case "budget":
			s.Budget = p.duration(v, "budget")
		case "classes":
			p.suiteClasses(v, s)
		}
	})
	// A suite is Go packages built with go test -c, or a command; the keys
	// of one make no sense with the other. The later key is the mistake.
	later := func(a, b string) *yaml.Node {
		if keys[a].Line > keys[b].Line || keys[a].Line == keys[b].Line && keys[a].Column > keys[b].Column {
			return keys[a]
		}
		return keys[b]
	}
	switch {
	case keys["command"] != nil && keys["packages"] != nil:
		p.fail(later("command", "packages"), "suite.command and suite.packages: a suite is either Go packages (go test -bench) or a command, not both")
	case keys["command"] != nil && keys["tags"] != nil:
		p.fail(later("command", "tags"), "suite.tags are Go build tags: a suite.command builds nothing (set them in the command)")
	case keys["format"] != nil && keys["command"] == nil:
		p.fail(keys["format"], "suite.format is the output format of suite.command, and there is no command (Go packages print Go benchmark format)")
	}
	p.roundsAboveCount(maxRounds, s.MaxRounds, s.Count)
	if keys["command"] != nil {
		s.Packages = nil
		if s.Format == "" {
			s.Format = "go"
		}
	}
}

// argv parses suite.command: a list of strings, the program first.
func (p *parser) argv(n *yaml.Node) []string {
	if n = deref(n); n.Kind != yaml.SequenceNode {
		p.fail(n, "command: want a list of strings, the program first (for example [python3, bench.py]), got %s", describe(n))
	}
	if len(n.Content) == 0 {
		p.fail(n, "command: empty list (want the program and its arguments)")
	}
	var argv []string
	for i, e := range n.Content {
		e = deref(e)
		if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
			p.fail(e, "command: argument %d: want a string, got %s", i, describe(e))
		}
		if i == 0 && strings.TrimSpace(e.Value) == "" {
			p.fail(e, "command: empty program name")
		}
		argv = append(argv, e.Value)
	}
	return argv
}

// roundsAboveCount fails at n (the max_rounds value) when max_rounds and
// count, set in one mapping, leave no room for a round beyond count.
func (p *parser) roundsAboveCount(n *yaml.Node, maxRounds, count int) {
	if n != nil && count > 0 && maxRounds < count {
		p.fail(n, "max_rounds %d is below count %d: no round beyond count could run (want at least %d, or leave max_rounds out)", maxRounds, count, count)
	}
}

// duration parses a positive Go duration such as 4m or 90s.
func (p *parser) duration(n *yaml.Node, what string) time.Duration {
	n, s := p.scalar(n, what)
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.fail(n, "%s %q: want a positive duration such as 4m or 90s", what, s)
	}
	return d
}

func (p *parser) benchtime(n *yaml.Node) string {
	n, s := p.scalar(n, "benchtime")
	if !validBenchtime(s) {
		p.fail(n, "benchtime %q: want a duration like 200ms or a count like 100x", s)
	}
	return s
}

// benchRegexp parses a -bench regexp: each "/"-separated part must compile,
// as go test compiles them.
func (p *parser) benchRegexp(n *yaml.Node) string {
	n, s := p.scalar(n, "bench")
	if s == "" {
		p.fail(n, "bench: empty regexp (leave the key out to select every benchmark)")
	}
	if _, err := regexp.Compile(s); err != nil {
		p.fail(n, "bench %q: invalid regexp: %v", s, regexpReason(err))
	}
	return s
}

func (p *parser) suiteClasses(n *yaml.Node, s *Suite) {
	if n = deref(n); isNull(n) {
		return
	} else if n.Kind != yaml.SequenceNode {
		p.fail(n, "classes: want a list, got %s", describe(n))
	}
	for _, e := range n.Content {
		e = deref(e)
		if e.Kind != yaml.MappingNode {
			p.fail(e, "classes entry: want a mapping, got %s", describe(e))
		}
		c := SuiteClass{Line: e.Line}
		var maxRounds *yaml.Node
		p.mapping(e, "in classes entry", classKeys, func(k, v *yaml.Node) {
			switch k.Value {
			case "class":
				c.Class, c.class = p.pattern(v, "class", false)
			case "bench":
				c.Bench = p.benchRegexp(v)
			case "count":
				c.Count = p.int(v, "count", 1)
			case "benchtime":
				c.Benchtime = p.benchtime(v)
			case "max_rounds":
				c.MaxRounds, maxRounds = p.int(v, "max_rounds", 1), v
			case "budget":
				c.Budget = p.duration(v, "budget")
			}
		})
		p.roundsAboveCount(maxRounds, c.MaxRounds, c.Count)
		if c.Class == "" {
			p.fail(e, `classes entry without class (every entry needs a class pattern such as "cpu-*")`)
		} else if c.Bench == "" && c.Count == 0 && c.Benchtime == "" && c.MaxRounds == 0 && c.Budget == 0 {
			p.fail(e, "classes entry %q sets nothing (want at least one of bench, count, benchtime, max_rounds, budget)", c.Class)
		}
		s.Classes = append(s.Classes, c)
	}
}

func validBenchtime(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.Atoi(n)
		return err == nil && v >= 1 && n[0] != '+'
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0
}

func (p *parser) units(n *yaml.Node, cfg *Config) {
	lines := map[string]int{}
	p.mapping(n, "in units", nil, func(k, v *yaml.Node) {
		if k.Value == "" || strings.ContainsAny(k.Value, " \t") {
			p.fail(k, "invalid unit name %q", k.Value)
		}
		_, tidy := benchunit.Tidy(1, k.Value)
		if line, dup := lines[tidy]; dup {
			p.fail(k, "unit %q is the same unit as line %d once tidied (%s)", k.Value, line, tidy)
		}
		lines[tidy] = k.Line
		var u UnitPolicy
		p.mapping(v, fmt.Sprintf("in unit %q", k.Value), unitKeys, func(k, v *yaml.Node) {
			switch k.Value {
			case "better":
				u.Better = p.choice(v, "better", "higher", "lower")
			case "assume":
				u.Assume = p.choice(v, "assume", "exact", "nothing")
			case "gate":
				u.Gate = p.gate(v)
			}
		})
		cfg.Units[tidy] = u
	})
}

func (p *parser) rules(n *yaml.Node, cfg *Config) {
	if n = deref(n); isNull(n) {
		return
	} else if n.Kind != yaml.SequenceNode {
		p.fail(n, "rules: want a list, got %s", describe(n))
	}
	for _, e := range n.Content {
		cfg.Rules = append(cfg.Rules, p.rule(deref(e)))
	}
}

func (p *parser) rule(n *yaml.Node) Rule {
	r := Rule{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "rule: want a mapping, got %s", describe(n))
	}
	sets := false
	p.mapping(n, "in rule", ruleKeys, func(k, v *yaml.Node) {
		switch k.Value {
		case "match":
			r.Match, r.name = p.pattern(v, "match", false)
		case "class":
			r.Class, r.class = p.pattern(v, "class", false)
		case "unit":
			r.Unit, r.unit = p.pattern(v, "unit", true)
		default:
			p.policyField(&r, k.Value, v)
			sets = true
		}
	})
	if r.Match == "" {
		p.fail(n, `rule without match (every rule needs a match pattern; use "*" for all benchmarks)`)
	} else if !sets {
		p.fail(n, "rule %q sets nothing (want at least one of threshold, alpha, gate, min_samples, tolerance, budget)", r.Match)
	}
	return r
}

// policyField parses one of the fields that defaults and rules share.
func (p *parser) policyField(r *Rule, key string, v *yaml.Node) {
	switch key {
	case "threshold":
		r.Threshold = ptr(p.fraction(v, key))
	case "tolerance":
		r.Tolerance = ptr(p.fraction(v, key))
	case "alpha":
		r.Alpha = ptr(p.probability(v, key))
	case "gate":
		r.Gate = ptr(p.gate(v))
	case "min_samples":
		r.MinSamples = ptr(p.int(v, key, 2))
	case "budget":
		v, s := p.scalar(v, key)
		b, err := ParseBudget(s)
		if err != nil {
			p.fail(v, "budget %v", err)
		}
		r.Budget = &b
	}
}

// pattern parses and compiles a match, class or unit pattern.
func (p *parser) pattern(n *yaml.Node, what string, unit bool) (string, *regexp.Regexp) {
	n, s := p.scalar(n, what)
	if s == "" {
		p.fail(n, "%s: empty pattern", what)
	}
	pat := s
	if unit {
		pat = unitPattern(s)
	}
	re, err := compilePattern(pat)
	if err != nil {
		p.fail(n, "%s: %v", what, err)
	}
	return s, re
}

var number = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?`)

// parseNumber parses a finite decimal number: no hex, underscores or Inf.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if s == "" || number.FindString(s) != s || err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("not a number")
	}
	return v, nil
}

// ParseFraction parses a threshold or tolerance: a fraction like 0.05 or a
// percentage like 5%, at least 0 and less than 10 (1000%).
//
// A number of 1 or more without % is refused: nobody gates on a change of
// 100% or more on purpose, and "threshold: 5" meant as 5% would silently
// gate at 500%. The message says both ways to write what was meant.
func ParseFraction(s string) (float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := parseNumber(num)
	if err != nil {
		return 0, fmt.Errorf("%q: want a fraction like 0.05 or a percentage like 5%%", s)
	}
	if !pct && v >= 1 {
		return 0, fmt.Errorf("%q is %s as a fraction: write %s%% or %s", s, percentOf(v), num,
			strconv.FormatFloat(v/100, 'f', -1, 64))
	}
	if pct {
		v /= 100
	}
	if v < 0 || v >= 10 {
		return 0, fmt.Errorf("%q: want at least 0 and less than 10 (1000%%)", s)
	}
	return v, nil
}

// percentOf formats a fraction as a percentage: 5 → 500%.
func percentOf(v float64) string {
	return strconv.FormatFloat(math.Round(v*100*1e9)/1e9, 'f', -1, 64) + "%"
}

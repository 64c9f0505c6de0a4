package runner

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
)

// Filter is a -bench regexp split the way go test splits it: alternatives
// separated by a top-level "|", each a list of per-level patterns separated
// by "/" (level 0 matches the top-level name, BenchmarkX; level 1 its
// sub-benchmarks, and so on). Runs restrict level 0 to an explicit list of
// top-level benchmarks (a shard, or what is left after a crash) and keep the
// other levels as the user wrote them.
type Filter struct {
	text   string
	alts   [][]string
	tops   []*regexp.Regexp   // compiled level 0 of each alternative
	levels [][]*regexp.Regexp // every level of each alternative, compiled
}

// ParseFilter parses a -bench regexp; "" selects every benchmark, like ".".
func ParseFilter(re string) (*Filter, error) {
	if re == "" {
		re = "."
	}
	f := &Filter{text: re, alts: splitRegexp(re)}
	for _, alt := range f.alts {
		var levels []*regexp.Regexp
		for _, level := range alt {
			l, err := regexp.Compile(level)
			if err != nil {
				return nil, fmt.Errorf("--bench %q: %v", re, err)
			}
			levels = append(levels, l)
		}
		f.tops = append(f.tops, levels[0])
		f.levels = append(f.levels, levels)
	}
	return f, nil
}

// Match reports whether the filter selects the benchmark result name (as
// go test prints it: BenchmarkX/sub/...-N) as go test would report it: some
// alternative matches each "/"-separated level of the name without its -N
// suffix, and has no more levels than the name (go test runs a benchmark
// with fewer levels than the pattern only for its sub-benchmarks, and does
// not report it). It judges the results of a suite command, which may
// print benchmarks the filter does not select.
func (f *Filter) Match(name string) bool {
	levels := strings.Split("Benchmark"+trimName(name), "/")
	for _, alt := range f.levels {
		if len(alt) > len(levels) {
			continue
		}
		ok := true
		for i, re := range alt {
			if !re.MatchString(levels[i]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// String returns the regexp the filter was parsed from.
func (f *Filter) String() string { return f.text }

// Top returns the level-0 part of the filter, the pattern `-test.list`
// takes: it lists top-level names only.
func (f *Filter) Top() string {
	parts := make([]string, len(f.alts))
	for i, alt := range f.alts {
		parts[i] = alt[0]
		if parts[i] == "" {
			parts[i] = "." // "" lists nothing; as a level it matches everything
		}
	}
	return strings.Join(parts, "|")
}

// MatchTop reports whether the top-level benchmark name (BenchmarkX) is
// selected by some alternative.
func (f *Filter) MatchTop(name string) bool {
	for _, re := range f.tops {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// Restrict returns the -test.bench regexp that runs exactly the top-level
// benchmarks tops, with the sub-benchmark levels of the filter; "" when
// none of tops is selected.
func (f *Filter) Restrict(tops []string) string {
	var alts []string
	for i, alt := range f.alts {
		var sel []string
		for _, t := range tops {
			if f.tops[i].MatchString(t) {
				sel = append(sel, regexp.QuoteMeta(t))
			}
		}
		if len(sel) == 0 {
			continue
		}
		levels := append([]string{"^(?:" + strings.Join(sel, "|") + ")$"}, alt[1:]...)
		alts = append(alts, strings.Join(levels, "/"))
	}
	return strings.Join(alts, "|")
}

// splitRegexp splits a -bench regexp into alternatives of per-level
// patterns, exactly as package testing does (testing/match.go): "/" and "|"
// split only outside brackets and parentheses.
func splitRegexp(s string) [][]string {
	var alts [][]string
	var a []string
	cs, cp := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs--; cs < 0 { // an unmatched ']' is legal
				cs = 0
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case '/', '|':
			if cs == 0 && cp == 0 {
				a = append(a, s[:i])
				if s[i] == '|' {
					alts = append(alts, a)
					a = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(alts, append(a, s))
}

// Shard selects a deterministic part of the top-level benchmarks: shard I of
// N (1-based) holds the benchmarks whose FNV-1a hash of the top-level name
// (BenchmarkX) is I-1 modulo N. The zero Shard holds everything. The hash
// depends on the name only, so a benchmark stays in its shard whatever else
// is added, on every machine and for both sides of a comparison.
//
// A Dealt shard instead takes its share of one run's top-level benchmarks
// as Run deals them over both sides (Deal: balanced by Plan.Weights, or every
// N-th in listing order): an even split of a run over the GPUs of one host
// (regress --gpus), where a hash could give one GPU most of a small suite.
// A deal depends on everything listed and on the weights, so shards of one
// split dealt on different machines (Hosts: regress check --shard with the
// stored baseline's weights) agree only when both are the same everywhere;
// Result.Deal fingerprints the deal so that the join can check that.
type Shard struct {
	I, N  int
	Dealt bool
	// Hosts marks a dealt shard of a run split over machines: its results
	// say "shard: i/n", as a hash shard's do, where a lane of one machine's
	// run (--gpus) says "lane: i/n".
	Hosts bool
}

// ParseShard parses "i/n" with 1 ≤ i ≤ n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || is[0] == '+' || ns[0] == '+' {
		return Shard{}, fmt.Errorf("--shard %q: want i/n, for example 1/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want 1 ≤ i ≤ n (shards are numbered from 1)", s)
	}
	return Shard{I: i, N: n}, nil
}

// Has reports whether the top-level benchmark name belongs to the shard.
func (s Shard) Has(name string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return int(h.Sum64()%uint64(s.N)) == s.I-1
}

// String returns "i/n", or "" for the zero Shard.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

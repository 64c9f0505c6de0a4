// Package group pairs the results of a baseline and a current side into
// series: all samples of one benchmark, in one unit, under one distinguishing
// configuration, on each side.
//
// The two sides are the two sides whatever their file-level configuration
// says: a key that is constant within each side (goos, cpu, commit, even a
// different GPU driver) never splits a comparison; it is reported as the
// side's configuration instead. A key splits comparisons only when it takes
// more than one value within a side — pkg when several packages ran, or the
// GOMAXPROCS suffix when -cpu swept it. Keys that describe the run rather than
// the benchmark (RunKeys: commit, date, note, ...) never split, even when they
// vary, since merged shard files legitimately carry several. This is the
// grouping benchstat gives with "-ignore note" and the name without
// GOMAXPROCS, made the default.
package group

import (
	"slices"
	"sort"
	"strconv"

	"github.com/kernelwatch/kernelwatch/regress/parse"
)

// RunKeys are configuration keys that describe a run, not a benchmark, and
// never split comparisons (design §4).
// CodeKey (the harness's fingerprint of the kernels a benchmark ran) differs between the sides of every
// comparison of a changed kernel, which is the comparison wanted.
var RunKeys = []string{"commit", "date", "note", "branch", "regress-version", "copy-gbps", "copy-gbps-end", "mma-tflops", "mma-peak-tflops", "wgmma-tflops", "cublaslt", "run-health", "round", "shard", "shard-by", "go",
	"lane", "count", "seed", "rounds-done", "stopped", CodeKey}

// CodeKey is the configuration key of the code fingerprint the harness prints before each GPU benchmark's
// result, and CodeNone its value for a benchmark whose code the harness could not describe.
const (
	CodeKey  = "code"
	CodeNone = "none"
)

// ProcsKey is the pseudo configuration key of the "-N" GOMAXPROCS suffix.
const ProcsKey = "gomaxprocs"

// ClassKey is the configuration key of the hardware class (design §2).
const ClassKey = "class"

// RoundKey is the configuration key that numbers the interleaved rounds of
// one regress check side.
const RoundKey = "round"

// Series is every sample of one comparison key.
type Series struct {
	Name string
	// Config holds the values of the distinguishing keys; nil when there
	// are none.
	Config map[string]string
	Unit   string
	// Base and Cur are the samples of each side, in file order.
	Base, Cur []float64
	// BaseRounds and CurRounds hold the round each sample came from (the
	// RoundKey configuration line that regress check writes before each
	// invocation), parallel to Base and Cur; nil for a side where some
	// sample has no round.
	BaseRounds, CurRounds []int

	noBaseRound, noCurRound bool
}

// Grouping is the result of pairing two sides.
type Grouping struct {
	// Series in order of first appearance, baseline first.
	Series []*Series
	// Keys are the distinguishing configuration keys, sorted.
	Keys []string
	// BaseConfig and CurConfig hold the keys that have one value over all
	// results of the side.
	BaseConfig, CurConfig map[string]string
	// BaseValues and CurValues hold every distinct value of every key on
	// each side, in order of appearance (for keys that vary, such as
	// run-health printed before each kernel family).
	BaseValues, CurValues map[string][]string
}

// Pair groups base and cur. ignore names further keys that never split.
func Pair(base, cur *parse.Side, ignore ...string) *Grouping {
	never := map[string]bool{ClassKey: true}
	for _, k := range RunKeys {
		never[k] = true
	}
	for _, k := range ignore {
		never[k] = true
	}
	split := map[string]bool{}
	for _, side := range []*parse.Side{base, cur} {
		for k := range varying(side) {
			if !never[k] {
				split[k] = true
			}
		}
	}
	g := &Grouping{BaseConfig: constant(base), CurConfig: constant(cur), BaseValues: values(base), CurValues: values(cur)}
	for k := range split {
		g.Keys = append(g.Keys, k)
	}
	sort.Strings(g.Keys)

	index := map[string]*Series{}
	var key []byte
	add := func(side *parse.Side, isBase bool) {
		for i := range side.Results {
			r := &side.Results[i]
			cfg := side.Configs[r.Config]
			key = append(key[:0], r.Name...)
			for _, k := range g.Keys {
				key = append(key, 0)
				key = append(key, value(cfg, r, k)...)
			}
			key = append(key, 0)
			prefix := len(key)
			round, err := strconv.Atoi(cfg.Get(RoundKey))
			hasRound := err == nil && round >= 0
			for _, v := range side.Values(r) {
				key = append(key[:prefix], v.Unit...)
				s, ok := index[string(key)]
				if !ok {
					s = &Series{Name: r.Name, Unit: v.Unit}
					if len(g.Keys) > 0 {
						s.Config = map[string]string{}
						for _, k := range g.Keys {
							s.Config[k] = value(cfg, r, k)
						}
					}
					index[string(key)] = s
					g.Series = append(g.Series, s)
				}
				if isBase {
					s.Base = append(s.Base, v.Value)
					s.BaseRounds = append(s.BaseRounds, round)
					s.noBaseRound = s.noBaseRound || !hasRound
				} else {
					s.Cur = append(s.Cur, v.Value)
					s.CurRounds = append(s.CurRounds, round)
					s.noCurRound = s.noCurRound || !hasRound
				}
			}
		}
	}
	add(base, true)
	add(cur, false)
	for _, s := range g.Series {
		if s.noBaseRound {
			s.BaseRounds = nil
		}
		if s.noCurRound {
			s.CurRounds = nil
		}
	}
	return g
}

// value returns the value of configuration key k for result r.
func value(cfg parse.Config, r *parse.Result, k string) string {
	if k == ProcsKey {
		if r.Procs == 0 {
			return ""
		}
		return strconv.Itoa(r.Procs)
	}
	return cfg.Get(k)
}

// varying returns the keys (including ProcsKey) that take more than one
// value over the results of side; a key missing from some results counts as
// the value "".
func varying(side *parse.Side) map[string]bool {
	keys := map[string]bool{}
	for _, c := range side.Configs {
		for _, kv := range c {
			keys[kv.Key] = true
		}
	}
	out := map[string]bool{}
	used := usedConfigs(side)
	for k := range keys {
		first, seen := "", false
		for i, c := range side.Configs {
			if !used[i] {
				continue
			}
			v := c.Get(k)
			if seen && v != first {
				out[k] = true
				break
			}
			first, seen = v, true
		}
	}
	procs := -1
	for i := range side.Results {
		p := side.Results[i].Procs
		if procs >= 0 && p != procs {
			out[ProcsKey] = true
			break
		}
		procs = p
	}
	return out
}

func usedConfigs(side *parse.Side) map[int]bool {
	used := map[int]bool{}
	for i := range side.Results {
		used[side.Results[i].Config] = true
	}
	return used
}

// constant returns the keys with a single, non-empty value over every
// result of side.
func constant(side *parse.Side) map[string]string {
	out := map[string]string{}
	used := usedConfigs(side)
	vary := varying(side)
	for i, c := range side.Configs {
		if !used[i] {
			continue
		}
		for _, kv := range c {
			if !vary[kv.Key] && kv.Value != "" {
				out[kv.Key] = kv.Value
			}
		}
	}
	return out
}

// values returns the distinct values of every key over the results of side.
func values(side *parse.Side) map[string][]string {
	out := map[string][]string{}
	used := usedConfigs(side)
	for i, c := range side.Configs {
		if !used[i] {
			continue
		}
		for _, kv := range c {
			if !slices.Contains(out[kv.Key], kv.Value) {
				out[kv.Key] = append(out[kv.Key], kv.Value)
			}
		}
	}
	return out
}

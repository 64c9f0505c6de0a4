package render

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// nameLayout says how text tables shorten benchmark names to fit their
// width. Every way keeps the names of one table distinct, and the legend
// under the tables maps the short names back to the full ones.
type nameLayout struct {
	// elide leaves out the name segments every benchmark has
	// ("rows=256/cols=4096" in a suite run at one shape).
	elide bool
	// values writes key=value segments as their value ("dtype=fp32" as
	// "fp32"); the legend lists each benchmark's keys.
	values bool
}

// keyValue is a name segment of the form key=value.
var keyValue = regexp.MustCompile(`^([^=\s]+)=(.+)$`)

// shortNames returns the name each comparison of r shows in a text table
// under lay, by index, and the legend lines that say how they were
// shortened. A way of shortening that would make two rows of one table
// look alike is not applied.
func shortNames(r *report.Report, lay nameLayout) (names, legend []string) {
	segs := make([][]string, len(r.Comparisons))
	for i, c := range r.Comparisons {
		segs[i] = strings.Split(clean(c.Name), "/")
	}
	join := func(segs [][]string) []string {
		out := make([]string, len(segs))
		for i, s := range segs {
			out[i] = strings.Join(s, "/") + configSuffix(&r.Comparisons[i])
		}
		return out
	}
	if lay.elide {
		if common := commonSegments(segs); len(common) > 0 {
			elided := make([][]string, len(segs))
			for i, s := range segs {
				elided[i] = append([]string{s[0]}, without(s[1:], common)...)
			}
			if distinct(r, join(elided)) {
				segs = elided
				legend = append(legend, "names leave out "+strings.Join(common, "/")+", which every benchmark has")
			}
		}
	}
	if lay.values {
		valued := make([][]string, len(segs))
		keys := map[string][]string{} // key pattern → benchmarks
		var patterns []string
		for i, s := range segs {
			valued[i] = []string{s[0]}
			var ks []string
			for _, seg := range s[1:] {
				if m := keyValue.FindStringSubmatch(seg); m != nil {
					valued[i] = append(valued[i], m[2])
					ks = append(ks, m[1])
				} else {
					valued[i] = append(valued[i], seg)
					ks = append(ks, "("+seg+")")
				}
			}
			if len(ks) == 0 {
				continue
			}
			p := strings.Join(ks, "/")
			if _, ok := keys[p]; !ok {
				patterns = append(patterns, p)
			}
			if !contains(keys[p], s[0]) {
				keys[p] = append(keys[p], s[0])
			}
		}
		if len(patterns) > 0 && distinct(r, join(valued)) {
			segs = valued
			var parts []string
			for _, p := range patterns {
				sort.Strings(keys[p])
				parts = append(parts, strings.Join(keys[p], ", ")+": "+p)
			}
			legend = append(legend, "names give values only; their keys: "+strings.Join(parts, "; "))
		}
	}
	return join(segs), legend
}

// configSuffix is the distinguishing configuration of c as configName
// writes it after the name: " [pkg=foo]".
func configSuffix(c *report.Comparison) string {
	if len(c.Config) == 0 {
		return ""
	}
	return " [" + clean(joinConfig(c.Config, " ")) + "]"
}

// commonSegments lists, in the order of the first name, the segments after
// the first that every name has.
func commonSegments(segs [][]string) []string {
	if len(segs) < 2 {
		return nil
	}
	var common []string
	for _, seg := range segs[0][1:] {
		every := true
		for _, s := range segs[1:] {
			if !contains(s[1:], seg) {
				every = false
				break
			}
		}
		if every && !contains(common, seg) {
			common = append(common, seg)
		}
	}
	return common
}

func without(segs, drop []string) []string {
	var out []string
	for _, s := range segs {
		if !contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// distinct reports whether no two comparisons of one unit (one table) get
// the same name.
func distinct(r *report.Report, names []string) bool {
	seen := map[string]bool{}
	for i, n := range names {
		k := r.Comparisons[i].Unit + "\x00" + n
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// cutName shortens name to at most max columns by shortening its longest
// segments first, each to no less than 4 characters ending in "…", so that
// every segment keeps its start ("LinearRec…/fp32/8/65536/complex/fused");
// a name still too long loses its middle.
func cutName(name string, max int) string {
	if width(name) <= max || max < 8 {
		return name
	}
	// A configuration value that is a path keeps its last element:
	// "[pkg=…/kernels]".
	if base, cfg, ok := strings.Cut(name, " ["); ok {
		pairs := strings.Split(strings.TrimSuffix(cfg, "]"), " ")
		for i, p := range pairs {
			if k, v, ok := strings.Cut(p, "="); ok && strings.Contains(v, "/") {
				pairs[i] = k + "=…/" + v[strings.LastIndex(v, "/")+1:]
			}
		}
		name = base + " [" + strings.Join(pairs, " ") + "]"
		if width(name) <= max {
			return name
		}
	}
	segs := strings.Split(name, "/")
	runes := make([][]rune, len(segs))
	for i, s := range segs {
		runes[i] = []rune(s)
	}
	total := width(name)
	for total > max {
		longest := -1
		for i, r := range runes {
			if len(r) > 4 && (longest < 0 || len(r) > len(runes[longest])) {
				longest = i
			}
		}
		if longest < 0 {
			break
		}
		r := runes[longest]
		runes[longest] = append(r[:len(r)-2], '…') // one shorter, ending in …
		total--
	}
	for i, r := range runes {
		segs[i] = string(r)
	}
	out := strings.Join(segs, "/")
	if rs := []rune(out); width(out) > max {
		head := max / 2
		out = string(rs[:head]) + "…" + string(rs[len(rs)-(max-head-1):])
	}
	return out
}

// uniquify numbers the cut names of one table's rows that came out alike,
// or like a name that was not cut ("Attention/…/impl=naive~2"), so that the
// legend maps each to one name.
func uniquify(r *report.Report, rows []int, cut, full []string) {
	count := map[string]int{}
	for _, i := range rows {
		if cut[i] == full[i] {
			count[cut[i]]++
		}
	}
	for _, i := range rows {
		if cut[i] == full[i] {
			continue
		}
		n := cut[i]
		count[n]++
		if count[n] > 1 {
			cut[i] = fmt.Sprintf("%s~%d", n, count[n])
		}
	}
}

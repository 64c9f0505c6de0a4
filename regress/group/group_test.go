package group

import (
	"math"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/parse"
)

func side(t *testing.T, content string) *parse.Side {
	t.Helper()
	s, err := parse.NewReader(strings.NewReader(content)).ReadSide([]string{"-"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPairSplitsOnlyOnKeysThatVaryWithinASide(t *testing.T) {
	base := side(t, `goos: linux
cpu: old cpu
commit: aaa
pkg: a
BenchmarkX-8 1 10 ns/op 5 B/op
commit: bbb
pkg: b
BenchmarkX-8 1 20 ns/op
`)
	cur := side(t, `goos: linux
cpu: new cpu
commit: ccc
pkg: a
BenchmarkX-16 1 11 ns/op
pkg: b
BenchmarkX-16 1 21 ns/op
`)
	g := Pair(base, cur)
	if strings.Join(g.Keys, ",") != "pkg" {
		t.Fatalf("distinguishing keys %v, want [pkg] (commit is a run key, cpu is constant per side, procs constant per side)", g.Keys)
	}
	if len(g.Series) != 3 {
		t.Fatalf("%d series, want X[pkg=a] sec/op, X[pkg=a] B/op, X[pkg=b] sec/op", len(g.Series))
	}
	s := g.Series[0]
	if s.Name != "X" || s.Config["pkg"] != "a" || s.Unit != "sec/op" || len(s.Base) != 1 || len(s.Cur) != 1 || math.Abs(s.Cur[0]-11e-9) > 1e-18 {
		t.Errorf("first series %+v", s)
	}
	if g.Series[1].Unit != "B/op" || len(g.Series[1].Cur) != 0 {
		t.Errorf("B/op series %+v: current side never reported it", g.Series[1])
	}
	if g.BaseConfig["cpu"] != "old cpu" || g.CurConfig["cpu"] != "new cpu" {
		t.Errorf("side configs %v / %v", g.BaseConfig, g.CurConfig)
	}
	if _, ok := g.BaseConfig["commit"]; ok {
		t.Errorf("commit varies within the baseline, so it is no side-wide config: %v", g.BaseConfig)
	}
}

func TestPairSplitsOnGOMAXPROCSSweep(t *testing.T) {
	base := side(t, "BenchmarkX-1 1 10 ns/op\nBenchmarkX-4 1 4 ns/op\n")
	cur := side(t, "BenchmarkX-1 1 10 ns/op\nBenchmarkX-4 1 5 ns/op\n")
	g := Pair(base, cur)
	if len(g.Series) != 2 || g.Series[1].Config[ProcsKey] != "4" {
		t.Fatalf("a -cpu sweep must split by GOMAXPROCS: %+v", g.Series)
	}
}

func TestPairIgnore(t *testing.T) {
	base := side(t, "pkg: a\nBenchmarkX 1 10 ns/op\npkg: b\nBenchmarkX 1 10 ns/op\n")
	g := Pair(base, base, "pkg")
	if len(g.Keys) != 0 || len(g.Series) != 1 || len(g.Series[0].Base) != 2 {
		t.Fatalf("ignored key still splits: %v %+v", g.Keys, g.Series)
	}
}

func TestPairRecordsRounds(t *testing.T) {
	base := side(t, "round: 0\nBenchmarkX-8 1 10 ns/op\nround: 1\nBenchmarkX-8 1 11 ns/op\n")
	cur := side(t, "BenchmarkX-8 1 12 ns/op\nround: 1\nBenchmarkX-8 1 13 ns/op\n")
	g := Pair(base, cur)
	if len(g.Series) != 1 {
		t.Fatalf("%d series, want 1 (round never splits)", len(g.Series))
	}
	s := g.Series[0]
	if len(s.BaseRounds) != 2 || s.BaseRounds[0] != 0 || s.BaseRounds[1] != 1 {
		t.Errorf("BaseRounds = %v, want [0 1]", s.BaseRounds)
	}
	if s.CurRounds != nil {
		t.Errorf("CurRounds = %v, want nil (one sample has no round)", s.CurRounds)
	}
}

// The harness prints a code fingerprint before each GPU benchmark: a changed kernel's fingerprint differs
// between the sides (and, in a file of several benchmarks, within each), and must not split its comparison.
func TestPairNeverSplitsOnCode(t *testing.T) {
	base := side(t, "code: aaaaaaaaaaaa\nBenchmarkX 1 10 ns/op\ncode: bbbbbbbbbbbb\nBenchmarkY 1 10 ns/op\n"+
		"code: aaaaaaaaaaaa\nBenchmarkX 1 11 ns/op\ncode: bbbbbbbbbbbb\nBenchmarkY 1 11 ns/op\n")
	cur := side(t, "code: cccccccccccc\nBenchmarkX 1 12 ns/op\ncode: bbbbbbbbbbbb\nBenchmarkY 1 10 ns/op\n"+
		"code: cccccccccccc\nBenchmarkX 1 12 ns/op\ncode: none\nBenchmarkY 1 10 ns/op\n")
	g := Pair(base, cur)
	if len(g.Keys) != 0 || len(g.Series) != 2 {
		t.Fatalf("keys %v, %d series: want no distinguishing key and X, Y", g.Keys, len(g.Series))
	}
	for _, s := range g.Series {
		if len(s.Base) != 2 || len(s.Cur) != 2 {
			t.Errorf("%s: %d baseline and %d current samples, want 2 and 2", s.Name, len(s.Base), len(s.Cur))
		}
	}
}

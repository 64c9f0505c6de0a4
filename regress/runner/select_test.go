package runner

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestSplitRegexp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][]string
	}{
		{".", [][]string{{"."}}},
		{"A/x=1", [][]string{{"A", "x=1"}}},
		{"A/x=1|B", [][]string{{"A", "x=1"}, {"B"}}},
		{"(A|B)/x", [][]string{{"(A|B)", "x"}}},
		{"[/|]/y", [][]string{{"[/|]", "y"}}},
		{`a\/b/c`, [][]string{{`a\/b`, "c"}}},
		{"/dtype=fp32/", [][]string{{"", "dtype=fp32", ""}}},
	} {
		if got := splitRegexp(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitRegexp(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFilterRestrict(t *testing.T) {
	f, err := ParseFilter("RMS|GELU/impl=fused")
	if err != nil {
		t.Fatal(err)
	}
	if f.Top() != "RMS|GELU" {
		t.Errorf("Top() = %q", f.Top())
	}
	for name, want := range map[string]bool{"BenchmarkRMSNorm": true, "BenchmarkGELU": true, "BenchmarkCopy": false} {
		if f.MatchTop(name) != want {
			t.Errorf("MatchTop(%s) = %v", name, !want)
		}
	}
	got := f.Restrict([]string{"BenchmarkRMSNorm", "BenchmarkGELU", "BenchmarkCopy"})
	want := "^(?:BenchmarkRMSNorm)$|^(?:BenchmarkGELU)$/impl=fused"
	if got != want {
		t.Errorf("Restrict = %q, want %q", got, want)
	}
	if got := f.Restrict([]string{"BenchmarkCopy"}); got != "" {
		t.Errorf("Restrict of unselected = %q, want empty", got)
	}
	// The restricted pattern keeps go test's meaning: its levels compile.
	for _, alt := range splitRegexp(want) {
		for _, l := range alt {
			regexp.MustCompile(l)
		}
	}
	if f, _ := ParseFilter("/dtype=fp32"); f.Top() != "." || !f.MatchTop("BenchmarkX") {
		t.Errorf("an empty top level must select every top-level benchmark: Top() = %q", f.Top())
	}
	all, _ := ParseFilter("")
	if !all.MatchTop("BenchmarkAnything") || all.String() != "." {
		t.Errorf("empty filter should select everything")
	}
	if _, err := ParseFilter("RMS(/x"); err == nil {
		t.Errorf("bad regexp accepted")
	}
}

func TestParseShard(t *testing.T) {
	for _, ok := range []string{"1/1", "1/2", "2/2", "3/7"} {
		if _, err := ParseShard(ok); err != nil {
			t.Errorf("ParseShard(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"3/2", "0/2", "x/y", "1", "1/0", "-1/2", "+1/2", "1/+2", "/2", "1/", ""} {
		if _, err := ParseShard(bad); err == nil || !strings.Contains(err.Error(), "--shard") {
			t.Errorf("ParseShard(%q) = %v, want an error naming --shard", bad, err)
		}
	}
}

// TestShardsPartition checks that the shards of n split any list of names
// into disjoint parts that cover it, the same way every time.
func TestShardsPartition(t *testing.T) {
	var names []string
	for i := 0; i < 200; i++ {
		names = append(names, fmt.Sprintf("BenchmarkK%d", i))
	}
	for n := 1; n <= 5; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			s := Shard{I: i, N: n}
			count := 0
			for _, name := range names {
				if s.Has(name) {
					seen[name]++
					count++
				}
			}
			if n > 1 && (count < 200/n/2 || count > 2*200/n) {
				t.Errorf("shard %s holds %d of 200: unbalanced", s, count)
			}
		}
		for _, name := range names {
			if seen[name] != 1 {
				t.Fatalf("n=%d: %s is in %d shards", n, name, seen[name])
			}
		}
	}
	// Pinned: a shard's contents must not change between releases.
	if !(Shard{I: 1, N: 2}).Has("BenchmarkRMSNorm") && !(Shard{I: 2, N: 2}).Has("BenchmarkRMSNorm") {
		t.Fatal("RMSNorm in no shard")
	}
	var got []int
	for _, name := range []string{"BenchmarkCopy", "BenchmarkRMSNorm", "BenchmarkLayerNorm", "BenchmarkSoftmax", "BenchmarkGELU"} {
		for i := 1; i <= 3; i++ {
			if (Shard{I: i, N: 3}).Has(name) {
				got = append(got, i)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(pinnedShards) {
		t.Errorf("shards of 3 = %v, want %v (the hash changed: stored shard assignments move)", got, pinnedShards)
	}
}

var pinnedShards = []int{2, 1, 1, 2, 2}

func TestDeal(t *testing.T) {
	names := []string{"A", "B", "C", "D", "E"}
	none := func(string) (float64, bool) { return 0, false }
	if got := Deal(names, 2, none); !reflect.DeepEqual(got, map[string]int{"A": 0, "B": 1, "C": 0, "D": 1, "E": 0}) {
		t.Errorf("without weights: %v", got)
	}
	// Heaviest first, each to the lane with the least weight so far.
	w := map[string]float64{"A": 4, "B": 3, "C": 2, "D": 1, "E": 8}
	got := Deal(names, 2, func(n string) (float64, bool) { v, ok := w[n]; return v, ok })
	// E→0 (8); A→1 (4); B→1 (7); C→1 (9); D→0 (9).
	if want := map[string]int{"E": 0, "A": 1, "B": 1, "C": 1, "D": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("weighted: %v, want %v", got, want)
	}
	// A missing weight counts as the mean of the others: Copy(2) Norm(2) Quant(4) X(?=8/3).
	w = map[string]float64{"Copy": 2, "Norm": 2, "Quant": 4}
	got = Deal([]string{"Copy", "Norm", "Quant", "X"}, 2, func(n string) (float64, bool) { v, ok := w[n]; return v, ok })
	// Quant→0 (4); X→1 (2.67); Copy→1 (4.67); Norm→0 (6).
	if want := map[string]int{"Quant": 0, "X": 1, "Copy": 1, "Norm": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("missing weight: %v, want %v", got, want)
	}
	// Every name gets a lane in range.
	got = Deal(names, 3, func(n string) (float64, bool) { return 1, true })
	if len(got) != 5 {
		t.Errorf("3 lanes: %v", got)
	}
	for n, l := range got {
		if l < 0 || l > 2 {
			t.Errorf("%s in lane %d", n, l)
		}
	}
}

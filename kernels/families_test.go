package kernels

import (
	"regexp"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestBenchNames checks the sub-benchmark names of both grids against design §2 and that none repeats.
func TestBenchNames(t *testing.T) {
	re := regexp.MustCompile(`^dtype=(fp32|bf16)/(rows|[a-z]+)=[1-9][0-9]*/(cols|[a-z]+)=[1-9][0-9]*(/[a-z0-9]+=[a-z0-9.]+)*/impl=(fused|naive)$`)
	for kind, grid := range harness.Grids {
		for _, f := range Families {
			seen := map[string]bool{}
			for _, c := range f.CasesOn(kind, grid) {
				for _, impl := range Impls {
					name := f.BenchName(c, impl)
					if !re.MatchString(name) || seen[name] {
						t.Errorf("%s grid: Benchmark%s/%s: malformed or repeated", kind, f.Name, name)
					}
					seen[name] = true
				}
			}
			if len(seen) == 0 {
				t.Errorf("%s grid: %s has no cases", kind, f.Name)
			}
		}
	}
	if got := RoPEFamily.BenchName(Case{DType: BF16, Shape: Shape{Rows: 8, Cols: 4096}}, Naive); got != "dtype=bf16/rows=8/cols=4096/heads=32/impl=naive" {
		t.Errorf("RoPE name %s", got)
	}
	seq := &Family{Name: "Seq", DimKeys: []string{"batch", "t"}, Grid: map[string][][]int{"cuda": {{2, 7}}}}
	cs := seq.CasesOn("cuda", harness.Grids["cuda"])
	if len(cs) != 2 || seq.BenchName(cs[1], Fused) != "dtype=bf16/batch=2/t=7/impl=fused" || len(seq.CasesOn("cpu", harness.Grids["cpu"])) != 0 {
		t.Errorf("a family with its own shapes: cases %v", cs)
	}
	if got := FP8QuantFamily.BenchName(Case{DType: FP32, Shape: Shape{Rows: 2, Cols: 256}, Variant: "block128"}, Fused); got != "dtype=fp32/rows=2/cols=256/scale=block128/impl=fused" {
		t.Errorf("FP8 name %s", got)
	}
}

// TestFamilyGrids checks the families that declare their own shapes: for each device kind and the tests, one
// size per name key.
func TestFamilyGrids(t *testing.T) {
	for _, f := range Families {
		if f.Grid == nil {
			continue
		}
		for _, kind := range []string{"cpu", "cuda", "test"} {
			if len(f.Grid[kind]) == 0 {
				t.Errorf("%s: no %s shapes", f.Name, kind)
			}
			for _, d := range f.Grid[kind] {
				if len(d) != len(f.DimKeys) {
					t.Errorf("%s: %s shape %v for keys %v", f.Name, kind, d, f.DimKeys)
				}
			}
		}
	}
}

func TestMinBytes(t *testing.T) {
	for _, tc := range []struct {
		f    *Family
		c    Case
		want int64
	}{
		{RMSNormFamily, Case{DType: BF16, Shape: Shape{Rows: 4, Cols: 300}}, 1200*2 + 300*2 + 1200*2},
		{SwiGLUFamily, Case{DType: FP32, Shape: Shape{Rows: 2, Cols: 10}}, 40*4 + 20*4},
		{RoPEFamily, Case{DType: BF16, Shape: Shape{Rows: 3, Cols: 256}}, 2*768*2 + 2*3*64*4 + 2*768*2},
		{CrossEntropyFamily, Case{DType: BF16, Shape: Shape{Rows: 2, Cols: 100}}, 200*2 + 2*4 + 2*4 + 200*2},
		{FP8QuantFamily, Case{DType: FP32, Shape: Shape{Rows: 2, Cols: 300}, Variant: "block128"}, 600*4 + 600 + 2*3*4},
		{FP8QuantFamily, Case{DType: BF16, Shape: Shape{Rows: 2, Cols: 300}, Variant: "row"}, 600*2 + 600 + 2*4},
	} {
		if got := tc.f.MinBytes(tc.c); got != tc.want {
			t.Errorf("%s %s: MinBytes %d, want %d", tc.f.Name, tc.f.BenchName(tc.c, Fused), got, tc.want)
		}
	}
}

// TestAttentionHot checks the attention family's own hot-ns rule: the short sequences get the hot figure
// whatever their time in a process, the long ones never.
func TestAttentionHot(t *testing.T) {
	if short, long := (Case{Dims: []int{32, 4, 60, 64}}), (Case{Dims: []int{1, 32, 4096, 128}}); !AttentionFamily.Hot(short) || AttentionFamily.Hot(long) {
		t.Errorf("AttentionFamily.Hot: short %v, long %v; want true, false", AttentionFamily.Hot(short), AttentionFamily.Hot(long))
	}
}

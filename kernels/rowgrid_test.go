package kernels

import (
	"strings"
	"testing"
)

// rowGridWinsOf is each row family's grid wins function (where it chooses row_grid; none for CrossEntropy and
// FP8Quant).
var rowGridWinsOf = map[*Family]func(Case) bool{RMSNormFamily: rmsNormGridWins, LayerNormFamily: layerNormGridWins,
	SoftmaxFamily: softmaxGridWins}

// gridPlanOf is family f's row_grid plan for case c on compute capability cc with 132 multiprocessors, and whether
// the family chooses it there (rowGridOn, its wins function, a plan the GPU runs).
func gridPlanOf(f *Family, c Case, cc int) (rowPlan, bool) {
	wins := rowGridWinsOf[f]
	if !rowGridOn || wins == nil || !wins(c) {
		return rowPlan{}, false
	}
	return rowGridPlan(c, cc, 132)
}

// TestRowGridChoice checks where row_grid is chosen: never when switched off, never before sm_90, and on sm_90 for
// exactly the cases of the CUDA grid and the correctness shapes its wins functions name, with rowGridPlan's plan:
// six cases of the grid (Softmax fp32 65536 and 262144 and bf16 262144, LayerNorm fp32 65536 and 262144, RMSNorm
// bf16 262144).
func TestRowGridChoice(t *testing.T) {
	testPlanChoice(t, "row_grid", &rowGridOn, rowGridPending, rowGrid, gridPlanOf, 6)
}

// TestRowGridPlan checks rowGridPlan's groups (the most whose blocks' 32 KiB slices cover a row, on 132
// multiprocessors) and rowGridCheck's refusals, each naming what is wrong.
func TestRowGridPlan(t *testing.T) {
	for _, tc := range []struct {
		dt     DType
		cols   int
		groups int
	}{
		{FP32, 262144, 4}, {FP32, 65536, 16}, {FP32, 16384, 66}, {BF16, 262144, 8}, {BF16, 65536, 33},
		{BF16, 20008, 66}, {FP32, 4096, 132},
	} {
		c := Case{DType: tc.dt, Shape: Shape{Rows: 1024, Cols: tc.cols}}
		p, ok := rowGridPlan(c, 90, 132)
		if !ok || p.groups != tc.groups || p.threads != rowGridThreads || p.nv != rowGridPacks || p.ring != rowGridRing ||
			p.lag != rowGridLag || !p.vec {
			t.Errorf("%v %d columns: %v (%v), want %d groups", tc.dt, tc.cols, p, ok, tc.groups)
		}
		if blocks, per := rowGridBlocks(p, 132); blocks != per*p.groups || per*p.groups > 132 || (per+1)*p.groups <= 132 {
			t.Errorf("%v %d columns: %d blocks, %d a group", tc.dt, tc.cols, blocks, per)
		}
	}
	c := Case{DType: FP32, Shape: Shape{Rows: 1024, Cols: 262144}}
	def, _ := rowGridPlan(c, 90, 132)
	if k, s := softmaxRows.kernel(def, FP32), def.String(); k != "softmax_grid_f32_v" || s != "grid v 4 groups ×512 r7 l3" {
		t.Errorf("kernel %q, plan %q", k, s)
	}
	if _, ok := rowGridPlan(c, 80, 132); ok {
		t.Error("a row_grid plan on sm_80")
	}
	if _, ok := rowGridPlan(Case{DType: FP32, Shape: Shape{Rows: 1, Cols: 262143}}, 90, 132); ok {
		t.Error("a row_grid plan for an odd width")
	}
	if _, ok := rowGridPlan(c, 90, 16); ok {
		t.Error("a row_grid plan for 1 MiB rows on 16 multiprocessors (32 blocks a row needed)")
	}
	for _, tc := range []struct {
		edit func(*rowPlan)
		cc   int
		want string
	}{
		{func(p *rowPlan) {}, 80, "compute capability"},
		{func(p *rowPlan) { p.vec = false }, 90, "16-byte"},
		{func(p *rowPlan) { p.threads = 256 }, 90, "built for blocks of 512"},
		{func(p *rowPlan) { p.lag = 2 }, 90, "lag of at least 3"},
		{func(p *rowPlan) { p.ring = 5 }, 90, "ring of at least lag + 3"},
		{func(p *rowPlan) { p.ring = 8 }, 90, "ring of at least lag + 3"}, // 8 × 32 KiB > 224 KiB
		{func(p *rowPlan) { p.groups = 200 }, 90, "groups of the 132 blocks"},
		{func(p *rowPlan) { p.groups = 1 }, 90, "groups of 132 blocks (at most 64 in fp32)"},
		{func(p *rowPlan) { p.groups = 5 }, 90, "do not cover 262144 columns"},
	} {
		p := def
		tc.edit(&p)
		if got := rowGridCheck(p, c, tc.cc, 132); !strings.Contains(got, tc.want) {
			t.Errorf("plan %v cc=%d: %q, want it to say %q", p, tc.cc, got, tc.want)
		}
	}
	if got := rowGridCheck(def, c, 90, 132); got != "" {
		t.Errorf("the default plan: %q", got)
	}
	// bf16 kernels merge at most 32 partials a row: 4 groups of 33 blocks is fp32's default, too many in bf16.
	bf := Case{DType: BF16, Shape: c.Shape}
	if got := rowGridCheck(def, bf, 90, 132); !strings.Contains(got, "groups of 33 blocks (at most 32 in bf16)") {
		t.Errorf("plan %v in bf16: %q", def, got)
	}
	if p, ok := rowGridPlan(bf, 90, 132); !ok || p.groups != 8 {
		t.Errorf("bf16 1024×262144: plan %v, %v; want 8 groups of 16", p, ok)
	}
}

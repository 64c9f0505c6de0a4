package kernels

import (
	"regexp"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestRowResKernels checks the row_res plans against the kernels built for them: every configuration of
// rowResBuiltFor a family (rowResBuilt for rmsnorm_sm90 and layernorm_sm90, rowResPlain for softmax_sm90) is an
// entry of its module in both dtypes, named as rowFamily.kernel names it, and those are all the row_res entries
// there are (none in any other module); and rowResCheck refuses what the kernels cannot run.
func TestRowResKernels(t *testing.T) {
	entry := regexp.MustCompile(`\.entry ([a-z0-9_]+_res_[a-z0-9_]+)\(`)
	for _, m := range rowModules {
		for _, suffix := range []string{"", "_sm90"} {
			got := map[string]bool{}
			for _, e := range entry.FindAllStringSubmatch(readPTX(t, m.module+suffix), -1) {
				got[e[1]] = true
			}
			want := map[string]bool{}
			if suffix == "_sm90" {
				for _, dt := range StorageDTypes {
					for _, p := range rowResBuiltFor(m.rows) {
						p.kind, p.vec = rowRes, true
						want[m.rows.kernel(p, dt)] = true
					}
				}
			}
			for name := range want {
				if !got[name] {
					t.Errorf("%s is not in cuda/ptx/%s%s.ptx", name, m.module, suffix)
				}
			}
			for name := range got {
				if !want[name] {
					t.Errorf("cuda/ptx/%s%s.ptx has %s, which no row_res plan names", m.module, suffix, name)
				}
			}
		}
	}

	res := func(nv, threads, group, mode int, ahead bool) rowPlan {
		return rowPlan{kind: rowRes, vec: true, nv: nv, threads: threads, group: group, mode: mode, ahead: ahead}
	}
	shared := func(nv, threads, group, mode int) rowPlan {
		p := res(nv, threads, group, mode, true)
		p.shared = true
		return p
	}
	bf16 := func(cols int) Case { return Case{DType: BF16, Shape: Shape{Rows: 4096, Cols: cols}} }
	fp32 := func(cols int) Case { return Case{DType: FP32, Shape: Shape{Rows: 4096, Cols: cols}} }
	for _, bad := range []struct {
		rf *rowFamily
		p  rowPlan
		c  Case
		cc int
	}{
		{softmaxRows, res(8, 1024, 1, rowResShared, false), bf16(65536), 90},                  // no column data
		{crossEntropyRows, shared(16, 512, 1, rowResGlobal), bf16(65536), 90},                 // not built at all
		{softmaxRows, shared(8, 512, 1, rowResGlobal), fp32(16384), 90},                       // built with columns only
		{layerNormRows, shared(8, 512, 1, rowResGlobal), fp32(65536), 90},                     // wider than the team
		{rmsNormRows, res(8, 1024, 1, rowResShared, true), bf16(65536), 90},                   // not built
		{rmsNormRows, res(8, 1024, 1, rowResShared, false), bf16(65536), 80},                  // no sm_90
		{rmsNormRows, res(8, 1024, 1, rowResShared, false), bf16(65532), 90},                  // no 16-byte packs
		{rmsNormRows, res(8, 1024, 1, rowResShared, false), bf16(65544), 90},                  // wider than the team
		{layerNormRows, res(8, 1024, 1, rowResShared, false), fp32(32768), 90},                // 256 KiB of w and b
		{rmsNormRows, rowPlan{kind: rowRes, nv: 8, threads: 1024, group: 1}, bf16(65536), 90}, // single elements
	} {
		if why := rowResCheck(bad.rf, bad.p, bad.c, bad.cc); why == "" {
			t.Errorf("%s %v %v cc %d: accepted", bad.rf.prefix, bad.p, bad.c.Shape, bad.cc)
		}
	}
	if bad := res(8, 1024, 1, 7, false); rowResCheck(rmsNormRows, bad, bf16(65536), 90) == "" || bad.String() != "res v8 1×1024 mode 7" {
		t.Errorf("a plan of no built mode: %q, %q", rowResCheck(rmsNormRows, bad, bf16(65536), 90), bad.String())
	}
	if why := rowResCheck(layerNormRows, res(8, 1024, 1, rowResShared, false), fp32(16384), 90); why != "" {
		t.Errorf("LayerNorm fp32 16384 in 1024 threads, w and b shared (128 KiB): %s", why)
	}
	if got, want := rowResSmem(layerNormRows, res(4, 512, 1, rowResShared, true), bf16(16384)), 4*2*512*16; got != want {
		t.Errorf("LayerNorm bf16 16384 in 512 threads: %d B of shared memory, want %d", got, want)
	}
	// The next row in shared memory: nv packs of each thread of each team, after all nv of the column data's.
	for _, w := range []struct {
		rf   *rowFamily
		p    rowPlan
		c    Case
		want int
		name string
	}{
		{softmaxRows, shared(16, 512, 1, rowResGlobal), bf16(65536), 16 * 512 * 16, "softmax_res_bf16_v16t512g1m0s"},
		{layerNormRows, shared(8, 1024, 1, rowResGlobal), bf16(65536), 8 * 1024 * 16, "layernorm_res_bf16_v8t1024g1m0s"},
		{layerNormRows, shared(4, 128, 4, rowResShared), bf16(4096), (4*2 + 4*4) * 128 * 16, "layernorm_res_bf16_v4t128g4m1s"},
		{layerNormRows, shared(4, 128, 4, rowResShared), bf16(2048), (4*2 + 4*4) * 128 * 16, "layernorm_res_bf16_v4t128g4m1s"},
		{rmsNormRows, shared(4, 512, 1, rowResShared), fp32(8192), (4*1 + 4) * 512 * 16, "rmsnorm_res_f32_v4t512g1m1s"},
	} {
		if why := rowResCheck(w.rf, w.p, w.c, 90); why != "" {
			t.Errorf("%s %v %v: %s", w.rf.prefix, w.p, w.c.Shape, why)
		}
		if got := rowResSmem(w.rf, w.p, w.c); got != w.want {
			t.Errorf("%s %v %v: %d B of shared memory, want %d", w.rf.prefix, w.p, w.c.Shape, got, w.want)
		}
		if got := w.rf.kernel(w.p, w.c.DType); got != w.name {
			t.Errorf("%s %v: kernel %s, want %s", w.rf.prefix, w.p, got, w.name)
		}
	}
	if got, want := shared(8, 1024, 1, rowResGlobal).String(), "res v8 1×1024 global ahead shared"; got != want {
		t.Errorf("String: %q, want %q", got, want)
	}
	if got := rowResSmem(rmsNormRows, res(8, 512, 1, rowResRegisters, false), fp32(16384)); got != 0 {
		t.Errorf("column data in registers: %d B of shared memory, want 0", got)
	}
	// A row narrower than the team: each thread stages only the packs it holds.
	if got, want := rowResSmem(rmsNormRows, res(8, 1024, 1, rowResShared, false), fp32(4100)), 2*1*1024*16; got != want {
		t.Errorf("RMSNorm fp32 4100 in 1024 threads: %d B, want %d", got, want)
	}
	for _, w := range []struct {
		plan func(Case, int) (rowPlan, bool)
		c    Case
		want bool
	}{
		{rmsNormRes, bf16(65536), true}, {rmsNormRes, fp32(16384), true}, {rmsNormRes, fp32(65536), false},
		{rmsNormRes, bf16(16384), false}, {rmsNormRes, bf16(65544), false}, {layerNormRes, bf16(16384), false},
		{layerNormRes, bf16(65536), true}, {layerNormRes, fp32(16384), true}, {layerNormRes, bf16(4096), false},
		{layerNormRes, fp32(65536), false},
	} {
		if p, ok := w.plan(w.c, 90); ok != w.want {
			t.Errorf("%v %v: row_res %v (%v), want %v", w.c.DType, w.c.Shape, ok, p, w.want)
		}
		if _, ok := w.plan(w.c, 80); ok {
			t.Errorf("%v %v on sm_80: row_res chosen", w.c.DType, w.c.Shape)
		}
	}
}

// resPlanOf is family f's row_res plan of case c, where it chooses one (rowResOn).
func resPlanOf(f *Family, c Case, cc int) (rowPlan, bool) {
	own := map[*Family]func(Case, int) (rowPlan, bool){RMSNormFamily: rmsNormRes, LayerNormFamily: layerNormRes}[f]
	if own == nil || !rowResOn {
		return rowPlan{}, false
	}
	return own(c, cc)
}

// TestRowResChoice checks where row_res is chosen: never when switched off (as while rowResPending), never before
// sm_90, and on sm_90 for exactly the cases of the CUDA grid and the correctness shapes where the family's row_res
// function gives a plan, that plan.
func TestRowResChoice(t *testing.T) {
	testPlanChoice(t, "row_res", &rowResOn, rowResPending, rowRes, resPlanOf, 4)
}

// testPlanChoice checks where the plans of kind, switched by *on (pending says why off), are chosen: *on as pending
// says (unless -kernels.pending), never when switched off or before sm_90, and on sm_90 for exactly the cases of
// the CUDA grid and the correctness shapes where planOf gives a plan, that plan: want cases in all.
func testPlanChoice(t *testing.T, name string, on *bool, pending string, kind rowKind,
	planOf func(*Family, Case, int) (rowPlan, bool), want int) {
	t.Helper()
	if *on != (pending == "") && !harness.RunPending() {
		t.Errorf("%s on = %v with pending %q", name, *on, pending)
	}
	defer func(was, xa bool) { *on, rowXAOn = was, xa }(*on, rowXAOn)
	rowXAOn = false // the _x_sm90a clusters come after every other choice (withRowXA); TestRowXAChoice checks them
	chosen := 0
	for _, o := range []bool{false, true} {
		*on = o
		eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
			wantP, ok := planOf(f, c, cc)
			if ok && cc < 90 {
				t.Errorf("%s %s: %s on sm_%d", f.Name, f.BenchName(c, Fused), name, cc)
			}
			if (p.kind == kind) != ok || ok && p != wantP {
				t.Errorf("%s %s cc=%d %s on=%v: chose %v, want %v (%v)", f.Name, f.BenchName(c, Fused), cc, name, o, p, wantP, ok)
			}
			if p.kind == kind {
				chosen++
			}
		})
	}
	if chosen != want {
		t.Errorf("%s was chosen for %d cases of the grid and the correctness shapes, want %d", name, chosen, want)
	}
}

// TestRowXAResKernels checks the row_res_cluster plans (rowXARes) against the kernels built for them: in each row
// family's _x_sm90a module, the families with them (xaRes) have one entry a built cluster size and dtype, named
// as rowFamily.kernel names it, the others none; and that rowXARes takes the smallest cluster that holds the row,
// refusing rows no cluster holds, widths without 16-byte packs and other compute capabilities than 9.0.
func TestRowXAResKernels(t *testing.T) {
	entry := regexp.MustCompile(`\.entry ([a-z0-9_]+_resc_[a-z0-9_]+)\(`)
	for _, m := range rowModules {
		got := map[string]bool{}
		for _, e := range entry.FindAllStringSubmatch(readPTX(t, m.module+"_x_sm90a"), -1) {
			got[e[1]] = true
		}
		want := map[string]bool{}
		if m.rows.hasXARes() {
			for _, dt := range StorageDTypes {
				for _, cs := range rowXAResClusters {
					p := rowXAResPlan(cs)
					if why := rowXAResCheck(m.rows, p, Case{DType: dt, Shape: Shape{Rows: 8, Cols: 4096}}, 90); why != "" {
						t.Errorf("%s %v: %s", m.module, p, why)
					}
					want[m.rows.kernel(p, dt)] = true
				}
			}
		}
		for name := range want {
			if !got[name] {
				t.Errorf("%s is not in cuda/ptx/%s_x_sm90a.ptx", name, m.module)
			}
		}
		for name := range got {
			if !want[name] {
				t.Errorf("cuda/ptx/%s_x_sm90a.ptx has %s, which no row_res_cluster plan names", m.module, name)
			}
		}
	}
	for _, m := range rowModules {
		if m.rows.hasXARes() && m.rows.columns == 0 {
			t.Errorf("%s: row_res_cluster kernels stage column data, and the family has none", m.module)
		}
	}
	if softmaxRows.hasXARes() || crossEntropyRows.hasXARes() || fp8QuantRows.hasXARes() {
		t.Error("only RMSNorm and LayerNorm have row_res_cluster kernels")
	}
	for _, w := range []struct {
		dt      DType
		cols    int
		cluster int // 0: none
	}{
		{BF16, 65536, 2}, {FP32, 65536, 4}, {BF16, 262144, 8}, {FP32, 262144, 16}, {BF16, 131080, 8}, {FP32, 131080, 16},
		{FP32, 4096, 2}, {FP32, 262148, 0}, {BF16, 524288, 16}, {BF16, 524296, 0}, {FP32, 65537, 0},
	} {
		c := Case{DType: w.dt, Shape: Shape{Rows: 1024, Cols: w.cols}}
		for _, rf := range []*rowFamily{rmsNormRows, layerNormRows} {
			p, ok := rowXARes(rf, c, 90)
			if ok != (w.cluster > 0) || ok && p.cluster != w.cluster {
				t.Errorf("%s %v %d: %v %v, want a cluster of %d", rf.prefix, w.dt, w.cols, p, ok, w.cluster)
			}
			if _, ok := rowXARes(rf, c, 100); ok {
				t.Errorf("%s %v %d: a plan on compute capability 10.0", rf.prefix, w.dt, w.cols)
			}
		}
		for _, rf := range []*rowFamily{softmaxRows, crossEntropyRows, fp8QuantRows} {
			if _, ok := rowXARes(rf, c, 90); ok {
				t.Errorf("%s %v %d: a row_res_cluster plan", rf.prefix, w.dt, w.cols)
			}
		}
	}
	// LayerNorm's w and b of a block's slice in 16 blocks of fp32 1 MiB rows: 8 packs × 2 × 512 threads × 16 B.
	p, _ := rowXARes(layerNormRows, Case{DType: FP32, Shape: Shape{Rows: 1, Cols: 262144}}, 90)
	if got := rowResSmem(layerNormRows, p, Case{DType: FP32, Shape: Shape{Rows: 1, Cols: 262144}}); got != 128<<10 {
		t.Errorf("LayerNorm fp32 262144 %v: %d B of shared memory, want %d", p, got, 128<<10)
	}
}

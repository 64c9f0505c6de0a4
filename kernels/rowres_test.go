package kernels

import (
	"os"
	"regexp"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestRowResKernels checks the row_res plans against the kernels built for them: every configuration of
// rowResBuilt is an entry of rmsnorm_sm90 and layernorm_sm90 in both dtypes, named as rowFamily.kernel names it,
// and those are all the row_res entries there are (none in any other module); and rowResCheck refuses what the
// kernels cannot run.
func TestRowResKernels(t *testing.T) {
	entry := regexp.MustCompile(`\.entry ([a-z0-9_]+_res_[a-z0-9_]+)\(`)
	for _, m := range []struct {
		module string
		rows   *rowFamily
	}{{"rmsnorm", rmsNormRows}, {"layernorm", layerNormRows}, {"softmax", softmaxRows}, {"crossentropy", crossEntropyRows},
		{"fp8quant", fp8QuantRows}} {
		for _, suffix := range []string{"", "_sm90"} {
			b, err := os.ReadFile("cuda/ptx/" + m.module + suffix + ".ptx")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, e := range entry.FindAllStringSubmatch(string(b), -1) {
				got[e[1]] = true
			}
			want := map[string]bool{}
			if suffix == "_sm90" && m.rows.columns > 0 {
				for _, dt := range StorageDTypes {
					for _, p := range rowResBuilt {
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
	bf16 := func(cols int) Case { return Case{DType: BF16, Shape: Shape{Rows: 4096, Cols: cols}} }
	fp32 := func(cols int) Case { return Case{DType: FP32, Shape: Shape{Rows: 4096, Cols: cols}} }
	for _, bad := range []struct {
		rf *rowFamily
		p  rowPlan
		c  Case
		cc int
	}{
		{softmaxRows, res(8, 1024, 1, rowResShared, false), bf16(65536), 90},                  // no column data
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
		{rmsNormRes, bf16(16384), false}, {rmsNormRes, bf16(65544), false}, {layerNormRes, bf16(16384), true},
		{layerNormRes, bf16(65536), true}, {layerNormRes, fp32(16384), false}, {layerNormRes, bf16(4096), false},
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
	if rowResOn != (rowResPending == "") && !harness.RunPending() {
		t.Errorf("rowResOn = %v with rowResPending %q", rowResOn, rowResPending)
	}
	defer func(on bool) { rowResOn = on }(rowResOn)
	chosen := 0
	for _, on := range []bool{false, true} {
		rowResOn = on
		eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
			want, ok := resPlanOf(f, c, cc)
			if ok && cc < 90 {
				t.Errorf("%s %s: row_res on sm_%d", f.Name, f.BenchName(c, Fused), cc)
			}
			if (p.kind == rowRes) != ok || ok && p != want {
				t.Errorf("%s %s cc=%d res on=%v: chose %v, want %v (%v)", f.Name, f.BenchName(c, Fused), cc, on, p, want, ok)
			}
			if p.kind == rowRes {
				chosen++
			}
		})
	}
	if chosen != 4 {
		t.Errorf("row_res was chosen for %d cases of the grid and the correctness shapes, want 4", chosen)
	}
}

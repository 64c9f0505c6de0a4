package kernels

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var updateRowPlans = flag.Bool("kernels.update-rowplans", false, "rewrite testdata/rowplans.golden from the row plan choosers")

// rowPlanChoices lists, one line per case, the fused kernel, block size and cluster each row family's plan chooser
// picks on an sm_80 GPU with 108 multiprocessors and an sm_90 one with 132, over the suite's CUDA grid and the
// correctness tests' shapes.
func rowPlanChoices() string {
	pick := func(rf *rowFamily, plan func(c Case, cc, sms int) rowPlan, c Case, cc, sms int) string {
		p := plan(c, cc, sms)
		if p.kind == rowGrid {
			return fmt.Sprintf("%s t=%d g=%d r=%d l=%d", rf.kernel(p, c.DType), p.threads, p.groups, p.ring, p.lag)
		}
		if p.cluster > 0 && p.xa {
			return fmt.Sprintf("%s t=%d c=%d xa", rf.kernel(p, c.DType), p.threads, p.cluster)
		}
		if p.cluster > 0 {
			return fmt.Sprintf("%s t=%d c=%d", rf.kernel(p, c.DType), p.threads, p.cluster)
		}
		return fmt.Sprintf("%s t=%d", rf.kernel(p, c.DType), p.threads)
	}
	choosers := []struct {
		f    *Family
		rows *rowFamily
		plan *func(c Case, cc, sms int) rowPlan
	}{
		{RMSNormFamily, rmsNormRows, &rmsNormPlanFor},
		{LayerNormFamily, layerNormRows, &layerNormPlanFor},
		{SoftmaxFamily, softmaxRows, &softmaxPlanFor},
		{CrossEntropyFamily, crossEntropyRows, &crossEntropyPlanFor},
		{FP8QuantFamily, fp8QuantRows, &fp8QuantPlanFor},
	}
	var b strings.Builder
	for _, gpu := range []struct{ cc, sms int }{{80, 108}, {90, 132}} {
		for _, ch := range choosers {
			cases := append(ch.f.CasesOn("cuda", harness.Grids["cuda"]), ch.f.CasesOn("test", testShapes)...)
			for _, c := range cases {
				if c.Variant == "block128" {
					continue // FP8Quant's per-block scales have no row plan
				}
				fmt.Fprintf(&b, "cc=%d %s %s %s\n", gpu.cc, ch.f.Name, ch.f.BenchName(c, Fused), pick(ch.rows, *ch.plan, c, gpu.cc, gpu.sms))
			}
		}
	}
	return b.String()
}

// TestRowPlanChoices pins the plans the row families choose today for every case of the CUDA grid and of the
// correctness tests, on sm_80 and sm_90: a change to the plan code that changes a GPU-verified choice fails here
// (go test ./kernels/ -run TestRowPlanChoices -kernels.update-rowplans rewrites the file when a choice is meant
// to change, with the GPU measurement that says why).
func TestRowPlanChoices(t *testing.T) {
	const golden = "testdata/rowplans.golden"
	got := rowPlanChoices()
	if *updateRowPlans {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./kernels/ -run TestRowPlanChoices -kernels.update-rowplans writes it)", err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%s has %d lines, the choosers give %d", golden, len(wl), len(gl))
	}
	bad := 0
	for i := range wl {
		if wl[i] != gl[i] {
			if bad++; bad <= 10 {
				t.Errorf("%s:%d: pinned %q, chosen %q", golden, i+1, wl[i], gl[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("… %d choices differ in all", bad)
	}
}

// TestRowDSMEMChoice checks where row_dsmem is chosen: never when switched off, never before sm_90, and on sm_90
// for exactly the cases of the CUDA grid and the correctness shapes where the family measured it fastest (its
// *DSMEMWins), with a cluster of 2–16 blocks whose slices cover the row and fit the shared memory limit.
func TestRowDSMEMChoice(t *testing.T) {
	defer func(on, xa bool) { rowDSMEMOn, rowXAOn = on, xa }(rowDSMEMOn, rowXAOn)
	rowXAOn = false // the _x_sm90a clusters come after every other choice (withRowXA); TestRowXAChoice checks them
	wins := map[*Family]func(Case) bool{RMSNormFamily: rmsNormDSMEMWins, SoftmaxFamily: softmaxDSMEMWins,
		CrossEntropyFamily: crossEntropyDSMEMWins}
	chosen := 0
	for _, on := range []bool{false, true} {
		rowDSMEMOn = on
		eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
			w := wins[f]
			vec, _, _ := rowAccess(c)
			_, own := ringPlanOf(f, c, cc)
			ring := rowRingOn && cc >= 90 && vec && (rowRingWinsOf[f](c) || own) // row_ring, where chosen, comes first
			if want := on && cc >= 90 && w != nil && w(c) && !ring; (p.kind == rowDSMEM) != want {
				t.Errorf("%s %s cc=%d dsmem on=%v: chose %v", f.Name, f.BenchName(c, Fused), cc, on, p)
				return
			}
			if p.kind != rowDSMEM {
				return
			}
			chosen++
			slice := rowDSMEMBytes(p, c)
			if p.cluster < 2 || p.cluster > rowDSMEMMaxBlocks || p.cluster&(p.cluster-1) != 0 ||
				p.cluster*slice < c.Cols*c.DType.Size() || slice > rowDSMEMMaxSlice ||
				p.threads < 128 || p.threads > 1024 || p.vec != (c.Cols%(16/c.DType.Size()) == 0) {
				t.Errorf("%s %s: %v with %d B slices", f.Name, f.BenchName(c, Fused), p, slice)
			}
		})
	}
	if chosen == 0 {
		t.Error("row_dsmem was never chosen")
	}
}

// TestRowRingPlan checks the row_ring plan arithmetic: rowRingPlan's cluster is the fewest blocks (a power of two)
// whose slices are at most rowRingSlice bytes and its ring one row's slice; rowRingShape adds chunks and refuses
// what the kernels cannot run (no clusters, over 16 blocks, blocks of more than 256 threads, a ring over the
// shared memory limit); every family's _sm90 module has the kernels
// rowFamily.kernel names; and testRowRingChoice.
func TestRowRingPlan(t *testing.T) {
	for _, tc := range []struct {
		c              Case
		cs, ring, smem int
	}{
		// fp32 65536: 256 KiB a row, slices of 64 KiB in 4 blocks = 4 chunks of 16 KiB (256 threads × 4 packs).
		{Case{DType: FP32, Shape: Shape{Rows: 4096, Cols: 65536}}, 4, 4, 64 << 10},
		// fp32 262144: 1 MiB, 16 slices of 64 KiB.
		{Case{DType: FP32, Shape: Shape{Rows: 1024, Cols: 262144}}, 16, 4, 64 << 10},
		// bf16 262144: 512 KiB, 8 slices of 64 KiB.
		{Case{DType: BF16, Shape: Shape{Rows: 1024, Cols: 262144}}, 8, 4, 64 << 10},
		// fp32 16384: 64 KiB, one block (no cluster) a row.
		{Case{DType: FP32, Shape: Shape{Rows: 8192, Cols: 16384}}, 1, 4, 64 << 10},
		// fp32 4096: 16 KiB, one chunk.
		{Case{DType: FP32, Shape: Shape{Rows: 8192, Cols: 4096}}, 1, 1, 16 << 10},
		// bf16 4097: single elements, 8 a thread a chunk (4 KiB chunks of 256 threads × 8 × 2 B), 3 a row.
		{Case{DType: BF16, Shape: Shape{Rows: 8, Cols: 4097}}, 1, 3, 12 << 10},
	} {
		p, ok := rowRingPlan(tc.c, 90)
		if !ok || p.kind != rowRing || p.cluster != tc.cs || p.ring != tc.ring || rowRingSmem(p, tc.c) != tc.smem ||
			p.threads != rowRingThreads || p.vec != (tc.c.Cols%(16/tc.c.DType.Size()) == 0) {
			t.Errorf("%v: rowRingPlan = %v (ok %v), %d B; want %d blocks, %d chunks, %d B", tc.c.Shape, p, ok,
				rowRingSmem(p, tc.c), tc.cs, tc.ring, tc.smem)
		}
		if _, ok := rowRingPlan(tc.c, 80); ok {
			t.Errorf("%v: a row_ring plan on sm_80", tc.c.Shape)
		}
	}
	c := Case{DType: FP32, Shape: Shape{Rows: 4, Cols: 65536}}
	// Two blocks of 128 threads: 128 KiB slices in 8 KiB chunks, 16 a row, and 2 more.
	if p, ok := rowRingShape(c, 90, 2, 128, 2, 1); !ok || p.ring != 18 || rowRingSmem(p, c) != 144<<10 || rowRingRowChunks(p, c) != 16 {
		t.Errorf("2 × 128 +2: %v (ok %v), want 18 chunks of 8 KiB, 16 a row", p, ok)
	}
	for _, bad := range []struct {
		c                  Case
		cs, threads, extra int
	}{
		{c, 1, 256, 0},  // a 256 KiB slice
		{c, 32, 256, 0}, // more than 16 blocks
		{c, 4, 512, 0},  // more than 256 threads
		{c, 4, 100, 0},  // not whole warps
		{c, 0, 256, 0},  // no blocks
		{c, 2, 256, 7},  // 128 KiB + 7 × 16 KiB
		{c, 4, 256, -1}, // less than a slice
		{Case{DType: FP32, Shape: Shape{Rows: 1, Cols: 16 * 60000}}, 16, 256, 0}, // 240 KiB slices
	} {
		if p, ok := rowRingShape(bad.c, 90, bad.cs, bad.threads, bad.extra, 1); ok {
			t.Errorf("%v in %d × %d +%d: %v, want none", bad.c.Shape, bad.cs, bad.threads, bad.extra, p)
		}
	}
	if _, ok := rowRingPlan(Case{DType: FP32, Shape: Shape{Rows: 1, Cols: 16 * 60000}}, 90); ok {
		t.Error("rowRingPlan took a row wider than 16 rings")
	}
	for _, rf := range []struct {
		rows   *rowFamily
		module string
	}{{rmsNormRows, "rmsnorm"}, {layerNormRows, "layernorm"}, {softmaxRows, "softmax"}, {crossEntropyRows, "crossentropy"},
		{fp8QuantRows, "fp8quant"}} {
		ptx, err := os.ReadFile("cuda/ptx/" + rf.module + "_sm90.ptx")
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range StorageDTypes {
			for _, vec := range []bool{true, false} {
				if name := rf.rows.kernel(rowPlan{kind: rowRing, vec: vec}, dt); !strings.Contains(string(ptx), ".entry "+name+"(") {
					t.Errorf("%s is not in cuda/ptx/%s_sm90.ptx", name, rf.module)
				}
				// Two rows a pass, with and without early column loads: 16-byte packs of the families with column
				// data (rowFamily.ring2), and nothing else.
				for _, early := range []bool{false, true} {
					name := rf.rows.kernel(rowPlan{kind: rowRing, vec: vec, pass: 2, early: early}, dt)
					if want := vec && rf.rows.ring2; strings.Contains(string(ptx), ".entry "+name+"(") != want {
						t.Errorf("%s in cuda/ptx/%s_sm90.ptx: %v, want %v", name, rf.module, !want, want)
					}
				}
			}
		}
	}
	testRowRingChoice(t)
}

// TestRowRing2Plan checks the plans of two rows a pass (row_ring2): rowRingPlan2's cluster is the fewest blocks
// (a power of two, at most 16) whose slices are at most 32 KiB, so that the ring of the pair's two slices stays at
// 64 KiB; rowRingShape's ring holds both rows' slices plus the extra chunks and refuses single-element packs and
// other row counts a pass; the plans' names and kernels are the ring2 ones, and every plan of one row a pass keeps
// its zero pass (so its name, kernel and the pinned choices stay).
func TestRowRing2Plan(t *testing.T) {
	for _, tc := range []struct {
		c              Case
		cs, ring, smem int
		kernel, name   string
	}{
		// fp32 65536: 256 KiB a row, 8 slices of 32 KiB = 2 chunks of 16 KiB a row, 4 a pair.
		{Case{DType: FP32, Shape: Shape{Rows: 4096, Cols: 65536}}, 8, 4, 64 << 10, "layernorm_ring2_f32_v", "ring2 v 8×256 r4"},
		// bf16 262144: 512 KiB, 16 slices of 32 KiB.
		{Case{DType: BF16, Shape: Shape{Rows: 1024, Cols: 262144}}, 16, 4, 64 << 10, "layernorm_ring2_bf16_v", "ring2 v 16×256 r4"},
		// bf16 16384: 32 KiB, one block.
		{Case{DType: BF16, Shape: Shape{Rows: 8192, Cols: 16384}}, 1, 4, 64 << 10, "layernorm_ring2_bf16_v", "ring2 v 1×256 r4"},
		// fp32 262144: 1 MiB, 16 slices of 64 KiB (no 32 blocks a cluster): a ring of 128 KiB.
		{Case{DType: FP32, Shape: Shape{Rows: 1024, Cols: 262144}}, 16, 8, 128 << 10, "layernorm_ring2_f32_v", "ring2 v 16×256 r8"},
		// bf16 4096: 8 KiB, one block, half a chunk a row: a ring of two chunks.
		{Case{DType: BF16, Shape: Shape{Rows: 32768, Cols: 4096}}, 1, 2, 32 << 10, "layernorm_ring2_bf16_v", "ring2 v 1×256 r2"},
		// bf16 20008: 40016 B, 2 slices of 1251 packs (20016 B): 2 chunks of 16 KiB a row, 4 a pair.
		{Case{DType: BF16, Shape: Shape{Rows: 33, Cols: 20008}}, 2, 4, 64 << 10, "layernorm_ring2_bf16_v", "ring2 v 2×256 r4"},
	} {
		p, ok := rowRingPlan2(tc.c, 90)
		if !ok || p.kind != rowRing || p.pass != 2 || p.rowsAPass() != 2 || p.cluster != tc.cs || p.ring != tc.ring ||
			rowRingSmem(p, tc.c) != tc.smem || p.threads != rowRingThreads || !p.vec || p.ring != 2*rowRingRowChunks(p, tc.c) {
			t.Errorf("%v %v: rowRingPlan2 = %v (ok %v), %d B; want %d blocks, %d chunks, %d B", tc.c.DType, tc.c.Shape, p, ok,
				rowRingSmem(p, tc.c), tc.cs, tc.ring, tc.smem)
		}
		if k := layerNormRows.kernel(p, tc.c.DType); k != tc.kernel || p.String() != tc.name {
			t.Errorf("%v %v: kernel %s, name %q; want %s, %q", tc.c.DType, tc.c.Shape, k, p, tc.kernel, tc.name)
		}
		if _, ok := rowRingPlan2(tc.c, 80); ok {
			t.Errorf("%v: a row_ring2 plan on sm_80", tc.c.Shape)
		}
		// One row a pass of the same case: the ring of one slice, the plain kernel.
		p1, _ := rowRingPlan(tc.c, 90)
		if p1.pass != 0 || p1.rowsAPass() != 1 || layerNormRows.kernel(p1, tc.c.DType) == tc.kernel || strings.HasPrefix(p1.String(), "ring2") {
			t.Errorf("%v: rowRingPlan = %v (pass %d, %s)", tc.c.Shape, p1, p1.pass, layerNormRows.kernel(p1, tc.c.DType))
		}
	}
	c := Case{DType: FP32, Shape: Shape{Rows: 4, Cols: 65536}}
	// Four blocks of 128 threads: 64 KiB slices in 8 KiB chunks, 8 a row, 16 a pair, and 1 more: 136 KiB.
	if p, ok := rowRingShape(c, 90, 4, 128, 1, 2); !ok || p.ring != 17 || rowRingSmem(p, c) != 136<<10 || p.pass != 2 {
		t.Errorf("4 × 128 +1, two rows: %v (ok %v), want 17 chunks of 8 KiB", p, ok)
	}
	for _, bad := range []struct {
		c                        Case
		cs, threads, extra, pass int
	}{
		{c, 2, 256, 0, 2}, // two 128 KiB slices
		{c, 4, 256, 0, 3}, // three rows a pass
		{c, 4, 256, 0, 0}, // no rows a pass
		{Case{DType: BF16, Shape: Shape{Rows: 3, Cols: 20001}}, 1, 256, 0, 2}, // single elements
	} {
		if p, ok := rowRingShape(bad.c, 90, bad.cs, bad.threads, bad.extra, bad.pass); ok {
			t.Errorf("%v %v in %d × %d +%d, %d rows a pass: %v, want none", bad.c.DType, bad.c.Shape, bad.cs, bad.threads,
				bad.extra, bad.pass, p)
		}
	}
	if _, ok := rowRingShape(Case{DType: BF16, Shape: Shape{Rows: 3, Cols: 20001}}, 90, 1, 256, 0, 1); !ok {
		t.Error("single elements, one row a pass: no plan")
	}
	if k := rmsNormRows.kernel(rowPlan{kind: rowRing, vec: true, pass: 2}, FP32); k != "rmsnorm_ring2_f32_v" {
		t.Errorf("RMSNorm two rows a pass: %s", k)
	}
	// The chosen plans of two rows a pass (fp32 rows of 256 KiB): LayerNorm 16 × 128 threads with early column
	// loads (16 KiB slices: 2 chunks of 8 KiB a row, a ring of 32 KiB), RMSNorm rowRingPlan2's 8 × 256.
	c256 := Case{DType: FP32, Shape: Shape{Rows: 4096, Cols: 65536}}
	if p, ok := layerNormRing2(c256, 90); !ok || p.String() != "ring2e v 16×128 r4" || rowRingSmem(p, c256) != 32<<10 {
		t.Errorf("LayerNorm fp32 65536: %v (ok %v), want ring2e v 16×128 r4", p, ok)
	}
	if p, ok := rmsNormRing2(c256, 90); !ok || p.String() != "ring2 v 8×256 r4" {
		t.Errorf("RMSNorm fp32 65536: %v (ok %v), want ring2 v 8×256 r4", p, ok)
	}
	for _, other := range []Case{{DType: BF16, Shape: c256.Shape}, {DType: FP32, Shape: Shape{Rows: 1024, Cols: 262144}}} {
		if p, ok := layerNormRing2(other, 90); ok {
			t.Errorf("LayerNorm %v %v: %v, want one row a pass", other.DType, other.Shape, p)
		}
	}
	e := rowPlan{kind: rowRing, cluster: 8, vec: true, threads: 256, ring: 4, pass: 2, early: true}
	if k := layerNormRows.kernel(e, BF16); k != "layernorm_ring2e_bf16_v" || e.String() != "ring2e v 8×256 r4" {
		t.Errorf("early column loads: %s, %q", k, e)
	}
}

// testRowRingChoice checks where row_ring is chosen: never when switched off (as while rowRingPending), never
// before sm_90 or without 16-byte packs, and on sm_90 for exactly the cases of the CUDA grid and the correctness
// shapes where the family measured it fastest (its ring wins functions), with rowRingPlan's plan, or the family's
// own row_ring plan (ringPlanOf: two rows a pass, or other sizes) where it gives one — except where the family's
// row_res or row_grid plan comes first (resPlanOf, gridPlanOf).
func testRowRingChoice(t *testing.T) {
	if rowRingOn != (rowRingPending == "") && !harness.RunPending() {
		t.Errorf("rowRingOn = %v with rowRingPending %q", rowRingOn, rowRingPending)
	}
	defer func(on, xa bool) { rowRingOn, rowXAOn = on, xa }(rowRingOn, rowXAOn)
	rowXAOn = false // the _x_sm90a clusters come after every other choice (withRowXA); TestRowXAChoice checks them
	chosen, chosen2 := 0, 0
	for _, on := range []bool{false, true} {
		rowRingOn = on
		eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
			vec, _, _ := rowAccess(c)
			own, ok := ringPlanOf(f, c, cc)
			if _, res := resPlanOf(f, c, cc); res {
				return
			}
			if _, grid := gridPlanOf(f, c, cc); grid {
				return
			}
			if want := on && cc >= 90 && vec && (rowRingWinsOf[f](c) || ok); (p.kind == rowRing) != want {
				t.Errorf("%s %s cc=%d ring on=%v: chose %v", f.Name, f.BenchName(c, Fused), cc, on, p)
				return
			}
			if p.kind == rowRing {
				chosen++
				d, _ := rowRingPlan(c, cc)
				if ok {
					d = own
					chosen2++
				}
				if p != d {
					t.Errorf("%s %s: %v, want %v", f.Name, f.BenchName(c, Fused), p, d)
				}
			}
		})
	}
	if chosen == 0 || chosen2 == 0 {
		t.Errorf("row_ring was chosen %d times, the families' own ring plans %d", chosen, chosen2)
	}
}

// ringPlanOf is family f's own row_ring plan of case c (two rows a pass, or other sizes than rowRingPlan's), where
// it chooses one.
func ringPlanOf(f *Family, c Case, cc int) (rowPlan, bool) {
	own := map[*Family]func(Case, int) (rowPlan, bool){RMSNormFamily: rmsNormRing2, LayerNormFamily: layerNormRing2, SoftmaxFamily: softmaxRing}[f]
	if own == nil {
		return rowPlan{}, false
	}
	p, ok := own(c, cc)
	return p, ok && p.vec
}

// rowRingWinsOf is each row family's ring wins function (where it chooses row_ring).
var rowRingWinsOf = map[*Family]func(Case) bool{RMSNormFamily: rmsNormRingWins, LayerNormFamily: layerNormRingWins,
	SoftmaxFamily: softmaxRingWins, CrossEntropyFamily: rowRingWins1MiB, FP8QuantFamily: rowRingWins1MiB}

// eachRowChoice calls visit with each row family's default choice (<family>PlanDefault, whatever a test has swapped
// into <family>PlanFor) for every case of the CUDA grid and the correctness shapes (block128 aside), at compute
// capability 8.0 and 9.0 with 132 multiprocessors.
func eachRowChoice(visit func(f *Family, c Case, cc int, p rowPlan)) {
	plans := map[*Family]func(Case, int, int) rowPlan{RMSNormFamily: rmsNormPlanDefault, LayerNormFamily: layerNormPlanDefault,
		SoftmaxFamily: softmaxPlanDefault, CrossEntropyFamily: crossEntropyPlanDefault, FP8QuantFamily: fp8QuantPlanDefault}
	for f, plan := range plans {
		for _, c := range append(f.CasesOn("cuda", harness.Grids["cuda"]), f.CasesOn("test", testShapes)...) {
			if c.Variant == "block128" {
				continue
			}
			for _, cc := range []int{80, 90} {
				visit(f, c, cc, plan(c, cc, 132))
			}
		}
	}
}

// TestRowWideKernels checks the wide one-block-a-row plan (rowWide) against the kernels built for it: Softmax's fp32
// block of 32 16-byte packs is an entry of softmax_sm90 and of no other module, declared for at most
// rowBlockMaxThreads threads and at least three blocks a multiprocessor (.maxntid, .minnctapersm); the wide kernels
// that lost (RMSNorm's teams of one, LayerNorm's blocks, Softmax bf16) are in no module; and no other plan is wide.
func TestRowWideKernels(t *testing.T) {
	p := rowPlan{kind: rowBlock, vec: true, nv: 32, threads: 128}
	if !rowWide(p) {
		t.Fatalf("%v: not wide", p)
	}
	sm90, base := readPTX(t, "softmax_sm90"), readPTX(t, "softmax")
	name := softmaxRows.kernel(p, FP32)
	head := ".visible .entry " + name + "("
	if i := strings.Index(sm90, head); i < 0 {
		t.Errorf("%s is not in cuda/ptx/softmax_sm90.ptx", name)
	} else {
		decl := sm90[i:]
		decl = decl[:strings.Index(decl, "{")]
		want := fmt.Sprintf(".maxntid %d, 1, 1\n.minnctapersm 3\n", rowBlockMaxThreads(p))
		if !strings.Contains(decl, want) {
			t.Errorf("%s declares %q, want %q", name, decl[strings.Index(decl, ")")+1:], want)
		}
	}
	if strings.Contains(base, head) {
		t.Errorf("%s is in cuda/ptx/softmax.ptx too; the wide kernel is built for sm_90 only", name)
	}
	for _, rf := range []struct {
		rows   *rowFamily
		module string
		dts    []DType
	}{{rmsNormRows, "rmsnorm", StorageDTypes}, {layerNormRows, "layernorm", StorageDTypes}, {softmaxRows, "softmax", []DType{BF16}}} {
		for _, dt := range rf.dts {
			seen := map[string]bool{}
			for _, q := range []rowPlan{p, {kind: rowTeam, vec: true, nv: 32, threads: 128}} {
				name := rf.rows.kernel(q, dt)
				if seen[name] {
					continue // RMSNorm's blocks are teams of one
				}
				seen[name] = true
				for _, m := range []string{rf.module, rf.module + "_sm90"} {
					if strings.Contains(readPTX(t, m), ".visible .entry "+name+"(") {
						t.Errorf("%s is in cuda/ptx/%s.ptx; only Softmax fp32 has a wide kernel", name, m)
					}
				}
			}
		}
	}
	for _, p := range []rowPlan{{kind: rowBlock, vec: true, nv: 8}, {kind: rowBlock, vec: false, nv: 32}, {kind: rowCluster, vec: true, nv: 32},
		{kind: rowLanes, vec: true, nv: 32}, {kind: rowTeam, vec: true, nv: 32}} {
		if rowWide(p) || rowBlockMaxThreads(p) != 1024 {
			t.Errorf("%v: wide %v, at most %d threads; want a plan of the 1024-thread kernels", p, rowWide(p), rowBlockMaxThreads(p))
		}
	}
}

// TestRowRingForm checks which ring plans are built kernels of which family: one row a pass with either pack, two
// only on the families with ring2 kernels and with 16-byte packs, early column loads only with two.
func TestRowRingForm(t *testing.T) {
	one := rowPlan{kind: rowRing, cluster: 8, vec: true, threads: 256, ring: 4}
	with := func(f func(*rowPlan)) rowPlan { p := one; f(&p); return p }
	for _, tc := range []struct {
		rf   *rowFamily
		p    rowPlan
		want bool
	}{
		{softmaxRows, one, true},
		{softmaxRows, with(func(p *rowPlan) { p.vec = false }), true},
		{softmaxRows, with(func(p *rowPlan) { p.pass = 3 }), false},
		{softmaxRows, with(func(p *rowPlan) { p.pass = 2 }), false}, // no ring2 kernels
		{rmsNormRows, with(func(p *rowPlan) { p.pass = 2 }), true},
		{rmsNormRows, with(func(p *rowPlan) { p.pass, p.vec = 2, false }), false},
		{layerNormRows, with(func(p *rowPlan) { p.pass, p.early = 2, true }), true},
		{layerNormRows, with(func(p *rowPlan) { p.early = true }), false},
	} {
		if why := rowRingForm(tc.rf, tc.p); (why == "") != tc.want {
			t.Errorf("%s %+v: %q, want built %v", tc.rf.prefix, tc.p, why, tc.want)
		}
	}
}

// rowModules are the row families' modules (cuda/ptx/<module>.ptx and <module>_sm90.ptx) and their rowFamily.
var rowModules = []struct {
	module string
	rows   *rowFamily
}{{"rmsnorm", rmsNormRows}, {"layernorm", layerNormRows}, {"softmax", softmaxRows}, {"crossentropy", crossEntropyRows},
	{"fp8quant", fp8QuantRows}}

// readPTX is the committed PTX of module (cuda/ptx/<module>.ptx).
func readPTX(t *testing.T, module string) string {
	t.Helper()
	b, err := os.ReadFile("cuda/ptx/" + module + ".ptx")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRowLeadKernels checks the look-ahead block plans (rowLead) against the kernels built for them: each of a
// family's leads is an entry of its _sm90 module declared for exactly its block size (.maxntid), those are all the
// _blocka_ entries there are, no other module has any; and withRowLead gives them only on sm_90, to one-block plans
// of 8 16-byte packs in the block sizes built.
func TestRowLeadKernels(t *testing.T) {
	entry := regexp.MustCompile(`\.visible \.entry ([a-z0-9_]+_blocka_[a-z0-9_]+)\(`)
	for _, m := range rowModules {
		for _, suffix := range []string{"", "_sm90"} {
			ptx := readPTX(t, m.module+suffix)
			want := map[string]int{}
			if suffix == "_sm90" {
				for _, l := range m.rows.leads {
					want[m.rows.kernel(rowPlan{kind: rowBlock, vec: true, nv: 8, threads: l.threads, lead: l.lead}, l.dt)] = l.threads
				}
			}
			for name, threads := range want {
				i := strings.Index(ptx, ".visible .entry "+name+"(")
				if i < 0 {
					t.Errorf("%s is not in cuda/ptx/%s%s.ptx", name, m.module, suffix)
					continue
				}
				decl := ptx[i:]
				decl = decl[strings.Index(decl, ")")+1 : strings.Index(decl, "{")]
				if w := fmt.Sprintf(".maxntid %d, 1, 1\n", threads); !strings.Contains(decl, w) {
					t.Errorf("%s declares %q, want %q", name, decl, w)
				}
			}
			for _, e := range entry.FindAllStringSubmatch(ptx, -1) {
				if _, ok := want[e[1]]; !ok {
					t.Errorf("cuda/ptx/%s%s.ptx has %s, which no look-ahead plan names", m.module, suffix, e[1])
				}
			}
		}
	}

	block := func(dt DType, cols int) Case { return Case{DType: dt, Shape: Shape{Rows: 32768, Cols: cols}} }
	for _, tc := range []struct {
		choose func(Case, int, int) rowPlan
		c      Case
		cc     int
		want   int // the plan's lead
	}{
		{layerNormPlanDefault, block(BF16, 4096), 90, 4},
		{layerNormPlanDefault, block(BF16, 16384), 90, 3},
		{layerNormPlanDefault, block(FP32, 4096), 90, 8},
		{layerNormPlanDefault, block(BF16, 4096), 80, 0},  // built for sm_90 only
		{layerNormPlanDefault, block(BF16, 8192), 90, 0},  // 128 threads: not built
		{layerNormPlanDefault, block(FP32, 16384), 90, 0}, // row_res
		{rmsNormPlanDefault, block(BF16, 4096), 90, 2},
		{rmsNormPlanDefault, block(BF16, 16384), 90, 3},
		{rmsNormPlanDefault, block(FP32, 4096), 90, 8},
		{rmsNormPlanDefault, block(FP32, 2048), 90, 0}, // 64 threads
		{softmaxPlanDefault, block(BF16, 4096), 90, 0},
		{layerNormPlanDefault, Case{DType: BF16, Shape: Shape{Rows: 32, Cols: 4096}}, 90, 0}, // few rows: 2 packs a thread
	} {
		p := tc.choose(tc.c, tc.cc, 132)
		if p.lead != tc.want {
			t.Errorf("cc %d %v: plan %v, want %d ahead", tc.cc, tc.c, p, tc.want)
		}
		if p.lead > 0 && (p.kind != rowBlock || !p.vec || p.nv != 8) {
			t.Errorf("cc %d %v: look-ahead plan %v is not a block of 8 16-byte packs", tc.cc, tc.c, p)
		}
	}
}

// TestRowXAChoice checks where the _x_sm90a clusters are chosen (withRowXA): never when switched off or on another
// compute capability than 9.0 (sm_90a PTX); on sm_90, rowXARes's plan exactly where the family's XARes wins
// function says so, else rowXACluster's where its XA wins function says so (and the plan exists), and
// elsewhere the plan chosen without them, its cluster plans taking the _x_sm90a kernel where the family has it
// (hasXA); and that every such kernel is in the family's _x_sm90a module.
func TestRowXAChoice(t *testing.T) {
	defer func(on bool) { rowXAOn = on }(rowXAOn)
	wins := map[*Family]func(Case) bool{RMSNormFamily: rmsNormXAWins, LayerNormFamily: layerNormXAWins,
		SoftmaxFamily: softmaxXAWins, CrossEntropyFamily: crossEntropyXAWins, FP8QuantFamily: fp8QuantXAWins}
	resWins := map[*Family]func(Case) bool{RMSNormFamily: rmsNormXAResWins, LayerNormFamily: layerNormXAResWins}
	rows := map[*Family]*rowFamily{RMSNormFamily: rmsNormRows, LayerNormFamily: layerNormRows,
		SoftmaxFamily: softmaxRows, CrossEntropyFamily: crossEntropyRows, FP8QuantFamily: fp8QuantRows}
	modules := map[*Family]string{RMSNormFamily: "rmsnorm", LayerNormFamily: "layernorm", SoftmaxFamily: "softmax",
		CrossEntropyFamily: "crossentropy", FP8QuantFamily: "fp8quant"}
	key := func(f *Family, c Case, cc int) string {
		return fmt.Sprintf("%s %s %d", f.Name, f.BenchName(c, Fused), cc)
	}
	off := map[string]rowPlan{}
	rowXAOn = false
	eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
		if p.xa {
			t.Errorf("%s %s cc=%d: %v with the _x_sm90a clusters off", f.Name, f.BenchName(c, Fused), cc, p)
		}
		off[key(f, c, cc)] = p
	})
	rowXAOn = true
	won, twins, res := 0, 0, 0
	eachRowChoice(func(f *Family, c Case, cc int, p rowPlan) {
		want := off[key(f, c, cc)]
		if x, ok := rowXARes(rows[f], c, cc); ok && cc == 90 && resWins[f] != nil && resWins[f](c) {
			want = x
			res++
		} else if x, ok := rowXACluster(rows[f], c, cc); ok && cc == 90 && wins[f](c) {
			want = x
			won++
		} else if cc == 90 && rows[f].hasXA(want) {
			want.xa = true
			twins++
		}
		if p != want {
			t.Errorf("%s %s cc=%d: %v, want %v", f.Name, f.BenchName(c, Fused), cc, p, want)
		}
		if p.xa {
			ptx, err := os.ReadFile("cuda/ptx/" + modules[f] + "_x_sm90a.ptx")
			if err != nil {
				t.Fatal(err)
			}
			if name := rows[f].kernel(p, c.DType); !strings.Contains(string(ptx), ".entry "+name+"(") {
				t.Errorf("%s %s: %s is not in %s_x_sm90a", f.Name, f.BenchName(c, Fused), name, modules[f])
			}
		}
	})
	if won == 0 || res == 0 {
		t.Errorf("rowXACluster chosen %d times, rowXARes %d (other clusters' _x_sm90a kernels: %d)", won, res, twins)
	}
	// A later compute capability (eachRowChoice visits 8.0 and 9.0) does not run sm_90a PTX.
	for _, c := range []Case{{DType: BF16, Shape: Shape{Rows: 1024, Cols: 262144}}, {DType: FP32, Shape: Shape{Rows: 4096, Cols: 65536}}} {
		if p := softmaxPlanDefault(c, 100, 148); p.xa {
			t.Errorf("Softmax %v cc=100: %v", c.Shape, p)
		}
	}
}

// TestRowXACluster16 checks where the cluster of 16 blocks is a plan: the cross-entropy's fp32 rows of more than
// 512 KiB up to 1 MiB on sm_90 alone (no other family or dtype has the kernel), in 256-thread blocks of 16 packs.
func TestRowXACluster16(t *testing.T) {
	fp32 := func(cols int) Case { return Case{DType: FP32, Shape: Shape{Rows: 4, Cols: cols}} }
	if p, ok := rowXACluster16(crossEntropyRows, fp32(262144), 90); !ok || p.cluster != 16 || p.threads != 256 || p.nv != 16 || !p.xa ||
		!crossEntropyRows.hasXA(p) || crossEntropyRows.kernel(p, FP32) != "xent_cluster_f32_v16_c16" {
		t.Errorf("CrossEntropy fp32 262144: %v %v", p, ok)
	}
	if p, ok := rowXACluster16(crossEntropyRows, fp32(200004), 90); !ok || p.cluster != 16 {
		t.Errorf("CrossEntropy fp32 200004: %v %v", p, ok)
	}
	for _, c := range []Case{fp32(131072), fp32(262148), fp32(200001), {DType: BF16, Shape: Shape{Rows: 4, Cols: 262144}}} {
		if p, ok := rowXACluster16(crossEntropyRows, c, 90); ok {
			t.Errorf("CrossEntropy %v %d: %v", c.DType, c.Cols, p)
		}
	}
	if _, ok := rowXACluster16(crossEntropyRows, fp32(262144), 100); ok {
		t.Error("a cluster of 16 on compute capability 10.0")
	}
	for _, rf := range []*rowFamily{rmsNormRows, layerNormRows, softmaxRows, fp8QuantRows} {
		if p, ok := rowXACluster16(rf, fp32(262144), 90); ok || rf.hasXA(rowPlan{kind: rowCluster, cluster: 16, vec: true, nv: 16, threads: 256}) {
			t.Errorf("%s: %v", rf.prefix, p)
		}
	}
}

package noise

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// family returns n benchmarks of a kernel over 3 snapshots in sec/op and
// pct-copy: the i-th moves by shifts[i%len(shifts)] in sec/op between the
// snapshots and by norm × that in pct-copy.
func family(kernel string, n int, shifts []float64, norm float64) []SeriesHistory {
	var out []SeriesHistory
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s/rows=%d/impl=fused", kernel, 1<<i)
		d := shifts[i%len(shifts)]
		out = append(out,
			SeriesHistory{Name: name, Unit: "sec/op", Snapshots: []int{0, 1, 2}, Centers: []float64{1e-4, 1e-4 * (1 + d), 1e-4 * (1 + d/2)}},
			SeriesHistory{Name: name, Unit: "GB/s", Snapshots: []int{0, 1, 2}, Centers: []float64{2000, 2000 / (1 + d), 2000 / (1 + d/2)}},
			SeriesHistory{Name: name, Unit: "pct-copy", Snapshots: []int{0, 1, 2}, Centers: []float64{95, 95 / (1 + norm*d), 95 / (1 + norm*d/2)}})
	}
	return out
}

func TestAcross(t *testing.T) {
	// RMSNorm: 10 benchmarks moving 0.5% across hosts, one of them (a
	// two-mode benchmark whose mix changed) 12%; pct-copy moves a third
	// as much. GELU: pct-copy no steadier. Attention: one snapshot only.
	shifts := []float64{0.005, 0.004, 0.006, 0.005, 0.005, 0.004, 0.006, 0.005, 0.005, 0.12}
	var series []SeriesHistory
	series = append(series, family("RMSNorm", 10, shifts, 1.0/3)...)
	series = append(series, family("GELU", 6, []float64{0.01}, 1)...)
	series = append(series, SeriesHistory{Name: "Attention/t=4096", Unit: "sec/op", Snapshots: []int{2}, Centers: []float64{5e-4}})
	f := Across("gpu-x", "HEAD:baselines/gpu-x.bench", []FloorSnapshot{{Label: "a"}, {Label: "b"}, {Label: "c"}}, series)

	e, _ := f.Lookup("RMSNorm/rows=1/impl=fused", "sec/op")
	// The family's floor: e^(2.576 × 1.4826 × log 1.005) − 1 ≈ 1.92%,
	// which the one 12% benchmark does not move.
	want := math.Expm1(z99 * 1.4826 * math.Log1p(0.005))
	if e.Shift == nil || math.Abs(*e.Shift-0.005) > 1e-12 || math.Abs(e.Floor-want) > 1e-6 || e.From != "family" {
		t.Errorf("RMSNorm rows=1: %+v, want shift 0.5%%, floor %.4f from the family", e, want)
	}
	e, _ = f.Lookup("RMSNorm/rows=512/impl=fused", "sec/op")
	if math.Abs(e.Floor-0.12) > 1e-6 || e.From != "benchmark" {
		t.Errorf("the 12%% benchmark: %+v, want its own shift as its floor", e)
	}
	e, _ = f.Lookup("Attention/t=4096", "sec/op")
	if e.Shift != nil || e.From != "class" || !(e.Floor > 0.005) {
		t.Errorf("one snapshot: %+v, want the class's floor", e)
	}
	// RMSNorm moves a third as much in pct-copy: its raw units warn and
	// pct-copy gates; GELU stays on sec/op.
	for _, u := range []string{"sec/op", "GB/s"} {
		if e, _ := f.Lookup("RMSNorm/rows=1/impl=fused", u); e.Gate != "warn" || e.GatedBy != "pct-copy" {
			t.Errorf("RMSNorm %s: gate %q by %q, want warn by pct-copy", u, e.Gate, e.GatedBy)
		}
		if e, _ := f.Lookup("GELU/rows=1/impl=fused", u); e.Gate != "" {
			t.Errorf("GELU %s: gate %q, want the configured one", u, e.Gate)
		}
	}
	if e, _ := f.Lookup("RMSNorm/rows=1/impl=fused", "pct-copy"); e.Gate != "" {
		t.Errorf("RMSNorm pct-copy: gate %q, want the configured one", e.Gate)
	}
	if fam, _ := f.Family("RMSNorm"); fam.GatedBy != "pct-copy" || fam.Steadier != 10 || fam.Benchmarks != 10 {
		t.Errorf("RMSNorm family %+v", fam)
	}
	if fam, _ := f.Family("GELU"); fam.GatedBy != "sec/op" || fam.Steadier != 0 {
		t.Errorf("GELU family %+v", fam)
	}
	rows := f.Spread("sec/op", "pct-copy")
	if len(rows) != 2 || rows[0].Series != 16 || rows[0].MaxName != "RMSNorm/rows=512/impl=fused" || math.Abs(rows[0].Max-0.12) > 1e-12 {
		t.Errorf("spread %+v", rows)
	}
	// Pairs: snapshots a and b are the furthest apart.
	for _, p := range f.Pairs {
		if p.Unit == "sec/op" && p.A == 0 && p.B == 1 && (p.Series != 16 || math.Abs(p.Median-0.006) > 1e-6) {
			t.Errorf("pair a–b: %+v, want 16 series, median 0.6%%", p)
		}
	}

	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFloors(&b, "x.floors.json")
	if err != nil || len(back.Entries) != len(f.Entries) || back.Class != "gpu-x" {
		t.Fatalf("round trip: %v, %+v", err, back)
	}
	for _, bad := range []string{
		`{"schema": "kernelwatch.noise/v1"}`,
		`{"schema": "kernelwatch.floors/v1", "benchmarks": [{"name": "A", "unit": "sec/op", "floor": -1}]}`,
		`{"schema": "kernelwatch.floors/v1", "benchmarks": [{"name": "A", "unit": "sec/op", "floor": 0.01, "gate": "warn"}]}`,
		`{"schema": "kernelwatch.floors/v1", "extra": 1}`,
	} {
		if _, err := ReadFloors(strings.NewReader(bad), "bad.json"); err == nil || !strings.HasPrefix(err.Error(), "bad.json: ") {
			t.Errorf("%s: err %v, want one naming the file", bad, err)
		}
	}
}

// TestAcrossNormalizedUnitChoice checks which normalized unit a family may be gated on and that the one that
// does not gate only warns: a tensor-core family is judged against the mma probe, never the copy, however
// steady its pct-copy looks, and a normalized unit of a family gated on time carries its reference's
// cross-host shift, so it must not fail a stored check on its own.
func TestAcrossNormalizedUnitChoice(t *testing.T) {
	var series []SeriesHistory
	series = append(series, family("GELU", 4, []float64{0.01}, 1)...) // pct-copy no steadier: gated on sec/op
	for _, s := range family("GEMM", 4, []float64{0.01}, 0.1) {       // pct-copy 10× steadier, but compute-bound
		series = append(series, s)
		if s.Unit == "pct-copy" { // and a pct-mma that moves as much as its time
			m := s
			m.Unit = "pct-mma"
			m.Centers = []float64{60, 60 / 1.01, 60 / 1.005}
			series = append(series, m)
		}
	}
	f := Across("gpu-x", "HEAD:baselines/gpu-x.bench", []FloorSnapshot{{Label: "a"}, {Label: "b"}, {Label: "c"}}, series)
	if fam, _ := f.Family("GEMM"); fam.Normalized != "pct-mma" || fam.GatedBy != "sec/op" {
		t.Errorf("GEMM family %+v, want pct-mma considered and sec/op gating", fam)
	}
	for _, c := range []struct{ name, unit, gate string }{
		{"GEMM/rows=1/impl=fused", "sec/op", ""},
		{"GEMM/rows=1/impl=fused", "pct-mma", "warn"},
		{"GEMM/rows=1/impl=fused", "pct-copy", "warn"},
		{"GELU/rows=1/impl=fused", "sec/op", ""},
		{"GELU/rows=1/impl=fused", "pct-copy", "warn"},
	} {
		e, ok := f.Lookup(c.name, c.unit)
		if !ok || e.Gate != c.gate || (c.gate == "warn" && e.GatedBy != "sec/op") {
			t.Errorf("%s %s: gate %q by %q, want %q by sec/op", c.name, c.unit, e.Gate, e.GatedBy, c.gate)
		}
	}
}

// TestAcrossComparesSameCode checks that a series' shift comes only from snapshots that ran the same code: a
// kernel that got 20% faster between snapshots 1 and 2 (its code fingerprint changed) keeps the floor its
// host-to-host moves give, snapshots without a fingerprint are compared among themselves as before, and the
// pairs of snapshots leave out series whose code differs between the two.
func TestAcrossComparesSameCode(t *testing.T) {
	const a, b = "aaaaaaaaaaaa", "bbbbbbbbbbbb"
	series := []SeriesHistory{
		// Snapshot 0 has no fingerprint; 1 and 2 ran code a (0.5% apart); 3 and 4 ran code b, 20% faster
		// (0.3% apart).
		{Name: "GEMM/m=1", Unit: "sec/op", Snapshots: []int{0, 1, 2, 3, 4},
			Centers: []float64{1.5e-4, 1e-4, 1.005e-4, 0.8e-4, 0.8024e-4}, Codes: []string{"", a, a, b, b}},
		// The same history without fingerprints: the change passes for a 25% host shift, as it always did.
		{Name: "GEMM/m=2", Unit: "sec/op", Snapshots: []int{0, 1, 2, 3, 4},
			Centers: []float64{1e-4, 1e-4, 1.005e-4, 0.8e-4, 0.8024e-4}},
		// Each snapshot ran other code: no two comparable, so no shift of its own.
		{Name: "GEMM/m=3", Unit: "sec/op", Snapshots: []int{1, 2}, Centers: []float64{1e-4, 2e-4}, Codes: []string{a, b}},
	}
	snaps := []FloorSnapshot{{Label: "s0"}, {Label: "s1"}, {Label: "s2"}, {Label: "s3"}, {Label: "s4"}}
	f := Across("gpu-x", "HEAD:baselines/gpu-x.bench", snaps, series)
	e, _ := f.Lookup("GEMM/m=1", "sec/op")
	if e.Shift == nil || math.Abs(*e.Shift-0.005) > 1e-9 {
		t.Errorf("m=1: shift %v, want 0.5%% (the largest move within one code)", e.Shift)
	}
	e, _ = f.Lookup("GEMM/m=2", "sec/op")
	if e.Shift == nil || math.Abs(*e.Shift-(1.005/0.8-1)) > 1e-9 {
		t.Errorf("m=2: shift %v, want %.4f (no fingerprints: every snapshot compared)", e.Shift, 1.005/0.8-1)
	}
	e, _ = f.Lookup("GEMM/m=3", "sec/op")
	if e.Shift != nil || e.From != "family" {
		t.Errorf("m=3: %+v, want no shift of its own and its family's floor", e)
	}
	for _, p := range f.Pairs {
		if p.Unit != "sec/op" {
			continue
		}
		want := 1 // m=2 only
		switch {
		case p.A == 1 && p.B == 2, p.A == 3 && p.B == 4:
			want = 2 // m=1 ran the same code in both
		case p.A == 0:
			want = 1 // m=1 has no fingerprint in snapshot 0, one in the other: not comparable
		}
		if p.Series != want {
			t.Errorf("pair s%d–s%d: %d series, want %d", p.A, p.B, p.Series, want)
		}
	}
}

// TestAcrossVendorNormalized checks that a family reporting pct-cublas (its GEMMs against cuBLASLt's in the
// same process) is judged against that reference first: on two H200 recordings of the same GEMM kernels
// (2026-11-27) sec/op moved 1.8–1.9% and pct-mma 1.2–1.6%, pct-cublas at most 0.2%.
func TestAcrossVendorNormalized(t *testing.T) {
	var series []SeriesHistory
	for i, sh := range []float64{0.018, 0.019, 0.018} {
		name := fmt.Sprintf("GEMM/m=%d/impl=fused", 1024<<i)
		snaps := []int{0, 1}
		series = append(series,
			SeriesHistory{Name: name, Unit: "sec/op", Snapshots: snaps, Centers: []float64{1.744e-4, 1.744e-4 * (1 + sh)}},
			SeriesHistory{Name: name, Unit: "TFLOP/s", Snapshots: snaps, Centers: []float64{788, 788 / (1 + sh)}},
			SeriesHistory{Name: name, Unit: "pct-mma", Snapshots: snaps, Centers: []float64{122.7, 122.7 / 1.014}},
			SeriesHistory{Name: name, Unit: "pct-cublas", Snapshots: snaps, Centers: []float64{99.4, 99.2}})
	}
	f := Across("gpu-x", "HEAD:baselines/gpu-x.bench", []FloorSnapshot{{Label: "a"}, {Label: "b"}}, series)
	if fam, _ := f.Family("GEMM"); fam.Normalized != "pct-cublas" || fam.GatedBy != "pct-cublas" || fam.Steadier != 3 {
		t.Fatalf("GEMM family %+v, want pct-cublas considered and gating, steadier in all 3", fam)
	}
	for _, c := range []struct{ unit, gate string }{{"sec/op", "warn"}, {"TFLOP/s", "warn"}, {"pct-mma", "warn"}, {"pct-cublas", ""}} {
		e, ok := f.Lookup("GEMM/m=1024/impl=fused", c.unit)
		if !ok || e.Gate != c.gate || (c.gate == "warn" && e.GatedBy != "pct-cublas") {
			t.Errorf("GEMM %s: gate %q by %q, want %q", c.unit, e.Gate, e.GatedBy, c.gate)
		}
	}
}

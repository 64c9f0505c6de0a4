package kernels

import (
	"slices"
	"testing"
)

// TestVendorGEMMs checks the GEMMs that the GEMM and FFN families declare as their vendor reference
// (harness: pct-cublas): the family's own GEMMs, so that the reference does the family's work.
func TestVendorGEMMs(t *testing.T) {
	for _, tc := range []struct {
		f    *Family
		c    Case
		want [][3]int
	}{
		{GEMMFamily, Case{Dims: []int{2048, 11008, 4096}}, [][3]int{{2048, 11008, 4096}}},
		{FFNFamily, Case{Variant: "swiglu", Dims: []int{512, 4096, 11008}}, [][3]int{{512, 11008, 4096}, {512, 11008, 4096}, {512, 4096, 11008}}},
		{FFNFamily, Case{Variant: "gelu", Dims: []int{512, 4096, 16384}}, [][3]int{{512, 16384, 4096}, {512, 4096, 16384}}},
		{CopyFamily, Case{Shape: Shape{Rows: 4, Cols: 4}}, nil},
	} {
		var got [][3]int
		if tc.f.VendorGEMMs != nil {
			got = tc.f.VendorGEMMs(tc.c)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: %v, want %v", tc.f.Name, tc.c, got, tc.want)
		}
		// The reference does the family's work: its FLOPs are the family's.
		if tc.f.Flops != nil {
			var fl float64
			for _, s := range got {
				fl += 2 * float64(s[0]) * float64(s[1]) * float64(s[2])
			}
			if fl != tc.f.Flops(tc.c) {
				t.Errorf("%s %v: the reference's %v FLOP, the family's %v", tc.f.Name, tc.c, fl, tc.f.Flops(tc.c))
			}
		}
	}
}

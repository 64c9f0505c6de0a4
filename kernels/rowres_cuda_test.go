//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDARowRes checks the row_res kernels (rowres.cuh: RMSNorm's, LayerNorm's and Softmax's) against the float64
// reference, outputs poisoned before each run (CheckCase), whether or not the families choose row_res
// (rowResPending): every built configuration that covers the row (rowResPlans), both dtypes, rows of 4096 to
// 65536 columns and widths that end mid-team (4100 fp32, 20008 bf16: some threads hold fewer packs, some none),
// and row counts that leave the persistent blocks' teams different numbers of rows (1, 3, 33, 129, 1000; with
// teams of 2 and 8 a block, some teams none). On sm_90 the same for the row_res_cluster kernels of the _x_sm90a
// modules (rowXAResPlans: every cluster size that covers the row), also at 262144 columns and at widths that leave
// a cluster's last blocks part of a slice or none (131080: bf16 in 8 blocks, fp32 in 16), with more rows than
// clusters (40: 7 or 15 clusters run, so some take three rows and reuse the exchange's slots and mbarrier phases)
// and fewer. (With 40 rows of 262144 and 300 of 131080 it took 87 s of an H100.)
func TestCUDARowRes(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("row_res is built for compute capability 9.0 (this GPU: %d.%d)", be.CC()/10, be.CC()%10)
	}
	shapes := []Shape{
		{Rows: 1, Cols: 4096}, {Rows: 129, Cols: 4096}, {Rows: 1000, Cols: 4096}, {Rows: 3, Cols: 4100},
		{Rows: 33, Cols: 16384}, {Rows: 1000, Cols: 16384}, {Rows: 33, Cols: 20008},
		{Rows: 3, Cols: 65536}, {Rows: 129, Cols: 65536}, {Rows: 3, Cols: 262144}, {Rows: 5, Cols: 131080},
		{Rows: 40, Cols: 131080},
	}
	n, nc := 0, 0
	checkRowPlans(t, be, shapes, func(rf *rowFamily, c Case, _ int) []rowPlan {
		ps := rowResPlans(rf, c)
		n += len(ps)
		if be.CC() == 90 {
			xs := rowXAResPlans(rf, c)
			nc += len(xs)
			ps = append(ps, xs...)
		}
		return ps
	}, func(p rowPlan) string {
		if p.cluster > 1 {
			return fmt.Sprintf("t=%dx%d/m=%d/xa", p.cluster, p.threads, p.mode)
		}
		ahead := map[bool]string{false: "no", true: "registers"}[p.ahead]
		if p.ahead && p.shared {
			ahead = "shared"
		}
		return fmt.Sprintf("t=%dx%d/m=%d/ahead=%s", p.group, p.threads, p.mode, ahead)
	})
	if n == 0 {
		t.Error("no row_res plan ran")
	}
	if be.CC() == 90 && nc == 0 {
		t.Error("no row_res_cluster plan ran")
	}
}

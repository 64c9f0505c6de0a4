//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDASelectiveScanLanes checks the fused scan with 1, 2 and 4 threads a channel on the test shapes and the
// reset patterns (TestKernels checks only the lane count scanChooseLanes picks).
func TestCUDASelectiveScanLanes(t *testing.T) {
	be := cudaBackend(t)
	defer func() { scanLanesFor = scanChooseLanes }()
	f := SelectiveScanFamily
	for _, c := range f.CasesOn("test", nil) {
		for _, lanes := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/lanes=%d", f.BenchName(c, Fused), lanes), func(t *testing.T) {
				scanLanesFor = func(Case, int) int { return lanes }
				gens := map[string]generator{"resets": seqResetPatterns(1)}
				if _, err := checkCase(be, f, c, Fused, caseSeed(t), gens); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, testSeed, t.Name())
				}
			})
		}
	}
}

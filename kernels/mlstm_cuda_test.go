//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDAMLSTMSplits checks the chunkwise mLSTM with every number of blocks a head it is built for, on the test
// shapes and the reset patterns (TestKernels checks only the one mlstmChooseSplit picks).
func TestCUDAMLSTMSplits(t *testing.T) {
	be := cudaBackend(t)
	defer func() { mlstmSplitFor = mlstmChooseSplit }()
	f := MLSTMFamily
	for _, c := range f.CasesOn("test", nil) {
		for _, vs := range mlstmSplits[c.Dims[3]] {
			t.Run(fmt.Sprintf("%s/vs=%d", f.BenchName(c, Fused), vs), func(t *testing.T) {
				mlstmSplitFor = func(Case, int) int { return vs }
				gens := map[string]generator{"resets": seqResetPatterns(2)}
				if _, err := checkCase(be, f, c, Fused, caseSeed(t), gens); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, testSeed, t.Name())
				}
			})
		}
	}
}

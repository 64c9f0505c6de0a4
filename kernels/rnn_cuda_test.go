//go:build cuda

package kernels

import (
	"fmt"
	"testing"
)

// TestCUDARNNBatch checks the LSTM's and sLSTM's persistent kernels with every number of batch rows a block
// they are built for, on the test shapes and the reset patterns (TestKernels checks only the one
// rnnChooseBatch picks).
func TestCUDARNNBatch(t *testing.T) {
	be := cudaBackend(t)
	defer func() { rnnBatchFor = rnnChooseBatch }()
	for _, f := range []*Family{LSTMFamily, SLSTMFamily} {
		for _, c := range f.CasesOn("test", nil) {
			maxBB := 4
			if f == LSTMFamily {
				maxBB = lstmSplit[c.Dims[2]].maxBB
			}
			for bb := 1; bb <= maxBB; bb *= 2 {
				t.Run(fmt.Sprintf("%s/%s/bb=%d", f.Name, f.BenchName(c, Fused), bb), func(t *testing.T) {
					rnnBatchFor = func(*cudaLaunch, func(int) string, func(int) int, int, int, bool) int { return bb }
					gens := map[string]generator{"resets": seqResetPatterns(seqTimeDim[f.Name])}
					if _, err := checkCase(be, f, c, Fused, caseSeed(t), gens); err != nil {
						t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, testSeed, t.Name())
					}
				})
			}
		}
	}
}

//go:build cuda

package kernels

import (
	"fmt"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// checkRecurrentVariants checks the fused form of f on its test shapes with the reset patterns of
// TestRecurrentResets, once for each kernel variant variants(c) lists, with use(v) making the launcher pick
// variant v (TestKernels checks only the ones the launchers choose).
func checkRecurrentVariants(t *testing.T, f *Family, key string, variants func(Case) []int, use func(int)) {
	be := cudaBackend(t)
	for _, c := range f.CasesOn("test", nil) {
		for _, v := range variants(c) {
			t.Run(fmt.Sprintf("%s/%s/%s=%d", f.Name, f.BenchName(c, Fused), key, v), func(t *testing.T) {
				use(v)
				gens := map[string]harness.Generator{"resets": seqResetPatterns(seqTimeDim[f.Name])}
				if _, err := harness.CheckCase(be, f, c, Fused, harness.CaseSeed(t), gens); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
			})
		}
	}
}

// TestCUDASelectiveScanLanes: the fused scan with 1, 2 and 4 threads a channel.
func TestCUDASelectiveScanLanes(t *testing.T) {
	defer func() { scanLanesFor = scanChooseLanes }()
	checkRecurrentVariants(t, SelectiveScanFamily, "lanes", func(Case) []int { return []int{1, 2, 4} },
		func(v int) { scanLanesFor = func(Case, int) int { return v } })
}

// TestCUDARNNBatch: the LSTM's and sLSTM's persistent kernels with every number of batch rows a block they are
// built for.
func TestCUDARNNBatch(t *testing.T) {
	defer func() { rnnBatchFor = rnnChooseBatch }()
	use := func(v int) {
		rnnBatchFor = func(cudaLaunch, func(int) string, func(int) int, int, int, bool) int { return v }
	}
	upTo := func(n int) (bbs []int) {
		for bb := 1; bb <= n; bb *= 2 {
			bbs = append(bbs, bb)
		}
		return bbs
	}
	checkRecurrentVariants(t, LSTMFamily, "bb", func(c Case) []int { return upTo(lstmSplit[c.Dims[2]].maxBB) }, use)
	checkRecurrentVariants(t, SLSTMFamily, "bb", func(Case) []int { return upTo(4) }, use)
}

// TestCUDAMLSTMSplits: the chunkwise mLSTM with every number of blocks a head it is built for.
func TestCUDAMLSTMSplits(t *testing.T) {
	defer func() { mlstmSplitFor = mlstmChooseSplit }()
	checkRecurrentVariants(t, MLSTMFamily, "vs", func(c Case) []int { return mlstmSplits[c.Dims[3]] },
		func(v int) { mlstmSplitFor = func(Case, int) int { return v } })
}

package kernels

import (
	"os"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestMain opens the harness's backends and, for benchmarks, its suite (harness.Main). A run that asks for
// pending GPU code (-kernels.pending) also lets the row families (row_grid among their plans), the LSTM and the sLSTM choose their pending
// plans (rowplan.go, recurrent.go), the GEMM family its wgmma kernels (wsgemm.go) and the FFN its wgmma FC1 and
// FC2 (wsffn.go) and attention its wgmma kernels, their d = 64 variants and the lazy rescale (wsattn.go), where
// those are pending.
func TestMain(m *testing.M) {
	rowDSMEMOn = rowDSMEMOn || harness.RunPending()
	rowRingOn = rowRingOn || harness.RunPending()
	rowGridOn = rowGridOn || harness.RunPending()
	rnnTCOn = rnnTCOn || harness.RunPending()
	wgmmaGEMMOn = wgmmaGEMMOn || harness.RunPending()
	wgmmaFFNOn = wgmmaFFNOn || harness.RunPending()
	wgmmaAttnOn = wgmmaAttnOn || harness.RunPending()
	wsAttnD64On = wsAttnD64On || harness.RunPending()
	wsAttnLazyOn = wsAttnLazyOn || harness.RunPending()
	rnnUnitsOn = rnnUnitsOn || harness.RunPending()
	rnnX3On = rnnX3On || harness.RunPending()
	lstmStepOn = lstmStepOn || harness.RunPending()
	os.Exit(harness.Main(m))
}

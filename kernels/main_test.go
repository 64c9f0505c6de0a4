package kernels

import (
	"os"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestMain opens the harness's backends and, for benchmarks, its suite (harness.Main). A run that asks for
// pending GPU code (-kernels.pending) also lets the row families and the LSTM choose their pending plans
// (rowplan.go, lstm.go).
func TestMain(m *testing.M) {
	rowDSMEMOn = rowDSMEMOn || harness.RunPending()
	lstmTCOn = lstmTCOn || harness.RunPending()
	os.Exit(harness.Main(m))
}

package harness

import (
	"os"
	"testing"

	"github.com/kernelwatch/kernelwatch/internal/ptxrecord"
)

// TestSM90aPTXRecorded holds each committed sm_90a module of this package to the record scripts/hopper-ptx.sh
// wrote when it generated the PTX (internal/ptxrecord): a .cu (or a header it includes) changed since, or a PTX
// edited or generated otherwise, fails here, on any machine — the Hopper toolchain that could regenerate it is
// a 5 GB chroot that CI does not install. KERNELWATCH_RECORD_SM90A=1 (what the script sets) writes the record
// instead.
func TestSM90aPTXRecorded(t *testing.T) {
	for _, err := range ptxrecord.Check(".", os.Getenv("KERNELWATCH_RECORD_SM90A") == "1") {
		t.Error(err)
	}
}

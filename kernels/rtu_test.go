package kernels

import "testing"

// TestRTUResets checks the RTU cell against its reference with no resets, a reset at t = 0, consecutive resets
// and one on the last step, and a reset at every step (where h = (x U) V).
func TestRTUResets(t *testing.T) { testResetPatterns(t, RTUFamily) }

// TestRTUResetCutsHistory: a reset drops the state, so no earlier input reaches later outputs.
func TestRTUResetCutsHistory(t *testing.T) {
	for _, dt := range StorageDTypes {
		c := Case{DType: dt, Dims: []int{3, 300, 64, 16}}
		testResetCutsHistory(t, RTUFamily, c, 150, "x")
	}
}

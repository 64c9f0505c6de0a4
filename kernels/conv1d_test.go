package kernels

import "testing"

// TestConv1DResets checks Conv1D against its reference with no resets, a reset at t = 0, consecutive resets and
// one on the last step, and a reset at every step (where y = bias + w[:, k−1]·x).
func TestConv1DResets(t *testing.T) { testResetPatterns(t, Conv1DFamily) }

// TestConv1DResetCutsHistory: a reset keeps every earlier input out of the outputs from it on.
func TestConv1DResetCutsHistory(t *testing.T) {
	for _, d := range [][]int{{3, 50, 24, 4}, {2, 40, 9, 2}} {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Dims: d, Variant: Conv1DFamily.Variants[1]}
			testResetCutsHistory(t, Conv1DFamily, c, 21, "x")
		}
	}
}

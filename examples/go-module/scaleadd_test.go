package scaleadd

import (
	"os"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestMain opens the harness's backends and, for benchmarks, its suite: the copy reference, config lines, policy.
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// testShapes are the correctness shapes: a single element, rows that do not fill the CPU's row blocks evenly,
// columns that are not a multiple of a 16-byte vector.
var testShapes = []harness.Shape{{Rows: 1, Cols: 1}, {Rows: 7, Cols: 129}, {Rows: 33, Cols: 1000}, {Rows: 3, Cols: 4099}}

// TestScaleAdd checks both implementations on every backend built in against the float64 reference, on fresh
// random inputs with poisoned outputs.
func TestScaleAdd(t *testing.T) { harness.Test(t, []*harness.Family{ScaleAdd}, testShapes) }

// BenchmarkScaleAdd measures both implementations over the device's grid, by the harness's policy.
func BenchmarkScaleAdd(b *testing.B) { harness.Bench(b, ScaleAdd) }

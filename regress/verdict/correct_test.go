package verdict

import (
	"math"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

func TestCorrect(t *testing.T) {
	tests := []Test{
		{P: 0.01, Gate: "fail", Hypothesis: "A", PastFloor: true},
		{P: 0.01, Gate: "fail", Hypothesis: "A", PastFloor: true}, // A's GB/s: the same hypothesis
		{P: 0.02, Gate: "fail", Hypothesis: "B", PastFloor: true},
		{P: 0.001, Gate: "fail", Hypothesis: "C", PastFloor: false}, // below the floor
		{P: 0.03, Gate: "warn", Hypothesis: "D", PastFloor: true},   // its own family
		{P: 0.5, Gate: "", Hypothesis: "E", PastFloor: true},        // in no family
	}
	for _, tc := range []struct {
		method string
		want   []float64
		fail   int
	}{
		// Holm over A and B only: 2 × 0.01, max(0.02, 1 × 0.02).
		{report.FloorHolm, []float64{0.02, 0.02, 0.02, math.NaN(), 0.03, math.NaN()}, 2},
		// Holm over A, B and C: 3 × 0.001, 2 × 0.01, 1 × 0.02.
		{report.Holm, []float64{0.02, 0.02, 0.02, 0.003, 0.03, math.NaN()}, 3},
		// BH over A, B, C: C 3/1 × 0.001, A 3/2 × 0.01, B 3/3 × 0.02.
		{report.BH, []float64{0.015, 0.015, 0.02, 0.003, 0.03, math.NaN()}, 3},
		{report.NoCorrect, []float64{0.01, 0.01, 0.02, 0.001, 0.03, math.NaN()}, 3},
	} {
		got, fams := Correct(tests, tc.method)
		for i := range got {
			if !(math.Abs(got[i]-tc.want[i]) < 1e-12 || math.IsNaN(got[i]) && math.IsNaN(tc.want[i])) {
				t.Errorf("%s: test %d adjusted to %v, want %v", tc.method, i, got[i], tc.want[i])
			}
		}
		if fams["fail"] != tc.fail || fams["warn"] != 1 {
			t.Errorf("%s: families %v, want fail %d and warn 1", tc.method, fams, tc.fail)
		}
	}
}

package kernels

import (
	"math"
	"testing"
)

// TestExp32 checks the CPU kernels' exponential against math.Exp: within an ulp, with the limits right.
func TestExp32(t *testing.T) {
	for x := -87.0; x <= 88.7; x += 0.0137 {
		got, want := float64(exp32(float32(x))), math.Exp(float64(float32(x)))
		if math.Abs(got-want) > 0x1p-23*want {
			t.Fatalf("exp32(%v) = %v, want %v (rel error %.2g)", x, got, want, math.Abs(got-want)/want)
		}
	}
	for _, tc := range []struct{ in, want float64 }{
		{0, 1}, {89, math.Inf(1)}, {1000, math.Inf(1)}, {math.Inf(1), math.Inf(1)}, {-104, 0}, {-1000, 0},
		{math.Inf(-1), 0},
	} {
		if got := float64(exp32(float32(tc.in))); got != tc.want {
			t.Errorf("exp32(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := exp32(float32(math.NaN())); got == got {
		t.Errorf("exp32(NaN) = %v", got)
	}
	for x := -30.0; x <= 30; x += 0.0071 {
		if d := math.Abs(float64(sigmoid32(float32(x))) - 1/(1+math.Exp(-float64(float32(x))))); d > 2e-7 {
			t.Fatalf("sigmoid32(%v) off by %.2g", x, d)
		}
	}
}

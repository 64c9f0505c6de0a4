package quickstart

import "testing"

func TestSum(t *testing.T) {
	if got := Sum([]float64{1, 2, 3.5}); got != 6.5 {
		t.Fatalf("Sum = %v, want 6.5", got)
	}
}

var sink float64

func BenchmarkSum(b *testing.B) {
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = float64(i % 7)
	}
	b.SetBytes(int64(8 * len(xs)))
	for b.Loop() {
		sink = Sum(xs)
	}
}

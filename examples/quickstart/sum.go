// Package quickstart is the smallest module regress can gate: one function
// and one benchmark in plain testing.B, no kernelwatch code at all. The
// README's quick start copies it to a temporary git repository, checks it
// against itself, then commits a change that triples the work (passes.go)
// and checks again.
package quickstart

// Sum adds xs up passes times over and returns the sum of one pass.
func Sum(xs []float64) float64 {
	var total float64
	for range passes {
		total = 0
		for _, x := range xs {
			total += x
		}
	}
	return total
}

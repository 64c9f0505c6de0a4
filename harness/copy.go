package harness

// CopyFamily is y = x: the speed-of-light reference every memory-bound kernel is judged against. The suite
// measures its fused implementation on every run (Suite.MeasureCopy: copy-gbps, run-health) and reports each
// benchmark's bandwidth as a share of it (pct-copy); a package may also benchmark it as a family of its own and
// register a naive implementation for it. The harness brings the fused code of both backends.
var CopyFamily = &Family{
	Name:    "Copy",
	Inputs:  []Operand{{Name: "x", Len: func(c Case) int { return c.Rows * c.Cols }, Gen: Dist{Kind: Normal, SD: 1}}},
	Outputs: []Operand{{Name: "y", Len: func(c Case) int { return c.Rows * c.Cols }}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		return [][]float64{append([]float64(nil), in[0]...)}
	},
	Tolerance: func(Case, int) float64 { return 0 }, // a copy is exact
}

func init() { RegisterCPU(CopyFamily, Fused, copyFused) }

// copyFused moves the stored bits of each block of rows, whatever the dtype.
func copyFused(l *CPULaunch) {
	x, y, cols := l.In[0], l.Out[0], l.Cols
	l.Parallel(l.Rows, func(r0, r1 int) {
		lo, hi := r0*cols, r1*cols
		if x.dt == BF16 {
			copy(y.U16[lo:hi], x.U16[lo:hi])
		} else {
			copy(y.F32[lo:hi], x.F32[lo:hi])
		}
	})
}

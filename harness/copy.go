package harness

// CopyFamily is y = x: the speed-of-light reference every memory-bound kernel is judged against (pct-copy).
var CopyFamily = &Family{
	Name:    "Copy",
	Inputs:  []Operand{{Name: "x", Len: matrixLen, Gen: normal(0, 1)}},
	Outputs: []Operand{{Name: "y", Len: matrixLen}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		return [][]float64{append([]float64(nil), in[0]...)}
	},
	Tolerance: func(Case, int) float64 { return 0 }, // a copy is exact
}

func init() { registerCPU(CopyFamily, copyFused, copyNaive) }

// copyFused moves the stored bits of each block of rows, whatever the dtype.
func copyFused(l *cpuLaunch) {
	x, y, cols := l.in[0], l.out[0], l.Cols
	l.rows(l.Rows, func(r0, r1 int) {
		lo, hi := r0*cols, r1*cols
		if x.dt == BF16 {
			copy(y.u16[lo:hi], x.u16[lo:hi])
		} else {
			copy(y.f32[lo:hi], x.f32[lo:hi])
		}
	})
}

// copyNaive is y.copy_(x.float()): through an fp32 intermediate (a clone for fp32).
func copyNaive(l *cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	t := l.un(opCopy, dense(l.in[0].act(), cols), rows, cols)
	l.unary(opCopy, dense(l.out[0].act(), cols), t, rows, cols)
}

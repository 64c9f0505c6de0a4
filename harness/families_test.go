package harness

// scaleFamily is y = 2·x, a family of the harness's own tests: the fused implementation one pass, the naive
// one through an fp32 copy of the whole input, so that its scratch-B is known (4 bytes an element).
var scaleFamily = &Family{
	Name:    "TestScale",
	Inputs:  []Operand{{Name: "x", Len: func(c Case) int { return c.Rows * c.Cols }, Gen: Dist{Kind: Normal, SD: 1}}},
	Outputs: []Operand{{Name: "y", Len: func(c Case) int { return c.Rows * c.Cols }}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		y := make([]float64, len(in[0]))
		for i, v := range in[0] {
			y[i] = 2 * v
		}
		return [][]float64{y}
	},
}

func init() {
	RegisterCPU(scaleFamily, Fused, func(l *CPULaunch) {
		x, y := l.In[0], l.Out[0]
		l.Parallel(l.Rows*l.Cols, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				if x.DType() == BF16 {
					y.U16[i] = BF16FromF32(2 * F32FromBF16(x.U16[i]))
				} else {
					y.F32[i] = 2 * x.F32[i]
				}
			}
		})
	})
	RegisterCPU(scaleFamily, Naive, func(l *CPULaunch) {
		x, y, n := l.In[0], l.Out[0], l.Rows*l.Cols
		t := l.ScratchF32(n)
		for i := range t {
			if x.DType() == BF16 {
				t[i] = F32FromBF16(x.U16[i])
			} else {
				t[i] = x.F32[i]
			}
		}
		for i, v := range t {
			if y.DType() == BF16 {
				y.U16[i] = BF16FromF32(2 * v)
			} else {
				y.F32[i] = 2 * v
			}
		}
	})
}

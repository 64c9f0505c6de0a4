package kernels

import "testing"

// normGELU is a composite test family: y = GELU(RMSNorm(x, w)), the normalized rows kept in the case's dtype
// between the two members, as a composite's intermediates are. Its reference composes the members'.
var normGELU = &Family{
	Name:    "ComposeNormGELU",
	Inputs:  RMSNormFamily.Inputs,
	Outputs: []Operand{{Name: "y", Len: matrixLen}},
	Reference: func(c Case, in [][]float64) [][]float64 {
		h := RMSNormFamily.Reference(c, in)[0]
		if c.DType == BF16 { // the intermediate is stored in bf16 between the members
			for i, v := range h {
				h[i] = float64(F32FromBF16(BF16FromF32(float32(v))))
			}
		}
		return GELUFamily.Reference(c, [][]float64{h})
	},
}

func init() {
	registerCPU(normGELU, func(l *cpuLaunch) { composeNormGELU(l, Fused) }, func(l *cpuLaunch) { composeNormGELU(l, Naive) })
}

func composeNormGELU(l *cpuLaunch, impl Impl) {
	h := l.tmpBuf(l.DType, l.Rows*l.Cols)
	l.call(RMSNormFamily, impl, l.Case, l.in, []*cpuBuffer{h})
	l.call(GELUFamily, impl, l.Case, []*cpuBuffer{h}, l.out)
}

// TestCompose checks a composite family on every backend: both impls against the composed reference, and
// its scratch-B as the members' intermediates plus its own (the naive chain's exceed the fused one's).
func TestCompose(t *testing.T) {
	for name, be := range testBackends {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Shape: Shape{Rows: 7, Cols: 300}}
			scratch := map[Impl]int64{}
			for _, impl := range Impls {
				if _, err := checkCase(be, normGELU, c, impl, caseSeed(t), nil); err != nil {
					t.Errorf("%s %s %s: %v", name, dt, impl, err)
				}
				st := prepareForScratch(t, be, normGELU, c, impl)
				scratch[impl] = st
			}
			own := int64(c.Rows * c.Cols * dt.Size())
			if scratch[Fused] < own || scratch[Naive] <= scratch[Fused] {
				t.Errorf("%s %s: scratch-B fused %d, naive %d; want fused ≥ %d (the intermediate) < naive",
					name, dt, scratch[Fused], scratch[Naive], own)
			}
		}
	}
}

// prepareForScratch prepares and runs (f, c, impl) once on be and returns its ScratchBytes.
func prepareForScratch(t *testing.T, be Backend, f *Family, c Case, impl Impl) int64 {
	t.Helper()
	var bufs []Buffer
	defer func() {
		for _, b := range bufs {
			be.Free(b)
		}
	}()
	alloc := func(ops []Operand) []Buffer {
		var out []Buffer
		for _, o := range ops {
			b, err := be.Alloc(o.Type(c), o.Len(c))
			if err != nil {
				t.Fatal(err)
			}
			bufs = append(bufs, b)
			out = append(out, b)
		}
		return out
	}
	in, out := alloc(f.Inputs), alloc(f.Outputs)
	l, err := be.Prepare(f, impl, c, in, out)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	return l.ScratchBytes()
}

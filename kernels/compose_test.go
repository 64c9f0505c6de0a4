package kernels

import (
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

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
				h[i] = float64(harness.F32FromBF16(harness.BF16FromF32(float32(v))))
			}
		}
		return GELUFamily.Reference(c, [][]float64{h})
	},
}

func init() {
	registerCPU(normGELU, func(l cpuLaunch) { composeNormGELU(l, Fused) }, func(l cpuLaunch) { composeNormGELU(l, Naive) })
}

func composeNormGELU(l cpuLaunch, impl Impl) {
	h := l.Temp(l.DType, l.Rows*l.Cols)
	l.Call(RMSNormFamily, impl, l.Case, l.In, []*cpuBuffer{h})
	l.Call(GELUFamily, impl, l.Case, []*cpuBuffer{h}, l.Out)
}

// TestCompose checks a composite family on every backend: both impls against the composed reference, and
// its scratch-B as the members' intermediates plus its own (the naive chain's exceed the fused one's).
func TestCompose(t *testing.T) {
	for name, be := range harness.Backends() {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Shape: Shape{Rows: 7, Cols: 300}}
			scratch := map[Impl]int64{}
			for _, impl := range Impls {
				if _, err := harness.CheckCase(be, normGELU, c, impl, harness.CaseSeed(t), nil); err != nil {
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
func prepareForScratch(t *testing.T, be harness.Backend, f *Family, c Case, impl Impl) int64 {
	t.Helper()
	var bufs []harness.Buffer
	defer func() {
		for _, b := range bufs {
			be.Free(b)
		}
	}()
	alloc := func(ops []Operand) []harness.Buffer {
		var out []harness.Buffer
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

// TestComposeReportsBadMembers checks that a composite whose member is wired to the wrong buffers, or is not
// implemented, fails its Run with the member named, rather than running on.
func TestComposeReportsBadMembers(t *testing.T) {
	be := harness.NewCPU(2)
	defer be.Close()
	missing := &Family{Name: "ComposeMissingMember", Inputs: GELUFamily.Inputs, Outputs: GELUFamily.Outputs}
	for name, member := range map[string]func(l cpuLaunch){
		"wrong buffers": func(l cpuLaunch) { l.Call(GELUFamily, Fused, l.Case, l.In, l.In) },
		"missing":       func(l cpuLaunch) { l.Call(missing, Fused, l.Case, l.In, l.Out) },
	} {
		bad := &Family{Name: "ComposeBad" + name, Inputs: RMSNormFamily.Inputs, Outputs: RMSNormFamily.Outputs}
		registerCPU(bad, member, nil)
		c := Case{DType: FP32, Shape: Shape{Rows: 2, Cols: 8}}
		var in, out []harness.Buffer
		for _, o := range bad.Inputs {
			b, _ := be.Alloc(o.Type(c), o.Len(c))
			in = append(in, b)
		}
		o, _ := be.Alloc(FP32, 16)
		out = append(out, o)
		l, err := be.Prepare(bad, Fused, c, in, out)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Run(); err == nil || !strings.Contains(err.Error(), "GELU") && !strings.Contains(err.Error(), missing.Name) {
			t.Errorf("%s: Run error %v, want one naming the member", name, err)
		}
	}
}

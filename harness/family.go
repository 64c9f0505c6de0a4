package harness

import (
	"fmt"
	"math"
	"strings"
)

// Impl names one implementation of a kernel family.
type Impl string

// The two implementations every family has.
const (
	Fused Impl = "fused" // ours: one kernel, each input read once from memory, each output written once
	Naive Impl = "naive" // a chain of simple whole-tensor ops with intermediate buffers, as an eager framework runs it
)

// Impls lists the implementations in the order the harness sweeps them.
var Impls = []Impl{Fused, Naive}

// StorageDTypes are the activation dtypes every family is declared, tested and benchmarked in.
var StorageDTypes = []DType{FP32, BF16}

// Shape is a rows × cols problem as it appears in benchmark names. What rows and cols mean is the family's
// declaration (RoPE: tokens × heads·128; SwiGLU: cols of the output, the input has 2·cols).
type Shape struct{ Rows, Cols int }

// Case is one point of a family's sweep.
type Case struct {
	DType DType // storage dtype of the activations
	Shape
	Variant string // value of the family's VariantKey ("row", "block128"); "" when it has none
	// Dims is one of the family's own shapes (Family.Grid), sizes in the order of its DimKeys; nil for a
	// rows × cols family.
	Dims []int
}

// Operand declares one input or output buffer of a family.
type Operand struct {
	Name  string
	DType DType // 0: the case's storage dtype
	Len   func(c Case) int
	// Gen is the distribution an input is drawn from (before rounding to the dtype). Outputs have none.
	Gen Dist
}

// Type is the operand's dtype in case c.
func (o Operand) Type(c Case) DType {
	if o.DType == 0 {
		return c.DType
	}
	return o.DType
}

// Family declares one kernel once: its operands, its float64 reference and its tolerance. The same declaration
// drives the correctness tests and the benchmarks of every backend; a backend supplies the code.
type Family struct {
	Name       string   // benchmark name after "Benchmark"
	VariantKey string   // name key of the family's extra axis ("scale"); "" when it has none
	Variants   []string // values of that axis
	// Labels returns name keys derived from the shape, placed after cols ("heads=32"); nil for none.
	Labels func(Shape) []string
	// Supports reports whether the family can run a shape (RoPE needs cols divisible by its head dim); nil: all.
	Supports func(Shape) bool
	// Grid, when set, holds the family's own shapes per device kind ("cpu", "cuda"; "test": the correctness
	// tests'), swept instead of the suite's rows × cols grid: sizes named by DimKeys in benchmark names
	// (batch=256/t=1024/…, no rows or cols) and handed to the code as Case.Dims. Sequence families declare one.
	Grid            map[string][][]int
	DimKeys         []string
	Inputs, Outputs []Operand
	// Reference computes the outputs in float64 from the inputs as stored (already rounded to their dtypes).
	Reference func(c Case, in [][]float64) [][]float64
	// Tolerance is the largest relative L2 error allowed on output i; nil: DefaultTolerance of its dtype.
	Tolerance func(c Case, out int) float64
	// Skip, when set, says why the benchmarks leave (c, impl) out ("" when they run it): a naive form that
	// launches once per timestep, at lengths where its runs would cost more than the suite's time budget. The
	// correctness tests run every pair.
	Skip func(c Case, impl Impl) string
	// Check replaces the relative-L2 comparison for families whose error bound is per element (FP8); nil: relL2.
	Check func(c Case, in, got, want [][]float64) error
	// DTypes are the storage dtypes the family is declared in; nil: StorageDTypes. Tensor-core families
	// (bf16 inputs, fp32 accumulation) declare only BF16.
	DTypes []DType
	// Flops, when set, is the useful floating-point work of one launch of case c (2·M·N·K per GEMM;
	// 4·B·H·T²·d for attention, half when causal). The harness then reports TFLOP/s and, where the suite
	// measured the device's tensor-core rate (Suite.MMATFLOPS), pct-mma: the compute-bound families'
	// yardstick, as pct-copy is the memory-bound ones'.
	Flops func(c Case) float64
	// Pending, when set, says why the family's GPU code is not yet trusted — it has not passed its tests on a
	// GPU. The GPU benchmarks skip such a family with this reason unless the run asks for it (Suite.RunPending,
	// -kernels.pending), so that a kernel that faults cannot take the regression gate's whole process down;
	// the tests run it, which is how it stops being pending. The CPU runs it as any other.
	Pending string
	// Hot, when set, decides which cases also get the hot figure (hot-ns) on a GPU, instead of the
	// harness's rule (a cold median under Policy.HotBelow). A family sets it where a case's cold time sits
	// near that bound: the rule would then give hot-ns in some processes and not in others, and a unit with
	// samples from only some processes can be neither stored as a baseline nor compared.
	Hot func(c Case) bool
	// VendorGEMMs, when set, are the bf16 GEMMs y[m, n] = x[m, k] · w[n, k]ᵀ, as {m, n, k}, that case c amounts
	// to when a framework runs it through the vendor library: on a GPU with cuBLASLt the harness times them in
	// the same run, under the same policy, and reports the case's time against theirs as pct-cublas (vendor.go).
	VendorGEMMs func(c Case) [][3]int
}

// dtypes is the family's storage dtypes: DTypes, or StorageDTypes when it declares none.
func (f *Family) dtypes() []DType {
	if f.DTypes != nil {
		return f.DTypes
	}
	return StorageDTypes
}

// DefaultTolerance is the relative L2 error allowed on an output of dtype dt: 1e-2 for bf16, whose rounding
// alone is 2⁻⁹ relative, and 1e-5 for everything else.
func DefaultTolerance(dt DType) float64 {
	if dt == BF16 {
		return 1e-2
	}
	return 1e-5
}

// Cases lists the family's sweep over a grid: dtype, then shape, then variant, in declaration order.
func (f *Family) Cases(grid []Shape) []Case {
	var points []Case
	for _, s := range grid {
		if f.Supports == nil || f.Supports(s) {
			points = append(points, Case{Shape: s})
		}
	}
	return f.sweep(points)
}

// CasesOn lists the family's sweep on device kind: over its own shapes (Grid[kind]) when it declares a Grid,
// else over grid as Cases does.
func (f *Family) CasesOn(kind string, grid []Shape) []Case {
	if f.Grid == nil {
		return f.Cases(grid)
	}
	var points []Case
	for _, d := range f.Grid[kind] {
		points = append(points, Case{Dims: d})
	}
	return f.sweep(points)
}

// sweep crosses shapes (cases with only a shape set) with the storage dtypes and the variants.
func (f *Family) sweep(shapes []Case) []Case {
	variants := f.Variants
	if len(variants) == 0 {
		variants = []string{""}
	}
	var cs []Case
	for _, dt := range f.dtypes() {
		for _, s := range shapes {
			for _, v := range variants {
				s.DType, s.Variant = dt, v
				cs = append(cs, s)
			}
		}
	}
	return cs
}

// BenchName is the sub-benchmark name of (c, impl): dtype=…/rows=…/cols=…[/labels][/variant]/impl=… (design §2),
// or for a family with its own shapes dtype=…/<dim key>=…/…[/variant]/impl=….
func (f *Family) BenchName(c Case, impl Impl) string {
	parts := []string{"dtype=" + c.DType.String()}
	if c.Dims != nil {
		for i, d := range c.Dims {
			parts = append(parts, fmt.Sprintf("%s=%d", f.DimKeys[i], d))
		}
	} else {
		parts = append(parts, fmt.Sprintf("rows=%d", c.Rows), fmt.Sprintf("cols=%d", c.Cols))
		if f.Labels != nil {
			parts = append(parts, f.Labels(c.Shape)...)
		}
	}
	if f.VariantKey != "" {
		parts = append(parts, f.VariantKey+"="+c.Variant)
	}
	return strings.Join(append(parts, "impl="+string(impl)), "/")
}

// MinBytes is the memory traffic the case cannot avoid: each input read once and each output written once.
func (f *Family) MinBytes(c Case) int64 {
	var n int64
	for _, ops := range [][]Operand{f.Inputs, f.Outputs} {
		for _, o := range ops {
			n += int64(o.Len(c)) * int64(o.Type(c).Size())
		}
	}
	return n
}

// Verify compares a backend's outputs with the reference outputs computed from the same inputs.
func (f *Family) Verify(c Case, in, got, want [][]float64) error {
	if f.Check != nil {
		return f.Check(c, in, got, want)
	}
	for i, o := range f.Outputs {
		tol := DefaultTolerance(o.Type(c))
		if f.Tolerance != nil {
			tol = f.Tolerance(c, i)
		}
		if err := RelL2Within(got[i], want[i], tol); err != nil {
			return fmt.Errorf("output %s: %w", o.Name, err)
		}
	}
	return nil
}

// RelL2Within fails unless ‖got − want‖₂ ≤ tol·‖want‖₂ (with NaN failing), naming the worst element: the
// comparison Family.Verify makes, for a test that compares outputs itself. A zero tolerance demands exact
// equality; an all-zero want is compared absolutely.
func RelL2Within(got, want []float64, tol float64) error {
	var num, den, worst float64
	at := -1
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
		if ad := math.Abs(d); at < 0 || !(ad <= worst) && worst == worst { // a NaN is the worst; keep the first
			worst, at = ad, i
		}
	}
	if den == 0 {
		den = 1 // an all-zero reference: compare absolutely
	}
	rel := math.Sqrt(num / den)
	if rel <= tol {
		return nil
	}
	return fmt.Errorf("relative L2 error %.3g > %.3g (worst at %d: got %v, want %v)", rel, tol, at, got[at], want[at])
}

// CheckBuffers reports whether in and out match the family's operands for case c in number, dtype and length;
// backends call it from Prepare.
func (f *Family) CheckBuffers(c Case, in, out []Buffer) error {
	for _, side := range []struct {
		what string
		ops  []Operand
		bufs []Buffer
	}{{"inputs", f.Inputs, in}, {"outputs", f.Outputs, out}} {
		if len(side.bufs) != len(side.ops) {
			return fmt.Errorf("harness: %s takes %d %s, got %d", f.Name, len(side.ops), side.what, len(side.bufs))
		}
		for i, o := range side.ops {
			b := side.bufs[i]
			if b.DType() != o.Type(c) || b.Len() != o.Len(c) {
				return fmt.Errorf("harness: %s %s is %d×%v, got %d×%v", f.Name, o.Name, o.Len(c), o.Type(c), b.Len(), b.DType())
			}
		}
	}
	return nil
}

package harness_test

import (
	"fmt"
	"strings"

	"github.com/kernelwatch/kernelwatch/harness"
)

// A family's axes are data: the harness crosses its storage dtypes, its shapes (here its own sizes, named by
// DimKeys), its variant axis and the two implementations, in that order, and names each case.
func ExampleFamily_BenchName() {
	softmax := &harness.Family{
		Name:       "Softmax",
		DTypes:     []harness.DType{harness.BF16},
		Grid:       map[string][][]int{"cpu": {{8, 4096}, {256, 4096}}},
		DimKeys:    []string{"rows", "cols"},
		VariantKey: "mask",
		Variants:   []string{"none", "causal"},
	}
	for _, c := range softmax.CasesOn("cpu", nil) {
		for _, impl := range harness.Impls {
			fmt.Println("Benchmark" + softmax.Name + "/" + softmax.BenchName(c, impl))
		}
	}
	// Output:
	// BenchmarkSoftmax/dtype=bf16/rows=8/cols=4096/mask=none/impl=fused
	// BenchmarkSoftmax/dtype=bf16/rows=8/cols=4096/mask=none/impl=naive
	// BenchmarkSoftmax/dtype=bf16/rows=8/cols=4096/mask=causal/impl=fused
	// BenchmarkSoftmax/dtype=bf16/rows=8/cols=4096/mask=causal/impl=naive
	// BenchmarkSoftmax/dtype=bf16/rows=256/cols=4096/mask=none/impl=fused
	// BenchmarkSoftmax/dtype=bf16/rows=256/cols=4096/mask=none/impl=naive
	// BenchmarkSoftmax/dtype=bf16/rows=256/cols=4096/mask=causal/impl=fused
	// BenchmarkSoftmax/dtype=bf16/rows=256/cols=4096/mask=causal/impl=naive
}

// The correctness check runs each implementation on fresh inputs with its outputs poisoned: an implementation
// that leaves one element unwritten fails, naming the output and the element.
func ExampleCheckCase() {
	elements := func(c harness.Case) int { return c.Rows * c.Cols }
	double := &harness.Family{
		Name:    "ExampleDouble",
		DTypes:  []harness.DType{harness.FP32},
		Inputs:  []harness.Operand{{Name: "x", Len: elements, Gen: harness.Dist{Kind: harness.Normal, SD: 1}}},
		Outputs: []harness.Operand{{Name: "y", Len: elements}},
		Reference: func(_ harness.Case, in [][]float64) [][]float64 {
			y := make([]float64, len(in[0]))
			for i, v := range in[0] {
				y[i] = 2 * v
			}
			return [][]float64{y}
		},
	}
	harness.RegisterCPU(double, harness.Fused, func(l *harness.CPULaunch) {
		for i, v := range l.In[0].F32 {
			l.Out[0].F32[i] = 2 * v
		}
	})
	harness.RegisterCPU(double, harness.Naive, func(l *harness.CPULaunch) {
		x := l.In[0].F32
		t := l.ScratchF32(len(x))
		for i := range x[:len(x)-1] { // one element short
			t[i] = 2 * x[i]
			l.Out[0].F32[i] = t[i]
		}
	})
	be := harness.NewCPU(2)
	defer be.Close()
	c := harness.Case{DType: harness.FP32, Shape: harness.Shape{Rows: 3, Cols: 100}}
	for _, impl := range harness.Impls {
		_, err := harness.CheckCase(be, double, c, impl, 1, nil)
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), " (")
			fmt.Printf("%s: %s\n", impl, msg)
			continue
		}
		fmt.Printf("%s: ok\n", impl)
	}
	// Output:
	// fused: ok
	// naive: run 1: output y: relative L2 error NaN > 1e-05
}

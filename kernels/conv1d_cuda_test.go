//go:build cuda

package kernels

import (
	"slices"
	"testing"
)

// conv1dPlans lists the plans that can run case c: every fused kernel of cuda/conv1d.cu, in blocks 1, 4 and up
// to 64 channel accesses wide.
func conv1dPlans(c Case) []conv1dPlan {
	kernels := map[DType][][2]int{FP32: {{4, 8}, {4, 4}, {1, 8}}, BF16: {{8, 8}, {8, 4}, {4, 8}, {1, 8}}}
	var ps []conv1dPlan
	for _, vl := range kernels[c.DType] {
		v, l := vl[0], vl[1]
		if c.Dims[2]%v != 0 {
			continue
		}
		for _, qmax := range []int{1, 4, 64} {
			q := min(ceilPow2(ceilDiv(c.Dims[2], v)), qmax)
			if p := (conv1dPlan{v: v, l: l, q: q, r: min(256/q, conv1dMaxSteps/l)}); !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// TestCUDAConv1DPlans checks every fused conv1d kernel and block shape against the reference.
func TestCUDAConv1DPlans(t *testing.T) {
	testPlans(t, Conv1DFamily, nil, conv1dPlans, &conv1dPlanFor)
}

// TestCUDAConv1DTune times every conv1d plan on the cuda grid (with -kernels.tune).
func TestCUDAConv1DTune(t *testing.T) {
	tunePlans(t, Conv1DFamily, conv1dPlans, &conv1dPlanFor)
}

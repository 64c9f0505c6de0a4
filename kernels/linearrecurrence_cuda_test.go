//go:build cuda

package kernels

import (
	"slices"
	"testing"
)

// linRecPlans lists the plans that can run case c: every fused kernel of cuda/linearrecurrence.cu, in tiles 1,
// 2, 32 accesses and the default number of accesses wide.
func linRecPlans(c Case) []chainPlan {
	kernels := map[DType][][2]int{FP32: {{4, 4}, {4, 8}, {2, 8}, {1, 8}}, BF16: {{8, 4}, {4, 4}, {4, 8}, {2, 8}, {1, 8}}}
	cplx := c.Variant == "complex"
	var ps []chainPlan
	for _, vl := range kernels[c.DType] {
		v, l := vl[0], vl[1]
		for _, qmax := range []int{1, 2, 32, linRecChoosePlan(c).q} {
			q := min(ceilPow2(ceilDiv(c.Dims[2], v)), qmax)
			p := chainPlan{v: v, l: l, q: q, s: 256 / q}
			if p.check(c.Dims[2], cplx) == nil && !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// TestCUDALinearRecurrencePlans checks every fused kernel and tile shape against the reference, also over
// thousands of steps (a chain of up to 2900 tiles).
func TestCUDALinearRecurrencePlans(t *testing.T) {
	var long []Case
	for _, v := range LinearRecurrenceFamily.Variants {
		for _, dt := range StorageDTypes {
			long = append(long, Case{DType: dt, Dims: []int{2, 3000, 64}, Variant: v}, Case{DType: dt, Dims: []int{1, 5000, 8}, Variant: v})
		}
	}
	testPlans(t, LinearRecurrenceFamily, long, linRecPlans, &linRecPlanFor)
}

// TestCUDALinearRecurrenceTune times every plan on the cuda grid (with -kernels.tune).
func TestCUDALinearRecurrenceTune(t *testing.T) {
	tunePlans(t, LinearRecurrenceFamily, linRecPlans, &linRecPlanFor)
}

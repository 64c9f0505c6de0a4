//go:build cuda

package kernels

import (
	"slices"
	"testing"
)

// rtuPlans lists tile shapes for case c: the default, one segment a unit, and short segments.
func rtuPlans(c Case) []rtuPlan {
	def := rtuChoosePlan(c)
	steps := min(rtuMaxSteps, rtuTileFloats/(c.Dims[2]+c.Dims[3]))
	var ps []rtuPlan
	for _, p := range []rtuPlan{def, {s: 1, l: min(steps, 5)}, {s: min(def.s, 3), l: 2}, {s: def.s, l: max(1, def.l/2)}} {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestCUDARTUPlans checks the fused kernel in several tile shapes against the reference, also over thousands
// of steps.
func TestCUDARTUPlans(t *testing.T) {
	long := []Case{{DType: FP32, Dims: []int{2, 3000, 64, 16}}, {DType: BF16, Dims: []int{1, 900, 128, 8}}}
	testPlans(t, RTUFamily, long, rtuPlans, &rtuPlanFor)
}

// TestCUDARTUTune times the tile shapes on the cuda grid (with -kernels.tune).
func TestCUDARTUTune(t *testing.T) {
	tunePlans(t, RTUFamily, rtuPlans, &rtuPlanFor)
}

//go:build cuda

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// lstmPlanTestCases are the LSTM's test grid and, for the tensor-core kernels' batch tiles of 16 and 32 rows,
// batches of several tiles with tails, at every hidden size those are built for.
func lstmPlanTestCases() []Case {
	extra := LSTMFamily.CasesOn("test", nil)
	for _, d := range [][]int{{37, 9, 16}, {37, 9, 32}, {37, 9, 64}, {33, 6, 128}, {20, 5, 256}, {48, 3, 256}} {
		extra = append(extra, Case{DType: BF16, Dims: d})
	}
	// The unit kernels' blocks of 1, 2 and 4 rows with tails, and a run of steps long enough for the fast gate
	// functions' errors to build up.
	// The 3xTF32 kernels' 16-row tiles with tails and whole, and a run of steps long enough for the tf32 products'
	// errors to build up.
	for _, d := range [][]int{{37, 9, 16}, {37, 9, 32}, {37, 9, 64}, {7, 300, 64}, {33, 6, 128}, {20, 5, 256},
		{48, 3, 256}, {9, 200, 256}} {
		extra = append(extra, Case{DType: FP32, Dims: d})
	}
	return extra
}

// TestCUDALSTMPlans: the fused LSTM in every plan (the SIMT kernels, for bf16 on sm_90 every tensor-core shape,
// for fp32 on sm_90 every 3xTF32 shape, whether or not -kernels.pending lets the chooser pick them), against the
// float64 reference, with every reset pattern of TestRecurrentResets.
func TestCUDALSTMPlans(t *testing.T) {
	be := cudaBackend(t)
	use := swapLSTMPlan(t)
	for _, c := range lstmPlanTestCases() {
		for _, p := range lstmPlans(c) {
			t.Run(fmt.Sprintf("%s/%v", LSTMFamily.BenchName(c, Fused), p), func(t *testing.T) {
				if (p.tc || p.x3) && be.CC() < 90 {
					t.Skipf("plan %v needs compute capability 9.0, this GPU is %d.%d", p, be.CC()/10, be.CC()%10)
				}
				use(p)
				gens := map[string]harness.Generator{"resets": seqResetPatterns(seqTimeDim[LSTMFamily.Name])}
				if _, err := harness.CheckCase(be, LSTMFamily, c, Fused, harness.CaseSeed(t), gens); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
			})
		}
	}
}

// TestCUDALSTMX3Range: the fp32 plans that make the input projection alongside the recurrence (pa; its products in
// fp16 with ph), on inputs past fp16's range (every third row of x about 2¹⁷, W_ih about 2⁻¹⁹ so that the gates
// stay unsaturated) and on weights whose W_ih·2¹⁰ is past it (every fifth gate row of W_ih about 2⁷, x about 2⁻¹⁰),
// against the float64 reference: ph's tiles whose fp16 sums come out inf or NaN are made again in 3xTF32, so the
// result is fp32's (before any guard, G overflowed to inf and the outputs came out NaN).
func TestCUDALSTMX3Range(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skipf("the 3xTF32 plans need compute capability 9.0, this GPU is %d.%d", be.CC()/10, be.CC()%10)
	}
	use := swapLSTMPlan(t)
	// scaled is N(0, 1) × s on the rows (of the operand's last dim, the hidden size) whose index is a multiple of
	// every, N(0, 1) × rest elsewhere.
	scaled := func(s, rest float64, every int) harness.Generator {
		return func(r *rand.Rand, c Case, dst []float32) {
			for i := range dst {
				v := r.NormFloat64() * rest
				if (i/c.Dims[2])%every == 0 {
					v = r.NormFloat64() * s
				}
				dst[i] = float32(v)
			}
		}
	}
	data := []struct {
		name string
		gens map[string]harness.Generator
	}{
		{"x-past-fp16", map[string]harness.Generator{"x": scaled(0x1p17, 1, 3), "w_ih": scaled(0x1p-19, 0x1p-19, 1)}},
		{"w-past-fp16", map[string]harness.Generator{"x": scaled(0x1p-10, 0x1p-10, 1), "w_ih": scaled(0x1p7, 0.1, 5)}},
	}
	for _, d := range [][]int{{48, 3, 256}, {37, 4, 256}} {
		c := Case{DType: FP32, Dims: d}
		for _, p := range lstmPlans(c) {
			if !p.pa {
				continue
			}
			for _, dd := range data {
				t.Run(fmt.Sprintf("%s/%v/%s", LSTMFamily.BenchName(c, Fused), p, dd.name), func(t *testing.T) {
					use(p)
					if _, err := harness.CheckCase(be, LSTMFamily, c, Fused, harness.CaseSeed(t), dd.gens); err != nil {
						t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
					}
				})
			}
		}
	}
}

// TestCUDALSTMTune (with -kernels.tune) times every plan at the cuda grid's cases, and the naive chain, cold, and
// prints µs and the speedup over naive.
func TestCUDALSTMTune(t *testing.T) {
	be := cudaBackend(t)
	sms := be.Device().Workers
	plan := func(c Case) lstmPlan { return lstmChoosePlan(c, be.CC(), sms) }
	def := lstmPlanFor
	t.Cleanup(func() { lstmPlanFor = def })
	lstmPlanFor = func(c Case, _, _ int) lstmPlan { return plan(c) }
	tunePlans(t, LSTMFamily, lstmPlans, &plan)
}

// TestCUDALSTMX3Parts (with -kernels.tune) times the 3xTF32 plans' projection and recurrence apart (not those with
// the projection alongside, pa: one launch), and the recurrence of x3_cl8_kp2_wl without its y stores, its h stores
// into the other blocks or its G loads, at the cuda grid's fp32 cases at hidden 256 (over G as the allocator
// leaves it, results unchecked: timing only); it logs how many clusters of each plan's recurrence the GPU runs at
// once.
func TestCUDALSTMX3Parts(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 90 {
		t.Skip("the 3xTF32 plans need compute capability 9.0")
	}
	plan := func(c Case) lstmPlan { return lstmChoosePlan(c, be.CC(), be.Device().Workers) }
	def := lstmPlanFor
	t.Cleanup(func() { lstmPlanFor = def })
	lstmPlanFor = func(c Case, _, _ int) lstmPlan { return plan(c) }
	seen := map[string]bool{}
	lstmX3Resident = func(p lstmPlan, clusters, resident int) {
		p.part = 0
		if k := fmt.Sprintf("%v/%d", p, clusters); !seen[k] {
			seen[k] = true
			t.Logf("%v: %d clusters of %d blocks, %d at once on this GPU (%d waves)", p, clusters, p.cluster, resident,
				ceilDiv(clusters, max(resident, 1)))
		}
	}
	t.Cleanup(func() { lstmX3Resident = nil })
	tunePlans(t, LSTMFamily, func(c Case) []lstmPlan {
		var ps []lstmPlan
		if sh := lstmX3Shapes[c.Dims[2]]; c.DType == FP32 && len(sh) > 0 {
			for _, p := range lstmPlans(c) {
				if p.x3 && !p.pa {
					for part := 1; part <= 5; part++ {
						p.part = part
						if part < 3 || p.cluster == 8 && p.kp == 2 && p.mt == 1 && p.wl && !p.a1 && !p.h3 {
							ps = append(ps, p)
						}
					}
				}
			}
		}
		return ps
	}, &plan)
}

// TestCUDASLSTMPlans: the fused sLSTM in every plan (the SIMT kernel, and for bf16 on sm_90 the tensor-core
// kernel with 8-, 16- and 32-row batch tiles, whether or not -kernels.pending lets the chooser pick it), against
// the float64 reference, with every reset pattern; the extra cases have batch tiles with tails.
func TestCUDASLSTMPlans(t *testing.T) {
	be := cudaBackend(t)
	def := slstmPlanFor
	t.Cleanup(func() { slstmPlanFor = def })
	cases := SLSTMFamily.CasesOn("test", nil)
	for _, d := range [][]int{{37, 2, 9, 16}, {37, 3, 7, 32}, {20, 2, 5, 64}} {
		cases = append(cases, Case{DType: BF16, Dims: d}, Case{DType: FP32, Dims: d})
	}
	cases = append(cases, Case{DType: FP32, Dims: []int{7, 2, 300, 32}}, Case{DType: FP32, Dims: []int{3, 2, 300, 64}})
	for _, c := range cases {
		for _, p := range slstmPlans(c) {
			t.Run(fmt.Sprintf("%s/%v", SLSTMFamily.BenchName(c, Fused), p), func(t *testing.T) {
				if p.tc && be.CC() < 90 {
					t.Skipf("plan %v needs compute capability 9.0, this GPU is %d.%d", p, be.CC()/10, be.CC()%10)
				}
				slstmPlanFor = func(Case, int) slstmPlan { return p }
				gens := map[string]harness.Generator{"resets": seqResetPatterns(seqTimeDim[SLSTMFamily.Name])}
				if _, err := harness.CheckCase(be, SLSTMFamily, c, Fused, harness.CaseSeed(t), gens); err != nil {
					t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
				}
			})
		}
	}
}

// TestCUDASLSTMTune (with -kernels.tune) times every sLSTM plan at the cuda grid's cases, and the naive chain,
// cold, and prints µs and the speedup over naive.
func TestCUDASLSTMTune(t *testing.T) {
	plan := func(c Case) slstmPlan { return slstmChoosePlan(c, cudaBackend(t).CC()) }
	def := slstmPlanFor
	t.Cleanup(func() { slstmPlanFor = def })
	slstmPlanFor = func(c Case, _ int) slstmPlan { return plan(c) }
	tunePlans(t, SLSTMFamily, slstmPlans, &plan)
}

// swapLSTMPlan returns a function that makes lstmPlanFor pick a given plan, restored when t ends.
func swapLSTMPlan(t *testing.T) func(lstmPlan) {
	def := lstmPlanFor
	t.Cleanup(func() { lstmPlanFor = def })
	return func(p lstmPlan) { lstmPlanFor = func(Case, int, int) lstmPlan { return p } }
}

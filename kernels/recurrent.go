package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kernelwatch/kernelwatch/harness"
)

// The recurrent families (SelectiveScan, LSTM, SLSTM, MLSTM) run a recurrence over time for each batch row with
// per-timestep resets: a reset at (b, t) zeroes every state of row b (hidden, cell, normalizer, stabilizer)
// before step t, as at an episode boundary in reinforcement learning. Step 0 starts from zero state, as after a
// reset. Their shapes are their own (Family.Grid: batch, time and widths), and their naive forms launch once or a
// few times per timestep, so the benchmarks leave those out past seqNaiveMaxT steps (seqSkipNaive). The helpers
// they share are here; each family's declaration, CPU code and reference are in its own file.

// recurrentResetRate is the probability of a reset at each (b, t) of benchmark and random test inputs.
const recurrentResetRate = 1.0 / 16

// seqResets declares the (batch, time) reset flags: 1 where the row's state is zeroed before the step, else 0,
// stored in the case's dtype (exact in bf16). A Custom distribution: the flags are a small table (B·T ≤ 2^18 in
// the grids), drawn on the host and uploaded.
func seqResets(bt func(Case) int) Operand {
	return Operand{Name: "resets", Len: bt, Gen: Dist{Host: func(r *rand.Rand, _ Case, dst []float32) {
		for i := range dst {
			dst[i] = 0
			if r.Float64() < recurrentResetRate {
				dst[i] = 1
			}
		}
	}}}
}

// rnnTCPending says why the LSTM's and sLSTM's tensor-core plans (cuda/rnn_tc.cuh: bf16 on sm_90) would not be
// chosen: "" since the integrated build passed TestCUDALSTMPlans and TestCUDASLSTMPlans (every plan, every reset
// pattern) on an H100 and an H200.
const rnnTCPending = ""

// rnnTCOn is whether the LSTM's and sLSTM's choosers may pick their tensor-core plans.
var rnnTCOn = rnnTCPending == ""

// rnnUnitsPending says why the LSTM's and sLSTM's fp32 unit plans (rnn.cuh's rnn_units: a thread per unit and
// part of its four gate rows, one barrier a step, optionally the fp32 gate functions on the special-function
// unit) would not be chosen: "" since the integrated build (main 2b03c19) passed TestCUDALSTMPlans and
// TestCUDASLSTMPlans (every plan, every reset pattern) and TestKernels with them on an H100, where
// (TestCUDA(LSTM|SLSTM)Tune) the chosen plans took LSTM fp32 batch 256, 1024 steps, hidden 64 to 0.818 ms
// (18.8× naive; SIMT 1.336 ms), sLSTM fp32 (2, 4, 256, 64) to 0.130 ms (25.7×; SIMT 0.182 ms) and
// (256, 4, 1024, 32) to 0.637 ms (21.5×; SIMT 0.809 ms). Not yet run on an H200.
const rnnUnitsPending = ""

// rnnUnitsOn is whether the LSTM's and sLSTM's choosers may pick their unit plans.
var rnnUnitsOn = rnnUnitsPending == ""

// rnnX3Pending says why the LSTM's fp32 tensor-core plans (cuda/rnn_x3.cuh: 3xTF32 on sm_90; the hidden-256
// kernel and the hidden-64 unit kernel with its input projection on tensor cores) would not be chosen: "" since
// TestCUDALSTMPlans passed with them (every plan, every reset pattern), with the whole correctness suite, on an
// H100 and an H200 at f496c45, where (TestCUDALSTMTune, H100) they took LSTM fp32 batch 256, 128 steps, hidden 256
// from 2.40 ms (SIMT) to 1.23 ms and batch 256, 1024 steps, hidden 64 from 0.825 to 0.799 ms (the baselines:
// 1.23 and 0.79 ms on the H100, 1.22 and 0.80 ms on the H200).
const rnnX3Pending = ""

// rnnX3On is whether the LSTM's chooser may pick its 3xTF32 plans.
var rnnX3On = rnnX3Pending == ""

// lstmStepPending says why the LSTM's hidden-64 plans that shorten a step (lstmStepPlans: bf16 rnn_tc_r8x with two
// chains of mma; fp32 rnn_units_xt with LstmCellF8 without its exponentials' correction, the step's flag and
// projection read early, a reset applied a step early) would not be chosen: "" since TestCUDALSTMPlans passed
// with them (every plan, every reset pattern) on an H200 at 13970a4, and the bf16 plan and the fp32 one short of
// its early reset on H100s at 24f21f3 and 3d1688b. TestCUDALSTMTune, batch 256, 1024 steps: bf16 from 0.741–0.758
// to 0.458–0.476 ms (34–35× naive, H100 and H200); fp32 from 0.796 to 0.657 ms on the H200 (22.6×; the plan
// without the early reset: 0.713–0.720 ms on H100s, 0.744 on the H200).
const lstmStepPending = ""

// lstmStepOn is whether the LSTM's chooser may pick lstmStepPlans.
var lstmStepOn = lstmStepPending == ""

// lstmX3PAPending says why the LSTM's fp32 plan at hidden 256 with the input projection made alongside the
// recurrence in one launch (lstmX3PAPlan, cuda/rnn_x3.cuh's rnn_x3_pa, the recurrence's products in fp16, the
// projection's then in 3xTF32) would not be chosen: "" since TestCUDALSTMPlans passed at fp32 hidden 256 (every plan,
// every reset pattern) on an H100 at 931f89a (da4f626 after the rebase onto main) and at be4002d (ab7dcd6), where
// (TestCUDALSTMTune) batch 256, 128 steps took 0.815–0.822 ms (4.8–4.9× the eager chain; 0.777 ms, 5.1×, with the
// projection in fp16 too, chosen since with a range guard: see lstmX3PAPlan) against 1.283 ms for x3_cl8_kp2_wl.
const lstmX3PAPending = ""

// lstmX3PAOn is whether the LSTM's chooser may pick lstmX3PAPlan.
var lstmX3PAOn = lstmX3PAPending == ""

// rnnUnitLanes are the threads a unit of rnn_units (lstm.cu, slstm.cu) at each hidden or head size by default:
// each holds 1/lanes of the unit's four gate rows (of W_hh and, for the LSTM, W_ih) in registers, 128 floats a
// thread at 32 and 64 for the sLSTM and at 64 for the LSTM. The kernels are also built with twice as many
// (rnnUnitLanesAlt; fast gate functions only): half the serial FMAs a step for one more round of shuffles.
var (
	lstmUnitLanes     = map[int]int{16: 1, 32: 2, 64: 4}
	lstmUnitLanesAlt  = map[int]int{16: 2, 32: 4, 64: 8}
	slstmUnitLanes    = map[int]int{16: 1, 32: 1, 64: 2}
	slstmUnitLanesAlt = map[int]int{16: 2, 32: 2, 64: 4}
)

// rnnUnitBatches are the batch rows a block rnn_units is built for; 0 in a plan: the fewest that keep the grid
// resident (rnnBatchFor).
var rnnUnitBatches = []int{0, 1, 2, 4}

// rnnUnitsName is the rnn_units kernel of a module (lstm or slstm) at size key (h or dh) n, with the fast gate
// functions or not, lanes threads a unit, for bb batch rows a block.
func rnnUnitsName(module, key string, n int, fast bool, lanes, bb int) string {
	f := ""
	if fast {
		f = "f"
	}
	return fmt.Sprintf("%s_units%s_f32_%s%d_l%d_bb%d", module, f, key, n, lanes, bb)
}

// rnnUnitsPlans lists the unit plans a hidden or head size n has in lanes (default) and alt (twice as many; fast
// only): for each, the batch rows a block of rnnUnitBatches. mk makes a family's plan.
func rnnUnitsPlans[P any](n int, lanes, alt map[int]int, mk func(fast bool, lanes, bb int) P) []P {
	var ps []P
	if lanes[n] == 0 {
		return nil
	}
	for _, v := range []struct {
		fast  bool
		lanes int
	}{{false, 0}, {true, 0}, {true, alt[n]}} {
		for _, bb := range rnnUnitBatches {
			ps = append(ps, mk(v.fast, v.lanes, bb))
		}
	}
	return ps
}

// rnnUnitsPlanName is how a unit plan prints: units (accurate gate functions) or unitsf (fast), then _l and its
// lanes a unit and _bb and its batch rows a block where not the defaults.
func rnnUnitsPlanName(fast bool, lanes, bb int) string {
	s := "units"
	if fast {
		s += "f"
	}
	if lanes > 0 {
		s += fmt.Sprintf("_l%d", lanes)
	}
	if bb > 0 {
		s += fmt.Sprintf("_bb%d", bb)
	}
	return s
}

// rnnTCSmem is the dynamic shared memory of rnn_tc.cuh's kernel (RnnTC::SMEM, which the kernel checks) for
// hidden h, clusters of cl blocks, mt m16 tiles of batch rows (r8: one, of which 8 rows are batch rows), and x
// (RNN_TC_X: x_t in the input ring) or G columns of gBytes a value: two h buffers of 16·mt rows and RNN_TC_PD
// input stages of a tile's rows, rows padded by 16 bytes (fp32 G: 32).
func rnnTCSmem(h, cl, mt int, r8, x bool, gBytes int) int {
	const stages = 4 // RNN_TC_PD
	rows, hp := 16*mt, 2*h+16
	srows, sp := rows, hp
	if r8 {
		srows = 8
	}
	if !x {
		sp = 4*(h/cl)*gBytes + 8*gBytes
	}
	return 2*rows*hp + stages*srows*sp
}

// seqNaiveMaxT is the longest sequence the benchmarks run a naive form at: one launch (or a few) per step costs
// about 3 µs of launch latency a launch on a GPU, ≈ 12 ms a run at 1024 steps, and the whole-suite check runs
// every benchmark in 20 processes.
const seqNaiveMaxT = 1024

// seqSkipNaive is a Family.Skip that leaves the naive form out past seqNaiveMaxT steps; t is the index of the
// time dimension in Case.Dims.
func seqSkipNaive(t int) func(Case, Impl) string {
	return func(c Case, impl Impl) string {
		if impl == Naive && c.Dims[t] > seqNaiveMaxT {
			return fmt.Sprintf("a naive run of %d steps takes too long for the suite's budget (at most %d steps)", c.Dims[t], seqNaiveMaxT)
		}
		return ""
	}
}

// seqNaiveState is a naive chain's recurrent state [batch, width] in fp32, zero before the first step (an eager
// op at the start of each run), and mask(t), the eager op that multiplies row b by 1 − resets[b, t] before step
// t (the keep flags 1 − resets are one more eager op, first).
func (l cpuLaunch) seqNaiveState(resets act, nb, nt, width int) (st view, mask func(t int)) {
	keep := l.bin(opSub, scalar(1), dense(resets, 1), nb*nt, 1)
	st = l.tmp(nb, width)
	l.binary(opMul, st, st, scalar(0), nb, width)
	return st, func(t int) { l.binary(opMul, st, st, view{t: keep.t, off: t, rowStride: nt, rowDiv: 1}, nb, width) }
}

// setAt stores v at element i, rounded to the tensor's dtype.
func (a act) setAt(i int, v float32) {
	if a.b16 != nil {
		a.b16[i] = harness.BF16FromF32(v)
	} else {
		a.f32[i] = v
	}
}

// Gate functions in float64 (references) and float32 (CPU implementations, with mathf.go's exp32).

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// logSigmoid64 is log σ(x) = min(x, 0) − log(1 + e^−|x|), exact for large |x|.
func logSigmoid64(x float64) float64 { return min(x, 0) - math.Log1p(math.Exp(-math.Abs(x))) }

// softplus64 is log(1 + e^x) = max(x, 0) + log(1 + e^−|x|).
func softplus64(x float64) float64 { return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func logSigmoid32(x float32) float32 {
	return min(x, 0) - float32(math.Log1p(float64(exp32(-abs32(x)))))
}

func softplus32(x float32) float32 {
	return max(x, 0) + float32(math.Log1p(float64(exp32(-abs32(x)))))
}

func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }

// seqGEMM is a batch of z products out = a·wᵀ (+ bias): out[z, m, n] = Σ_k a[z, m, k]·w[z, n, k] + bias[z, n] in
// float32, for the input projection and the recurrent steps of the LSTM and sLSTM (the CPU twin of
// cuda/rnn.cuh's rnn_gemm). Each operand is addressed as base + z·zStride + row·ld + col.
type seqGEMM struct {
	a              act
	aOff, aZ, lda  int
	w              act
	wZ, ldw        int
	bias           []float32 // nil: none
	biasZ          int
	out            []float32
	oOff, oZ, ldo  int
	m, n, k, batch int
}

func (l cpuLaunch) gemm(g seqGEMM) {
	l.Parallel(g.batch*g.m, func(r0, r1 int) {
		var ta, tw [tile]float32
		for r := r0; r < r1; r++ {
			z, m := r/g.m, r%g.m
			a := g.a.load(g.aOff+z*g.aZ+m*g.lda, g.k, &ta)
			for n := range g.n {
				var acc float32
				if g.bias != nil {
					acc = g.bias[z*g.biasZ+n]
				}
				w := g.w.load(z*g.wZ+n*g.ldw, g.k, &tw)
				for k, v := range a {
					acc += v * w[k]
				}
				g.out[g.oOff+z*g.oZ+m*g.ldo+n] = acc
			}
		}
	})
}

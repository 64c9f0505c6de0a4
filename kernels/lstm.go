package kernels

import (
	"fmt"
	"math"
)

// LSTMFamily is an LSTM layer's forward pass with resets, over x [batch, t, hidden] (input size = hidden), in
// PyTorch's gate order (i, f, g, o):
//
//	z_t = W_ih x_t + bias + W_hh h_{t−1}                 (W_ih, W_hh [4·hidden, hidden]; bias fp32)
//	c_t = σ(z_f) ⊙ c_{t−1} + σ(z_i) ⊙ tanh(z_g),  h_t = σ(z_o) ⊙ tanh(c_t)
//
// with h and c zero at a reset and at t = 0; the output is every h_t. The fused form is one persistent kernel
// over the sequence with the weights in registers: for hidden ≤ 64 a block holds W_ih and W_hh whole (the
// input projection is computed inside, a step ahead of the recurrence) for a few batch rows; for hidden 128
// and 256, where W_hh alone fills the registers of 2 or 8 multiprocessors, the input projection
// G = x·W_ihᵀ + bias is one GEMM launch first, and the blocks that share a batch row exchange h through global
// memory with one barrier a step. The naive form is an eager LSTM cell loop: G as one GEMM launch (it does not
// depend on the state), then per step the masking of the state by the reset flags, the recurrent GEMM and the
// cell's pointwise kernel (PyTorch's fused LSTM cell), three launches.
var LSTMFamily = &Family{
	Name:    "LSTM",
	DimKeys: []string{"batch", "t", "hidden"},
	Grid: map[string][][]int{
		// Every hidden size the CUDA kernels are built for (16 … 256), batch tails, lengths of 1 and odd.
		"test": {{5, 37, 16}, {5, 20, 32}, {6, 9, 64}, {5, 7, 128}, {5, 6, 256}, {1, 1, 64}},
		"cpu":  {{16, 128, 64}},
		// An RL batch at 1024 steps and at hidden 256, and one game frame's sequence at batch 1 (benchmarks.yaml
		// gives it the 16.67 ms budget of a 60 FPS frame; its naive form is left out, seqSkipNaive).
		"cuda": {{256, 1024, 64}, {256, 128, 256}, {1, 2048, 256}},
	},
	Inputs: []Operand{
		{Name: "x", Len: lstmBTH, Gen: normal(0, 1)},
		{Name: "w_ih", Len: lstmWeights, Gen: normal(0, 0.1)},
		{Name: "w_hh", Len: lstmWeights, Gen: normal(0, 0.1)},
		{Name: "bias", DType: FP32, Len: func(c Case) int { return 4 * c.Dims[2] }, Gen: normal(0, 0.1)},
		seqResets(func(c Case) int { return c.Dims[0] * c.Dims[1] }),
	},
	Outputs:   []Operand{{Name: "y", Len: lstmBTH}},
	Reference: lstmRef,
	Skip:      seqSkipNaive(1),
}

func init() { registerCPU(LSTMFamily, lstmFused, lstmNaive) }

// lstmPlan is how the fused LSTM runs on a GPU: with tc false, lstm.cu's persistent kernels (rnn.cuh: fp32
// arithmetic on CUDA cores, the weights in registers, any storage); with tc true, for bf16 on sm_90, rnn_tc.cuh's
// kernel on tensor cores, its batch tiles of 16·mt rows (r8: 8 rows in one m16 tile) each taken by a cluster of
// `cluster` blocks that share h through distributed shared memory, over G = x·W_ihᵀ + bias from a tensor-core
// GEMM first (proj; always above hidden 64) or projecting x inside.
//
// With units true (fp32, hidden ≤ 64), the SIMT kernel is rnn.cuh's rnn_units (a thread per unit and 1/lanes of
// its four gate rows, lstmUnitLanes, or lanes), fast: with the gate functions on the special-function unit, bb batch rows
// a block (0: the fewest that keep the grid resident).
//
// With x3 true (fp32 on sm_90, hidden 128 and 256), rnn_x3.cuh's kernel on tensor cores in 3xTF32 over G from a
// 3xTF32 GEMM first: 16·mt batch rows a cluster of `cluster` blocks, the K of W_hh·h split over kp warps, W's lo
// parts in registers (wl) or made each step; with pa the projection made in the same launch (rnn_x3_pa), with h3
// W_hh·h as three fp16 products rather than 3xTF32.
type lstmPlan struct {
	tc          bool
	cluster, mt int
	r8, proj    bool
	units, fast bool
	lanes, bb   int
	xa          bool   // x a step ahead of h (units: fast, default lanes; tc: rnn_tc_r8x, 8 rows a block, hidden 64)
	k2          bool   // tc with xa: W_hh·h as two chains of mma (even and odd k16 steps)
	xt          bool   // the projection on tensor cores, a chunk of steps at a time (rnn_units_xt: sm_90, fast, hidden 64)
	gates       string // xt: the cell (lstmXTGates)
	early       bool   // xt: the step's flag and projection read before its FMAs
	xr          bool   // xt with early: a reset applied a step early, y's offset carried, W_ih's lo parts made once
	x3          bool
	kp          int
	wl          bool // x3: W's lo parts held in registers
	a1          bool // x3: one accumulator a gate tile (the small products' mma into the large ones' chain)
	pa          bool // x3: the projection made alongside the recurrence in the same launch (rnn_x3_pa)
	h3          bool // x3: W_hh·h as three fp16 products (W scaled per block) rather than 3xTF32
	ph          bool // x3 with pa and h3: the projection's products in fp16 too (W_ih scaled by 2¹⁰)
	part        int  // x3, timing only: 1 the projection alone, 2 the recurrence alone (over G as it is), 3–5 the
	// recurrence without its y stores, its h stores into the other blocks, its G loads (lstm_x3 _ko2 … _ko4)
}

// x3Options is the part of an x3 plan's name, and of its kernel's, that its options make ("_wl", …, "_ph").
func (p lstmPlan) x3Options() string {
	s := ""
	if p.wl {
		s += "_wl"
	}
	if p.a1 {
		s += "_a1"
	}
	if p.pa {
		s += "_pa"
	}
	if p.h3 {
		s += "_h3"
	}
	if p.ph {
		s += "_ph"
	}
	return s
}

// xtOptions is the part of an rnn_units_xt plan's name, and of its kernel's, from "_xt" on ("_xt_e_r_c8n").
func (p lstmPlan) xtOptions() string {
	s := "_xt"
	if p.early {
		s += "_e"
	}
	if p.xr {
		s += "_r"
	}
	if p.gates != "" {
		s += "_" + p.gates
	}
	return s
}

func (p lstmPlan) String() string {
	if p.x3 {
		s := fmt.Sprintf("x3_cl%d_kp%d", p.cluster, p.kp)
		if p.mt > 1 {
			s += fmt.Sprintf("_mt%d", p.mt)
		}
		s += p.x3Options()
		if p.part > 0 {
			s += []string{"", "_projonly", "_reconly", "_reconly_noy", "_reconly_nodsmem", "_reconly_nog"}[p.part]
		}
		return s
	}
	if p.units && p.xa {
		return rnnUnitsPlanName(p.fast, p.lanes, p.bb) + "_xa"
	}
	if p.units && p.xt {
		return rnnUnitsPlanName(p.fast, p.lanes, p.bb) + p.xtOptions()
	}
	if p.units {
		return rnnUnitsPlanName(p.fast, p.lanes, p.bb)
	}
	if !p.tc {
		return "simt"
	}
	if p.xa {
		return "tc_r8x" + p.r8xSuffix()
	}
	s := fmt.Sprintf("tc_cl%d_mt%d", p.cluster, p.mt)
	if p.r8 {
		s = fmt.Sprintf("tc_cl%d_r8", p.cluster)
	}
	if p.proj {
		s += "_proj"
	}
	return s
}

// kernel is the plan's lstm_tc kernel (lstm.cu) at hidden nh.
func (p lstmPlan) kernel(nh int) string {
	if p.xa {
		return fmt.Sprintf("lstm_tc_bf16_h%d_r8x%s", nh, p.r8xSuffix())
	}
	tile := fmt.Sprintf("mt%d", p.mt)
	if p.r8 {
		tile = "r8"
	}
	suffix := ""
	if p.proj && nh <= 64 {
		suffix = "_g"
	}
	return fmt.Sprintf("lstm_tc_bf16_h%d_cl%d_%s%s", nh, p.cluster, tile, suffix)
}

// r8xSuffix is how an rnn_tc_r8x plan's kernel and name end: _k2 for two chains of mma.
func (p lstmPlan) r8xSuffix() string {
	if p.k2 {
		return "_k2"
	}
	return ""
}

// rows is how many batch rows a cluster of the plan takes.
func (p lstmPlan) rows() int {
	if p.r8 {
		return 8
	}
	return 16 * p.mt
}

// lstmTCR8X are the hidden sizes rnn_tc_r8x (8 batch rows a block, the projection inside a step ahead) is built
// for: one block holds W_ih and W_hh.
var lstmTCR8X = map[int]bool{64: true}

// lstmXTGates are the cells rnn_units_xt is built with (lstmPlan.gates): "" LstmCellF; "c8" LstmCellF8 (8
// special-function operations a cell instead of 10), "c8n" LstmCellF8 without its exponentials' correction.
var lstmXTGates = []string{"", "c8", "c8n"}

// lstmXTKernel is plan p's rnn_units_xt kernel (lstm.cu) at hidden nh and bb batch rows a block.
func lstmXTKernel(p lstmPlan, nh, bb int) string {
	return rnnUnitsName("lstm", "h", nh, true, lstmUnitLanes[nh], bb) + p.xtOptions()
}

// lstmUnitsXT are the hidden sizes rnn_units_xt (the input projection on tensor cores; sm_90) is built for, with
// 4 lanes a unit and 1, 2 or 4 batch rows a block.
var lstmUnitsXT = map[int]bool{64: true}

// lstmX3Kernel is the plan's lstm_x3 kernel (lstm.cu) at hidden nh.
func (p lstmPlan) lstmX3Kernel(nh int) string {
	s := fmt.Sprintf("lstm_x3_f32_h%d_cl%d_kp%d_mt%d", nh, p.cluster, p.kp, p.mt)
	s += p.x3Options()
	if p.part >= 3 {
		s += fmt.Sprintf("_ko%d", p.part-1)
	}
	return s
}

// lstmX3ProjTile is the tile shape lstm_x3_proj_f32 is built for (block rows, columns, warps along each): on an
// H100 the projection of batch 256 × 128 steps at hidden 256 took 0.26 ms in it, 0.27 and 0.30 in 128 × 64 and
// 64 × 64 tiles (TestCUDALSTMX3Parts).
var lstmX3ProjTile = [4]int{128, 128, 2, 4}

// lstmX3ProjKernel is the projection kernel.
var lstmX3ProjKernel = fmt.Sprintf("lstm_x3_proj_f32_%dx%d_w%dx%d", lstmX3ProjTile[0], lstmX3ProjTile[1],
	lstmX3ProjTile[2], lstmX3ProjTile[3])

// lstmX3ProjSmem is the projection's dynamic shared memory (RnnX3Proj::SMEM): three stages of the block's rows
// of A and B, 32 fp32 a row padded by 16 bytes.
var lstmX3ProjSmem = 3 * (lstmX3ProjTile[0] + lstmX3ProjTile[1]) * 144

// lstmX3Shapes are the shapes lstm_x3 is built for at each hidden size, the default first: a cluster's blocks hold
// W_hh in registers as fp32 (1 MiB at hidden 256: half the registers of 8 multiprocessors), a thread
// 4·hidden/(8·kp)·2 values of it (128 at hidden 256, kp 2), and with wl the bf16 lo parts (half as many
// registers again); with two m16 tiles (mt 2) each split of W serves twice the mma (a1: one accumulator a gate
// tile, so that they fit in registers). 16 rows a cluster make 16 clusters of 8 at batch 256, one more than an
// H100 runs at once: 32 rows (mt 2) make 8, and leave room for the projection beside them (pa).
var lstmX3Shapes = map[int][]lstmPlan{
	128: {{x3: true, cluster: 4, kp: 2, mt: 1}},
	256: {{x3: true, cluster: 8, kp: 2, mt: 1, wl: true},
		{x3: true, cluster: 8, kp: 2, mt: 1},
		{x3: true, cluster: 8, kp: 2, mt: 2, a1: true},
		{x3: true, cluster: 8, kp: 2, mt: 1, h3: true}, {x3: true, cluster: 8, kp: 2, mt: 2, a1: true, h3: true},
		{x3: true, cluster: 8, kp: 2, mt: 2, a1: true, pa: true, h3: true},
		{x3: true, cluster: 8, kp: 2, mt: 2, a1: true, pa: true, h3: true, ph: true}},
}

// lstmX3PAPlan is the plan lstmChoosePlan takes for fp32 at hidden 256 on sm_90 where lstmX3PAOn allows it and
// the recurrence's clusters (32 batch rows each) take at most half the multiprocessors, leaving the rest to the
// projection made alongside (a GPU runs fewer clusters of 8 at once than multiprocessors/8: a cluster's blocks
// share one GPC). The projection's products are in fp16 too (ph, W_ih scaled by 2¹⁰): a tile whose sums come out
// inf or NaN (an input of 65520 or more in magnitude, a weight of 64 or more, a NaN) is made again in 3xTF32, so
// the result is fp32's whatever the data (TestCUDALSTMX3Range). On an H200 (TestCUDALSTMTune, 2026-11-27, batch
// 256, 128 steps, three runs) 751.0–753.3 µs against 809.5–811.3 with the projection in 3xTF32. A first guard that
// checked the values of every k-step had made it slower than that (H100: 845.0 µs against 818.0).
var lstmX3PAPlan = lstmPlan{x3: true, cluster: 8, kp: 2, mt: 2, a1: true, pa: true, h3: true, ph: true}

// rnnX3Smem is the dynamic shared memory of rnn_x3.cuh's kernel (RnnX3::SMEM, which the kernel checks) at hidden
// h in clusters of cl blocks with K split over kp warps and mt m16 tiles: two h buffers of 16·mt rows of h fp32
// (rows padded by 16 bytes), RNN_TC_PD stages of 16·mt rows of the block's 4·h/cl columns of G (padded by 32
// bytes), and 16·mt floats a thread for the reduce-scatter when kp > 1.
func rnnX3Smem(h, cl, kp, mt int) int {
	const stages = 4
	rows, u := 16*mt, h/cl
	x := 0
	if kp > 1 {
		x = rnnX3Threads(h, cl, kp) * 16 * mt * 4
	}
	return 2*rows*(4*h+16) + stages*rows*(16*u+32) + x
}

// rnnX3Threads is a block of rnn_x3 (RnnX3::THREADS): a warp for each 8 units of its h/cl and each of kp parts
// of K.
func rnnX3Threads(h, cl, kp int) int { return 32 * h / cl / 8 * kp }

// lstmTCClusters are the cluster sizes lstm_tc is built for at each hidden size, the default first: the
// clusters hold W_hh in registers, H/2 a thread for the H/8 warps of 4 gates × 8 units that cover the 4·H gate
// rows (64 units a block: 8 warps of 256 threads; 32 for hidden 256 at 8 blocks).
var lstmTCClusters = map[int][]int{16: {1}, 32: {1}, 64: {1, 2}, 128: {2}, 256: {4, 8}}

// lstmChoosePlan is the plan of case c on a GPU of compute capability cc with sms multiprocessors: the
// tensor-core kernel for bf16 on sm_90 and later where rnnTCOn allows it (not for fp32: its tolerance, 1e-5, is
// below what bf16 products give). The shapes are the fastest of TestCUDALSTMTune on an H200
// (lstm_tc: per step, the mma of a block cost the same whatever its rows, its cells scale with them, and a
// cluster barrier costs about what a whole step of one block does): hidden 64 over G in 8-row tiles, one block
// each (batch 256, 1024 steps: 0.76 ms, against 0.86 with 16-row tiles projecting x inside); hidden 256 in
// clusters of 4 with 16-row tiles (batch 256, 128 steps: 0.38 ms), or, where the batch leaves most of the GPU
// idle, of 8 with 8-row tiles (batch 1, 2048 steps: 2.7 ms, against 3.8).
//
// fp32 up to hidden 64 takes the unit kernel with the fast gate functions where rnnUnitsOn allows it, the batch
// rows a block left to the launch (two at batch 256): on an H100 (TestCUDALSTMTune), batch 256, 1024 steps,
// hidden 64 took 0.825 ms, against 1.085 ms with the accurate functions and 1.344 ms for the SIMT kernel.
//
// On sm_90 where rnnX3On allows it, fp32 at hidden 64 takes the unit kernel with the input projection on tensor
// cores (rnn_units_xt; batch rows a block left to the launch): batch 256, 1024 steps 0.799 ms against 0.825 on an
// H100; at hidden 256 above one cluster's 16 rows, where lstmX3PAOn allows it and the recurrence's clusters of
// 32 rows take at most half the multiprocessors, lstmX3PAPlan (the projection in the same launch, the products in
// fp16, the projection's too): batch 256, 128 steps 0.751–0.753 ms on an H200 (0.810–0.811 with the projection's
// products in 3xTF32; H100 0.815–0.822) against 1.28 for the 3xTF32 kernel in its default shape (lstmX3Shapes),
// which takes the larger batches, and 2.40 for the SIMT kernel, which keeps batch 1 (2048 steps: 6.6 ms against
// 7.3, a step of one cluster costing more than the SIMT kernel's exchange through global memory); hidden 128,
// which no benchmark times, keeps the SIMT kernel.
//
// At hidden 64 on sm_90, where lstmStepOn allows it, both dtypes take lstmStepPlans, which shorten the step that
// bounds them (batch 256, 1024 steps, TestCUDALSTMTune): bf16 rnn_tc_r8x with two chains of mma, 0.46–0.48 ms
// against 0.74–0.76 over G (H100 and H200); fp32 rnn_units_xt with LstmCellF8 without its exponentials'
// correction, the step's flag and projection read early and a reset applied a step early (xr), 0.657 ms against
// 0.796 on an H200.
func lstmChoosePlan(c Case, cc, sms int) lstmPlan {
	nb, nh := c.Dims[0], c.Dims[2]
	if p, ok := lstmStepPlans[c.DType]; ok && lstmStepOn && cc >= 90 && nh == 64 && (c.DType == BF16 && rnnTCOn || c.DType == FP32 && rnnX3On) {
		return p
	}
	if c.DType == FP32 && rnnX3On && cc >= 90 && lstmUnitsXT[nh] {
		return lstmPlan{units: true, fast: true, xt: true}
	}
	if c.DType == FP32 && rnnUnitsOn && lstmUnitLanes[nh] > 0 {
		return lstmPlan{units: true, fast: true}
	}
	if c.DType == FP32 && rnnX3On && lstmX3PAOn && cc >= 90 && nh == 256 && nb > 16 && ceilDiv(nb, 32)*8*2 <= sms {
		return lstmX3PAPlan
	}
	if sh := lstmX3Shapes[nh]; c.DType == FP32 && rnnX3On && cc >= 90 && nh == 256 && nb > 16 {
		return sh[0]
	}
	cls, ok := lstmTCClusters[nh]
	if !rnnTCOn || !ok || c.DType != BF16 || cc < 90 {
		return lstmPlan{}
	}
	switch {
	case nh == 64:
		return lstmPlan{tc: true, cluster: 1, mt: 1, r8: true, proj: true}
	case nh == 256 && ceilDiv(nb, 8)*8 <= sms/2:
		return lstmPlan{tc: true, cluster: 8, mt: 1, r8: true, proj: true}
	}
	return lstmPlan{tc: true, cluster: cls[0], mt: 1, proj: nh > 64}
}

// lstmStepPlans are the plans lstmChoosePlan takes at hidden 64 on sm_90 where lstmStepOn allows it (and rnnTCOn for
// bf16, rnnX3On for fp32).
var lstmStepPlans = map[DType]lstmPlan{
	BF16: {tc: true, cluster: 1, mt: 1, r8: true, xa: true, k2: true},
	FP32: {units: true, fast: true, xt: true, early: true, xr: true, gates: "c8n"},
}

// lstmPlans are the plans built for case c: the SIMT kernels, and for bf16 every tensor-core shape: above
// hidden 64 (always over G) one and two m16 tiles and 8-row tiles a cluster; at hidden 64 also over G (one m16
// tile, 8-row tiles) in one block, and rnn_tc_r8x's 8-row blocks with one or two chains of mma (lstmTCR8X);
// below, the projection inside.
//
// For fp32 up to hidden 64: the unit kernels (rnnUnitsPlans), and with x a step ahead at every rnnUnitBatches,
// and at hidden 64 with the projection on tensor cores (lstmUnitsXT) with each cell of lstmXTGates, and with the
// step's flag and projection read early (early), also with xr;
// at hidden 128 and 256 every 3xTF32 shape (lstmX3Shapes).
func lstmPlans(c Case) []lstmPlan {
	ps := []lstmPlan{{}}
	if c.DType != BF16 {
		ps = append(ps, lstmX3Shapes[c.Dims[2]]...)
		ps = append(ps, rnnUnitsPlans(c.Dims[2], lstmUnitLanes, lstmUnitLanesAlt, func(fast bool, lanes, bb int) lstmPlan {
			return lstmPlan{units: true, fast: fast, lanes: lanes, bb: bb}
		})...)
		if lstmUnitLanes[c.Dims[2]] > 0 {
			for _, bb := range rnnUnitBatches {
				ps = append(ps, lstmPlan{units: true, fast: true, bb: bb, xa: true})
			}
		}
		if lstmUnitsXT[c.Dims[2]] {
			for _, gates := range lstmXTGates {
				for _, bb := range rnnUnitBatches[1:] {
					ps = append(ps, lstmPlan{units: true, fast: true, bb: bb, xt: true, gates: gates})
				}
			}
			for _, bb := range []int{0, 2} {
				for _, xr := range []bool{false, true} {
					ps = append(ps, lstmPlan{units: true, fast: true, bb: bb, xt: true, early: true, xr: xr, gates: "c8n"})
				}
			}
		}
		return ps
	}
	nh := c.Dims[2]
	for _, cl := range lstmTCClusters[nh] {
		for _, mt := range []int{1, 2} {
			ps = append(ps, lstmPlan{tc: true, cluster: cl, mt: mt, proj: nh > 64})
		}
		if nh > 64 {
			ps = append(ps, lstmPlan{tc: true, cluster: cl, mt: 1, r8: true, proj: true})
		}
	}
	if nh == 64 {
		ps = append(ps, lstmPlan{tc: true, cluster: 1, mt: 1, proj: true}, lstmPlan{tc: true, cluster: 1, mt: 1, r8: true, proj: true})
	}
	if lstmTCR8X[nh] {
		ps = append(ps, lstmPlan{tc: true, cluster: 1, mt: 1, r8: true, xa: true},
			lstmPlan{tc: true, cluster: 1, mt: 1, r8: true, xa: true, k2: true})
	}
	return ps
}

// lstmDims are a case's batch, time and hidden sizes.
func lstmDims(c Case) (nb, nt, nh int) { return c.Dims[0], c.Dims[1], c.Dims[2] }

func lstmBTH(c Case) int     { nb, nt, nh := lstmDims(c); return nb * nt * nh }
func lstmWeights(c Case) int { _, _, nh := lstmDims(c); return 4 * nh * nh }

// lstmRef is the sequential recurrence in float64.
func lstmRef(c Case, in [][]float64) [][]float64 {
	x, wih, whh, bias, resets := in[0], in[1], in[2], in[3], in[4]
	nb, nt, nh := lstmDims(c)
	y := make([]float64, len(x))
	h, cell, z := make([]float64, nh), make([]float64, nh), make([]float64, 4*nh)
	for b := range nb {
		clear(h)
		clear(cell)
		for t := range nt {
			if resets[b*nt+t] != 0 {
				clear(h)
				clear(cell)
			}
			xt := x[(b*nt+t)*nh : (b*nt+t+1)*nh]
			for r := range z {
				acc := bias[r]
				for k := range nh {
					acc += wih[r*nh+k]*xt[k] + whh[r*nh+k]*h[k]
				}
				z[r] = acc
			}
			for u := range nh {
				cell[u] = sigmoid64(z[nh+u])*cell[u] + sigmoid64(z[u])*math.Tanh(z[2*nh+u])
				h[u] = sigmoid64(z[3*nh+u]) * math.Tanh(cell[u])
				y[(b*nt+t)*nh+u] = h[u]
			}
		}
	}
	return [][]float64{y}
}

// lstmCell is the cell update of one unit from its four pre-activations (i, f, g, o): it returns h and updates
// *c.
func lstmCell(zi, zf, zg, zo float32, c *float32) float32 {
	*c = sigmoid32(zf)**c + sigmoid32(zi)*tanh32(zg)
	return sigmoid32(zo) * tanh32(*c)
}

// lstmInput is the input projection G = x·W_ihᵀ + bias [batch·t, 4·hidden], the naive form's first launch.
func lstmInput(l cpuLaunch) []float32 {
	nb, nt, nh := lstmDims(l.Case)
	g := l.ScratchF32(nb * nt * 4 * nh)
	l.gemm(seqGEMM{a: actOf(l.In[0]), lda: nh, w: actOf(l.In[1]), ldw: nh, bias: l.In[3].F32, out: g, ldo: 4 * nh,
		m: nb * nt, n: 4 * nh, k: nh, batch: 1})
	return g
}

// lstmFused runs each batch row through time with its state in local arrays, projecting each step's input as
// it goes.
func lstmFused(l cpuLaunch) {
	nb, nt, nh := lstmDims(l.Case)
	x, wih, whh, bias, resets, y := actOf(l.In[0]), actOf(l.In[1]), actOf(l.In[2]), l.In[3].F32, actOf(l.In[4]), actOf(l.Out[0])
	l.Parallel(nb, func(b0, b1 int) {
		h, c, z := make([]float32, nh), make([]float32, nh), make([]float32, 4*nh)
		var tw, tx [tile]float32
		for b := b0; b < b1; b++ {
			clear(h)
			clear(c)
			for t := range nt {
				if resets.at(b*nt+t) != 0 {
					clear(h)
					clear(c)
				}
				xt := x.load((b*nt+t)*nh, nh, &tx)
				for r := range z {
					acc := bias[r]
					for k, v := range wih.load(r*nh, nh, &tw) {
						acc += v * xt[k]
					}
					for k, v := range whh.load(r*nh, nh, &tw) {
						acc += v * h[k]
					}
					z[r] = acc
				}
				for u := range nh {
					h[u] = lstmCell(z[u], z[nh+u], z[2*nh+u], z[3*nh+u], &c[u])
					y.setAt((b*nt+t)*nh+u, h[u])
				}
			}
		}
	})
}

// lstmNaive is the eager cell loop: state [batch, h | c] masked by the reset flags (eager ops), then per step
// the recurrent GEMM into the gates and the cell's pointwise pass.
func lstmNaive(l cpuLaunch) {
	nb, nt, nh := lstmDims(l.Case)
	g := lstmInput(l)
	st, mask := l.seqNaiveState(actOf(l.In[4]), nb, nt, 2*nh)
	gates := l.ScratchF32(nb * 4 * nh)
	y := actOf(l.Out[0])
	for t := range nt {
		mask(t)
		l.gemm(seqGEMM{a: st.t, lda: 2 * nh, w: actOf(l.In[2]), ldw: nh, out: gates, ldo: 4 * nh, m: nb, n: 4 * nh, k: nh, batch: 1})
		l.Parallel(nb, func(b0, b1 int) {
			for b := b0; b < b1; b++ {
				z, gt, s := gates[b*4*nh:(b+1)*4*nh], g[(b*nt+t)*4*nh:], st.t.f32[b*2*nh:(b+1)*2*nh]
				for u := range nh {
					s[u] = lstmCell(gt[u]+z[u], gt[nh+u]+z[nh+u], gt[2*nh+u]+z[2*nh+u], gt[3*nh+u]+z[3*nh+u], &s[nh+u])
					y.setAt((b*nt+t)*nh+u, s[u])
				}
			}
		})
	}
}

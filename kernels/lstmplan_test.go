package kernels

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestLSTMChoosePlan: the tensor-core plan only for bf16 on sm_90 at the hidden sizes it is built for, and only
// while rnnTCOn (-kernels.pending until it has passed on a GPU); every built shape fits a multiprocessor.
func TestLSTMChoosePlan(t *testing.T) {
	defer func(on, units, x3, step bool) { rnnTCOn, rnnUnitsOn, rnnX3On, lstmStepOn = on, units, x3, step }(rnnTCOn, rnnUnitsOn, rnnX3On, lstmStepOn)
	rnnUnitsOn, rnnX3On, lstmStepOn = false, false, false
	bf := func(nb, nt, nh int) Case { return Case{DType: BF16, Dims: []int{nb, nt, nh}} }
	fp := func(nb, nt, nh int) Case { return Case{DType: FP32, Dims: []int{nb, nt, nh}} }
	for _, tc := range []struct {
		on   bool
		c    Case
		cc   int
		want lstmPlan
	}{
		{false, bf(256, 128, 256), 90, lstmPlan{}},
		{true, bf(256, 128, 256), 90, lstmPlan{tc: true, cluster: 4, mt: 1, proj: true}},
		{true, bf(256, 1024, 64), 90, lstmPlan{tc: true, cluster: 1, mt: 1, r8: true, proj: true}},
		{true, bf(1, 2048, 256), 90, lstmPlan{tc: true, cluster: 8, mt: 1, r8: true, proj: true}},
		{true, bf(64, 128, 256), 90, lstmPlan{tc: true, cluster: 8, mt: 1, r8: true, proj: true}}, // 64 of 132
		{true, bf(72, 128, 256), 90, lstmPlan{tc: true, cluster: 4, mt: 1, proj: true}},           // 72 > 66
		{true, bf(5, 7, 128), 90, lstmPlan{tc: true, cluster: 2, mt: 1, proj: true}},
		{true, bf(5, 7, 32), 90, lstmPlan{tc: true, cluster: 1, mt: 1}},
		{true, bf(256, 128, 256), 80, lstmPlan{}}, // no clusters before sm_90
		{true, fp(256, 128, 256), 90, lstmPlan{}}, // fp32's 1e-5 tolerance: SIMT
		{true, bf(4, 4, 48), 90, lstmPlan{}},      // no kernel built
	} {
		rnnTCOn = tc.on
		if got := lstmChoosePlan(tc.c, tc.cc, 132); got != tc.want {
			t.Errorf("on=%v %v %v cc %d: plan %v, want %v", tc.on, tc.c.DType, tc.c.Dims, tc.cc, got, tc.want)
		}
	}
	// lstmStepOn: the hidden-64 step plans on sm_90, each only with its dtype's own switch.
	lstmStepOn = true
	for _, tc := range []struct {
		tc, x3 bool
		c      Case
		cc     int
		want   lstmPlan
	}{
		{true, false, bf(256, 1024, 64), 90, lstmStepPlans[BF16]},
		{true, false, bf(5, 7, 64), 90, lstmStepPlans[BF16]},
		{true, false, bf(256, 1024, 64), 80, lstmPlan{}},
		{false, true, bf(256, 1024, 64), 90, lstmPlan{}},
		{true, false, bf(256, 128, 256), 90, lstmPlan{tc: true, cluster: 4, mt: 1, proj: true}},
		{false, true, fp(256, 1024, 64), 90, lstmStepPlans[FP32]},
		{true, false, fp(256, 1024, 64), 90, lstmPlan{}},
		{false, true, fp(256, 1024, 64), 80, lstmPlan{}},
		{false, true, fp(256, 1024, 32), 90, lstmPlan{}},
	} {
		rnnTCOn, rnnX3On = tc.tc, tc.x3
		if got := lstmChoosePlan(tc.c, tc.cc, 132); got != tc.want {
			t.Errorf("step plans on, tc=%v x3=%v %v %v cc %d: plan %v, want %v", tc.tc, tc.x3, tc.c.DType, tc.c.Dims, tc.cc, got, tc.want)
		}
	}
	for dt, p := range lstmStepPlans {
		if !slices.Contains(lstmPlans(Case{DType: dt, Dims: []int{1, 1, 64}}), p) {
			t.Errorf("%v step plan %v: not among the plans built and tested", dt, p)
		}
	}
	lstmStepOn, rnnTCOn, rnnX3On = false, true, false

	const smemMax = 227 << 10 // a block's shared memory on sm_90
	ptx, err := os.ReadFile("cuda/ptx/lstm_sm90.ptx")
	if err != nil {
		t.Fatal(err)
	}
	for nh, cls := range lstmTCClusters {
		ps := lstmPlans(bf(1, 1, nh))
		if len(ps) < 1+2*len(cls) || ps[0].tc {
			t.Errorf("hidden %d: plans %v, want simt and at least 2 a cluster size", nh, ps)
		}
		for _, p := range ps[1:] {
			if nh > 64 && !p.proj || p.r8 && (!p.proj && !p.xa || p.mt != 1) || p.xa && (!lstmTCR8X[nh] || p.proj) {
				t.Errorf("hidden %d plan %v: no such kernel", nh, p)
			}
			if name := p.kernel(nh); !strings.Contains(string(ptx), ".entry "+name+"(") {
				t.Errorf("hidden %d plan %v: lstm_sm90 has no kernel %s", nh, p, name)
			}
			if s := rnnTCSmem(nh, p.cluster, p.mt, p.r8, !p.proj, 4); s > smemMax {
				t.Errorf("hidden %d plan %v: %d B of shared memory, more than %d", nh, p, s, smemMax)
			}
		}
		want := 1 + len(lstmX3Shapes[nh])
		if lstmUnitLanes[nh] > 0 {
			want += 4 * len(rnnUnitBatches)
		}
		if lstmUnitsXT[nh] {
			want += len(lstmXTGates) * len(rnnUnitBatches[1:])
			want += 4 // at bb 0 and 2: early c8n, with and without xr
		}
		if ps := lstmPlans(fp(1, 1, nh)); len(ps) != want || ps[0] != (lstmPlan{}) || want > 1 && !ps[1].units && !ps[1].x3 {
			t.Errorf("fp32 hidden %d: plans %v, want simt and %d unit or 3xTF32 plans", nh, ps, want-1)
		}
	}
}

// TestLSTMX3ChoosePlan: the 3xTF32 plan for fp32 at hidden 256 and the unit kernel with the projection on tensor
// cores at hidden 64, on sm_90 only while rnnX3On, the former in its default shape; every built shape names a kernel of lstm_sm90's PTX, fits a multiprocessor's shared memory and
// a block's 1024 threads, and prints its shape.
func TestLSTMX3ChoosePlan(t *testing.T) {
	defer func(on, units, step, pa bool) {
		rnnX3On, rnnUnitsOn, lstmStepOn, lstmX3PAOn = on, units, step, pa
	}(rnnX3On, rnnUnitsOn, lstmStepOn, lstmX3PAOn)
	rnnUnitsOn, lstmStepOn, lstmX3PAOn = true, false, false
	fp := func(nb, nt, nh int) Case { return Case{DType: FP32, Dims: []int{nb, nt, nh}} }
	for _, tc := range []struct {
		on   bool
		c    Case
		cc   int
		want lstmPlan
	}{
		{false, fp(256, 128, 256), 90, lstmPlan{}},
		{true, fp(256, 128, 256), 90, lstmX3Shapes[256][0]},
		{true, fp(1, 2048, 256), 90, lstmPlan{}}, // one cluster's rows: SIMT
		{true, fp(17, 128, 256), 90, lstmX3Shapes[256][0]},
		{true, fp(16, 128, 256), 90, lstmPlan{}},
		{true, fp(5, 7, 128), 90, lstmPlan{}},     // built and tested, not timed
		{true, fp(256, 128, 256), 89, lstmPlan{}}, // no clusters before sm_90
		{true, fp(256, 1024, 64), 90, lstmPlan{units: true, fast: true, xt: true}},
		{true, fp(256, 1024, 64), 80, lstmPlan{units: true, fast: true}},
		{false, fp(256, 1024, 64), 90, lstmPlan{units: true, fast: true}},
		{true, fp(256, 1024, 32), 90, lstmPlan{units: true, fast: true}},
		{true, fp(4, 4, 48), 90, lstmPlan{}}, // no kernel built
		{true, Case{DType: BF16, Dims: []int{256, 128, 256}}, 90, lstmChoosePlan(Case{DType: BF16, Dims: []int{256, 128, 256}}, 90, 132)},
	} {
		rnnX3On = tc.on
		if got := lstmChoosePlan(tc.c, tc.cc, 132); got != tc.want {
			t.Errorf("on=%v %v %v cc %d: plan %v, want %v", tc.on, tc.c.DType, tc.c.Dims, tc.cc, got, tc.want)
		}
	}
	// With lstmX3PAOn: the projection alongside where the recurrence's clusters of 32 rows take at most half the
	// multiprocessors.
	rnnX3On, lstmX3PAOn = true, true
	for _, tc := range []struct {
		c    Case
		cc   int
		sms  int
		want lstmPlan
	}{
		{fp(256, 128, 256), 90, 132, lstmX3PAPlan},
		{fp(17, 128, 256), 90, 132, lstmX3PAPlan},
		{fp(264, 128, 256), 90, 132, lstmX3Shapes[256][0]}, // 9 clusters: 72 of 132 multiprocessors
		{fp(256, 128, 256), 90, 120, lstmX3Shapes[256][0]},
		{fp(16, 128, 256), 90, 132, lstmPlan{}},
		{fp(256, 128, 256), 89, 132, lstmPlan{}},
		{fp(256, 128, 128), 90, 132, lstmPlan{}},
	} {
		if got := lstmChoosePlan(tc.c, tc.cc, tc.sms); got != tc.want {
			t.Errorf("pa on: %v cc %d, %d multiprocessors: plan %v, want %v", tc.c.Dims, tc.cc, tc.sms, got, tc.want)
		}
	}
	if !slices.Contains(lstmX3Shapes[256], lstmX3PAPlan) {
		t.Errorf("lstmX3PAPlan %v is not among the built shapes", lstmX3PAPlan)
	}
	lstmX3PAOn = false
	if p := lstmChoosePlan(Case{DType: BF16, Dims: []int{256, 128, 256}}, 90, 132); p.x3 {
		t.Errorf("bf16: 3xTF32 plan %v, built for fp32 only", p)
	}
	ptx, err := os.ReadFile("cuda/ptx/lstm_sm90.ptx")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ptx), ".entry "+lstmX3ProjKernel+"(") {
		t.Errorf("lstm_sm90 has no kernel %s", lstmX3ProjKernel)
	}
	if lstmX3ProjSmem > 227<<10 {
		t.Errorf("projection tile %v: %d B of shared memory", lstmX3ProjTile, lstmX3ProjSmem)
	}
	n := 0
	for nh := range lstmX3Shapes {
		for _, p := range lstmPlans(fp(1, 1, nh)) {
			if !p.x3 {
				continue
			}
			n++
			if name := p.lstmX3Kernel(nh); !strings.Contains(string(ptx), ".entry "+name+"(") {
				t.Errorf("lstm_sm90 has no kernel %s", name)
			}
			if s := rnnX3Smem(nh, p.cluster, p.kp, p.mt); s > 227<<10 {
				t.Errorf("hidden %d plan %v: %d B of shared memory", nh, p, s)
			}
			if threads := rnnX3Threads(nh, p.cluster, p.kp); threads > 1024 || nh%(8*p.cluster) != 0 {
				t.Errorf("hidden %d plan %v: %d threads a block", nh, p, threads)
			}
		}
	}
	if want := len(lstmX3Shapes[128]) + len(lstmX3Shapes[256]); n != want {
		t.Errorf("%d 3xTF32 plans, want %d (every shape)", n, want)
	}
	for p, want := range map[lstmPlan]string{{x3: true, cluster: 8, kp: 4, mt: 1}: "x3_cl8_kp4",
		{x3: true, cluster: 16, kp: 4, mt: 2, wl: true, a1: true, h3: true}: "x3_cl16_kp4_mt2_wl_a1_h3"} {
		if s := p.String(); s != want {
			t.Errorf("plan name %q, want %s", s, want)
		}
	}
	if got, want := rnnX3Smem(256, 8, 2, 1), 2*16*1040+4*16*544+256*64; got != want {
		t.Errorf("rnnX3Smem(256, 8, 2, 1) = %d, want %d", got, want)
	}
	if got, want := rnnX3Smem(256, 16, 4, 2), 2*32*1040+4*32*288+256*128; got != want {
		t.Errorf("rnnX3Smem(256, 16, 4, 2) = %d, want %d", got, want)
	}
}

// TestRNNUnitsChoosePlan: the fp32 unit kernel for the LSTM up to hidden 64 and the sLSTM, only while
// rnnUnitsOn, the launch picking its batch rows, with the fast gate functions for the LSTM and at sLSTM head
// size 64; the plans' kernel names.
func TestRNNUnitsChoosePlan(t *testing.T) {
	defer func(on, x3 bool) { rnnUnitsOn, rnnX3On = on, x3 }(rnnUnitsOn, rnnX3On)
	rnnX3On = false
	for _, on := range []bool{false, true} {
		rnnUnitsOn = on
		for _, nh := range []int{16, 32, 64, 128, 256} {
			want := lstmPlan{}
			if on && nh <= 64 {
				want = lstmPlan{units: true, fast: true}
			}
			if got := lstmChoosePlan(Case{DType: FP32, Dims: []int{256, 1024, nh}}, 90, 132); got != want {
				t.Errorf("on=%v LSTM fp32 hidden %d: plan %v, want %v", on, nh, got, want)
			}
		}
		for _, dh := range []int{16, 32, 64, 128} {
			want := slstmPlan{}
			if on && dh <= 64 {
				want = slstmPlan{units: true, fast: dh == 64}
			}
			if got := slstmChoosePlan(Case{DType: FP32, Dims: []int{256, 4, 1024, dh}}, 75); got != want {
				t.Errorf("on=%v sLSTM fp32 dh %d: plan %v, want %v", on, dh, got, want)
			}
		}
	}
	rnnUnitsOn = true
	if p := lstmChoosePlan(Case{DType: BF16, Dims: []int{256, 1024, 64}}, 75, 132); p.units {
		t.Errorf("LSTM bf16: unit plan %v, built for fp32 only", p)
	}
	for _, x := range []struct {
		module, key string
		n           int
		fast        bool
		lanes, bb   int
		want        string
	}{
		{"lstm", "h", 64, true, 8, 2, "lstm_unitsf_f32_h64_l8_bb2"},
		{"slstm", "dh", 32, false, 1, 1, "slstm_units_f32_dh32_l1_bb1"},
	} {
		if got := rnnUnitsName(x.module, x.key, x.n, x.fast, x.lanes, x.bb); got != x.want {
			t.Errorf("rnnUnitsName%v = %q, want %q", x, got, x.want)
		}
	}
	for p, want := range map[lstmPlan]string{{units: true, fast: true, lanes: 8, bb: 2}: "unitsf_l8_bb2",
		{units: true, fast: true, bb: 2, xt: true, gates: "c8n"}:                        "unitsf_bb2_xt_c8n",
		{units: true, fast: true, bb: 2, xt: true, early: true, xr: true, gates: "c8n"}: "unitsf_bb2_xt_e_r_c8n",
		{tc: true, cluster: 1, mt: 1, r8: true, xa: true, k2: true}:                     "tc_r8x_k2"} {
		if s := p.String(); s != want {
			t.Errorf("plan name %q, want %s", s, want)
		}
	}
	if s := (slstmPlan{units: true}).String(); s != "units" {
		t.Errorf("plan name %q, want units", s)
	}
}

// TestSLSTMChoosePlan: the tensor-core plan (8-row tiles) only for bf16 on sm_90 at the built head sizes, while
// rnnTCOn; every tensor-core shape fits a multiprocessor.
func TestSLSTMChoosePlan(t *testing.T) {
	defer func(on, units bool) { rnnTCOn, rnnUnitsOn = on, units }(rnnTCOn, rnnUnitsOn)
	rnnUnitsOn = false
	c := func(dt DType, dh int) Case { return Case{DType: dt, Dims: []int{256, 4, 1024, dh}} }
	tc := slstmPlan{tc: true, mt: 1, r8: true}
	for _, x := range []struct {
		on   bool
		c    Case
		cc   int
		want slstmPlan
	}{
		{false, c(BF16, 32), 90, slstmPlan{}},
		{true, c(BF16, 32), 90, tc},
		{true, c(BF16, 64), 90, tc},
		{true, c(BF16, 16), 100, tc},
		{true, c(BF16, 32), 89, slstmPlan{}},
		{true, c(FP32, 32), 90, slstmPlan{}},
		{true, c(BF16, 128), 90, slstmPlan{}},
	} {
		rnnTCOn = x.on
		if got := slstmChoosePlan(x.c, x.cc); got != x.want {
			t.Errorf("on=%v %v %v cc %d: plan %v, want %v", x.on, x.c.DType, x.c.Dims, x.cc, got, x.want)
		}
	}
	for dh := range slstmHeadSizes {
		for _, p := range slstmPlans(Case{DType: BF16, Dims: []int{1, 1, 1, dh}})[1:] {
			if s := rnnTCSmem(dh, 1, p.mt, p.r8, false, 2); s > 227<<10 {
				t.Errorf("dh %d plan %v: %d B of shared memory", dh, p, s)
			}
		}
	}
}

// TestRNNUnitsKernels: every unit plan of both families, at every size and with each batch-row count the launch
// may pick, names a kernel of its module's PTX (the launchers' names are built from the plan).
func TestRNNUnitsKernels(t *testing.T) {
	entries := func(module string) string {
		b, err := os.ReadFile("cuda/ptx/" + module + ".ptx")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(module, key string, n int, lanes map[int]int, fast bool, pl, bb int, suffix string) {
		ks := lanes[n]
		if pl > 0 {
			ks = pl
		}
		bbs := []int{bb}
		if bb == 0 {
			bbs = rnnUnitBatches[1:]
		}
		for _, b := range bbs {
			name := rnnUnitsName(module, key, n, fast, ks, b) + suffix
			if !strings.Contains(entries(module), ".entry "+name+"(") {
				t.Errorf("%s has no kernel %s", module, name)
			}
		}
	}
	for nh := range lstmUnitLanes {
		for _, p := range lstmPlans(Case{DType: FP32, Dims: []int{1, 1, nh}})[1:] {
			if p.x3 {
				continue // TestLSTMX3ChoosePlan
			}
			if p.xt { // in lstm_sm90, at the plan's batch rows and at each the launch may pick
				for _, bb := range rnnUnitBatches[1:] {
					name := lstmXTKernel(p, nh, bb)
					if !strings.Contains(entries("lstm_sm90"), ".entry "+name+"(") {
						t.Errorf("lstm_sm90 has no kernel %s (plan %v)", name, p)
					}
				}
				continue
			}
			suffix := ""
			if p.xa {
				suffix = "_xa"
			}
			check("lstm", "h", nh, lstmUnitLanes, p.fast, p.lanes, p.bb, suffix)
		}
	}
	for dh := range slstmUnitLanes {
		for _, p := range slstmPlans(Case{DType: FP32, Dims: []int{1, 1, 1, dh}})[1:] {
			check("slstm", "dh", dh, slstmUnitLanes, p.fast, p.lanes, p.bb, "")
		}
	}
}

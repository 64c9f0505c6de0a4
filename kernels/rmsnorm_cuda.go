//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/rmsnorm.ptx cuda/rmsnorm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/rmsnorm_sm90.ptx cuda/rmsnorm.cu
//go:generate nvcc -ptx -arch=compute_75 -DKW_SLOWDOWN -o cuda/ptx/rmsnorm_slow.ptx cuda/rmsnorm.cu

import "fmt"

func init() { registerCUDA(RMSNormFamily, "rmsnorm", rmsNormFusedCUDA, rmsNormNaiveCUDA) }

// rmsNormPlan is how the fused kernel (cuda/rmsnorm.cu) covers the rows: with one warp for rows rows at once
// (warp), with one thread-block cluster of cluster blocks per row (sm_90), or with a team of blocks per row;
// blocks of threads threads, vec: 16-byte accesses (else one element per access), nv accesses per thread.
type rmsNormPlan struct {
	warp    bool
	rows    int // warp: rows per warp
	cluster int // blocks per cluster; 0: not a cluster kernel
	vec     bool
	nv      int
	threads int
}

// rmsNormPlanFor picks the plan of a case; the tests swap it.
var rmsNormPlanFor = rmsNormChoosePlan

// rmsNormChoosePlan gives each thread 128 bytes of a row in registers (8 16-byte accesses; 16 elements when
// the columns do not allow 16-byte accesses): with 64 registers a thread, a multiprocessor runs 1024 threads
// with 128 KiB of loads in flight, about what it takes to keep HBM busy. Measured on an H200 (cuda_test.go's
// TestCUDATune), in pct of the copy at the same shape:
//
//   - rows of up to 32·8 accesses: one warp, several rows a warp when shorter (98–102%);
//   - few rows (decode, fewer than two per multiprocessor): one block per row, two accesses a thread, so that
//     as many warps as possible issue the row's loads (32×4096: 90–94%, against 59–60% with eight);
//   - rows of up to 1024 threads' worth: one block per row (4096–16384: 92–101%; bf16 65536: 80%);
//   - longer fp32 rows on sm_90: a cluster of 2–8 1024-thread blocks (65536: 83%, 262144: 73%);
//   - longer still, or elsewhere: a persistent team of 256-thread blocks meeting through global memory (bf16
//     262144: 69%; fp32 262144: 60%, which is why fp32 takes the cluster).
func rmsNormChoosePlan(c Case, cc, sms int) rmsNormPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*8*e:
		n := ceilPow2(ceilDiv(c.Cols, 32*e))
		if !vec {
			return rmsNormPlan{warp: true, rows: 1, nv: n}
		}
		return rmsNormPlan{warp: true, rows: 8 / n, vec: true, nv: n}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rmsNormPlan{vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rmsNormPlan{vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.DType == FP32 && c.Cols <= 8*1024*nv*e:
		return rmsNormPlan{cluster: ceilPow2(ceilDiv(c.Cols, 1024*nv*e)), vec: true, nv: nv, threads: 1024}
	}
	return rmsNormPlan{vec: vec, nv: nv, threads: 256}
}

func (p rmsNormPlan) kernel(dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch {
	case p.warp:
		return fmt.Sprintf("rmsnorm_warp_%s_%s%dr%d", d, v, p.nv, p.rows)
	case p.cluster > 0:
		return fmt.Sprintf("rmsnorm_cluster_%s_v%d_c%d", d, p.nv, p.cluster)
	}
	return fmt.Sprintf("rmsnorm_team_%s_%s%d", d, v, p.nv)
}

func rmsNormFusedCUDA(l *cudaLaunch) {
	p := rmsNormPlanFor(l.Case, l.cc(), l.sms())
	x, w, y := l.in[0], l.in[1], l.out[0]
	name := p.kernel(l.DType)
	e := 1
	if p.vec {
		e = 16 / l.DType.Size()
	}
	switch {
	case p.warp:
		const block = 256
		l.kernel(name, ceilDiv(l.Rows, block/32*p.rows), block, x, w, y, l.Rows, l.Cols, rmsNormEps)
		return
	case p.cluster > 0:
		if p.cluster*p.threads*p.nv*e < l.Cols {
			l.fail(fmt.Errorf("rmsnorm: %d × %d threads × %d do not cover %d columns", p.cluster, p.threads, p.nv*e, l.Cols))
			return
		}
		l.kernelIn(l.module+"_sm90", name, l.Rows*p.cluster, p.threads, x, w, y, l.Rows, l.Cols, rmsNormEps)
		return
	}
	team := ceilDiv(l.Cols, p.threads*p.nv*e)
	if team == 1 {
		l.kernel(name, l.Rows, p.threads, x, w, y, l.Rows, l.Cols, rmsNormEps, 1, 0, 0, 0)
		return
	}
	if int64(l.Rows)*int64(team) >= 1<<32 {
		l.fail(fmt.Errorf("rmsnorm: %d rows × a team of %d", l.Rows, team))
		return
	}
	// A team's blocks wait for each other, so all of the grid must be resident: a whole number of teams.
	resident := l.residentBlocks(name, p.threads)
	if l.err == nil && resident < team {
		l.fail(fmt.Errorf("rmsnorm: a team of %d blocks of %d threads does not fit (%d resident)", team, p.threads, resident))
	}
	grid := min(l.Rows*team, resident/team*team)
	// partials[rows][team] fp32, then count[rows] and gen[rows] (team_sum in common.cuh), zero.
	partials := l.alloc(int64(l.Rows)*int64(team+2)*4, true)
	count := partials + cuPtr(4*l.Rows*team)
	gen := count + cuPtr(4*l.Rows)
	l.kernel(name, max(grid, 1), p.threads, x, w, y, l.Rows, l.Cols, rmsNormEps, team, partials, count, gen)
}

// rmsNormNaiveCUDA: x² → mean per row → rsqrt(· + ε) → x·r → ·w, the CPU's chain (rmsNormNaive).
func rmsNormNaiveCUDA(l *cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(l.in[0].dense(cols), rows, cols)
	w := l.upcast(l.in[1].dense(cols), 1, cols)
	sq := l.bin(opMul, x, x, rows, cols)
	ms := l.red(opMean, sq, rows, cols, cols)
	inv := l.un(opRsqrt, l.bin(opAdd, devDense(ms, 1), devScalar(rmsNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, x, devPerRow(inv.t), rows, cols)
	l.binary(opMul, l.out[0].dense(cols), xn, devPerCol(w.t), rows, cols)
}

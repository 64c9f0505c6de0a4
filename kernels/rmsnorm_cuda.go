//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/rmsnorm.ptx cuda/rmsnorm.cu
//go:generate nvcc -ptx -arch=compute_90 -o cuda/ptx/rmsnorm_sm90.ptx cuda/rmsnorm.cu
//go:generate nvcc -ptx -arch=compute_75 -DKW_SLOWDOWN -o cuda/ptx/rmsnorm_slow.ptx cuda/rmsnorm.cu

import "fmt"

func init() { registerCUDA(RMSNormFamily, "rmsnorm", rmsNormFusedCUDA, rmsNormNaiveCUDA) }

// rmsNormFusedCUDA runs one kernel of cuda/rmsnorm.cu: the shared row plans through launchRow (the look-ahead
// blocks of rowLead among them), and RMSNorm's own teams — one block per row (rowBlock, a team of one) or several
// meeting through global memory (rowTeam).
func rmsNormFusedCUDA(l cudaLaunch) {
	p := rmsNormPlanFor(l.Case, l.CC(), l.SMs())
	x, w, y := l.In[0], l.In[1], l.Out[0]
	if p.kind != rowBlock && p.kind != rowTeam || p.lead > 0 {
		launchRow(l, rmsNormRows, p, x, w, y, l.Rows, l.Cols, rmsNormEps)
		return
	}
	name := rmsNormRows.kernel(p, l.DType)
	e := 1
	if p.vec {
		e = 16 / l.DType.Size()
	}
	if p.threads > rowBlockMaxThreads(p) {
		l.Fail(fmt.Errorf("%s: blocks of %d threads (built for at most %d)", name, p.threads, rowBlockMaxThreads(p)))
		return
	}
	team := ceilDiv(l.Cols, p.threads*p.nv*e)
	if team == 1 {
		l.Kernel(name, l.Rows, p.threads, x, w, y, l.Rows, l.Cols, rmsNormEps, 1, 0, 0, 0)
		return
	}
	if int64(l.Rows)*int64(team) >= 1<<32 {
		l.Fail(fmt.Errorf("rmsnorm: %d rows × a team of %d", l.Rows, team))
		return
	}
	// A team's blocks wait for each other, so all of the grid must be resident: a whole number of teams.
	resident := l.ResidentBlocks(name, p.threads)
	if l.Err() == nil && resident < team {
		l.Fail(fmt.Errorf("rmsnorm: a team of %d blocks of %d threads does not fit (%d resident)", team, p.threads, resident))
	}
	grid := min(l.Rows*team, resident/team*team)
	// partials[rows][team] fp32, then count[rows] and gen[rows] (team_sum in common.cuh), zero.
	partials := l.Alloc(int64(l.Rows)*int64(team+2)*4, true)
	count := partials + cuPtr(4*l.Rows*team)
	gen := count + cuPtr(4*l.Rows)
	l.Kernel(name, max(grid, 1), p.threads, x, w, y, l.Rows, l.Cols, rmsNormEps, team, partials, count, gen)
}

// rmsNormNaiveCUDA: x² → mean per row → rsqrt(· + ε) → x·r → ·w, the CPU's chain (rmsNormNaive).
func rmsNormNaiveCUDA(l cudaLaunch) {
	rows, cols := l.Rows, l.Cols
	x := l.upcast(denseOf(l.In[0], cols), rows, cols)
	w := l.upcast(denseOf(l.In[1], cols), 1, cols)
	sq := l.bin(opMul, x, x, rows, cols)
	ms := l.red(opMean, sq, rows, cols, cols)
	inv := l.un(opRsqrt, l.bin(opAdd, devDense(ms, 1), devScalar(rmsNormEps), rows, 1), rows, 1)
	xn := l.bin(opMul, x, devPerRow(inv.t), rows, cols)
	l.binary(opMul, denseOf(l.Out[0], cols), xn, devPerCol(w.t), rows, cols)
}

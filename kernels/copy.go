package kernels

import "github.com/kernelwatch/kernelwatch/harness"

// CopyFamily is y = x, the harness's speed-of-light reference (pct-copy), benchmarked as a family of the suite:
// the harness brings its fused code; the suite adds the naive one.
var CopyFamily = harness.CopyFamily

func init() { registerCPU(CopyFamily, nil, copyNaive) }

// copyNaive is y.copy_(x.float()): through an fp32 intermediate (a clone for fp32).
func copyNaive(l cpuLaunch) {
	rows, cols := l.Rows, l.Cols
	t := l.un(opCopy, dense(actOf(l.In[0]), cols), rows, cols)
	l.unary(opCopy, dense(actOf(l.Out[0]), cols), t, rows, cols)
}

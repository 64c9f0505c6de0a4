//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/mlstm.ptx cuda/mlstm.cu

import "fmt"

func init() { registerCUDA(MLSTMFamily, "mlstm", mlstmFusedCUDA, mlstmNaiveCUDA) }

// mlstmSplitFor picks how many blocks share a head in the chunkwise kernel (each its share of the value
// columns); the tests swap it.
var mlstmSplitFor = mlstmChooseSplit

// mlstmSplits are the splits cuda/mlstm.cu is built with for each head size (at least 8 value columns a block).
var mlstmSplits = map[int][]int{16: {1, 2}, 32: {1, 2, 4}, 64: {1, 2, 4}}

// mlstmChooseSplit gives each head the fewest blocks that cover about all multiprocessors (90%): a head's
// chunks run one after another, so with fewer heads than multiprocessors the value columns are what can be
// spread; each extra block repeats the head's score computation, so no more than needed. At (8, 8, 1024, 64):
// 2 blocks a head, 128 blocks on 132 multiprocessors.
func mlstmChooseSplit(c Case, sms int) int {
	nb, nh, _, dh := mlstmDims(c)
	splits := mlstmSplits[dh]
	for _, vs := range splits {
		if 10*nb*nh*vs >= 9*sms {
			return vs
		}
	}
	return splits[len(splits)-1]
}

func mlstmFusedCUDA(l cudaLaunch) {
	nb, nh, nt, dh := mlstmDims(l.Case)
	if _, ok := mlstmSplits[dh]; !ok {
		l.Fail(fmt.Errorf("mlstm: no kernel for head size %d", dh))
		return
	}
	vs := mlstmSplitFor(l.Case, l.SMs())
	name := fmt.Sprintf("mlstm_chunkwise_%s_dh%d_vs%d", seqDType(l.DType), dh, vs)
	l.Kernel(name, nb*nh*vs, 256, l.In[0], l.In[1], l.In[2], l.In[3], l.In[4], l.In[5], l.Out[0], nb, nh, nt)
}

// mlstmNaiveCUDA is the CPU's sequential recurrence (mlstmNaive): one launch a step, a block a head.
func mlstmNaiveCUDA(l cudaLaunch) {
	nb, nh, nt, dh := mlstmDims(l.Case)
	if _, ok := mlstmSplits[dh]; !ok {
		l.Fail(fmt.Errorf("mlstm: no kernel for head size %d", dh))
		return
	}
	heads := int64(nb * nh)
	cs, ns, ms := l.Alloc(4*heads*int64(dh*dh), true), l.Alloc(4*heads*int64(dh), true), l.Alloc(4*heads, true)
	name := fmt.Sprintf("mlstm_step_%s_dh%d", seqDType(l.DType), dh)
	for t := range nt {
		l.Kernel(name, nb*nh, 4*dh, l.In[0], l.In[1], l.In[2], l.In[3], l.In[4], l.In[5], l.Out[0], cs, ns, ms, t, nh, nt)
	}
}

//go:build cuda

package harness

// Cluster launches. gorgonia.org/cu launches with cuLaunchKernel, which takes no cluster dimension and sets no
// function attribute; a kernel whose cluster size is chosen at launch (row_dsmem: 2–16 blocks), or that takes
// more than 48 KiB of dynamic shared memory, needs cuFuncSetAttribute and cuLaunchKernelEx. Both are in the
// driver API since CUDA 11.8 (cuda.h of the toolkit scripts/install-cuda-toolkit.sh installs declares
// cuLaunchKernelEx, CUlaunchConfig and CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), so this shim calls them from the
// header's own declarations, with libcuda, which gorgonia.org/cu links already.

/*
#cgo LDFLAGS: -lcuda
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib
#cgo linux CFLAGS: -I/usr/local/cuda/include
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

static void kw_cluster_config(CUlaunchConfig *cfg, CUlaunchAttribute *attr, unsigned grid, unsigned block,
                              unsigned cluster, unsigned smem, CUstream s) {
	memset(cfg, 0, sizeof *cfg);
	memset(attr, 0, sizeof *attr);
	if (cluster == 0) { // a cooperative launch (clusters of one block): every block resident at once, or an error
		attr->id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr->value.cooperative = 1;
	} else {
		attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr->value.clusterDim.x = cluster;
		attr->value.clusterDim.y = 1;
		attr->value.clusterDim.z = 1;
	}
	cfg->gridDimX = grid;
	cfg->gridDimY = 1;
	cfg->gridDimZ = 1;
	cfg->blockDimX = block;
	cfg->blockDimY = 1;
	cfg->blockDimZ = 1;
	cfg->sharedMemBytes = smem;
	cfg->hStream = s;
	cfg->attrs = attr;
	cfg->numAttrs = 1;
}

// kw_launch_cluster launches f on grid × block threads in clusters of `cluster` blocks along x (0: a cooperative
// launch instead, kw_cluster_config). params points at n 8-byte arguments, copied here into C memory (cgo forbids passing Go memory that holds Go pointers).
static CUresult kw_launch_cluster(CUfunction f, unsigned grid, unsigned block, unsigned cluster, unsigned smem,
                                  CUstream s, const unsigned long long *args, int n) {
	CUlaunchConfig cfg;
	CUlaunchAttribute attr;
	kw_cluster_config(&cfg, &attr, grid, block, cluster, smem, s);
	unsigned long long *argv = malloc(sizeof *argv * (n > 0 ? n : 1));
	void **argp = malloc(sizeof *argp * (n > 0 ? n : 1));
	if (!argv || !argp) {
		free(argv);
		free(argp);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (int i = 0; i < n; i++) {
		argv[i] = args[i];
		argp[i] = &argv[i];
	}
	CUresult r = cuLaunchKernelEx(&cfg, f, argp, NULL);
	free(argv);
	free(argp);
	return r;
}

// kw_max_clusters is how many clusters of f the GPU runs at once (cuOccupancyMaxActiveClusters).
static CUresult kw_max_clusters(CUfunction f, unsigned block, unsigned cluster, unsigned smem, int *n) {
	CUlaunchConfig cfg;
	CUlaunchAttribute attr;
	kw_cluster_config(&cfg, &attr, cluster, block, cluster, smem, NULL);
	return cuOccupancyMaxActiveClusters(n, f, &cfg);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// cu.Function and cu.Stream each wrap one driver handle (gorgonia.org/cu v0.9.6: struct{ fn C.CUfunction },
// struct{ s C.CUstream }), which the shim reads through unsafe; these fail to compile if either grows.
var (
	_ [unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil))]struct{}
	_ [unsafe.Sizeof(C.CUfunction(nil)) - unsafe.Sizeof(cu.Function{})]struct{}
	_ [unsafe.Sizeof(cu.Stream{}) - unsafe.Sizeof(C.CUstream(nil))]struct{}
	_ [unsafe.Sizeof(C.CUstream(nil)) - unsafe.Sizeof(cu.Stream{})]struct{}
)

func cuFunc(fn cu.Function) C.CUfunction { return *(*C.CUfunction)(unsafe.Pointer(&fn)) }
func cuStream(s cu.Stream) C.CUstream    { return *(*C.CUstream)(unsafe.Pointer(&s)) }

func cuCheck(what string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name *C.char
	if C.cuGetErrorName(r, &name) == C.CUDA_SUCCESS && name != nil {
		return fmt.Errorf("%s: %s (%d)", what, C.GoString(name), int(r))
	}
	return fmt.Errorf("%s: CUresult %d", what, int(r))
}

// KernelCluster records a launch of kernel name from module on grid × block threads in clusters of cluster
// blocks (thread-block clusters: compute capability 9.0 and later), each block with smem bytes of dynamic
// shared memory: it sets the function's dynamic shared memory limit (and, above 8 blocks a cluster, allows a
// non-portable cluster size), then checks that at least one such cluster fits the GPU, so that a plan the
// hardware cannot run fails in Prepare, naming the kernel. Arguments are passed as KernelIn passes them.
func (l *CUDALaunch) KernelCluster(module, name string, grid, block, cluster, smem int, args ...any) {
	if l.err != nil {
		return
	}
	if cluster < 1 || grid%cluster != 0 {
		l.Fail(fmt.Errorf("kernel %s: grid %d is not a whole number of clusters of %d", name, grid, cluster))
		return
	}
	fn, err := l.be.function(module, name)
	if err != nil {
		l.Fail(err)
		return
	}
	f := cuFunc(fn)
	if err := cuCheck("max dynamic shared memory of "+name,
		C.cuFuncSetAttribute(f, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(smem))); err != nil {
		l.Fail(fmt.Errorf("kernel %s with %d B of shared memory a block: %w", name, smem, err))
		return
	}
	if cluster > 8 {
		if err := cuCheck("non-portable cluster size of "+name,
			C.cuFuncSetAttribute(f, C.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)); err != nil {
			l.Fail(fmt.Errorf("kernel %s in clusters of %d: %w", name, cluster, err))
			return
		}
	}
	var n C.int
	if err := cuCheck("occupancy of "+name, C.kw_max_clusters(f, C.uint(block), C.uint(cluster), C.uint(smem), &n)); err != nil {
		l.Fail(err)
		return
	}
	if n < 1 {
		l.Fail(fmt.Errorf("kernel %s: no cluster of %d blocks × %d threads with %d B of shared memory each fits this GPU", name, cluster, block, smem))
		return
	}
	l.KernelIn(module, name, grid, block, args...)
	if l.err == nil {
		st := &l.steps[len(l.steps)-1]
		st.cluster, st.smem = cluster, smem
	}
}

// KernelCooperative records a cooperative launch of kernel name from module on grid × block threads, each block
// with smem bytes of dynamic shared memory: every block of the grid is resident at once, or the launch fails
// (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) instead of hanging, for kernels whose blocks wait on each other
// through global memory. It checks in Prepare that the GPU holds grid such blocks at once.
func (l *CUDALaunch) KernelCooperative(module, name string, grid, block, smem int, args ...any) {
	if l.err != nil {
		return
	}
	if n := l.ResidentTMA(module, name, block, 1, smem); l.err == nil && n < grid {
		l.Fail(fmt.Errorf("kernel %s: a cooperative grid of %d blocks × %d threads with %d B of shared memory each, "+
			"of which this GPU holds %d at once", name, grid, block, smem, n))
	}
	l.KernelCluster(module, name, grid, block, 1, smem, args...)
	if l.err == nil {
		l.steps[len(l.steps)-1].coop = true
	}
}

// launchCluster queues step st, a cluster launch, on stream s.
func (st *cudaStep) launchCluster(s cu.Stream) error {
	var args *C.ulonglong
	if len(st.args) > 0 {
		args = (*C.ulonglong)(unsafe.Pointer(&st.args[0]))
	}
	cluster := st.cluster
	if st.coop {
		cluster = 0 // kw_cluster_config: cooperative
	}
	return cuCheck("harness: cuda launch "+st.name, C.kw_launch_cluster(cuFunc(st.fn), C.uint(st.grid), C.uint(st.block),
		C.uint(cluster), C.uint(st.smem), cuStream(s), args, C.int(len(st.args))))
}

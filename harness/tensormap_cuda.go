//go:build cuda

package harness

// Tensor maps and the launches that take them. Hopper's bulk tensor copy engine (TMA: cp.async.bulk.tensor)
// reads a tensor through a tensor map, a 128-byte descriptor that cuTensorMapEncodeTiled writes on the host and
// the kernel takes by value (a __grid_constant__ CUtensorMap parameter). Three things stand between that and
// this backend, and this shim supplies each:
//
//   - cuTensorMapEncodeTiled is CUDA 12 driver API, and the cgo build's cuda.h is CUDA 11.8's: the function
//     is looked up in libcuda at run time (dlsym), and its types — the CUtensorMap struct and the enums — are
//     declared here with CUDA 12's values (cuda.h of CUDA 12.4: CU_TENSOR_MAP_NUM_QWORDS 16, the struct
//     alignas(64); CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9, CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
//     CU_TENSOR_MAP_SWIZZLE_128B = 3, CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
//     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0, whose out-of-bounds elements read as zeros).
//   - gorgonia.org/cu's Launch passes 8-byte parameters; a tensor map is 128 bytes. The launch goes through
//     cuLaunchKernelEx here, with a parameter array whose first entries point at 64-byte aligned copies of
//     the maps (C memory: cgo forbids handing the driver Go memory to keep), then the 8-byte arguments.
//   - such kernels take more than 48 KiB of dynamic shared memory, and may run in thread-block clusters:
//     the launch sets the function's limit and, for clusters, the cluster dimension (as KernelCluster does).

/*
#cgo LDFLAGS: -lcuda -ldl
#cgo linux LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib
#cgo linux CFLAGS: -I/usr/local/cuda/include
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// CUDA 12's CUtensorMap (cuda.h: typedef struct CUtensorMap_st { alignas(64) cuuint64_t opaque[16]; }).
typedef struct {
	_Alignas(64) uint64_t opaque[16];
} kw_tensor_map;

// CUDA 12's cuTensorMapEncodeTiled, its enums passed as their int values.
typedef CUresult (*kw_encode_tiled)(kw_tensor_map*, int, uint32_t, void*, const uint64_t*, const uint64_t*,
                                    const uint32_t*, const uint32_t*, int, int, int, int);

static kw_encode_tiled kw_encode;

// kw_tensor_map_lookup finds cuTensorMapEncodeTiled in the driver library; 0 when it is there.
static int kw_tensor_map_lookup(void) {
	if (kw_encode) return 0;
	kw_encode = (kw_encode_tiled)dlsym(RTLD_DEFAULT, "cuTensorMapEncodeTiled");
	if (!kw_encode) {
		void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (lib) kw_encode = (kw_encode_tiled)dlsym(lib, "cuTensorMapEncodeTiled");
	}
	return kw_encode ? 0 : 1;
}

// kw_tensor_map_2d encodes a 2-D tiled map of a row-major tensor (rows × cols elements of elem bytes, rows
// rowBytes apart) with boxes of boxRows × boxCols, into out (128 bytes).
static CUresult kw_tensor_map_2d(void* out, int dtype, CUdeviceptr base, uint64_t cols, uint64_t rows,
                                 uint64_t rowBytes, uint32_t boxCols, uint32_t boxRows, int swizzle, int l2) {
	kw_tensor_map m;
	uint64_t dims[2] = {cols, rows}, strides[1] = {rowBytes};
	uint32_t box[2] = {boxCols, boxRows}, estr[2] = {1, 1};
	memset(&m, 0, sizeof m);
	CUresult r = kw_encode(&m, dtype, 2, (void*)(uintptr_t)base, dims, strides, box, estr, 0, swizzle, l2, 0);
	memcpy(out, &m, sizeof m);
	return r;
}

// kw_tensor_map_3d encodes a 3-D tiled map of a tensor of planes × rows × cols elements (rows rowBytes
// apart, planes planeBytes apart) with boxes of 1 × boxRows × boxCols, into out (128 bytes).
static CUresult kw_tensor_map_3d(void* out, int dtype, CUdeviceptr base, uint64_t cols, uint64_t rows,
                                 uint64_t planes, uint64_t rowBytes, uint64_t planeBytes, uint32_t boxCols,
                                 uint32_t boxRows, int swizzle, int l2) {
	kw_tensor_map m;
	uint64_t dims[3] = {cols, rows, planes}, strides[2] = {rowBytes, planeBytes};
	uint32_t box[3] = {boxCols, boxRows, 1}, estr[3] = {1, 1, 1};
	memset(&m, 0, sizeof m);
	CUresult r = kw_encode(&m, dtype, 3, (void*)(uintptr_t)base, dims, strides, box, estr, 0, swizzle, l2, 0);
	memcpy(out, &m, sizeof m);
	return r;
}

// kw_launch_maps launches f on grid × block threads (in clusters of `cluster` blocks along x when cluster > 1)
// with smem bytes of dynamic shared memory; its parameters are the nmaps tensor maps at maps (128 bytes each),
// then n 8-byte arguments. Everything is copied into C memory first.
static CUresult kw_launch_maps(CUfunction f, unsigned grid, unsigned block, unsigned cluster, unsigned smem,
                               CUstream s, const void* maps, int nmaps, const unsigned long long* args, int n) {
	int np = nmaps + n;
	kw_tensor_map* mv = aligned_alloc(64, sizeof(kw_tensor_map) * (nmaps > 0 ? nmaps : 1));
	unsigned long long* argv = malloc(sizeof *argv * (n > 0 ? n : 1));
	void** argp = malloc(sizeof *argp * (np > 0 ? np : 1));
	if (!mv || !argv || !argp) {
		free(mv);
		free(argv);
		free(argp);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(mv, maps, sizeof(kw_tensor_map) * nmaps);
	for (int i = 0; i < nmaps; i++) argp[i] = &mv[i];
	for (int i = 0; i < n; i++) {
		argv[i] = args[i];
		argp[nmaps + i] = &argv[i];
	}
	CUlaunchConfig cfg;
	CUlaunchAttribute attr;
	memset(&cfg, 0, sizeof cfg);
	memset(&attr, 0, sizeof attr);
	cfg.gridDimX = grid;
	cfg.gridDimY = 1;
	cfg.gridDimZ = 1;
	cfg.blockDimX = block;
	cfg.blockDimY = 1;
	cfg.blockDimZ = 1;
	cfg.sharedMemBytes = smem;
	cfg.hStream = s;
	if (cluster > 1) {
		attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr.value.clusterDim.x = cluster;
		attr.value.clusterDim.y = 1;
		attr.value.clusterDim.z = 1;
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
	}
	CUresult r = cuLaunchKernelEx(&cfg, f, argp, NULL);
	free(mv);
	free(argv);
	free(argp);
	return r;
}

// kw_max_cluster_blocks is how many blocks of f the GPU runs at once in clusters of `cluster` blocks
// (cuOccupancyMaxActiveClusters × cluster).
static CUresult kw_max_cluster_blocks(CUfunction f, unsigned block, unsigned cluster, unsigned smem, int* n) {
	CUlaunchConfig cfg;
	CUlaunchAttribute attr;
	memset(&cfg, 0, sizeof cfg);
	memset(&attr, 0, sizeof attr);
	attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	attr.value.clusterDim.x = cluster;
	attr.value.clusterDim.y = 1;
	attr.value.clusterDim.z = 1;
	cfg.gridDimX = cluster;
	cfg.gridDimY = 1;
	cfg.gridDimZ = 1;
	cfg.blockDimX = block;
	cfg.blockDimY = 1;
	cfg.blockDimZ = 1;
	cfg.sharedMemBytes = smem;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	CUresult r = cuOccupancyMaxActiveClusters(n, f, &cfg);
	*n *= (int)cluster;
	return r;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// TensorMap is an encoded CUDA tensor map (CUtensorMap, 128 opaque bytes), a kernel parameter of its own
// (KernelTMA).
type TensorMap [128]byte

// TensorMap2D describes a row-major tensor of Rows × Cols elements of DType in device memory, rows RowBytes
// apart (a multiple of 16), read in boxes of BoxRows × BoxCols (each at most 256), with the 128-byte swizzle
// when Swizzle128 (BoxCols × the element size then at most 128 bytes). Elements outside the tensor read as
// zeros.
type TensorMap2D struct {
	Ptr              *DeviceBuffer
	Offset           int64 // bytes from Ptr's first element
	Rows, Cols       int
	RowBytes         int64
	BoxRows, BoxCols int
	Swizzle128       bool
}

// TensorMap3D describes Planes row-major matrices of Rows × Cols elements of DType in device memory, rows
// RowBytes and planes PlaneBytes apart (multiples of 16), read in boxes of one plane's BoxRows × BoxCols, as
// TensorMap2D's; rows past Rows read as zeros, not as the next plane's: the attention kernels' (batch·heads, t,
// d) tensors, whose last tile of keys or queries may be ragged.
type TensorMap3D struct {
	Ptr              *DeviceBuffer
	Planes           int
	Rows, Cols       int
	RowBytes         int64
	PlaneBytes       int64
	BoxRows, BoxCols int
	Swizzle128       bool
}

// CUDA 12's enum values (cuda.h of CUDA 12.4).
const (
	cuTensorMapBF16       = 9 // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
	cuTensorMapFP32       = 7 // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
	cuTensorMapSwizzle128 = 3 // CU_TENSOR_MAP_SWIZZLE_128B
	cuTensorMapL2Promo256 = 3 // CU_TENSOR_MAP_L2_PROMOTION_L2_256B
)

// TensorMap encodes d (cuTensorMapEncodeTiled, looked up in the driver at run time); the launch fails when the
// driver has no tensor maps (before CUDA 12) or refuses the description, naming it.
func (l *CUDALaunch) TensorMap(d TensorMap2D) TensorMap {
	var m TensorMap
	dt, sw, ok := l.tensorMapKind(d.Ptr, d.Swizzle128)
	if !ok {
		return m
	}
	r := C.kw_tensor_map_2d(unsafe.Pointer(&m[0]), dt, C.CUdeviceptr(uint64(d.Ptr.ptr)+uint64(d.Offset)), C.uint64_t(d.Cols),
		C.uint64_t(d.Rows), C.uint64_t(d.RowBytes), C.uint32_t(d.BoxCols), C.uint32_t(d.BoxRows), sw, cuTensorMapL2Promo256)
	if err := cuCheck("cuTensorMapEncodeTiled", r); err != nil {
		l.Fail(fmt.Errorf("tensor map of %d × %d %v (rows %d B apart), boxes %d × %d: %w", d.Rows, d.Cols, d.Ptr.dt,
			d.RowBytes, d.BoxRows, d.BoxCols, err))
	}
	return m
}

// TensorMap3D encodes d as TensorMap encodes a TensorMap2D.
func (l *CUDALaunch) TensorMap3D(d TensorMap3D) TensorMap {
	var m TensorMap
	dt, sw, ok := l.tensorMapKind(d.Ptr, d.Swizzle128)
	if !ok {
		return m
	}
	r := C.kw_tensor_map_3d(unsafe.Pointer(&m[0]), dt, C.CUdeviceptr(uint64(d.Ptr.ptr)), C.uint64_t(d.Cols),
		C.uint64_t(d.Rows), C.uint64_t(d.Planes), C.uint64_t(d.RowBytes), C.uint64_t(d.PlaneBytes),
		C.uint32_t(d.BoxCols), C.uint32_t(d.BoxRows), sw, cuTensorMapL2Promo256)
	if err := cuCheck("cuTensorMapEncodeTiled", r); err != nil {
		l.Fail(fmt.Errorf("tensor map of %d × %d × %d %v (rows %d B, planes %d B apart), boxes %d × %d: %w", d.Planes,
			d.Rows, d.Cols, d.Ptr.dt, d.RowBytes, d.PlaneBytes, d.BoxRows, d.BoxCols, err))
	}
	return m
}

// tensorMapKind is the tensor-map element type and swizzle of buffer b, and whether the driver can encode
// maps; it records the error when not.
func (l *CUDALaunch) tensorMapKind(b *DeviceBuffer, swizzle128 bool) (C.int, C.int, bool) {
	if l.err != nil {
		return 0, 0, false
	}
	var dt C.int
	switch b.dt {
	case BF16:
		dt = cuTensorMapBF16
	case FP32:
		dt = cuTensorMapFP32
	default:
		l.Fail(fmt.Errorf("tensor map of %v: only bf16 and fp32", b.dt))
		return 0, 0, false
	}
	if C.kw_tensor_map_lookup() != 0 {
		l.Fail(fmt.Errorf("tensor map: the CUDA driver has no cuTensorMapEncodeTiled (it is CUDA 12 driver API): %w", ErrNotImplemented))
		return 0, 0, false
	}
	sw := C.int(0)
	if swizzle128 {
		sw = cuTensorMapSwizzle128
	}
	return dt, sw, true
}

// ResidentTMA sets kernel name's (of module) dynamic shared memory limit to smem bytes and returns how many of
// its blocks of block threads, in clusters of cluster blocks (1: none; above 8 it allows the non-portable size
// first), the whole GPU holds at once; 0 after an error, which it records.
func (l *CUDALaunch) ResidentTMA(module, name string, block, cluster, smem int) int {
	if l.err != nil {
		return 0
	}
	fn, err := l.be.function(module, name)
	if err != nil {
		l.Fail(err)
		return 0
	}
	f := cuFunc(fn)
	if err := cuCheck("max dynamic shared memory of "+name,
		C.cuFuncSetAttribute(f, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(smem))); err != nil {
		l.Fail(fmt.Errorf("kernel %s with %d B of shared memory a block: %w", name, smem, err))
		return 0
	}
	if cluster <= 1 {
		per, err := fn.MaxActiveBlocksPerMultiProcessor(block, int64(smem))
		if err != nil {
			l.Fail(fmt.Errorf("occupancy of %s: %w", name, err))
			return 0
		}
		return per * l.be.dev.Workers
	}
	if cluster > 8 {
		if err := cuCheck("non-portable cluster size of "+name,
			C.cuFuncSetAttribute(f, C.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)); err != nil {
			l.Fail(fmt.Errorf("kernel %s in clusters of %d: %w", name, cluster, err))
			return 0
		}
	}
	var n C.int
	if err := cuCheck("occupancy of "+name, C.kw_max_cluster_blocks(f, C.uint(block), C.uint(cluster), C.uint(smem), &n)); err != nil {
		l.Fail(err)
		return 0
	}
	return int(n)
}

// KernelTMA records a launch of kernel name from module on grid × block threads, in clusters of cluster
// blocks along x (1: no cluster), each block with smem bytes of dynamic shared memory; the kernel's parameters
// are maps, by value, then args, passed as KernelIn passes them. It sets the dynamic shared memory limit and
// fails, naming the kernel, when not one block (or cluster) of it fits the GPU.
func (l *CUDALaunch) KernelTMA(module, name string, grid, block, cluster, smem int, maps []TensorMap, args ...any) {
	if l.err != nil {
		return
	}
	if cluster < 1 || grid%cluster != 0 {
		l.Fail(fmt.Errorf("kernel %s: grid %d is not a whole number of clusters of %d", name, grid, cluster))
		return
	}
	if n := l.ResidentTMA(module, name, block, cluster, smem); l.err == nil && n < cluster {
		l.Fail(fmt.Errorf("kernel %s: no block of %d threads with %d B of shared memory (clusters of %d) fits this GPU", name, block, smem, cluster))
	}
	l.KernelIn(module, name, grid, block, args...)
	if l.err == nil {
		st := &l.steps[len(l.steps)-1]
		st.cluster, st.smem, st.maps = cluster, smem, append([]TensorMap(nil), maps...)
	}
}

// launchMaps queues step st, a launch with tensor maps (KernelTMA), on stream s.
func (st *cudaStep) launchMaps(s cu.Stream) error {
	var args *C.ulonglong
	if len(st.args) > 0 {
		args = (*C.ulonglong)(unsafe.Pointer(&st.args[0]))
	}
	var maps unsafe.Pointer
	if len(st.maps) > 0 {
		maps = unsafe.Pointer(&st.maps[0][0])
	}
	return cuCheck("harness: cuda launch "+st.name, C.kw_launch_maps(cuFunc(st.fn), C.uint(st.grid), C.uint(st.block),
		C.uint(st.cluster), C.uint(st.smem), cuStream(s), maps, C.int(len(st.maps)), args, C.int(len(st.args))))
}

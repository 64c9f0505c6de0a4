//go:build cuda

package harness

// The vendor reference (vendor.go) on the CUDA backend: cuBLASLt, opened with dlopen from the path findCublasLt
// picks (the -kernels.cublaslt flag, KERNELWATCH_CUBLASLT, else PyTorch's nvidia/cublas/lib or torch/lib and
// the usual CUDA directories), never linked, so that the suite builds and runs without it. cublasLt.h (CUDA
// 11.8's) supplies only types and enum values, which cuBLASLt has kept from 11 to 13; the functions come from
// the library loaded. The GEMM is the suite's: y[M, N] = x[M, K] · w[N, K]ᵀ, bf16 in and out, fp32 compute
// and scale; in cuBLASLt's column-major terms yᵀ (N × M, ld N) = op(w) · xᵀ with w a K × N matrix (ld K)
// transposed and xᵀ K × M (ld K) as it is — the "TN" layout, cuBLAS's best-tuned. The algorithm is the first
// of cublasLtMatmulAlgoGetHeuristic with a workspace of cublasLtWorkspace bytes, as PyTorch gives it.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cublasLt.h>

typedef struct {
	void* lib;
	cublasLtHandle_t handle;
	size_t (*getVersion)(void);
	cublasStatus_t (*create)(cublasLtHandle_t*);
	cublasStatus_t (*destroy)(cublasLtHandle_t);
	cublasStatus_t (*descCreate)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t);
	cublasStatus_t (*descDestroy)(cublasLtMatmulDesc_t);
	cublasStatus_t (*descSet)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t);
	cublasStatus_t (*layoutCreate)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t);
	cublasStatus_t (*layoutDestroy)(cublasLtMatrixLayout_t);
	cublasStatus_t (*prefCreate)(cublasLtMatmulPreference_t*);
	cublasStatus_t (*prefDestroy)(cublasLtMatmulPreference_t);
	cublasStatus_t (*prefSet)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t);
	cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
		cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
		cublasLtMatmulHeuristicResult_t*, int*);
	cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t,
		const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*,
		cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);
} kw_lt;

// kw_lt_open loads the library at path and creates a handle on the current context; 0, or an error in err.
static int kw_lt_open(kw_lt* lt, const char* path, char* err, size_t errlen) {
	memset(lt, 0, sizeof *lt);
	lt->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lt->lib) {
		snprintf(err, errlen, "dlopen: %s", dlerror());
		return 1;
	}
#define KW_SYM(field, name)                                            \
	*(void**)(&lt->field) = dlsym(lt->lib, name);                      \
	if (!lt->field) {                                                  \
		snprintf(err, errlen, "%s: no symbol %s", path, name);        \
		dlclose(lt->lib);                                              \
		lt->lib = 0;                                                   \
		return 1;                                                      \
	}
	KW_SYM(getVersion, "cublasLtGetVersion")
	KW_SYM(create, "cublasLtCreate")
	KW_SYM(destroy, "cublasLtDestroy")
	KW_SYM(descCreate, "cublasLtMatmulDescCreate")
	KW_SYM(descDestroy, "cublasLtMatmulDescDestroy")
	KW_SYM(descSet, "cublasLtMatmulDescSetAttribute")
	KW_SYM(layoutCreate, "cublasLtMatrixLayoutCreate")
	KW_SYM(layoutDestroy, "cublasLtMatrixLayoutDestroy")
	KW_SYM(prefCreate, "cublasLtMatmulPreferenceCreate")
	KW_SYM(prefDestroy, "cublasLtMatmulPreferenceDestroy")
	KW_SYM(prefSet, "cublasLtMatmulPreferenceSetAttribute")
	KW_SYM(heuristic, "cublasLtMatmulAlgoGetHeuristic")
	KW_SYM(matmul, "cublasLtMatmul")
#undef KW_SYM
	cublasStatus_t st = lt->create(&lt->handle);
	if (st != CUBLAS_STATUS_SUCCESS) {
		snprintf(err, errlen, "cublasLtCreate: status %d", (int)st);
		dlclose(lt->lib);
		lt->lib = 0;
		return 1;
	}
	return 0;
}

static void kw_lt_close(kw_lt* lt) {
	if (lt->handle) lt->destroy(lt->handle);
	if (lt->lib) dlclose(lt->lib);
	memset(lt, 0, sizeof *lt);
}

typedef struct {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t a, b, d;
	cublasLtMatmulAlgo_t algo;
	size_t ws;
} kw_lt_plan;

static void kw_lt_plan_free(kw_lt* lt, kw_lt_plan* p) {
	if (p->desc) lt->descDestroy(p->desc);
	if (p->a) lt->layoutDestroy(p->a);
	if (p->b) lt->layoutDestroy(p->b);
	if (p->d) lt->layoutDestroy(p->d);
	memset(p, 0, sizeof *p);
}

// kw_lt_plan_make describes y[m, n] = x[m, k] · w[n, k]ᵀ (bf16, fp32 compute) and picks its algorithm; 0, or
// an error in err.
static int kw_lt_plan_make(kw_lt* lt, kw_lt_plan* p, uint64_t m, uint64_t n, uint64_t k, size_t wsmax, char* err,
                           size_t errlen) {
	memset(p, 0, sizeof *p);
	cublasStatus_t st;
	const char* what = "";
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref = 0;
	cublasLtMatmulHeuristicResult_t res;
	int got = 0;
#define KW_TRY(call, name) \
	what = name;           \
	st = (call);           \
	if (st != CUBLAS_STATUS_SUCCESS) goto fail;
	KW_TRY(lt->descCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate")
	KW_TRY(lt->descSet(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute(TRANSA)")
	KW_TRY(lt->descSet(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute(TRANSB)")
	KW_TRY(lt->layoutCreate(&p->a, CUDA_R_16BF, k, n, (int64_t)k), "cublasLtMatrixLayoutCreate(w)")
	KW_TRY(lt->layoutCreate(&p->b, CUDA_R_16BF, k, m, (int64_t)k), "cublasLtMatrixLayoutCreate(x)")
	KW_TRY(lt->layoutCreate(&p->d, CUDA_R_16BF, n, m, (int64_t)n), "cublasLtMatrixLayoutCreate(y)")
	KW_TRY(lt->prefCreate(&pref), "cublasLtMatmulPreferenceCreate")
	KW_TRY(lt->prefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsmax, sizeof wsmax),
	       "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)")
	KW_TRY(lt->heuristic(lt->handle, p->desc, p->a, p->b, p->d, p->d, pref, 1, &res, &got),
	       "cublasLtMatmulAlgoGetHeuristic")
#undef KW_TRY
	lt->prefDestroy(pref);
	if (got < 1) {
		snprintf(err, errlen, "cublasLtMatmulAlgoGetHeuristic: no algorithm for %llu x %llu x %llu",
		         (unsigned long long)m, (unsigned long long)n, (unsigned long long)k);
		kw_lt_plan_free(lt, p);
		return 1;
	}
	p->algo = res.algo;
	p->ws = res.workspaceSize;
	return 0;
fail:
	snprintf(err, errlen, "%s: status %d", what, (int)st);
	if (pref) lt->prefDestroy(pref);
	kw_lt_plan_free(lt, p);
	return 1;
}

static size_t kw_lt_version(kw_lt* lt) { return lt->getVersion(); }

// kw_lt_plan_run queues the plan's GEMM on stream; its cublasStatus_t.
static int kw_lt_plan_run(kw_lt* lt, kw_lt_plan* p, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr ws,
                          uintptr_t stream) {
	const float alpha = 1.0f, beta = 0.0f;
	return (int)lt->matmul(lt->handle, p->desc, &alpha, (const void*)w, p->a, (const void*)x, p->b, &beta,
	                       (const void*)y, p->d, (void*)y, p->d, &p->algo, (void*)ws, p->ws, (cudaStream_t)stream);
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	"gorgonia.org/cu"
)

// cublasLtWorkspace is the workspace the algorithms may use: 32 MiB, PyTorch's default on Hopper.
const cublasLtWorkspace = 32 << 20

// cublasLt is the loaded library, or why it could not be: the C state lives in C memory (it holds C pointers).
type cublasLt struct {
	lt      *C.kw_lt
	path    string
	version string
	ws      cu.DevicePtr
	err     error
}

// close releases the handle, the library and the workspace, on the context thread.
func (v *cublasLt) close() error {
	var err error
	if v.lt != nil {
		C.kw_lt_close(v.lt)
		C.free(unsafe.Pointer(v.lt))
		v.lt = nil
	}
	if v.ws != 0 {
		err = cu.MemFree(v.ws)
		v.ws = 0
	}
	return err
}

// VendorGEMM implements vendorGEMMer: it loads cuBLASLt once and returns "<path> (<version>)", or why not.
func (c *CUDA) VendorGEMM() (string, error) {
	var v *cublasLt
	err := c.do(func() error {
		if c.lt == nil {
			c.lt = openCublasLt()
		}
		v = c.lt
		return nil
	})
	if err != nil {
		return "", err
	}
	if v.err != nil {
		return "", v.err
	}
	return fmt.Sprintf("%s (%s)", v.path, v.version), nil
}

// openCublasLt finds, loads and initializes the library, on the context thread; its err says what failed.
func openCublasLt() *cublasLt {
	v := &cublasLt{}
	path, err := findCublasLt(cublasLtFlag, os.Getenv, "/")
	if err != nil {
		v.err = err
		return v
	}
	v.path = path
	v.lt = (*C.kw_lt)(C.calloc(1, C.size_t(unsafe.Sizeof(C.kw_lt{}))))
	var msg [512]C.char
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if C.kw_lt_open(v.lt, cpath, &msg[0], C.size_t(len(msg))) != 0 {
		C.free(unsafe.Pointer(v.lt))
		v.lt = nil
		v.err = fmt.Errorf("%s: %s", path, C.GoString(&msg[0]))
		return v
	}
	ver := int(C.kw_lt_version(v.lt))
	v.version = fmt.Sprintf("%d.%d.%d", ver/10000, ver%10000/100, ver%100)
	if v.ws, err = cu.MemAlloc(cublasLtWorkspace); err != nil {
		v.close()
		v.err = fmt.Errorf("cuBLASLt workspace of %d B: %w", cublasLtWorkspace, err)
	}
	return v
}

// PrepareVendorGEMM implements vendorGEMMer: a launch of one cublasLtMatmul per GEMM, in order, on the
// backend's stream, timed by Time like a family's kernels.
func (c *CUDA) PrepareVendorGEMM(gemms []vendorGEMM) (Launch, error) {
	type bufs struct{ x, w, y *DeviceBuffer }
	bs := make([]bufs, len(gemms))
	for i, g := range gemms {
		var err error
		if bs[i].x, err = deviceBuf(g.X, g.M*g.K); err == nil {
			if bs[i].w, err = deviceBuf(g.W, g.N*g.K); err == nil {
				bs[i].y, err = deviceBuf(g.Y, g.M*g.N)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("harness: cuBLASLt GEMM %d×%d×%d: %w", g.M, g.N, g.K, err)
		}
		if bs[i].x.dt != BF16 || bs[i].w.dt != BF16 || bs[i].y.dt != BF16 {
			return nil, fmt.Errorf("harness: cuBLASLt GEMM %d×%d×%d: the reference is bf16", g.M, g.N, g.K)
		}
	}
	l := &CUDALaunch{be: c}
	err := c.do(func() error {
		if c.lt == nil || c.lt.err != nil {
			return fmt.Errorf("no cuBLASLt loaded (VendorGEMM)")
		}
		lt := c.lt
		for i, g := range gemms {
			p := (*C.kw_lt_plan)(C.calloc(1, C.size_t(unsafe.Sizeof(C.kw_lt_plan{}))))
			var msg [512]C.char
			if C.kw_lt_plan_make(lt.lt, p, C.uint64_t(g.M), C.uint64_t(g.N), C.uint64_t(g.K), cublasLtWorkspace,
				&msg[0], C.size_t(len(msg))) != 0 {
				C.free(unsafe.Pointer(p))
				l.free()
				return fmt.Errorf("harness: cuBLASLt GEMM %d×%d×%d: %s", g.M, g.N, g.K, C.GoString(&msg[0]))
			}
			l.onFree = append(l.onFree, func() {
				C.kw_lt_plan_free(lt.lt, p)
				C.free(unsafe.Pointer(p))
			})
			b := bs[i]
			l.steps = append(l.steps, cudaStep{
				name: fmt.Sprintf("cublasLtMatmul %d×%d×%d", g.M, g.N, g.K),
				host: func(s cu.Stream) error {
					stream := *(*uintptr)(unsafe.Pointer(&s)) // cu.Stream is its CUstream, which cuBLASLt takes as cudaStream_t
					st := C.kw_lt_plan_run(lt.lt, p, C.CUdeviceptr(b.x.ptr), C.CUdeviceptr(b.w.ptr), C.CUdeviceptr(b.y.ptr),
						C.CUdeviceptr(lt.ws), C.uintptr_t(stream))
					if st != 0 {
						return fmt.Errorf("cublasLtMatmul: status %d", int(st))
					}
					return nil
				},
			})
		}
		// One run now, outside any timing, synchronized: cuBLASLt's first call of an algorithm loads its kernel
		// (CUDA's lazy loading, the default since 12.2), and loading may wait for the whole context — for the
		// timing gate's spinning kernel too, which only the launches queued behind the gate release: each timed
		// batch of a process that timed cuBLASLt cold waited out the gate's timeout, after which the harness timed
		// without the gate for the rest of the process. Loaded here, the timed calls only queue work.
		if err := l.enqueue(c.stream); err != nil {
			l.free()
			return fmt.Errorf("harness: cuBLASLt warm-up: %w", err)
		}
		if err := c.stream.Synchronize(); err != nil {
			l.free()
			return fmt.Errorf("harness: cuBLASLt warm-up: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// VendorGEMMLaunch is PrepareVendorGEMM of one GEMM on the given buffers, y[m, n] = x[m, k] · w[n, k]ᵀ in bf16:
// the vendor reference for a family's own tuning tests, timed by Time. VendorGEMM must have loaded the library.
func (c *CUDA) VendorGEMMLaunch(m, n, k int, x, w, y Buffer) (Launch, error) {
	return c.PrepareVendorGEMM([]vendorGEMM{{M: m, N: n, K: k, X: x, W: w, Y: y}})
}

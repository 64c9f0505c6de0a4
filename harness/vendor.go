package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The in-run vendor reference, pct-cublas: on the benchmarks of a family that declares its GEMMs
// (Family.VendorGEMMs: kernels' GEMM and FFN), the time cuBLASLt takes for the same bf16 GEMMs (fp32
// accumulation, bf16 result), measured in the same process, on the same device, with the same
// policy (cold L2, event timing, adaptive sampling), as a percentage of the benchmark's time — 100 is vendor
// speed, above 100 faster than the vendor. A number against a stored baseline says whether a kernel moved; a
// number against the vendor library measured beside it says how good it is, on whatever machine ran it.
//
// The library is loaded at run time (dlopen; the backend's VendorGEMM), never linked: the suite builds without
// it, and a machine without it runs the suite without the metric. Where it is absent the metric is left out
// and the cublaslt config line says why — never estimated.
//
// The FFN's reference is its GEMMs alone (FC1's one or two, FC2), as a framework runs them through cuBLAS; the
// activation and the fusion are what the suite's kernel adds, so an FFN at 100 pays nothing for them.

// cublasPending, while set, keeps the harness from loading the vendor library and measuring pct-cublas unless
// the run asks for pending GPU code (Suite.RunPending). It is "" since the reference's launch runs once,
// synchronized, when it is prepared (PrepareVendorGEMM): before that, every process that timed cuBLASLt beside the
// suite's kernels waited out the timing gate (cuBLASLt's lazily loaded kernels wait for the context, the gate's
// spinning kernel included) and then timed without the gate for the rest of the process; with it, the GEMM and
// FFN benchmarks timed cuBLASLt with the gate held on an H100 and an H200 (TestCUDACublasLt passed on both).
var cublasPending = ""

// vendorGEMM is one GEMM of the reference: y[M, N] = x[M, K] · w[N, K]ᵀ in bf16 (vendorGEMMFamily's layout).
type vendorGEMM struct {
	M, N, K int
	X, W, Y Buffer
}

// vendorGEMMer is a backend that can run the vendor library's GEMMs: VendorGEMM loads the library (once) and
// says which it is, or why there is none; PrepareVendorGEMM records a launch that runs the GEMMs, in order,
// timed by the backend's Time like any other launch.
type vendorGEMMer interface {
	VendorGEMM() (lib string, err error)
	PrepareVendorGEMM(gemms []vendorGEMM) (Launch, error)
}

// vendorGEMMFamily declares the buffers of the reference's GEMMs: x [m, k] and w [n, k] in bf16, drawn as a GEMM
// benchmark's inputs are (N(0, 1), N(0, 0.05)) and, its name and sizes being a GEMM family's (kernels'), filled
// from the same seeds; y [m, n]. It is never benchmarked.
var vendorGEMMFamily = &Family{
	Name:    "GEMM",
	DimKeys: []string{"m", "n", "k"},
	DTypes:  []DType{BF16},
	Inputs: []Operand{
		{Name: "x", Len: func(c Case) int { return c.Dims[0] * c.Dims[2] }, Gen: Dist{Kind: Normal, SD: 1}},
		{Name: "w", Len: func(c Case) int { return c.Dims[1] * c.Dims[2] }, Gen: Dist{Kind: Normal, SD: 0.05}},
	},
	Outputs: []Operand{{Name: "y", Len: func(c Case) int { return c.Dims[0] * c.Dims[1] }}},
}

// startVendor prints the cublaslt config line of Suite.Start: the library found, or none and why; nothing on a
// backend without a vendor library or while the reference is pending and the run does not ask for it.
func (s *Suite) startVendor() {
	v, ok := s.Backend.(vendorGEMMer)
	if !ok || (cublasPending != "" && !s.RunPending) {
		return
	}
	lib, err := v.VendorGEMM()
	if err != nil {
		fmt.Fprintf(s.Out, "cublaslt: none (%v)\n", err)
		return
	}
	s.vendorOn = true
	fmt.Fprintf(s.Out, "cublaslt: %s\n", lib)
}

// reportVendor reports pct-cublas for case c of family f, whose launch took med ns: the reference's median
// time, measured once per case (on its first impl), over med. It does nothing when the run has no vendor
// library or the family no reference.
func (s *Suite) reportVendor(b *testing.B, f *Family, c Case, med float64) error {
	if !s.vendorOn {
		return nil
	}
	if f.VendorGEMMs == nil {
		return nil
	}
	shapes := f.VendorGEMMs(c)
	if len(shapes) == 0 {
		return nil
	}
	key := f.Name + "/" + f.BenchName(c, "")
	ref, ok := s.vendorNs[key]
	if !ok {
		var err error
		if ref, err = s.timeVendor(shapes); err != nil {
			return fmt.Errorf("harness: %s: cuBLASLt reference: %w", key, err)
		}
		if s.vendorNs == nil {
			s.vendorNs = map[string]float64{}
		}
		s.vendorNs[key] = ref
	}
	b.ReportMetric(100*ref/med, "pct-cublas")
	return nil
}

// timeVendor times the vendor GEMMs of shapes, each on its own buffers (vendorGEMMFamily's, filled as a benchmark's),
// under the suite's policy, and returns the median time in ns.
func (s *Suite) timeVendor(shapes [][3]int) (float64, error) {
	v := s.Backend.(vendorGEMMer)
	var gemms []vendorGEMM
	var states []*CaseBuffers
	defer func() {
		for _, st := range states {
			st.Release()
		}
	}()
	for _, sh := range shapes {
		st, err := s.Buffers(vendorGEMMFamily, Case{DType: BF16, Dims: sh[:]}, nil)
		if err != nil {
			return 0, err
		}
		states = append(states, st)
		gemms = append(gemms, vendorGEMM{M: sh[0], N: sh[1], K: sh[2], X: st.In[0], W: st.In[1], Y: st.Out[0]})
	}
	l, err := v.PrepareVendorGEMM(gemms)
	if err != nil {
		return 0, err
	}
	defer l.Release()
	if err := s.warmUp(l); err != nil {
		return 0, err
	}
	start, flush0 := time.Now(), s.flushTime()
	var ns []float64
	if s.Policy.Adaptive {
		ns, err = s.sample(l)
	} else {
		ns, err = s.timed(l, vendorSamples, s.Policy.Timing)
	}
	s.Costs.charge(&s.Costs.Sampling, start)
	s.Costs.Flush += s.flushTime() - flush0
	if err != nil {
		return 0, err
	}
	return Median(ns), nil
}

// vendorSamples is the reference's sample count where the policy is not adaptive.
const vendorSamples = 21

// cublasLtEnv names the environment variable that points at libcublasLt: the library file, or a directory
// holding it. The test binary's -kernels.cublaslt flag does the same and wins.
const cublasLtEnv = "KERNELWATCH_CUBLASLT"

// cublasLtFlag is -kernels.cublaslt (cublaslt_flags.go), set before the backend opens.
var cublasLtFlag string

// cublasLtSearch is where the library is looked for when neither the flag nor the environment names one, in
// order, as globs: a Python environment's pip wheels (nvidia-cublas, which PyTorch's CUDA builds depend on)
// and PyTorch's own lib directory — system-wide, a virtualenv's ($VIRTUAL_ENV), a conda one ($CONDA_PREFIX),
// the user's (~/.local) — then a CUDA toolkit and the system's library directory.
var cublasLtSearch = []string{
	"$VIRTUAL_ENV/lib/python3*/site-packages/nvidia/cublas/lib",
	"$VIRTUAL_ENV/lib/python3*/site-packages/torch/lib",
	"$CONDA_PREFIX/lib/python3*/site-packages/nvidia/cublas/lib",
	"$CONDA_PREFIX/lib/python3*/site-packages/torch/lib",
	"$HOME/.local/lib/python3*/site-packages/nvidia/cublas/lib",
	"$HOME/.local/lib/python3*/site-packages/torch/lib",
	"/usr/local/lib/python3*/dist-packages/nvidia/cublas/lib",
	"/usr/local/lib/python3*/dist-packages/torch/lib",
	"/usr/local/lib/python3*/site-packages/nvidia/cublas/lib",
	"/usr/local/lib/python3*/site-packages/torch/lib",
	"/usr/lib/python3/dist-packages/nvidia/cublas/lib",
	"/usr/lib/python3/dist-packages/torch/lib",
	"/opt/conda/lib/python3*/site-packages/nvidia/cublas/lib",
	"/opt/conda/lib/python3*/site-packages/torch/lib",
	"/usr/local/cuda/lib64",
	"/usr/lib/x86_64-linux-gnu",
}

// findCublasLt is the libcublasLt file to load: the one the flag or else the environment variable names (a
// file, or the newest libcublasLt.so* of a directory) — an error, not a search, when it is not there — else
// the newest of the first search directory (cublasLtSearch, each with getenv's variables expanded; a
// directory whose variable is unset is skipped) that holds one. Paths are looked up under root ("/" but in
// tests).
func findCublasLt(flagPath string, getenv func(string) string, root string) (string, error) {
	named, from := flagPath, "-kernels.cublaslt"
	if named == "" {
		named, from = getenv(cublasLtEnv), cublasLtEnv
	}
	if named != "" {
		fi, err := os.Stat(filepath.Join(root, named))
		switch {
		case err != nil:
			return "", fmt.Errorf("%s=%s: %w", from, named, errors.Unwrap(err))
		case !fi.IsDir():
			return named, nil
		}
		if p := newestCublasLt(root, named); p != "" {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s: no libcublasLt.so* in that directory", from, named)
	}
	searched := 0
	for _, dir := range cublasLtSearch {
		unset := false
		dir = os.Expand(dir, func(k string) string {
			v := getenv(k)
			unset = unset || v == ""
			return v
		})
		if unset {
			continue
		}
		searched++
		dirs, _ := filepath.Glob(filepath.Join(root, dir))
		slices.Sort(dirs)
		slices.Reverse(dirs) // python3.12 before python3.11
		for _, d := range dirs {
			rel, _ := filepath.Rel(root, d)
			if p := newestCublasLt(root, "/"+rel); p != "" {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("no libcublasLt.so* in %d places searched (PyTorch's nvidia/cublas/lib and torch/lib, "+
		"/usr/local/cuda/lib64, ...): name it with %s or -kernels.cublaslt", searched, cublasLtEnv)
}

// newestCublasLt is the libcublasLt.so* in dir (under root) of the highest soname version, "" when none.
func newestCublasLt(root, dir string) string {
	files, _ := filepath.Glob(filepath.Join(root, dir, "libcublasLt.so*"))
	best, bestV := "", []int(nil)
	for _, f := range files {
		v, ok := sonameVersion(filepath.Base(f))
		if !ok {
			continue
		}
		if best == "" || slices.Compare(v, bestV) > 0 {
			best, bestV = filepath.Join(dir, filepath.Base(f)), v
		}
	}
	return best
}

// sonameVersion is the version of a libcublasLt.so[.X[.Y…]] name, [] for the bare .so; ok is false for names
// that are not a library (libcublasLt.so.13.1.0.3.bak, libcublasLt.so.dbg).
func sonameVersion(name string) ([]int, bool) {
	rest, ok := strings.CutPrefix(name, "libcublasLt.so")
	if !ok {
		return nil, false
	}
	v := []int{}
	if rest == "" {
		return v, true
	}
	if !strings.HasPrefix(rest, ".") {
		return nil, false
	}
	for _, p := range strings.Split(rest[1:], ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

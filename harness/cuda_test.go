//go:build cuda

package harness

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func cudaBackend(t *testing.T) *CUDA {
	t.Helper()
	be, ok := mainBackends["cuda"].(*CUDA)
	if !ok {
		t.Fatal("no cuda backend open")
	}
	return be
}

// copyTwice is y = x by two copies in one launch: a composite of the copy (CUDALaunch.Call), for what a launch
// of several kernels does.
var copyTwice = &Family{Name: "TestCopyTwice", Inputs: CopyFamily.Inputs, Outputs: CopyFamily.Outputs,
	Reference: CopyFamily.Reference, Tolerance: CopyFamily.Tolerance}

func init() {
	RegisterCUDA(copyTwice, Fused, "", func(l *CUDALaunch) {
		l.Call(CopyFamily, Fused, l.Case, l.In, l.Out)
		l.Call(CopyFamily, Fused, l.Case, l.In, l.Out)
	})
}

// TestCUDADevice checks the description that goes into the config lines.
func TestCUDADevice(t *testing.T) {
	d := cudaBackend(t).Device()
	if d.Kind != "cuda" || d.Name == "" || d.CacheBytes <= 0 || d.Workers <= 0 {
		t.Errorf("device %+v", d)
	}
	if !regexp.MustCompile(`^gpu-nvidia-[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(d.Class) {
		t.Errorf("class %q", d.Class)
	}
	t.Logf("%+v\n%s", d, strings.Join(d.ConfigLines(), "\n"))
}

// TestCUDATime checks the clock: one positive sample per launch, hot and cold, and more samples than one
// batch holds, for a launch of one kernel and one of two.
func TestCUDATime(t *testing.T) {
	be := cudaBackend(t)
	s := NewSuite(be, nil)
	for _, f := range []*Family{CopyFamily, copyTwice} {
		st, err := s.Buffers(f, Case{DType: FP32, Shape: Shape{Rows: 256, Cols: 4096}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, err := st.launch(Fused)
		if err != nil {
			t.Fatal(err)
		}
		if ks, err := l.(*CUDALaunch).Kernels(); err != nil || len(ks) != map[*Family]int{CopyFamily: 1, copyTwice: 2}[f] {
			t.Errorf("%s: kernels %+v, %v", f.Name, ks, err)
		}
		for _, timing := range []Timing{{}, s.Policy.Timing} {
			ns, err := be.Time(l, 2*cudaBatch+5, timing)
			if err != nil {
				t.Fatal(err)
			}
			if len(ns) != 2*cudaBatch+5 || slices.ContainsFunc(ns, func(v float64) bool { return !(v > 0) }) {
				t.Errorf("%s %+v: samples %v", f.Name, timing, ns)
			}
			t.Logf("%s flush=%d: median %.0f ns, p99 %.0f ns", f.Name, timing.FlushBytes, Median(ns), percentile(ns, 0.99))
		}
		st.Release()
	}
}

// TestCUDACopyKernels checks both copy kernels of cuda/copy.cu — copy_chunk, the suite's reference, and the
// grid-stride copy_fused kept for comparison — for exact copies, and logs their bandwidth (-test.v).
func TestCUDACopyKernels(t *testing.T) {
	be := cudaBackend(t)
	defer func() { copyChunked = true }()
	s := NewSuite(be, nil)
	for _, chunked := range []bool{true, false} {
		copyChunked = chunked
		for _, dt := range StorageDTypes {
			for _, c := range []Case{{DType: dt, Shape: Shape{Rows: 3, Cols: 1001}}, {DType: dt, Shape: Shape{Rows: 8192, Cols: 4096}}} {
				if _, err := CheckCase(be, CopyFamily, c, Fused, CaseSeed(t), nil); err != nil {
					t.Errorf("chunked %v, %s: %v", chunked, CopyFamily.BenchName(c, Fused), err)
				}
			}
		}
		st, err := s.Buffers(CopyFamily, Case{DType: FP32, Shape: Shape{Rows: 65536, Cols: 4096}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, err := st.launch(Fused)
		if err != nil {
			t.Fatal(err)
		}
		ns, err := be.Time(l, 20, s.Policy.Timing)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("chunked %v: %.0f GB/s", chunked, float64(CopyFamily.MinBytes(st.c))/Median(ns))
		st.Release()
	}
}

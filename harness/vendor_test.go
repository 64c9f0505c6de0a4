package harness

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/group"
)

// touch creates the files (relative to root), with their directories.
func touch(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindCublasLt(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	torch := "/usr/local/lib/python3.12/dist-packages/torch/lib"
	wheel := "/usr/local/lib/python3.12/dist-packages/nvidia/cublas/lib"
	for _, tc := range []struct {
		name    string
		files   []string
		flag    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{name: "nothing anywhere", wantErr: "no libcublasLt.so* in"},
		{name: "PyTorch's wheel, newest soname", files: []string{wheel + "/libcublasLt.so.12", wheel + "/libcublasLt.so.13",
			wheel + "/libcublasLt.so.13.bak", torch + "/libcublasLt.so.12"}, want: wheel + "/libcublasLt.so.13"},
		{name: "the wheel before torch/lib", files: []string{torch + "/libcublasLt.so.13", wheel + "/libcublasLt.so.13"},
			want: wheel + "/libcublasLt.so.13"},
		{name: "torch/lib", files: []string{torch + "/libcublasLt-5a1c2d.so.13", torch + "/libcublasLt.so.13"},
			want: torch + "/libcublasLt.so.13"},
		{name: "newest python first", files: []string{"/usr/local/lib/python3.11/dist-packages/torch/lib/libcublasLt.so.12",
			"/usr/local/lib/python3.12/dist-packages/torch/lib/libcublasLt.so.13"},
			want: "/usr/local/lib/python3.12/dist-packages/torch/lib/libcublasLt.so.13"},
		{name: "a virtualenv before the system", files: []string{"/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.13",
			"/usr/local/cuda/lib64/libcublasLt.so.12"}, env: map[string]string{"VIRTUAL_ENV": "/venv"},
			want: "/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.13"},
		{name: "an unset variable is not the root", files: []string{"/lib/python3.12/site-packages/torch/lib/libcublasLt.so.13"},
			wantErr: "no libcublasLt.so* in"},
		{name: "the environment names a file", files: []string{"/opt/x/libcublasLt.so.13", wheel + "/libcublasLt.so.12"},
			env: map[string]string{cublasLtEnv: "/opt/x/libcublasLt.so.13"}, want: "/opt/x/libcublasLt.so.13"},
		{name: "the environment names a directory", files: []string{"/opt/x/libcublasLt.so.13"},
			env: map[string]string{cublasLtEnv: "/opt/x"}, want: "/opt/x/libcublasLt.so.13"},
		{name: "the flag wins", files: []string{"/opt/x/libcublasLt.so.13", "/opt/y/libcublasLt.so.12"},
			flag: "/opt/y", env: map[string]string{cublasLtEnv: "/opt/x"}, want: "/opt/y/libcublasLt.so.12"},
		{name: "a named file that is missing is an error, not a search", files: []string{wheel + "/libcublasLt.so.13"},
			env: map[string]string{cublasLtEnv: "/opt/none.so"}, wantErr: cublasLtEnv + "=/opt/none.so: no such file"},
		{name: "a named directory without the library", files: []string{"/opt/x/libcublas.so.13"},
			flag: "/opt/x", wantErr: "-kernels.cublaslt=/opt/x: no libcublasLt.so* in that directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			touch(t, root, tc.files...)
			got, err := findCublasLt(tc.flag, env(tc.env), root)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got %q, %v; want error %q", got, err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// fakeVendor is a CPU backend with a "vendor library": its GEMM is the CPU's own fused GEMM, run once per
// reference GEMM — or no library, with the reason.
type fakeVendor struct {
	Backend
	err      error
	prepared *[][]vendorGEMM
}

func (f fakeVendor) VendorGEMM() (string, error) { return "/fake/libcublasLt.so.13 (13.1.0)", f.err }

func (f fakeVendor) PrepareVendorGEMM(gemms []vendorGEMM) (Launch, error) {
	*f.prepared = append(*f.prepared, gemms)
	g := gemms[0]
	return f.Prepare(testGEMM, Fused, Case{DType: BF16, Dims: []int{g.M, g.N, g.K}}, []Buffer{g.X, g.W}, []Buffer{g.Y})
}

// testGEMM is a GEMM of the tests, y = x · wᵀ over vendorGEMMFamily's operands, both implementations the same
// loop, declaring itself as its vendor reference.
var testGEMM = &Family{Name: "TestGEMM", DimKeys: vendorGEMMFamily.DimKeys, DTypes: vendorGEMMFamily.DTypes,
	Inputs: vendorGEMMFamily.Inputs, Outputs: vendorGEMMFamily.Outputs,
	VendorGEMMs: func(c Case) [][3]int { return [][3]int{{c.Dims[0], c.Dims[1], c.Dims[2]}} }}

func init() {
	gemm := func(l *CPULaunch) {
		m, n, k := l.Dims[0], l.Dims[1], l.Dims[2]
		x, w, y := l.In[0].U16, l.In[1].U16, l.Out[0].U16
		for i := range m {
			for j := range n {
				var s float32
				for t := range k {
					s += F32FromBF16(x[i*k+t]) * F32FromBF16(w[j*k+t])
				}
				y[i*n+j] = BF16FromF32(s)
			}
		}
	}
	RegisterCPU(testGEMM, Fused, gemm)
	RegisterCPU(testGEMM, Naive, gemm)
}

// TestVendorReference checks pct-cublas: with a library, the cublaslt line names it and each GEMM case reports
// the reference's time over its own, the reference prepared once per case on buffers of the case's shape;
// without one, the line says why and no benchmark reports the metric; while pending, neither.
func TestVendorReference(t *testing.T) {
	cpu := NewCPU(2)
	defer cpu.Close()
	defer func(old string) { cublasPending = old }(cublasPending)
	c := Case{DType: BF16, Dims: []int{64, 64, 64}}
	for _, tc := range []struct {
		name             string
		pending, runPend bool
		err              error
		wantLine         string
		wantMetric       bool
	}{
		{"library", false, false, nil, "cublaslt: /fake/libcublasLt.so.13 (13.1.0)\n", true},
		{"library, pending, asked for", true, true, nil, "cublaslt: /fake/libcublasLt.so.13 (13.1.0)\n", true},
		{"library, pending", true, false, nil, "", false},
		{"no library", false, false, errors.New("no libcublasLt.so* in 9 places searched"),
			"cublaslt: none (no libcublasLt.so* in 9 places searched)\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cublasPending = ""
			if tc.pending {
				cublasPending = "not yet run on a GPU"
			}
			var out strings.Builder
			var prepared [][]vendorGEMM
			s := NewSuite(fakeVendor{cpu, tc.err, &prepared}, &out)
			s.Policy.CopyBytes, s.Policy.CopySamples = 1<<20, 1
			s.RunPending = tc.runPend
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				s.Close()
			}()
			if tc.wantLine != "" && !strings.Contains(out.String(), tc.wantLine) ||
				tc.wantLine == "" && strings.Contains(out.String(), "cublaslt") {
				t.Errorf("Start printed\n%s\nwant the line %q", out.String(), tc.wantLine)
			}
			if tc.name == "library, pending, asked for" {
				return // the line says the library is on; "library" measures with it
			}
			res := measureOnce(t, s, testGEMM, c, Fused)
			pct, ok := res.Extra["pct-cublas"]
			if ok != tc.wantMetric {
				t.Fatalf("pct-cublas reported %v, want %v (metrics %v)", ok, tc.wantMetric, res.Extra)
			}
			if !tc.wantMetric {
				if len(prepared) != 0 {
					t.Errorf("the reference was prepared %d times without a library", len(prepared))
				}
				return
			}
			if len(prepared) != 1 || len(prepared[0]) != 1 {
				t.Fatalf("reference prepared %d times (%v), want once for the case", len(prepared), prepared)
			}
			if g := prepared[0][0]; g.M != 64 || g.N != 64 || g.K != 64 || g.X.Len() != 64*64 || g.W.Len() != 64*64 ||
				g.Y.Len() != 64*64 || g.X.DType() != BF16 {
				t.Errorf("reference GEMM %+v", g)
			}
			// The reference is the same CPU GEMM as the fused impl: about 100%, within the noise of a shared CPU.
			if pct < 20 || pct > 500 {
				t.Errorf("pct-cublas %v; want about 100 (the reference is the same kernel)", pct)
			}
			// The reference's time is measured once per case and reused for its other impls.
			measureOnce(t, s, testGEMM, c, Naive)
			if len(prepared) != 1 {
				t.Errorf("reference prepared %d times for one case", len(prepared))
			}
		})
	}
	if !slices.Contains(group.RunKeys, "cublaslt") {
		t.Error("cublaslt is not one of regress's run keys (group.RunKeys)")
	}
}

func TestSonameVersion(t *testing.T) {
	for name, want := range map[string][]int{"libcublasLt.so": {}, "libcublasLt.so.13": {13}, "libcublasLt.so.12.4.5.8": {12, 4, 5, 8}} {
		if got, ok := sonameVersion(name); !ok || !slices.Equal(got, want) {
			t.Errorf("sonameVersion(%q) = %v, %v", name, got, ok)
		}
	}
	for _, name := range []string{"libcublasLt.so.13.bak", "libcublasLt.so13", "libcublas.so.13", "libcublasLt.so.dbg"} {
		if _, ok := sonameVersion(name); ok {
			t.Errorf("sonameVersion(%q) is a library", name)
		}
	}
}

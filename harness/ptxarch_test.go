package harness

import (
	"os"
	"strings"
	"testing"
)

func TestModuleLoads(t *testing.T) {
	for _, tc := range []struct {
		name string
		cc   int
		want bool
	}{
		{"copy", 75, true},
		{"rmsnorm_slow", 75, true}, // "_slow" is not an architecture suffix
		{"gemm_sm80", 75, false},
		{"gemm_sm80", 80, true},
		{"gemm_sm80", 90, true}, // compute_80 PTX is forward compatible
		{"rmsnorm_sm90", 89, false},
		{"rmsnorm_sm90", 90, true},
		{"rmsnorm_sm90", 100, true},
		{"mma_sm90a", 80, false},
		{"mma_sm90a", 89, false},
		{"mma_sm90a", 90, true},
		{"mma_sm90a", 100, false}, // sm_90a features are not forward compatible
		{"mma_sm90a", 120, false},
		{"x_sm100a", 100, true},
		{"x_sm100a", 103, false},
	} {
		got, err := moduleLoads(tc.name, tc.cc)
		if err != nil || got != tc.want {
			t.Errorf("moduleLoads(%q, %d) = %v, %v; want %v", tc.name, tc.cc, got, err, tc.want)
		}
	}
}

func TestModuleLoadsBadSuffix(t *testing.T) {
	for _, name := range []string{"x_smem", "x_sm", "x_sm9", "x_sm9a", "x_sm90b", "x_sm1000", "x_sma", "x_sm08"} {
		if ok, err := moduleLoads(name, 90); err == nil || ok {
			t.Errorf("moduleLoads(%q) = %v, %v; want an error", name, ok, err)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("moduleLoads(%q): error %q does not name the module", name, err)
		}
	}
}

// Every committed PTX module has a name the CUDA backend can place (it refuses to open otherwise).
func TestCommittedModuleNames(t *testing.T) {
	files, err := os.ReadDir("cuda/ptx")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".ptx")
		if !ok {
			continue
		}
		if _, _, err := moduleArch(name); err != nil {
			t.Error(err)
		}
	}
}

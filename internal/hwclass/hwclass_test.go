package hwclass

import (
	"regexp"
	"testing"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"AMD EPYC 9654 96-Core Processor": "amd-epyc-9654-96-core-processor",
		"Intel(R) Xeon(R) CPU @ 2.20GHz":  "intel-r-xeon-r-cpu-2-20ghz",
		"  NVIDIA H100 80GB HBM3 ":        "nvidia-h100-80gb-hbm3",
		"":                                "unknown",
		"--":                              "unknown",
		"Apple M2 Max":                    "apple-m2-max",
		"Neoverse-V2 (Grace) r0p0 with 144 cores!": "neoverse-v2-grace-r0p0-with-144-cores",
		"Ünïcode 7": "n-code-7",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClasses(t *testing.T) {
	for name, want := range map[string]string{"NVIDIA H200": "gpu-nvidia-h200", "Tesla T4": "gpu-nvidia-tesla-t4"} {
		if got := GPU(name); got != want {
			t.Errorf("GPU(%q) = %q, want %q", name, got, want)
		}
	}
	if c := CPU(); !regexp.MustCompile(`^cpu-[a-z0-9]+-[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(c) {
		t.Errorf("CPU() = %q", c)
	}
}

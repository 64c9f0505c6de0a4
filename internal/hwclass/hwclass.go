// Package hwclass names hardware classes (design §2): results are only ever
// compared within one class, so the kernel suite that prints a class and the
// regress command that predicts one must spell it the same way. This package
// is that one spelling.
//
//	gpu-<vendor>-<model slug>   gpu-nvidia-h100-80gb-hbm3
//	cpu-<goarch>-<model slug>   cpu-amd64-amd-epyc
package hwclass

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Slug turns a model name into the slug part of a class: lower case, every
// run of characters other than a–z and 0–9 one '-', no '-' at either end;
// "unknown" when nothing is left.
func Slug(model string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(model) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// GPU is the class of an NVIDIA GPU called name (as the driver reports it).
func GPU(name string) string {
	slug := Slug(name)
	if !strings.HasPrefix(slug, "nvidia-") {
		slug = "nvidia-" + slug
	}
	return "gpu-" + slug
}

// CPU is the class of this machine's CPU.
func CPU() string { return "cpu-" + runtime.GOARCH + "-" + Slug(CPUModel()) }

// CPUModel is the "model name" of /proc/cpuinfo, or "unknown".
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

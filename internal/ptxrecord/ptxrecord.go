// Package ptxrecord keeps the record of the PTX modules that CI cannot regenerate: the sm_90a modules, which
// need CUDA 12.4's nvcc (a 5 GB chroot, scripts/install-hopper-toolchain.sh) where CI has CUDA 11.8. For each
// module, the record holds the hash of its sources — the .cu and every local header it includes, transitively —
// and of its committed PTX, as scripts/hopper-ptx.sh last generated them, so that a CPU test on any machine
// sees a .cu changed without its PTX, or a PTX edited or generated otherwise. Each package with sm_90a modules
// (harness, kernels) holds its own record, cuda/ptx/sm90a.sum, and checks it in its TestSM90aPTXRecorded.
package ptxrecord

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// File is the record's path under a package's directory.
const File = "cuda/ptx/sm90a.sum"

var cudaInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// sources is file (under dir/cuda) and every local header it includes, transitively, sorted.
func sources(dir, file string) ([]string, error) {
	seen := map[string]bool{}
	var visit func(string) error
	visit = func(f string) error {
		if seen[f] {
			return nil
		}
		seen[f] = true
		b, err := os.ReadFile(filepath.Join(dir, "cuda", f))
		if err != nil {
			return err
		}
		for _, m := range cudaInclude.FindAllSubmatch(b, -1) {
			if err := visit(string(m[1])); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
		return nil
	}
	if err := visit(file); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(seen))
	for f := range seen {
		names = append(names, f)
	}
	slices.Sort(names)
	return names, nil
}

// Line is module's record line: "<module> sources=<sha256> ptx=<sha256>", the sources hashed as each file's
// name, a newline and its bytes, in name order. It fails when the committed PTX is not CUDA 12.4's compute_90a.
func Line(dir, module string) (string, error) {
	files, err := sources(dir, module+".cu")
	if err != nil {
		return "", err
	}
	src := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, "cuda", f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(src, "%s\n", f)
		src.Write(b)
	}
	ptx, err := os.ReadFile(filepath.Join(dir, "cuda", "ptx", module+".ptx"))
	if err != nil {
		return "", fmt.Errorf("%s.cu has no PTX: %w", module, err)
	}
	if !strings.Contains(string(ptx), "\n.target sm_90a\n") || !strings.Contains(string(ptx), "release 12.4,") {
		return "", fmt.Errorf("cuda/ptx/%s.ptx is not CUDA 12.4's compute_90a PTX (.target sm_90a): generate it with scripts/hopper-ptx.sh", module)
	}
	return fmt.Sprintf("%s sources=%x ptx=%x", module, src.Sum(nil), sha256.Sum256(ptx)), nil
}

// Check holds the sm_90a modules of the package in dir (cuda/*_sm90a.cu) to its record and returns what does
// not match; with write, it writes the record instead (what scripts/hopper-ptx.sh does after generating).
func Check(dir string, write bool) []error {
	cus, err := filepath.Glob(filepath.Join(dir, "cuda", "*_sm90a.cu"))
	if err != nil {
		return []error{err}
	}
	var want []string
	for _, cu := range cus {
		line, err := Line(dir, strings.TrimSuffix(filepath.Base(cu), ".cu"))
		if err != nil {
			return []error{err}
		}
		want = append(want, line)
	}
	record := filepath.Join(dir, File)
	if write {
		if err := os.WriteFile(record, []byte(strings.Join(want, "\n")+"\n"), 0o644); err != nil {
			return []error{err}
		}
		return nil
	}
	b, err := os.ReadFile(record)
	if err != nil && len(want) > 0 {
		return []error{fmt.Errorf("no record of the sm_90a PTX: %v (scripts/hopper-ptx.sh writes it)", err)}
	}
	rec := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if m, _, ok := strings.Cut(l, " "); ok {
			rec[m] = l
		}
	}
	var errs []error
	for _, w := range want {
		module, _, _ := strings.Cut(w, " ")
		switch r, ok := rec[module]; {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: cuda/%s.cu is not in %s: generate its PTX with scripts/hopper-ptx.sh", File, module, File))
		case r != w:
			errs = append(errs, fmt.Errorf("%s: cuda/%s.cu (or a header it includes) or cuda/ptx/%s.ptx changed since scripts/hopper-ptx.sh "+
				"generated the PTX: rerun it (root, the Hopper toolchain of scripts/install-hopper-toolchain.sh) and commit "+
				"the PTX and the record\nrecorded: %s\nnow:      %s", File, module, module, r, w))
		}
		delete(rec, module)
	}
	for m := range rec {
		errs = append(errs, fmt.Errorf("%s records %s, which has no cuda/%s.cu", File, m, m))
	}
	return errs
}

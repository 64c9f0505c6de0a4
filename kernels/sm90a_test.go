package kernels

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sm90aRecord is the file that records, for each sm_90a module, the hash of its sources (the .cu and the
// headers it includes, transitively) and of its committed PTX, as scripts/hopper-ptx.sh last generated them.
const sm90aRecord = "cuda/ptx/sm90a.sum"

var cudaInclude = regexp.MustCompile(`(?m)^\s*#\s*include\s+"([^"]+)"`)

// cudaSources is file (under cuda/) and every local header it includes, transitively, sorted.
func cudaSources(file string) ([]string, error) {
	seen := map[string]bool{}
	var visit func(string) error
	visit = func(f string) error {
		if seen[f] {
			return nil
		}
		seen[f] = true
		b, err := os.ReadFile(filepath.Join("cuda", f))
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

// sm90aLine is module's record line: "<module> sources=<sha256> ptx=<sha256>", the sources hashed as each
// file's name, a newline and its bytes, in name order.
func sm90aLine(module string) (string, error) {
	files, err := cudaSources(module + ".cu")
	if err != nil {
		return "", err
	}
	src := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("cuda", f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(src, "%s\n", f)
		src.Write(b)
	}
	ptx, err := os.ReadFile(filepath.Join("cuda", "ptx", module+".ptx"))
	if err != nil {
		return "", fmt.Errorf("%s.cu has no PTX: %w", module, err)
	}
	if !strings.Contains(string(ptx), "\n.target sm_90a\n") || !strings.Contains(string(ptx), "release 12.4,") {
		return "", fmt.Errorf("cuda/ptx/%s.ptx is not CUDA 12.4's compute_90a PTX (.target sm_90a): generate it with scripts/hopper-ptx.sh", module)
	}
	return fmt.Sprintf("%s sources=%x ptx=%x", module, src.Sum(nil), sha256.Sum256(ptx)), nil
}

// TestSM90aPTXRecorded holds each committed sm_90a module to the record scripts/hopper-ptx.sh wrote when it
// generated the PTX: a .cu (or a header it includes) changed since, or a PTX edited or generated otherwise,
// fails here, on any machine — the Hopper toolchain that could regenerate it is a 5 GB chroot that CI does not
// install. KERNELWATCH_RECORD_SM90A=1 (what the script sets) writes the record instead.
func TestSM90aPTXRecorded(t *testing.T) {
	cus, err := filepath.Glob("cuda/*_sm90a.cu")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, cu := range cus {
		line, err := sm90aLine(strings.TrimSuffix(filepath.Base(cu), ".cu"))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, line)
	}
	if os.Getenv("KERNELWATCH_RECORD_SM90A") == "1" {
		if err := os.WriteFile(sm90aRecord, []byte(strings.Join(want, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(sm90aRecord)
	if err != nil && len(want) > 0 {
		t.Fatalf("no record of the sm_90a PTX: %v (scripts/hopper-ptx.sh writes it)", err)
	}
	rec := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if m, _, ok := strings.Cut(l, " "); ok {
			rec[m] = l
		}
	}
	for _, w := range want {
		module, _, _ := strings.Cut(w, " ")
		switch r, ok := rec[module]; {
		case !ok:
			t.Errorf("%s: cuda/%s.cu is not in %s: generate its PTX with scripts/hopper-ptx.sh", sm90aRecord, module, sm90aRecord)
		case r != w:
			t.Errorf("%s: cuda/%s.cu (or a header it includes) or cuda/ptx/%s.ptx changed since scripts/hopper-ptx.sh "+
				"generated the PTX: rerun it (root, the Hopper toolchain of scripts/install-hopper-toolchain.sh) and commit "+
				"the PTX and the record\nrecorded: %s\nnow:      %s", sm90aRecord, module, module, r, w)
		}
		delete(rec, module)
	}
	for m := range rec {
		t.Errorf("%s records %s, which has no cuda/%s.cu", sm90aRecord, m, m)
	}
}

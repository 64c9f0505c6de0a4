package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/kernelwatch/kernelwatch/internal/hwclass"
	"os/exec"
	"strings"
	"time"
)

// Version is the version of regress written to every result file
// (regress-version).
const Version = "0.1.0"

// Header is the configuration regress writes at the top of a result file,
// before what the suite prints (design §2). Empty fields are left out.
type Header struct {
	Commit string // the commit the binaries were built from
	Branch string
	Class  string // hardware class; see Class
	Go     string // the toolchain the binaries were built with
	Date   time.Time
}

// Lines renders the header as configuration lines.
func (h Header) Lines() []byte {
	var b bytes.Buffer
	for _, kv := range [][2]string{
		{"commit", h.Commit}, {"branch", h.Branch}, {"class", h.Class}, {"go", h.Go},
		{"regress-version", Version}, {"date", h.Date.UTC().Format(time.RFC3339)},
	} {
		if v := strings.TrimSpace(kv[1]); v != "" && !strings.ContainsAny(v, "\n\r") {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], v)
		}
	}
	return b.Bytes()
}

// Classes returns the distinct values of the class configuration lines in
// a result file, in order of appearance.
func Classes(results []byte) []string {
	var out []string
	s := bufio.NewScanner(bytes.NewReader(results))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "class:"); ok {
			if v = strings.TrimSpace(v); v != "" && !contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ResultClass is the class to write in a result file's header: the one the
// suite printed, when it printed exactly one, else predicted.
func ResultClass(results []byte, predicted string) string {
	if c := Classes(results); len(c) == 1 {
		return c[0]
	}
	return predicted
}

// CPUClass is this machine's CPU hardware class, as the kernel suite
// prints it.
func CPUClass() string { return hwclass.CPU() }

// GPUName returns the name of the first GPU nvidia-smi reports, or "" when
// there is no answer (no driver, no GPU).
func GPUName(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=name", "--format=csv,noheader").Output()
	if err != nil {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(name)
}

// GPUClass is the hardware class of a GPU named name, as the CUDA backend of
// the kernel suite writes it.
func GPUClass(name string) string { return hwclass.GPU(name) }

// ResolveDevice resolves --device: "cpu" and "cuda" stand; "auto" is cuda when
// the binaries are built with the cuda tag and a GPU answers, else cpu.
// gpu is the name of the GPU (from GPUName) or "".
func ResolveDevice(device string, tags []string, gpu string) string {
	if device != "auto" && device != "" {
		return device
	}
	if contains(tags, "cuda") && gpu != "" {
		return "cuda"
	}
	return "cpu"
}

// PredictClass is the class a run on device will have, known before it
// runs: CPUClass on the CPU, GPUClass of gpu on CUDA ("" when gpu is "").
func PredictClass(device, gpu string) string {
	if device == "cuda" {
		if gpu == "" {
			return ""
		}
		return GPUClass(gpu)
	}
	return CPUClass()
}

// testFlags are the go test flags a test binary takes as -test.<name>.
var testFlags = map[string]bool{
	"bench": true, "benchmem": true, "benchtime": true, "blockprofile": true, "blockprofilerate": true,
	"count": true, "coverprofile": true, "cpu": true, "cpuprofile": true, "failfast": true, "fullpath": true,
	"list": true, "memprofile": true, "memprofilerate": true, "mutexprofile": true, "mutexprofilefraction": true,
	"outputdir": true, "parallel": true, "run": true, "short": true, "shuffle": true, "skip": true,
	"timeout": true, "trace": true, "v": true,
}

// TestFlags rewrites go test flags (-benchmem, -cpu 1,4) into the
// -test.benchmem, -test.cpu form a test binary takes; other arguments pass
// unchanged.
func TestFlags(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimLeft(a, "-")
		key, _, _ := strings.Cut(name, "=")
		if testFlags[key] {
			out[i] = "-test." + name
		}
	}
	return out
}

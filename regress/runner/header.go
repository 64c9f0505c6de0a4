package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/kernelwatch/kernelwatch/internal/hwclass"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Version is the version of regress written to every result file
// (regress-version): the module version the binary was built as — a
// release's tag without its "v", as go install …@v0.2.0 or a build of the
// tagged commit stamps it — or devVersion for a build without one (go run
// or go build in a checkout, go test).
var Version = moduleVersion()

// devVersion is the version of a build that carries none: the next release.
const devVersion = "0.2.0-dev"

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == "github.com/kernelwatch/kernelwatch" && strings.HasPrefix(bi.Main.Version, "v") {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return devVersion
}

// Header is the configuration regress writes at the top of a result file,
// before what the suite prints (design §2). Empty fields are left out.
type Header struct {
	Commit string // the commit the binaries were built from
	Branch string
	Class  string // hardware class; see Class
	Go     string // the toolchain the binaries were built with
	Date   time.Time

	// Run describes an interleaved run (regress check), so that the
	// result files of its shards can be joined (regress judge) only with
	// those of the same run. The zero Run writes nothing.
	Run RunInfo
}

// RunInfo is what a result file of an interleaved run records about the run
// besides its results (written after the Header fields above):
//
//	count: 10           rounds asked for (--count): one sample per side per round
//	seed: 4711          the seed of the ABBA order (--seed)
//	shard: 2/3          the shard of the top-level benchmarks (--shard); absent for all
//	shard-by: cost 9f…  how the shards were chosen: "name" (a hash of each name) or the
//	                    fingerprint of a deal balanced by cost (Result.Deal); with shard only
//	rounds-done: 8      only when the run stopped early: rounds finished on both sides
//	stopped: deadline   only when the run stopped early: StopDeadline or StopSignal
type RunInfo struct {
	Count      int    // 0: not an interleaved run; nothing is written
	Seed       uint64 // written whenever Count is
	Shard      string // "i/n", "" when unsharded
	ShardBy    string // "name" or Result.Deal; "" (files from before it was written) means name
	RoundsDone int    // written with Stopped
	Stopped    string // "", StopDeadline or StopSignal
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
	if r := h.Run; r.Count > 0 {
		fmt.Fprintf(&b, "count: %d\nseed: %d\n", r.Count, r.Seed)
		if r.Shard != "" {
			fmt.Fprintf(&b, "shard: %s\n", r.Shard)
			if r.ShardBy != "" {
				fmt.Fprintf(&b, "shard-by: %s\n", r.ShardBy)
			}
		}
		if r.Stopped != "" {
			fmt.Fprintf(&b, "rounds-done: %d\nstopped: %s\n", r.RoundsDone, r.Stopped)
		}
	}
	return b.Bytes()
}

// ReadHeader reads back what Lines wrote (all but the date) from a result
// file. Every configuration line counts, not just the first ones: a key
// that the file sets to two different values (the class of two machines,
// two shards in one file) is an error, since the file then does not
// describe one run. Lines that delete a key ("key:", from Concat) are
// skipped.
func ReadHeader(data []byte) (Header, error) {
	var h Header
	seen := map[string]string{}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		l := s.Text()
		k := configKey(l)
		if k == "" {
			continue
		}
		v := strings.TrimSpace(l[len(k)+1:])
		if v == "" {
			continue
		}
		if old, ok := seen[k]; ok {
			if old != v {
				switch k {
				case "commit", "branch", "class", "go", "count", "seed", "shard", "shard-by", "rounds-done", "stopped":
					return h, fmt.Errorf("%s is both %s and %s: not the results of one run", k, old, v)
				}
			}
			continue
		}
		seen[k] = v
		var err error
		switch k {
		case "commit":
			h.Commit = v
		case "branch":
			h.Branch = v
		case "class":
			h.Class = v
		case "go":
			h.Go = v
		case "count":
			h.Run.Count, err = strconv.Atoi(v)
			if err == nil && h.Run.Count < 1 {
				err = fmt.Errorf("want at least 1")
			}
		case "seed":
			h.Run.Seed, err = strconv.ParseUint(v, 10, 64)
		case "shard":
			if sh, perr := ParseShard(v); perr != nil {
				err = fmt.Errorf("want i/n with 1 ≤ i ≤ n")
			} else {
				h.Run.Shard = sh.String()
			}
		case "shard-by":
			if !validShardBy(v) {
				err = fmt.Errorf("want name, or cost and 16 hex digits")
			}
			h.Run.ShardBy = v
		case "rounds-done":
			h.Run.RoundsDone, err = strconv.Atoi(v)
			if err == nil && h.Run.RoundsDone < 0 {
				err = fmt.Errorf("want at least 0")
			}
		case "stopped":
			if v != StopDeadline && v != StopSignal {
				err = fmt.Errorf("want %s or %s", StopDeadline, StopSignal)
			}
			h.Run.Stopped = v
		}
		if err != nil {
			return h, fmt.Errorf("%s: %q: %v", k, v, unwrapNum(err))
		}
	}
	if err := s.Err(); err != nil {
		return h, err
	}
	if (h.Run.Stopped == "") != (seen["rounds-done"] == "") {
		return h, fmt.Errorf("rounds-done and stopped go together")
	}
	return h, nil
}

// unwrapNum drops strconv's restatement of the input from its errors.
func unwrapNum(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
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

// validShardBy reports whether v is a shard-by value: "name", or "cost" and
// 16 hex digits (Result.Deal).
func validShardBy(v string) bool {
	if v == "name" {
		return true
	}
	h, ok := strings.CutPrefix(v, "cost ")
	if !ok || len(h) != 16 {
		return false
	}
	_, err := strconv.ParseUint(h, 16, 64)
	return err == nil
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// The integration tests build and run a small benchmark package in a
// temporary git repository:
//
//	main:    the baseline
//	same:    an identical change (a comment)
//	slow:    FNV does a fifth more work (a second pass over 20% of its input)
//	broken:  does not compile
//
// FNV and Xor take 10–20 µs per call, so 40 ms samples hold 2,000–4,000 calls.

// Xor comes first and neither function is inlined, so that FNV growing
// does not move Xor's loop: on the 2-core CI machine, inlined into its
// benchmark, Xor's loop moved by 32 bytes ran 15–20% slower from alignment
// alone, a real but unrelated change the test must not depend on.
const hashSource = `package hash

// Xor folds data into a word.
//
//go:noinline
func Xor(data []byte) uint64 {
	h := uint64(0)
	for _, c := range data {
		h = h<<1 ^ h>>63 ^ uint64(c)
	}
	return h
}

// FNV is the 64-bit FNV-1a hash of data.
//
//go:noinline
func FNV(data []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range data {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
`

// hashTest reports the median thread CPU time of one call as ns/op (as the
// kernel harness reports its own per-launch median): go test runs packages in
// parallel, and on the 2-core CI machine the wall time of a call preempted by
// another package's tests varied by ±40%, enough to hide the 20% slowdown.
// CPU time still counts all the extra work, and would not count a sleep.
const hashTest = `package hash

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

var data = make([]byte, 16<<10)
var sink uint64

func init() {
	for i := range data {
		data[i] = byte(i * 7)
	}
}

// threadCPU is the CPU time the calling thread has used, in nanoseconds.
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func measure(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ns []float64
	for b.Loop() {
		t := threadCPU()
		f()
		ns = append(ns, float64(threadCPU()-t))
	}
	slices.Sort(ns)
	b.ReportMetric(ns[len(ns)/2], "ns/op")
}

func BenchmarkFNV(b *testing.B) {
	measure(b, func() { sink = FNV(data) })
}

func BenchmarkXor(b *testing.B) {
	measure(b, func() { sink = Xor(data) })
}
`

// gitRepo is a temporary repository for the integration tests.
type gitRepo struct {
	t   *testing.T
	dir string
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *gitRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// worktrees counts the entries of git worktree list.
func (r *gitRepo) worktrees() int {
	return len(strings.Split(r.git("worktree", "list"), "\n"))
}

func newHashRepo(t *testing.T) *gitRepo {
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("go.mod", "module example.com/hashes\n\ngo 1.26\n")
	r.write("hash/hash.go", hashSource)
	r.write("hash/hash_test.go", hashTest)
	r.git("add", "-A")
	r.git("commit", "-qm", "baseline")

	r.git("checkout", "-qb", "same")
	r.write("hash/hash.go", strings.Replace(hashSource, "// FNV is", "// FNV is (an identical change)", 1))
	r.git("commit", "-qam", "identical change")

	r.git("checkout", "-qb", "slow", "main")
	r.write("hash/hash.go", strings.TrimSuffix(hashSource, "\treturn h\n}\n")+`	// A fifth more work: hash the first 20% again.
	for _, c := range data[:len(data)/5] {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
`)
	r.git("commit", "-qam", "slower FNV")

	r.git("checkout", "-qb", "panics", "main")
	r.write("hash/hash_test.go", strings.Replace(hashTest, "func BenchmarkXor(b *testing.B) {\n", "func BenchmarkXor(b *testing.B) {\n\tpanic(\"xor is broken\")\n", 1))
	r.git("commit", "-qam", "Xor panics")

	r.git("checkout", "-qb", "broken", "main")
	r.write("hash/hash.go", hashSource+"\nfunc Broken() int { return undefinedThing }\n")
	r.git("commit", "-qam", "broken")
	r.git("checkout", "-q", "main")
	return r
}

// leftovers lists what regress left in the temporary directory.
func leftovers(t *testing.T, tmp string) []string {
	entries, _ := os.ReadDir(tmp)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "regress-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func decodeReport(t *testing.T, s string) *report.Report {
	t.Helper()
	r, err := report.Read(strings.NewReader(s), "report")
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return r
}

func TestCheckIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark fixture reads the thread CPU clock of Linux")
	}
	start := time.Now()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := newHashRepo(t)
	quick := []string{"--config", "none", "--count", "10", "--benchtime", "40ms"}

	t.Run("identical change passes", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"check", "--current", "same", "--format", "json"}, quick...)...)
		if res.code != 0 {
			t.Fatalf("exit %d, want 0\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		if rep.Counts.Unchanged == 0 || len(rep.Comparisons) != 2 {
			t.Errorf("counts %+v over %d comparisons", rep.Counts, len(rep.Comparisons))
		}
		for _, c := range rep.Comparisons {
			if len(c.Baseline.Rounds) != 10 || len(c.Current.Rounds) != 10 {
				t.Errorf("%s: rounds %v / %v, want 10 each", c.Name, c.Baseline.Rounds, c.Current.Rounds)
			}
		}
		if !strings.HasPrefix(rep.Baseline.Label, "main@") || !strings.HasPrefix(rep.Current.Label, "same@") {
			t.Errorf("labels %q, %q", rep.Baseline.Label, rep.Current.Label)
		}
		for _, k := range []string{"commit", "class", "go", "regress-version"} {
			if rep.Current.Config[k] == "" {
				t.Errorf("current config lacks %s: %v", k, rep.Current.Config)
			}
		}
		if !strings.Contains(res.stderr, "interleaved (seed ") || !strings.Contains(res.stderr, "benchmarks") {
			t.Errorf("stderr lacks the seed or progress:\n%s", res.stderr)
		}
	})

	t.Run("slower benchmark fails and is named", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"check", "--current", "slow"}, quick...)...)
		if res.code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		var fnv, xor string
		for _, l := range strings.Split(res.stdout, "\n") {
			switch f := strings.Fields(l); {
			case len(f) > 0 && f[0] == "FNV":
				fnv = l
			case len(f) > 0 && f[0] == "Xor":
				xor = l
			}
		}
		t.Logf("\n%s\n%s", fnv, xor)
		if !strings.Contains(fnv, "regression") || strings.Contains(xor, "regression") {
			t.Errorf("want FNV named as the regression and Xor not:\n%s", res.stdout)
		}
		if !strings.Contains(res.stdout, "FAIL: 1 regression") {
			t.Errorf("summary line:\n%s", res.stdout)
		}
	})

	t.Run("a benchmark that panics fails, the others are compared", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"check", "--current", "panics", "--format", "json"}, quick...)...)
		if res.code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		verdicts := map[string]string{}
		for _, c := range rep.Comparisons {
			verdicts[c.Name] = c.Verdict
			if c.Name == "Xor" && (len(c.Warnings) == 0 || c.Warnings[0] != "current: process died in Xor: panic: xor is broken") {
				t.Errorf("Xor warnings %q", c.Warnings)
			}
		}
		if verdicts["Xor"] != report.Failed || verdicts["FNV"] != report.Unchanged {
			t.Errorf("verdicts %v, want Xor failed and FNV unchanged", verdicts)
		}
	})

	t.Run("stored mode without a baseline exits 3", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"check", "--mode", "stored", "--current", "same"}, quick...)...)
		if res.code != 3 {
			t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
		}
		want := "no stored baseline for class " + runner.CPUClass()
		if !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "regress baseline save --class") {
			t.Errorf("stderr lacks %q and the command:\n%s", want, res.stderr)
		}
	})

	t.Run("a ref that does not build exits 2 and leaves nothing", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"check", "--current", "broken"}, quick...)...)
		if res.code != 2 {
			t.Fatalf("exit %d, want 2\n%s", res.code, res.stderr)
		}
		if !strings.Contains(res.stderr, "undefined: undefinedThing") || !strings.Contains(res.stderr, "hash/hash.go:") {
			t.Errorf("stderr lacks the compiler's message with a repository path:\n%s", res.stderr)
		}
		if !strings.Contains(res.stderr, "build failed (current broken@") {
			t.Errorf("stderr lacks the summary line:\n%s", res.stderr)
		}
		if n := r.worktrees(); n != 1 {
			t.Errorf("%d worktrees after a failed build:\n%s", n, r.git("worktree", "list"))
		}
		if l := leftovers(t, tmp); len(l) > 0 {
			t.Errorf("temporary files left: %v", l)
		}
	})

	t.Run("stored mode compares with the committed baseline", func(t *testing.T) {
		res := invoke(t, r.dir, "", append([]string{"baseline", "save"}, quick...)...)
		if res.code != 0 {
			t.Fatalf("baseline save: exit %d\n%s", res.code, res.stderr)
		}
		path := filepath.Join("baselines", runner.CPUClass()+".bench")
		data, err := os.ReadFile(filepath.Join(r.dir, path))
		if err != nil {
			t.Fatal(err)
		}
		head := r.git("rev-parse", "HEAD")
		for _, want := range []string{"commit: " + head + "\n", "branch: main\n", "class: " + runner.CPUClass() + "\n", "regress-version: ", "go: go1.", "date: "} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("stored file lacks %q:\n%s", want, data)
			}
		}
		show := invoke(t, r.dir, "", "baseline", "show", "--config", "none")
		if show.code != 0 || !strings.Contains(show.stdout, head) || !strings.Contains(show.stdout, "2 benchmarks (20 results, 10 each)") {
			t.Errorf("baseline show: exit %d\n%s%s", show.code, show.stdout, show.stderr)
		}
		r.git("add", path)
		r.git("commit", "-qm", "store the baseline")
		// Stored results drift against a later run (the reason check
		// interleaves by default): this checks the plumbing, not the
		// statistics, so it tolerates any drift.
		res = invoke(t, r.dir, "", append([]string{"check", "--mode", "stored", "--baseline-tip", "--current", "same", "--format", "json"}, append(quick, "--threshold", "500%")...)...)
		if res.code != 0 {
			t.Fatalf("stored check: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		if !strings.HasPrefix(rep.Baseline.Label, "stored main@") || rep.Baseline.Config["commit"] != head {
			t.Errorf("baseline %q config %v", rep.Baseline.Label, rep.Baseline.Config)
		}
	})

	t.Run("calibrate and a stored check on a baselines branch", func(t *testing.T) {
		mainSHA := r.git("rev-parse", "main")
		ref := "kernelwatch-baselines"
		res := invoke(t, r.dir, "", "calibrate", "--config", "none", "--rounds", "6", "--benchtime", "20ms", "--quiet", "--baselines-ref", ref)
		if res.code != 0 || !strings.Contains(res.stdout, "noise of "+runner.CPUClass()+": 2 series over 6 rounds") {
			t.Fatalf("calibrate: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		res = invoke(t, r.dir, "", append([]string{"baseline", "save", "--baselines-ref", ref}, quick...)...)
		if res.code != 0 {
			t.Fatalf("baseline save: exit %d\n%s", res.code, res.stderr)
		}
		if got := r.git("rev-parse", "main"); got != mainSHA || r.git("status", "--porcelain") != "" {
			t.Errorf("main or the working tree changed: %s → %s, status %q", mainSHA, got, r.git("status", "--porcelain"))
		}
		if got := r.git("ls-tree", "--name-only", ref, "baselines/"); got != "baselines/"+runner.CPUClass()+".bench\nbaselines/"+runner.CPUClass()+".noise.json" {
			t.Errorf("%s holds %q", ref, got)
		}
		res = invoke(t, r.dir, "", append([]string{"check", "--mode", "stored", "--baselines-ref", ref, "--current", "same", "--format", "json"}, append(quick, "--threshold", "500%")...)...)
		if res.code != 0 {
			t.Fatalf("stored check: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		rep := decodeReport(t, res.stdout)
		if !strings.HasPrefix(rep.Baseline.Label, "stored "+ref+"@") || !strings.HasSuffix(rep.Settings.NoiseFile, ".noise.json") {
			t.Errorf("baseline %q, noise file %q", rep.Baseline.Label, rep.Settings.NoiseFile)
		}
		for _, c := range rep.Comparisons {
			if c.ThresholdFrom == "" || c.NoiseP99 == nil || c.Detectable == nil {
				t.Errorf("%s: threshold from %q, noise %v, detectable %v", c.Name, c.ThresholdFrom, c.NoiseP99, c.Detectable)
			}
		}
	})

	if n := r.worktrees(); n != 1 {
		t.Errorf("%d worktrees left:\n%s", n, r.git("worktree", "list"))
	}
	if l := leftovers(t, tmp); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
	t.Logf("integration test took %.1fs", time.Since(start).Seconds())
}

// TestCheckInterruptCleansUp sends SIGINT to a running regress check and
// checks that it stops, exits 2 and removes its worktrees and files.
func TestCheckInterruptCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark fixture reads the thread CPU clock of Linux")
	}
	tmp := t.TempDir()
	bin := buildRegress(t)
	r := newHashRepo(t)
	cmd := exec.Command(bin, "check", "--current", "slow", "--config", "none", "--count", "50", "--benchtime", "200ms")
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for r.worktrees() < 3 || !strings.Contains(stderr.String(), "interleaved") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never started:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // inside a benchmark
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit %d (%v), want 2\n%s", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if n := r.worktrees(); n != 1 {
		t.Errorf("%d worktrees after SIGINT:\n%s", n, r.git("worktree", "list"))
	}
	if l := leftovers(t, tmp); len(l) > 0 {
		t.Errorf("temporary files left after SIGINT: %v", l)
	}
}

// syncBuffer is a bytes.Buffer that a process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunVerb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the benchmark fixture reads the thread CPU clock of Linux")
	}
	r := newHashRepo(t)
	res := invoke(t, r.dir, "", "run", "--config", "none", "--count", "2", "--benchtime", "1x", "--out", "out.bench")
	if res.code != 0 || res.stdout != "" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	data, err := os.ReadFile(filepath.Join(r.dir, "out.bench"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, key := range []string{"commit: ", "branch: main", "class: " + runner.CPUClass(), "go: go1.", "regress-version: " + runner.Version, "date: 20"} {
		if !strings.HasPrefix(lines[i], key) {
			t.Errorf("line %d = %q, want %q…", i+1, lines[i], key)
		}
	}
	if n := strings.Count(string(data), "\nBenchmarkFNV-"); n != 2 {
		t.Errorf("%d FNV results, want 2:\n%s", n, data)
	}

	list := invoke(t, r.dir, "", "run", "--config", "none", "--list", "--bench", "F")
	if list.code != 0 || list.stdout != "BenchmarkFNV\n" {
		t.Errorf("--list: exit %d stdout %q stderr %q", list.code, list.stdout, list.stderr)
	}
	none := invoke(t, r.dir, "", "run", "--config", "none", "--bench", "NoSuch", "--benchtime", "1x")
	if none.code != 3 {
		t.Errorf("no benchmark selected: exit %d, want 3\n%s", none.code, none.stderr)
	}

	// Shards: together they hold every benchmark once, and merge joins them.
	var files []string
	total := 0
	for _, s := range []string{"1/2", "2/2"} {
		f := "shard" + s[:1] + ".bench"
		res := invoke(t, r.dir, "", "run", "--config", "none", "--count", "1", "--benchtime", "1x", "--shard", s, "--out", f)
		if res.code != 0 {
			t.Fatalf("--shard %s: exit %d\n%s", s, res.code, res.stderr)
		}
		data, _ := os.ReadFile(filepath.Join(r.dir, f))
		total += strings.Count(string(data), "\nBenchmark")
		files = append(files, f)
	}
	if total != 2 {
		t.Errorf("shards hold %d results, want 2", total)
	}
	m := invoke(t, r.dir, "", append([]string{"merge", "--out", "merged.bench"}, files...)...)
	if m.code != 0 {
		t.Fatalf("merge: exit %d\n%s", m.code, m.stderr)
	}
	merged, _ := os.ReadFile(filepath.Join(r.dir, "merged.bench"))
	if strings.Count(string(merged), "\nBenchmark") != 2 {
		t.Errorf("merged file:\n%s", merged)
	}
	other := write(t, r.dir, "other.bench", "class: gpu-nvidia-h200\nBenchmarkFNV-2 1 1 ns/op\n")
	m = invoke(t, r.dir, "", "merge", "-o", "bad.bench", files[0], other)
	if m.code != 2 || !strings.Contains(m.stderr, "class gpu-nvidia-h200") {
		t.Errorf("mixed classes: exit %d %s", m.code, m.stderr)
	}
	// A shard of another split (here: dealt by cost) could hold a benchmark the other holds too, or miss one.
	data, _ = os.ReadFile(filepath.Join(r.dir, files[1]))
	if !strings.Contains(string(data), "shard: 2/2\nshard-by: name\n") {
		t.Fatalf("shard 2/2 does not say how it was split:\n%s", data)
	}
	write(t, r.dir, "dealt.bench", strings.Replace(string(data), "shard-by: name", "shard-by: cost 00c0ffee12345678", 1))
	m = invoke(t, r.dir, "", "merge", "-o", "bad.bench", files[0], "dealt.bench")
	if m.code != 2 || !strings.Contains(m.stderr, "shard1.bench was split by name but dealt.bench by cost 00c0ffee12345678") {
		t.Errorf("mixed splits: exit %d %s", m.code, m.stderr)
	}
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--shard", "3/2"}, "--shard \"3/2\": want 1 ≤ i ≤ n"},
		{[]string{"run", "--shard", "x/y"}, "--shard \"x/y\": want i/n"},
		{[]string{"run", "--device", "tpu"}, "--device \"tpu\""},
		{[]string{"run", "--benchtime", "10"}, "--benchtime \"10\""},
		{[]string{"run", "--bench", "RMS(", "--config", "none"}, "--bench \"RMS(\""},
		{[]string{"run", "--gpus", "0,0"}, "--gpus \"0,0\""},
		{[]string{"run", "--gpus", "0,1", "--shard", "1/2"}, "--gpus and --shard"},
		{[]string{"check", "--mode", "fast"}, "--mode \"fast\""},
		{[]string{"check", "--baseline-bin", "x"}, "--baseline-bin and --current-bin go together"},
		{[]string{"check", "extra"}, "unexpected argument \"extra\""},
		{[]string{"check", "--baseline-file", "b.bench"}, "--baseline-file goes with --mode stored"},
		{[]string{"check", "--mode", "stored", "--baseline-file", "b.bench"}, "--baseline-file needs --current-bin"},
		{[]string{"--count", "-1", "--config", "none"}, "--count -1"},
		{[]string{"baseline"}, "want an action: save or show; see 'regress help baseline'"},
		{[]string{"baseline", "drop"}, "unknown action \"drop\""},
		{[]string{"baseline", "show", "--class", "../x"}, "--class \"../x\""},
		{[]string{"merge"}, "no files to merge"},
	} {
		res := invoke(t, dir, "", tc.args...)
		if res.code != 2 || !strings.Contains(res.stdout+res.stderr, tc.want) {
			t.Errorf("%v: exit %d, output %q; want 2 and %q", tc.args, res.code, res.stdout+res.stderr, tc.want)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, verb := range []string{"check", "run", "merge"} {
		res := invoke(t, t.TempDir(), "", verb, "-h")
		if res.code != 0 || !strings.Contains(res.stdout, "usage: regress "+verb) || !strings.Contains(res.stdout, "Exit codes") {
			t.Errorf("%s -h: exit %d\n%s", verb, res.code, res.stdout)
		}
	}
	res := invoke(t, t.TempDir(), "", "baseline", "-h")
	if res.code != 0 || !strings.Contains(res.stdout, "baselines/<class>.bench") {
		t.Errorf("baseline -h: exit %d\n%s", res.code, res.stdout)
	}
}

// gpuSuite is a test package whose TestMain prints the GPU it was given,
// to check that --gpus runs one process per GPU with its own
// CUDA_VISIBLE_DEVICES and merges their results.
const gpuSuite = fourBenchmarks

func TestPrebuiltBinariesOnGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	bin := buildTestPackage(t, "gpus", gpuSuite)
	// No git repository and no go.mod where it runs: only the binaries.
	run := t.TempDir()
	res := invoke(t, run, "", "check", "--baseline-bin", bin, "--current-bin", bin, "--gpus", "0,1",
		"--config", "none", "--count", "6", "--benchtime", "5ms", "--format", "json", "--results", "results")
	// An A/A run of real benchmarks on a shared CI machine may still be
	// judged slower (medians of 5 µs benchmarks spread 4x there); this test
	// is about the plumbing, so any verdict will do, an error will not.
	if res.code == 2 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	rep := decodeReport(t, res.stdout)
	if len(rep.Comparisons) != 4 || rep.Baseline.Label != "baseline (gpus.test)" {
		t.Errorf("%d comparisons, baseline %q", len(rep.Comparisons), rep.Baseline.Label)
	}
	// Stored mode without git: the baseline read from a file, the current side run from the binary.
	stored := filepath.Join(run, "stored.bench")
	if res := invoke(t, run, "", "run", "--bin", bin, "--config", "none", "--count", "6", "--benchtime", "5ms", "--out", stored); res.code != 0 {
		t.Fatalf("run --bin: exit %d\n%s", res.code, res.stderr)
	}
	sres := invoke(t, run, "", "check", "--mode", "stored", "--baseline-file", stored, "--current-bin", bin,
		"--config", "none", "--count", "6", "--benchtime", "5ms", "--format", "json")
	if sres.code == 2 {
		t.Fatalf("stored --baseline-file: exit %d\n%s\n%s", sres.code, sres.stdout, sres.stderr)
	}
	if rep := decodeReport(t, sres.stdout); len(rep.Comparisons) != 4 || rep.Baseline.Label != "stored stored.bench" {
		t.Errorf("stored --baseline-file: %d comparisons, baseline %q", len(rep.Comparisons), rep.Baseline.Label)
	}
	if res := invoke(t, run, "", "check", "--mode", "stored", "--baseline-file", "nosuch.bench", "--current-bin", bin,
		"--config", "none"); res.code != 2 || !strings.Contains(res.stderr, "--baseline-file nosuch.bench") {
		t.Errorf("missing --baseline-file: exit %d, %q", res.code, res.stderr)
	}
	for _, side := range []string{"baseline", "current"} {
		data, err := os.ReadFile(filepath.Join(run, "results", side+".bench"))
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		// Dealt in listing order: GPU 0 runs A and C, GPU 1 B and D.
		for _, want := range []string{"lane: 1/2\n", "lane: 2/2\n", "visible: 0\n", "visible: 1\n"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s results lack %q:\n%s", side, want, s)
			}
		}
		i0, i1 := strings.Index(s, "visible: 0\n"), strings.Index(s, "visible: 1\n")
		a, b := strings.Index(s, "BenchmarkA-"), strings.Index(s, "BenchmarkB-")
		if !(i0 < a && a < i1 && i1 < b) {
			t.Errorf("%s: A should run on GPU 0 and B on GPU 1:\n%s", side, s)
		}
	}
	var r struct {
		Comparisons []struct {
			Baseline struct{ Rounds []int } `json:"baseline"`
		} `json:"comparisons"`
	}
	json.Unmarshal([]byte(res.stdout), &r)
	if len(r.Comparisons) == 0 || len(r.Comparisons[0].Baseline.Rounds) != 6 {
		t.Errorf("rounds not recorded: %+v", r)
	}

	// run --bin: the same binary on one GPU and dealt over two give the same rows in one file each.
	rows := func(gpus string) []string {
		out := "run-" + strings.ReplaceAll(gpus, ",", "-") + ".bench"
		res := invoke(t, run, "", "run", "--bin", bin, "--gpus", gpus, "--config", "none", "--count", "2",
			"--benchtime", "1x", "--out", out)
		if res.code != 0 {
			t.Fatalf("run --bin --gpus %s: exit %d\n%s", gpus, res.code, res.stderr)
		}
		data, err := os.ReadFile(filepath.Join(run, out))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "Benchmark") {
				names = append(names, strings.Fields(l)[0])
			}
		}
		slices.Sort(names)
		return names
	}
	one, two := rows("0"), rows("0,1")
	if len(one) != 8 || !slices.Equal(one, two) {
		t.Errorf("rows on one GPU %v, on two %v", one, two)
	}
	for _, args := range [][]string{
		{"run", "--bin", "nosuch.test"},
		{"run", "--bin", run},
		{"check", "--baseline-bin", bin, "--current-bin", "nosuch.test"},
	} {
		res := invoke(t, run, "", append(args, "--config", "none")...)
		if res.code != 2 || !strings.Contains(res.stderr, args[len(args)-2]+" "+args[len(args)-1]+": ") {
			t.Errorf("%v: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
	// With a stored baseline for the class, --gpus balances its sub-benchmark counts: A has three, so GPU 0
	// runs A alone and GPU 1 the rest.
	os.Mkdir(filepath.Join(run, "baselines"), 0o755)
	write(t, run, filepath.Join("baselines", runner.CPUClass()+".bench"),
		"BenchmarkA/x-2 1 1 ns/op\nBenchmarkA/y-2 1 1 ns/op\nBenchmarkA/z-2 1 1 ns/op\n"+
			"BenchmarkB-2 1 1 ns/op\nBenchmarkC-2 1 1 ns/op\nBenchmarkD-2 1 1 ns/op\n")
	res = invoke(t, run, "", "run", "--bin", bin, "--gpus", "0,1", "--config", "none", "--count", "1",
		"--benchtime", "1x", "--out", "weighted.bench")
	data, _ := os.ReadFile(filepath.Join(run, "weighted.bench"))
	gpu0, gpu1, _ := strings.Cut(string(data), "visible: 1\n")
	if res.code != 0 || strings.Count(gpu0, "\nBenchmark") != 1 || !strings.Contains(gpu0, "\nBenchmarkA-") ||
		strings.Count(gpu1, "\nBenchmark") != 3 {
		t.Errorf("weighted dealing: exit %d %s\n%s", res.code, res.stderr, data)
	}
	if res := invoke(t, run, "", "run", "--bin", bin, "./pkg"); res.code != 2 || !strings.Contains(res.stderr, "--bin runs one prebuilt binary") {
		t.Errorf("run --bin with packages: exit %d, stderr %q", res.code, res.stderr)
	}
}

// Package pytorch holds the tests of the PyTorch / Triton example, which
// is Python: what can be checked without a GPU is checked here, in CI.
package pytorch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/internal/hwclass"
	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/parse"
)

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	return py
}

func run(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestPython compiles the example's Python and runs the tests of its
// GPU-free part.
func TestPython(t *testing.T) {
	py := python(t)
	tmp := t.TempDir()
	env := []string{"PYTHONPYCACHEPREFIX=" + tmp, "PYTHONDONTWRITEBYTECODE=1"}
	if _, e, err := run(t, ".", env, py, "-m", "py_compile", "bench_rmsnorm.py", "kwbench.py", "test_kwbench.py"); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, e)
	}
	if _, e, err := run(t, ".", env, py, "-m", "unittest", "-q", "test_kwbench"); err != nil {
		t.Fatalf("test_kwbench: %v\n%s", err, e)
	}
}

// TestFormatReadByRegress: what kwbench writes, regress reads, and the
// class it names is the one internal/hwclass names.
func TestFormatReadByRegress(t *testing.T) {
	py := python(t)
	gpus := []string{"NVIDIA H100 80GB HBM3", "NVIDIA H200", "Tesla T4", "NVIDIA A100-SXM4-40GB"}
	script := `
import sys, kwbench
for g in sys.argv[1:]:
    print("#", g, kwbench.gpu_class(g))
print(kwbench.config_line("gpu", sys.argv[1]))
print(kwbench.config_line("class", kwbench.gpu_class(sys.argv[1])))
print("Unit GB/s better=higher")
for impl, ns in (("triton", 41234.5), ("eager", 150000.25)):
    name = "BenchmarkRMSNorm/%s/%s/%s" % (kwbench.segment("dtype", "bf16"), kwbench.segment("rows", 4096), kwbench.segment("impl", impl))
    print(kwbench.result_line(name, 100, [(ns, "ns/op"), (3255.1, "GB/s")]))
`
	out, e, err := run(t, ".", []string{"PYTHONDONTWRITEBYTECODE=1"}, py, append([]string{"-c", script}, gpus...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, e)
	}
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "# "); ok {
			i := strings.LastIndex(rest, " ")
			if gpu, class := rest[:i], rest[i+1:]; class != hwclass.GPU(gpu) {
				t.Errorf("kwbench.gpu_class(%q) = %q, internal/hwclass says %q", gpu, class, hwclass.GPU(gpu))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "out.bench")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	side, err := parse.NewReader(nil).ReadSide([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range side.Results {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"RMSNorm/dtype=bf16/rows=4096/impl=triton", "RMSNorm/dtype=bf16/rows=4096/impl=eager"}) {
		t.Errorf("regress read %q", names)
	}
	if c := side.Configs[side.Results[0].Config]; c.Get("class") != "gpu-nvidia-h100-80gb-hbm3" || c.Get("gpu") != "NVIDIA H100 80GB HBM3" {
		t.Errorf("config %v", c)
	}
}

// TestSkipsWithoutGPU: without torch or a CUDA device the example says why
// on standard error, prints no benchmark and exits 0 (regress then reports
// a command that printed nothing).
func TestSkipsWithoutGPU(t *testing.T) {
	py := python(t)
	if _, _, err := run(t, ".", nil, py, "-c", "import torch, sys; sys.exit(0 if not torch.cuda.is_available() else 1)"); err != nil {
		if _, _, err := run(t, ".", nil, py, "-c", "import torch"); err == nil {
			t.Skip("a CUDA device answers: the example would run")
		}
	}
	out, e, err := run(t, ".", []string{"PYTHONDONTWRITEBYTECODE=1"}, py, "bench_rmsnorm.py")
	if err != nil || strings.Contains(out, "Benchmark") || !strings.Contains(e, "bench_rmsnorm: ") || !strings.Contains(e, ": skipping (this example needs a CUDA GPU with PyTorch and Triton)") {
		t.Errorf("err %v\nstdout:\n%s\nstderr:\n%s", err, out, e)
	}
}

// TestConfig: the example's benchmarks.yaml is a suite command.
func TestConfig(t *testing.T) {
	c, err := config.Load("benchmarks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Suite.Command, []string{"python3", "bench_rmsnorm.py"}) || c.Suite.Format != "go" || c.Suite.Count != 10 {
		t.Errorf("suite %+v", c.Suite)
	}
}

// fakePython stands in for python3 with torch on a GPU: for
// bench_rmsnorm.py it prints one sample of two benchmarks whose time is
// 100 us times SLOWDOWN as bench_rmsnorm.py in its working directory sets
// it, with ±0.5% noise from the round and side.
const fakePython = `#!/bin/sh
[ "$1" = bench_rmsnorm.py ] || { echo "fake python3: $*" >&2; exit 1; }
slow=$(sed -n 's/^SLOWDOWN = \([0-9.]*\) .*/\1/p' bench_rmsnorm.py)
awk -v s="$slow" -v r="$KERNELWATCH_ROUND" -v side="$KERNELWATCH_SIDE" 'BEGIN {
  srand(r * 2 + (side == "current"))
  print "device: cuda"
  for (k = 0; k < 2; k++) printf "BenchmarkRMSNorm/dtype=bf16/rows=4096/cols=%d/impl=triton-1 100 %.1f ns/op\n", 4096 * (k + 1), 100000 * (k + 1) * s * (1 + 0.01 * (rand() - 0.5))
}'
`

// TestGPUDemoScript runs gpu-demo.sh as the lead will on a GPU host, with
// a fake python3 that prints what the example prints, scaled by SLOWDOWN:
// the script's git repository, its slow commit and its checks must give
// an A/A that passes and a slowdown that fails.
func TestGPUDemoScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds regress and runs two checks")
	}
	for _, tool := range []string{"bash", "git", "awk", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(fakePython), 0o755); err != nil {
		t.Fatal(err)
	}
	regress := filepath.Join(tmp, "regress")
	if _, e, err := run(t, ".", nil, "go", "build", "-o", regress, "github.com/kernelwatch/kernelwatch/cmd/regress"); err != nil {
		t.Fatalf("building regress: %v\n%s", err, e)
	}
	out := filepath.Join(tmp, "out")
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR=" + tmp, "COUNT=8", "SEED=3"}
	stdout, stderr, err := run(t, ".", env, "bash", "gpu-demo.sh", regress, out)
	if err != nil {
		t.Fatalf("gpu-demo.sh: %v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"A/A (identical kernel):    exit 0 (want 0)", "15% slower Triton kernel:  exit 1 (want 1)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"aa.txt", "slow.txt", "aa/report.json", "slow/current.bench"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if slow, _ := os.ReadFile(filepath.Join(out, "slow.txt")); strings.Count(string(slow), "regression") < 2 {
		t.Errorf("slow.txt does not name the two regressions:\n%s", slow)
	}
}

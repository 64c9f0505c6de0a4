package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var overhead = flag.Bool("overhead", false, "run TestRunOverhead: time regress run against the go test command it stands for, on the kernel suite")

// TestRunOverhead measures what regress adds to the go test invocations it
// drives: the wall time of `regress run` (build the test binary, list the
// benchmarks, run them, write the file) against `go test -run '^$' -bench
// ... ./kernels/` on the same selection, in alternating order (ABBA) so
// that drift of the machine does not favour either. It logs the figures and
// asserts nothing about time. Run it with
//
//	go test ./cmd/regress -run TestRunOverhead -overhead -v
func TestRunOverhead(t *testing.T) {
	if !*overhead {
		t.Skip("pass -overhead to measure")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const (
		bench     = "RMSNorm|GELU"
		benchtime = "20ms"
		count     = "3"
		rounds    = 4
	)
	out := filepath.Join(t.TempDir(), "run.bench")
	goTest := func() time.Duration {
		start := time.Now()
		cmd := exec.Command("go", "test", "-run", "^$", "-bench", bench, "-benchtime", benchtime, "-count", count, "./kernels/")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test: %v\n%s", err, b)
		}
		return time.Since(start)
	}
	regressRun := func() time.Duration {
		start := time.Now()
		res := invoke(t, root, "", "run", "--quiet", "--config", "none", "--bench", bench, "--benchtime", benchtime, "--count", count, "--out", out, "./kernels/")
		if res.code != 0 {
			t.Fatalf("regress run: exit %d\n%s", res.code, res.stderr)
		}
		return time.Since(start)
	}
	goTest() // warm the build cache for both
	var g, r time.Duration
	for i := 0; i < rounds; i++ {
		if i%2 == 0 {
			g += goTest()
			r += regressRun()
		} else {
			r += regressRun()
			g += goTest()
		}
	}
	data, _ := os.ReadFile(out)
	t.Logf("selection -bench %q -benchtime %s -count %s: %d result lines per run", bench, benchtime, count, strings.Count(string(data), "\nBenchmark"))
	t.Logf("go test:     %.2fs per run (mean of %d)", g.Seconds()/rounds, rounds)
	t.Logf("regress run: %.2fs per run (mean of %d)", r.Seconds()/rounds, rounds)
	t.Logf("regress adds %+.1f%% wall time", 100*(r.Seconds()/g.Seconds()-1))
}

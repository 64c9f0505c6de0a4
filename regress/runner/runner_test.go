package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suiteSource is a test package whose benchmarks misbehave on the side
// built with broken = true: F/s=2 fails, P panics in a sub-benchmark and Q
// panics at the top level. TestMain prints the CUDA_VISIBLE_DEVICES it sees
// as a config line and appends the side's name to $ORDER_LOG for every
// benchmark run.
const suiteSource = `package suite

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

const side = "SIDE"
const broken = BROKEN

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() != "" {
		if os.Getenv("FAIL_MAIN") != "" {
			fmt.Fprintln(os.Stderr, "cannot open the device")
			os.Exit(1)
		}
		fmt.Printf("visible: %s\n", os.Getenv("CUDA_VISIBLE_DEVICES"))
		if log := os.Getenv("ORDER_LOG"); log != "" {
			f, _ := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			fmt.Fprintln(f, side)
			f.Close()
		}
	}
	os.Exit(m.Run())
}

var sink int

func work(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for j := 0; j < 1000; j++ {
			sink += j
		}
	}
}

func BenchmarkA(b *testing.B) { work(b) }

func BenchmarkF(b *testing.B) {
	b.Run("s=1", work)
	b.Run("s=2", func(b *testing.B) {
		if broken {
			b.Fatal("boom")
		}
		work(b)
	})
}

func BenchmarkP(b *testing.B) {
	b.Run("s=1", work)
	b.Run("s=2", func(b *testing.B) {
		if broken {
			panic("kaboom")
		}
		work(b)
	})
	b.Run("s=3", work)
}

func BenchmarkQ(b *testing.B) {
	if broken {
		panic("top-level")
	}
	work(b)
}

func BenchmarkZ(b *testing.B) { work(b) }
`

// buildSuite writes the suite package for one side into a fresh module
// and builds its test binary.
func buildSuite(t *testing.T, side string, broken bool) Binary {
	t.Helper()
	dir := filepath.Join(t.TempDir(), side)
	src := strings.ReplaceAll(suiteSource, "SIDE", side)
	src = strings.ReplaceAll(src, "BROKEN", map[bool]string{true: "true", false: "false"}[broken])
	for name, content := range map[string]string{
		"go.mod":        "module example.com/suite\n\ngo 1.26\n",
		"suite_test.go": src,
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bins, err := Build(context.Background(), dir, []string{"./..."}, nil, filepath.Join(dir, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 1 || bins[0].Pkg != "example.com/suite" || bins[0].Dir != dir {
		t.Fatalf("Build = %+v", bins)
	}
	return bins[0]
}

func TestBuildError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bad\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad_test.go"), []byte("package bad\n\nfunc BenchmarkX(b *testing.B) { undefinedThing() }\n"), 0o644)
	_, err := Build(context.Background(), dir, []string{"./..."}, nil, filepath.Join(dir, "bin"))
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Output, "undefined") {
		t.Fatalf("Build error = %v, want a BuildError with the compiler's message", err)
	}
}

func TestRunInterleavesAndSurvivesFailures(t *testing.T) {
	base := buildSuite(t, "base", false)
	cur := buildSuite(t, "cur", true)
	log := filepath.Join(t.TempDir(), "order")
	t.Setenv("ORDER_LOG", log)
	filter, _ := ParseFilter("")
	var progress bytes.Buffer
	seed := uint64(1)
	for SecondFirst(seed) { // a seed whose first round runs the baseline first
		seed++
	}
	res, err := Run(context.Background(), []Side{{"baseline", []Binary{base}}, {"current", []Binary{cur}}},
		Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 3, Seed: seed, Progress: NewProgress(&progress, false)})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstSide != "baseline" {
		t.Errorf("FirstSide = %s", res.FirstSide)
	}
	b, c := res.Sides[0], res.Sides[1]
	if len(b.Failures) != 0 {
		t.Errorf("baseline failures: %+v", b.Failures)
	}
	got := map[string]Failure{}
	for _, f := range c.Failures {
		got[f.Name] = f
	}
	if f := got["F/s=2"]; f.Times != 3 || !strings.HasPrefix(f.Message, "suite_test.go:") || !strings.HasSuffix(f.Message, ": boom") {
		t.Errorf("F/s=2 failure = %+v, want 3 times with the log line", f)
	}
	// go test prints a benchmark's name only after its first iteration, so
	// the crash names the sub-benchmark (P/s=2) only when it got that far;
	// the stack always names P.
	if f := got["P"]; f.Times != 1 || !strings.HasPrefix(f.Message, "process died in P") || !strings.Contains(f.Message, "panic: kaboom") {
		t.Errorf("P failure = %+v, want one crash in P (later rounds skip it)", f)
	}
	if f := got["Q"]; f.Times != 1 || !strings.Contains(f.Message, "panic: top-level") {
		t.Errorf("Q failure = %+v, want one top-level crash", f)
	}
	if len(c.Failures) != 3 {
		t.Errorf("current failures: %+v", c.Failures)
	}
	count := func(out []byte, prefix string) int {
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	for _, name := range []string{"BenchmarkA-", "BenchmarkZ-", "BenchmarkF/s=1-"} {
		if count(c.Results, name) != 3 || count(b.Results, name) != 3 {
			t.Errorf("%s: %d baseline and %d current results, want 3 each (benchmarks after a crash still run)", name, count(b.Results, name), count(c.Results, name))
		}
	}
	if n := count(c.Results, "BenchmarkQ"); n != 0 {
		t.Errorf("Q has %d results on the crashing side", n)
	}
	for _, out := range [][]byte{b.Results, c.Results} {
		if !strings.HasPrefix(string(out), "round: 0\n") || count(out, "round: ") < 3 || !strings.Contains(string(out), "round: 2\n") {
			t.Errorf("round lines missing:\n%s", out)
		}
	}
	order, _ := os.ReadFile(log)
	// ABBA: base cur | cur(+2 resumes in round 1) base | base cur(+resumes? no: P and Q are skipped now).
	want := "base\ncur\ncur\ncur\ncur\nbase\nbase\ncur\n"
	if string(order) != want {
		t.Errorf("invocation order:\n%swant:\n%s", order, want)
	}
	if res.Invocations != 8 {
		t.Errorf("Invocations = %d, want 8", res.Invocations)
	}
	if !strings.Contains(progress.String(), "(done)") {
		t.Errorf("progress: %s", progress.String())
	}
	last := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if l := last[len(last)-1]; !strings.HasPrefix(l, "regress: 26/26 benchmarks") {
		// 5 benchmarks × 3 rounds × 2 sides = 30, less P and Q's two
		// skipped rounds on the current side.
		t.Errorf("last progress line %q, want 26/26", l)
	}
}

func TestRunLanesShardAndEnv(t *testing.T) {
	base := buildSuite(t, "base", false)
	filter, _ := ParseFilter("")
	lanes := []Lane{
		{Name: "gpu 3", Env: []string{"CUDA_VISIBLE_DEVICES=3"}, Shard: Shard{I: 1, N: 2, Dealt: true}},
		{Name: "gpu 5", Env: []string{"CUDA_VISIBLE_DEVICES=5"}, Shard: Shard{I: 2, N: 2, Dealt: true}},
	}
	res, err := Run(context.Background(), []Side{{"baseline", []Binary{base}}, {"current", []Binary{base}}},
		Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 2, Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range res.Sides {
		if side.Benchmarks != 5 {
			t.Errorf("%s: %d benchmarks, want 5", side.Side, side.Benchmarks)
		}
		// Each lane's results follow its shard and visible lines.
		lane := map[string]string{}
		visible := ""
		for _, l := range strings.Split(string(side.Results), "\n") {
			if v, ok := strings.CutPrefix(l, "visible: "); ok {
				visible = v
			}
			if l == "visible:" {
				visible = ""
			}
			if name, ok := resultName(l); ok {
				top, _, _ := strings.Cut(trimName(name), "/")
				if prev, seen := lane[top]; seen && prev != visible {
					t.Errorf("%s: %s ran on GPUs %s and %s", side.Side, top, prev, visible)
				}
				lane[top] = visible
			}
		}
		// Dealt in listing order: A F P Q Z → lane 1 gets A P Z.
		want := map[string]string{"A": "3", "F": "5", "P": "3", "Q": "5", "Z": "3"}
		for k, v := range want {
			if lane[k] != v {
				t.Errorf("%s: %s ran with CUDA_VISIBLE_DEVICES=%q, want %q (lanes %v)", side.Side, k, lane[k], v, lane)
			}
		}
		if !strings.Contains(string(side.Results), "lane: 1/2\n") || !strings.Contains(string(side.Results), "lane: 2/2\n") {
			t.Errorf("%s: no lane lines", side.Side)
		}
	}
}

func TestRunFailureOutsideBenchmarksIsAnError(t *testing.T) {
	base := buildSuite(t, "base", false)
	t.Setenv("FAIL_MAIN", "1")
	_, err := Run(context.Background(), []Side{{"run", []Binary{base}}}, Plan{Benchtime: "1x"})
	if err == nil || !strings.Contains(err.Error(), "outside any benchmark") || !strings.Contains(err.Error(), "cannot open the device") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	base := buildSuite(t, "base", false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, []Side{{"run", []Binary{base}}}, Plan{Benchtime: "1x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestListAndDeviceFlag(t *testing.T) {
	base := buildSuite(t, "base", false)
	filter, _ := ParseFilter("A|Z/x")
	// The suite has no -kernels.device flag: List notices and drops it.
	names, err := List(context.Background(), base, filter, "cpu", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "BenchmarkA,BenchmarkZ" {
		t.Errorf("List = %v", names)
	}
}

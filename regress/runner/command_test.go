package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// commandScript is a suite command: it prints what it was told as
// configuration lines (rounds differ, so a comparison would split on them;
// these tests read the text), appends "side round" to $ORDER_LOG, prints
// three benchmarks in Go format, and misbehaves as $MODE says.
const commandScript = `#!/bin/sh
echo "kw-side: $KERNELWATCH_SIDE"
echo "kw-round: $KERNELWATCH_ROUND of $KERNELWATCH_ROUNDS"
echo "kw-seed: $KERNELWATCH_SEED"
echo "kw-count: $KERNELWATCH_COUNT"
echo "kw-bench: $KERNELWATCH_BENCH"
echo "kw-benchtime: $KERNELWATCH_BENCHTIME"
echo "kw-shard: $KERNELWATCH_SHARD"
echo "kw-device: $KERNELWATCH_DEVICE"
echo "kw-arg: $1"
echo "kw-secret: $KW_TEST_TOKEN$KW_TEST_SECRET"
echo "kw-lane: $CUDA_VISIBLE_DEVICES"
[ -n "$ORDER_LOG" ] && echo "$KERNELWATCH_SIDE $KERNELWATCH_ROUND" >> "$ORDER_LOG"
case "$MODE" in
fail-baseline-round-1)
  if [ "$KERNELWATCH_SIDE" = baseline ] && [ "$KERNELWATCH_ROUND" = 1 ]; then
    echo "CUDA error: out of memory" >&2; exit 3
  fi ;;
nothing) echo "warming up"; echo "no GPU: skipping" >&2; exit 0 ;;
out) echo "BenchmarkIgnored 1 1 ns/op"
  printf 'BenchmarkFromFile/k=v 1 7 ns/op\n' > "$KERNELWATCH_OUT"; exit 0 ;;
gbench) cat "$GBENCH_FILE" > "$KERNELWATCH_OUT"; exit 0 ;;
esac
echo "BenchmarkA/x=1-4 1 100 ns/op"
echo "BenchmarkA/x=2-4 1 200 ns/op"
echo "BenchmarkB 1 300 ns/op 5 GB/s"
echo "--- FAIL: BenchmarkC/x=1"
echo "    C is broken"
`

func commandSide(t *testing.T, name string) Side {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.sh"), []byte(commandScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return Side{Name: name, Binaries: []Binary{CommandSuite(dir, []string{"sh", "bench.sh", "r${KERNELWATCH_ROUND}"}, "go")}}
}

func configValues(results []byte, key string) []string {
	var out []string
	for _, l := range strings.Split(string(results), "\n") {
		if v, ok := strings.CutPrefix(l, key+": "); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestCommandSuite(t *testing.T) {
	t.Setenv("KW_TEST_TOKEN", "hunter2")
	t.Setenv("KW_TEST_SECRET", "swordfish")
	log := filepath.Join(t.TempDir(), "order")
	t.Setenv("ORDER_LOG", log)
	f, _ := ParseFilter("A$|B$")
	plan := Plan{Filter: f, Count: 1, Rounds: 4, Seed: 7, Benchtime: "1x", Device: "cuda",
		Lanes: []Lane{{Env: []string{"CUDA_VISIBLE_DEVICES=3"}}}}
	res, err := Run(context.Background(), []Side{commandSide(t, "baseline"), commandSide(t, "current")}, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 4 || res.Invocations != 8 {
		t.Errorf("rounds %d, invocations %d; want 4 and 8", res.Rounds, res.Invocations)
	}
	// Interleaved as test binaries are: ABBA from the seed's coin flip.
	order, _ := os.ReadFile(log)
	want := "baseline 0\ncurrent 0\ncurrent 1\nbaseline 1\nbaseline 2\ncurrent 2\ncurrent 3\nbaseline 3\n"
	if SecondFirst(7) {
		want = "current 0\nbaseline 0\nbaseline 1\ncurrent 1\ncurrent 2\nbaseline 2\nbaseline 3\ncurrent 3\n"
	}
	if string(order) != want {
		t.Errorf("order:\n%swant\n%s", order, want)
	}
	for i, out := range res.Sides {
		side := []string{"baseline", "current"}[i]
		r := out.Results
		for key, want := range map[string][]string{
			"kw-side":      {side, side, side, side},
			"kw-round":     {"0 of 4", "1 of 4", "2 of 4", "3 of 4"},
			"kw-seed":      {"7", "7", "7", "7"},
			"kw-count":     {"1", "1", "1", "1"},
			"kw-bench":     {"A$|B$", "A$|B$", "A$|B$", "A$|B$"},
			"kw-benchtime": {"1x", "1x", "1x", "1x"},
			"kw-device":    {"cuda", "cuda", "cuda", "cuda"},
			"kw-arg":       {"r0", "r1", "r2", "r3"},
			"kw-lane":      {"3", "3", "3", "3"},
			"round":        {"0", "1", "2", "3"},
		} {
			if got := configValues(r, key); !slices.Equal(got, want) {
				t.Errorf("%s: %s = %q, want %q", side, key, got, want)
			}
		}
		if strings.Contains(string(r), "hunter2") || strings.Contains(string(r), "swordfish") {
			t.Errorf("%s: the command saw a secret variable:\n%s", side, r)
		}
		if n := strings.Count(string(r), "\nBenchmarkA/x=1-4 1 100 ns/op\n"); n != 4 {
			t.Errorf("%s: %d samples of A/x=1, want 4:\n%s", side, n, r)
		}
		if strings.Contains(string(r), "BenchmarkC") {
			t.Errorf("%s: kept BenchmarkC, which --bench A$|B$ does not select", side)
		}
		if out.Benchmarks != 2 || len(out.Failures) != 0 {
			t.Errorf("%s: %d benchmarks, failures %+v; want 2 (A and B), none", side, out.Benchmarks, out.Failures)
		}
	}
}

func TestCommandSuiteFilterAndShard(t *testing.T) {
	f, _ := ParseFilter("/x=2|C")
	res, err := Run(context.Background(), []Side{commandSide(t, "current")}, Plan{Filter: f, Count: 1, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Sides[0]
	if r := string(out.Results); !strings.Contains(r, "BenchmarkA/x=2-4") || strings.Contains(r, "x=1-4") || strings.Contains(r, "BenchmarkB") {
		t.Errorf("filter /x=2|C kept:\n%s", r)
	}
	if len(out.Failures) != 1 || out.Failures[0].Name != "C/x=1" || out.Failures[0].Message != "C is broken" {
		t.Errorf("failures %+v, want C/x=1: C is broken", out.Failures)
	}
	// Two shards split the top-level benchmarks between them, by name.
	all, _ := ParseFilter("")
	seen := map[string]int{}
	for i := 1; i <= 2; i++ {
		sh := Shard{I: i, N: 2}
		res, err := Run(context.Background(), []Side{commandSide(t, "current")}, Plan{Filter: all, Count: 1, Rounds: 1, Lanes: []Lane{{Shard: sh}}})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Sides[0].Results
		if got := configValues(r, "kw-shard"); !slices.Equal(got, []string{sh.String()}) {
			t.Errorf("shard %s: KERNELWATCH_SHARD %q", sh, got)
		}
		for _, top := range []string{"BenchmarkA", "BenchmarkB"} {
			if strings.Contains(string(r), "\n"+top) {
				seen[top]++
				if !sh.Has(top) {
					t.Errorf("shard %s kept %s", sh, top)
				}
			}
		}
	}
	if seen["BenchmarkA"] != 1 || seen["BenchmarkB"] != 1 {
		t.Errorf("each benchmark in one shard: %v", seen)
	}
}

func TestCommandSuiteOutFileAndFormat(t *testing.T) {
	t.Setenv("MODE", "out")
	res, err := Run(context.Background(), []Side{commandSide(t, "current")}, Plan{Count: 1, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := string(res.Sides[0].Results); !strings.Contains(r, "BenchmarkFromFile/k=v 1 7 ns/op") || strings.Contains(r, "Ignored") {
		t.Errorf("$KERNELWATCH_OUT should win over standard output:\n%s", r)
	}

	gb, err := filepath.Abs(filepath.Join("..", "convert", "testdata", "gbench.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODE", "gbench")
	t.Setenv("GBENCH_FILE", gb)
	side := commandSide(t, "current")
	side.Binaries[0].Format = "gbench"
	res, err = Run(context.Background(), []Side{side}, Plan{Count: 1, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Sides[0]
	if n := strings.Count(string(out.Results), "\nBenchmarkBM_Sum/type=double/1024 "); n != 10 {
		t.Errorf("%d samples of BM_Sum/type=double/1024, want 5 repetitions in each of 2 rounds:\n%s", n, out.Results)
	}
	if len(out.Failures) != 1 || out.Failures[0].Name != "BM_Broken" || out.Failures[0].Times != 10 {
		t.Errorf("failures %+v, want BM_Broken 10 times", out.Failures)
	}
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "suite.command [sh bench.sh r${KERNELWATCH_ROUND}]: the Google Benchmark library was built as debug") {
		t.Errorf("warnings %q", out.Warnings)
	}
	if out.Benchmarks != 3 {
		t.Errorf("%d benchmarks, want 3 (BM_RMSNorm, BM_Sum, BM_Broken)", out.Benchmarks)
	}
}

func TestCommandSuiteErrors(t *testing.T) {
	for _, c := range []struct {
		mode, format, want string
	}{
		{"fail-baseline-round-1", "go", "baseline: round 2 of 3 (KERNELWATCH_ROUND=1): suite.command [sh bench.sh r${KERNELWATCH_ROUND}] exited with exit status 3: CUDA error: out of memory"},
		{"nothing", "go", ": round 1 of 3 (KERNELWATCH_ROUND=0): suite.command [sh bench.sh r${KERNELWATCH_ROUND}] printed no benchmark results on its standard output (its standard error ends: no GPU: skipping)"},
		{"", "pytest-benchmark", ": round 1 of 3 (KERNELWATCH_ROUND=0): suite.command [sh bench.sh r${KERNELWATCH_ROUND}], suite.format pytest-benchmark: its standard output:1: malformed JSON"},
	} {
		t.Run(c.mode+c.format, func(t *testing.T) {
			t.Setenv("MODE", c.mode)
			base, cur := commandSide(t, "baseline"), commandSide(t, "current")
			base.Binaries[0].Format, cur.Binaries[0].Format = c.format, c.format
			res, err := Run(context.Background(), []Side{base, cur}, Plan{Count: 1, Rounds: 3, Seed: 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ...%s", err, c.want)
			}
			if res != nil {
				t.Errorf("a result with the error: %+v", res)
			}
		})
	}
}

func TestFilterMatch(t *testing.T) {
	for _, c := range []struct {
		re   string
		name string
		want bool
	}{
		{"", "BenchmarkA/x=1-8", true},
		{"A", "BenchmarkA/x=1-8", true},
		{"^A", "BenchmarkA/x=1", false}, // level 0 is BenchmarkA
		{"^BenchmarkA$/x=2", "BenchmarkA/x=1-8", false},
		{"^BenchmarkA$/x=2", "BenchmarkA/x=2-8", true},
		{"/x=2", "BenchmarkB/x=2/y=3", true},
		{"A/x=1/y", "BenchmarkA/x=1", false}, // go test runs it only for its sub-benchmarks
		{"B", "BenchmarkC", true},            // level 0 is BenchmarkC
		{"A|B/z", "BenchmarkB/x=1", false},
		{"A|B/z", "BenchmarkA/k=-1-1", true},
		{"/k=-1$", "BenchmarkA/k=-1-1", true},
	} {
		f, err := ParseFilter(c.re)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(c.name); got != c.want {
			t.Errorf("ParseFilter(%q).Match(%q) = %v, want %v", c.re, c.name, got, c.want)
		}
	}
}

// TestCommandLeavesNothingRunning: what a suite command starts in the
// background dies when it exits.
func TestCommandLeavesNothingRunning(t *testing.T) {
	dir := t.TempDir()
	script := "sleep 300 >/dev/null 2>&1 &\necho $! > " + filepath.Join(dir, "pid") + "\necho 'BenchmarkA 1 5 ns/op'\n"
	if err := os.WriteFile(filepath.Join(dir, "bench.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	side := Side{Name: "current", Binaries: []Binary{CommandSuite(dir, []string{"sh", "bench.sh"}, "")}}
	if _, err := Run(context.Background(), []Side{side}, Plan{Count: 1, Rounds: 1}); err != nil {
		t.Fatal(err)
	}
	pid, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	// A killed child of the exited shell is reaped by init; its /proc entry
	// goes once it is.
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background sleep (pid %s) is still running", strings.TrimSpace(string(pid)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCommandContinuesRounds: a suite command in a run that continues an
// earlier one (regress check's further rounds) is told its round as one
// longer run would number it, and the rounds planned up to the last.
func TestCommandContinuesRounds(t *testing.T) {
	f, _ := ParseFilter("B$")
	res, err := Run(context.Background(), []Side{commandSide(t, "baseline"), commandSide(t, "current")},
		Plan{Filter: f, Count: 1, Rounds: 2, FirstRound: 10, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range res.Sides {
		if got := configValues(side.Results, "kw-round"); !slices.Equal(got, []string{"10 of 12", "11 of 12"}) {
			t.Errorf("%s: rounds told %q, want 10 and 11 of 12", side.Side, got)
		}
		if got := configValues(side.Results, "round"); !slices.Equal(got, []string{"10", "11"}) {
			t.Errorf("%s: round lines %q", side.Side, got)
		}
	}
}

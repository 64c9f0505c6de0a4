package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pairedRounds checks that each side's results hold rounds 0 … n-1, each
// with the five benchmarks of the suite.
func pairedRounds(t *testing.T, res *Result, n int) {
	t.Helper()
	for _, side := range res.Sides {
		out := string(side.Results)
		if got := strings.Count(out, "round: "); got != n {
			t.Errorf("%s: %d rounds in the results, want %d:\n%s", side.Side, got, n, out)
		}
		if got := strings.Count(out, "\nBenchmarkA-"); got != n {
			t.Errorf("%s: %d results of A, want %d", side.Side, got, n)
		}
	}
}

func TestRunStopsAtDeadline(t *testing.T) {
	base := buildSuite(t, "base", false)
	sides := []Side{{"baseline", []Binary{base}}, {"current", []Binary{base}}}
	filter, _ := ParseFilter("A")
	plan := Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 1000}

	// A deadline that has passed: no round starts, and that is no error.
	plan.Deadline = time.Now().Add(-time.Second)
	res, err := Run(context.Background(), sides, plan)
	if err != nil || res.Rounds != 0 || res.Stopped != StopDeadline || res.Invocations != 0 {
		t.Fatalf("passed deadline: %v, %+v", err, res)
	}

	// Rounds of a few milliseconds: the run stops short of 1000 rounds,
	// before the deadline.
	start := time.Now()
	plan.Deadline = start.Add(time.Second)
	res, err = Run(context.Background(), sides, plan)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rounds in %v", res.Rounds, took)
	if res.Stopped != StopDeadline || res.Rounds < 1 || res.Rounds >= 1000 {
		t.Fatalf("Stopped %q after %d rounds", res.Stopped, res.Rounds)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("took %v against a deadline of 1s", took)
	}
	pairedRounds(t, res, res.Rounds)
}

func TestRunInterruptedKeepsFinishedRounds(t *testing.T) {
	base := buildSuite(t, "base", false)
	log := filepath.Join(t.TempDir(), "order")
	t.Setenv("ORDER_LOG", log)
	filter, _ := ParseFilter("A")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel while the third round runs (invocations 5 and 6).
		for {
			data, _ := os.ReadFile(log)
			if strings.Count(string(data), "\n") >= 5 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := Run(ctx, []Side{{"baseline", []Binary{base}}, {"current", []Binary{base}}},
		Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 1000})
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("err %v, result %v: want the cancellation and the finished rounds", err, res)
	}
	t.Logf("interrupted after %d rounds", res.Rounds)
	if res.Stopped != StopSignal || res.Rounds < 2 || res.Rounds >= 1000 {
		t.Errorf("Stopped %q after %d rounds", res.Stopped, res.Rounds)
	}
	pairedRounds(t, res, res.Rounds)

	// Interrupted before any round finished: only the error.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if res, err := Run(ctx, []Side{{"run", []Binary{base}}}, Plan{Benchtime: "1x"}); res != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled at once: %v, %v", res, err)
	}
}

func TestReadHeader(t *testing.T) {
	h := Header{Commit: "1f2e3d4", Branch: "main", Class: "cpu-amd64-x", Go: "go1.26.0", Date: time.Now(),
		Run: RunInfo{Count: 10, Seed: 0, Shard: "2/3", ShardBy: "cost 00c0ffee12345678", RoundsDone: 4, Stopped: StopDeadline}}
	data := append(h.Lines(), "shard: 2/3\nround: 0\nBenchmarkA-2 1 1 ns/op\nclass: cpu-amd64-x\n"...)
	got, err := ReadHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	got.Date = h.Date
	if got != h {
		t.Errorf("ReadHeader = %+v, want %+v", got, h)
	}
	if got, err := ReadHeader([]byte("commit: x\nBenchmarkA-2 1 1 ns/op\n")); err != nil || got.Run != (RunInfo{}) {
		t.Errorf("no run info: %+v, %v", got, err)
	}
	for _, tc := range []struct{ data, want string }{
		{"class: a\nBenchmarkA-2 1 1 ns/op\nclass: b\n", "class is both a and b: not the results of one run"},
		{"shard: 1/2\nshard: 2/2\n", "shard is both 1/2 and 2/2: not the results of one run"},
		{"count: ten\n", `count: "ten": invalid syntax`},
		{"count: 0\n", `count: "0": want at least 1`},
		{"shard: 3/2\n", `shard: "3/2": want i/n with 1 ≤ i ≤ n`},
		{"stopped: tired\n", `stopped: "tired": want deadline or signal`},
		{"shard-by: size\n", `shard-by: "size": want name, or cost and 16 hex digits`},
		{"shard-by: cost 12\n", `shard-by: "cost 12": want name, or cost and 16 hex digits`},
		{"shard-by: name\nshard-by: cost 00c0ffee12345678\n", "shard-by is both name and cost 00c0ffee12345678: not the results of one run"},
		{"count: 5\nseed: 1\nstopped: signal\n", "rounds-done and stopped go together"},
	} {
		if _, err := ReadHeader([]byte(tc.data)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.data, err, tc.want)
		}
	}
}

func TestFailureLines(t *testing.T) {
	in := []Failure{
		{Name: "F/s=2", Message: "suite_test.go:12: boom", Times: 3},
		{Name: "P", Message: "process died in P/s=2: panic: kaboom\n[recovered]", Times: 1},
	}
	data := append([]byte("BenchmarkA-2 1 1 ns/op\n"), FailureLines(in)...)
	got := ReadFailures(data)
	want := []Failure{
		{Name: "F/s=2", Message: "suite_test.go:12: boom (in 3 runs)", Times: 1},
		{Name: "P", Message: "process died in P/s=2: panic: kaboom [recovered]", Times: 1},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ReadFailures = %+v, want %+v", got, want)
	}
}

// TestRunContinuesRounds: a run that continues an earlier one (regress
// check's extra rounds) numbers its rounds from FirstRound and keeps the
// ABBA order of one longer run; Longest keeps a first round that would not
// fit from starting.
func TestRunContinuesRounds(t *testing.T) {
	base := buildSuite(t, "base", false)
	cur := buildSuite(t, "cur", false)
	log := filepath.Join(t.TempDir(), "order")
	t.Setenv("ORDER_LOG", log)
	seed := uint64(1)
	for SecondFirst(seed) { // round 0 runs the baseline first
		seed++
	}
	filter, _ := ParseFilter("A")
	sides := []Side{{"baseline", []Binary{base}}, {"current", []Binary{cur}}}
	res, err := Run(context.Background(), sides, Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 3, FirstRound: 5, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 3 || res.Stopped != "" {
		t.Errorf("Rounds %d, Stopped %q", res.Rounds, res.Stopped)
	}
	for _, side := range res.Sides {
		out := string(side.Results)
		if !strings.HasPrefix(out, "round: 5\n") || !strings.Contains(out, "\nround: 6\n") || !strings.Contains(out, "\nround: 7\n") || strings.Count(out, "round: ") != 3 {
			t.Errorf("%s: want rounds 5, 6 and 7:\n%s", side.Side, out)
		}
	}
	// Rounds 5 and 7 are odd: current first; round 6 even: baseline first.
	order, _ := os.ReadFile(log)
	if want := "cur\nbase\nbase\ncur\ncur\nbase\n"; string(order) != want {
		t.Errorf("invocation order:\n%swant:\n%s", order, want)
	}

	// A deadline 10 s away and rounds expected to take a minute: none starts.
	res, err = Run(context.Background(), sides, Plan{Filter: filter, Benchtime: "1x", Count: 1, Rounds: 2, FirstRound: 10,
		Deadline: time.Now().Add(10 * time.Second), Longest: time.Minute})
	if err != nil || res.Rounds != 0 || res.Stopped != StopDeadline || res.Invocations != 0 {
		t.Errorf("round longer than the time left: %v, %+v", err, res)
	}
}

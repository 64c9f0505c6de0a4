package main

import (
	"strings"
	"testing"
)

// TestTimeLineOnceOnStderr runs a check of a plain Go module's prebuilt
// test binaries: where the time went is printed once, on standard error,
// and names no GPU phase (a plain module has no launches, contexts or
// flushes); the report on standard output holds no time line.
func TestTimeLineOnceOnStderr(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	bin := buildShardSuite(t, "0s")
	res := invoke(t, t.TempDir(), "", "check", "--baseline-bin", bin, "--current-bin", bin, "--config", "none",
		"--count", "2", "--min-samples", "2", "--benchtime", "1x")
	if res.code == 2 {
		t.Fatalf("exit 2\n%s", res.stderr)
	}
	if strings.Contains(res.stdout, "time:") {
		t.Errorf("the report on standard output holds a time line:\n%s", res.stdout)
	}
	var lines []string
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.Contains(l, "time:") || strings.Contains(l, "built in") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "regress check: time: ") || !strings.Contains(lines[0], "test binaries ") {
		t.Fatalf("want one time line on standard error, got %q\n%s", lines, res.stderr)
	}
	for _, gpu := range []string{"launch", "L2", "context", "copy reference", "process start"} {
		if strings.Contains(lines[0], gpu) {
			t.Errorf("the time line of a plain Go module names %q: %s", gpu, lines[0])
		}
	}
}

// TestWideFlag compares results whose full table is wider than 120
// columns: by default every table line fits, with a legend; --wide prints
// the full names.
func TestWideFlag(t *testing.T) {
	dir := t.TempDir()
	var base, cur strings.Builder
	base.WriteString(good)
	cur.WriteString(good)
	for _, fam := range []string{"LinearRecurrence", "SelectiveScan", "CrossEntropy"} {
		for _, impl := range []string{"fused", "naive"} {
			name := fam + "/dtype=bf16/batch=8/t=65536/d=1536/diag=complex/impl=" + impl
			base.WriteString(samples(name, 10, 1e6, " 535.6 GB/s"))
			cur.WriteString(samples(name, 10, 1.002e6, " 534.5 GB/s"))
		}
	}
	b := write(t, dir, "base.txt", base.String())
	c := write(t, dir, "cur.txt", cur.String())
	narrow := invoke(t, dir, "", "compare", "--config", "none", b, c)
	wide := invoke(t, dir, "", "compare", "--config", "none", "--wide", b, c)
	if narrow.code != 0 || wide.code != 0 {
		t.Fatalf("exit %d and %d\n%s%s", narrow.code, wide.code, narrow.stderr, wide.stderr)
	}
	for _, l := range strings.Split(narrow.stdout, "\n") {
		if n := len([]rune(l)); n > 120 && !strings.HasPrefix(l, "PASS") {
			t.Errorf("line of %d columns:\n%s", n, l)
		}
	}
	full := "LinearRecurrence/dtype=bf16/batch=8/t=65536/d=1536/diag=complex/impl=fused "
	if strings.Contains(narrow.stdout, "\n"+full) || !strings.Contains(wide.stdout, "\n"+full) {
		t.Errorf("full names: default\n%s\n--wide\n%s", narrow.stdout, wide.stdout)
	}
	if !strings.Contains(narrow.stdout, "--wide shows everything") || !strings.Contains(narrow.stdout, "535.6 GB/s") {
		t.Errorf("default output lacks the legend or a rate with its unit:\n%s", narrow.stdout)
	}
}

// TestCheckWithTooFewRoundsIsInconclusive: a check of 2 rounds can judge
// no gated comparison (min_samples 6): it exits 3 and says how many
// rounds it needs, never PASS.
func TestCheckWithTooFewRoundsIsInconclusive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	bin := buildShardSuite(t, "0s")
	res := invoke(t, t.TempDir(), "", "check", "--baseline-bin", bin, "--current-bin", bin, "--config", "none",
		"--count", "2", "--benchtime", "1x", "--quiet")
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s%s", res.code, res.stdout, res.stderr)
	}
	why := "no gated comparison could be judged: need ≥ 6 samples a side (have 2)"
	if !strings.Contains(res.stdout, "\nINCONCLUSIVE: "+why) || strings.Contains(res.stdout, "PASS") {
		t.Errorf("report:\n%s", res.stdout)
	}
	if want := "regress check: INCONCLUSIVE, exit 3: " + why + "; rerun with --count 6 or more\n"; !strings.HasSuffix(res.stderr, want) {
		t.Errorf("stderr %q lacks %q", res.stderr, want)
	}
}

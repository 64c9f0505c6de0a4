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

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/runner"
)

// TestCalibrateAcrossHistory: three commits of baselines/cpu-x.bench, FNV
// 2% slower in the second (another host), Xor steady. calibrate
// --across-history prints the spread and stores floors that hold FNV's
// shift; it builds and runs nothing.
func TestCalibrateAcrossHistory(t *testing.T) {
	r := newReadmeRepo(t)
	rng := rand.New(rand.NewPCG(21, 21))
	for i, fnv := range []float64{1, 1.02, 1.003} {
		r.write("baselines/cpu-x.bench", benchFile(rng, fmt.Sprintf("c%d", i), fnv))
		r.git("add", "-A")
		r.git("commit", "-qm", fmt.Sprintf("baseline %d", i))
	}
	res := invoke(t, r.dir, "", "calibrate", "--across-history", "--config", "none")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"cross-host spread of cpu-x: 3 snapshots of HEAD:baselines/cpu-x.bench", "sec/op", "largest sec/op shifts:", "stored baselines/cpu-x.floors.json"} {
		if !strings.Contains(res.stdout+res.stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, res.stdout, res.stderr)
		}
	}
	f, err := noise.LoadFloors(filepath.Join(r.dir, "baselines", "cpu-x.floors.json"))
	if err != nil || f == nil {
		t.Fatalf("floors file: %v", err)
	}
	fnv, _ := f.Lookup("FNV", "sec/op")
	xor, _ := f.Lookup("Xor", "sec/op")
	t.Logf("FNV shift %.2f%% floor %.2f%% (%s); Xor shift %.2f%% floor %.2f%% (%s)", 100**fnv.Shift, 100*fnv.Floor, fnv.From, 100**xor.Shift, 100*xor.Floor, xor.From)
	if fnv.Shift == nil || math.Abs(*fnv.Shift-0.02) > 0.01 || fnv.Floor < *fnv.Shift || fnv.Snapshots != 3 || len(f.Snapshots) != 3 {
		t.Errorf("FNV: %+v, want a shift near 2%% and a floor at least that", fnv)
	}
	if xor.Shift == nil || *xor.Shift > 0.01 {
		t.Errorf("Xor: %+v, want a shift under 1%%", xor)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"calibrate", "--across-history", "--since", "HEAD~1"}, 3, "holds 1 snapshot: a spread across hosts needs at least 2"},
		{[]string{"calibrate", "--across-history", "--class", "cpu-y"}, 3, "no commit on HEAD@"},
		{[]string{"calibrate", "--class", "cpu-x"}, 2, "--class goes with --across-history"},
		{[]string{"calibrate", "--across-history", "--dir", "nosuch"}, 2, "--dir nosuch"},
	} {
		res := invoke(t, r.dir, "", append(tc.args, "--config", "none")...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s", tc.args, res.code, tc.code, tc.want, res.stderr)
		}
	}
}

// TestStoredCheckReadsFloors: a stored check reads the floors committed
// beside the stored baseline (or, with --baseline-file, the file beside that
// file), or --floors, judges by them, and names them.
func TestStoredCheckReadsFloors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs benchmarks")
	}
	bin := buildTestPackage(t, "floors", fourBenchmarks)
	r := newReadmeRepo(t)
	class := runner.CPUClass()
	stored := filepath.Join(r.dir, "baselines", class+".bench")
	os.MkdirAll(filepath.Dir(stored), 0o755)
	if res := invoke(t, r.dir, "", "run", "--bin", bin, "--config", "none", "--count", "6", "--benchtime", "5ms", "--out", stored); res.code != 0 {
		t.Fatalf("run --bin: exit %d\n%s", res.code, res.stderr)
	}
	// Floors of 900% for every benchmark's time: any drift is within them.
	var fl strings.Builder
	fmt.Fprintf(&fl, `{"schema": %q, "class": %q, "source": "test", "snapshots": [], "pairs": [], "families": [], "benchmarks": [`, noise.FloorsSchema, class)
	for i, b := range []string{"A", "B", "C", "D"} {
		if i > 0 {
			fl.WriteString(",")
		}
		fmt.Fprintf(&fl, `{"name": %q, "unit": "sec/op", "snapshots": 2, "floor": 9, "from": "benchmark"}`, b)
	}
	fl.WriteString("]}\n")
	r.write(filepath.Join("baselines", class+".floors.json"), fl.String())
	r.git("add", "-A")
	r.git("commit", "-qm", "store a baseline and its floors")
	args := []string{"check", "--mode", "stored", "--current-bin", bin, "--class", class, "--config", "none", "--count", "6", "--benchtime", "5ms", "--format", "json"}

	res := invoke(t, r.dir, "", args...)
	if res.code == 2 {
		t.Fatalf("stored check: exit %d\n%s", res.code, res.stderr)
	}
	rep := decodeReport(t, res.stdout)
	if !strings.HasSuffix(rep.Settings.FloorsFile, ":baselines/"+class+".floors.json") || !strings.Contains(res.stderr, "cross-host floors from") {
		t.Errorf("floors file %q, want the committed one\n%s", rep.Settings.FloorsFile, res.stderr)
	}
	for _, c := range rep.Comparisons {
		if c.Threshold != 9 || c.ThresholdFrom != "hosts" || c.Verdict == "regression" {
			t.Errorf("%s: %s at threshold %v from %q, want judged by the 900%% floor", c.Name, c.Verdict, c.Threshold, c.ThresholdFrom)
		}
	}
	if res := invoke(t, r.dir, "", append(args, "--floors", "none")...); res.code == 2 || decodeReport(t, res.stdout).Settings.FloorsFile != "" {
		t.Errorf("--floors none: exit %d, floors still read\n%s", res.code, res.stderr)
	}
	other := write(t, r.dir, "other.floors.json", strings.Replace(fl.String(), class, "gpu-other", 1))
	if res := invoke(t, r.dir, "", append(args, "--floors", other)...); res.code != 2 || !strings.Contains(res.stderr, "holds the floors of class gpu-other") {
		t.Errorf("--floors of another class: exit %d\n%s", res.code, res.stderr)
	}
	if res := invoke(t, r.dir, "", "check", "--floors", other); res.code != 2 || !strings.Contains(res.stderr, "--floors goes with --mode stored") {
		t.Errorf("--floors in relative mode: exit %d\n%s", res.code, res.stderr)
	}

	// Without git (--baseline-file, as on a GPU host with a copy of baselines/): the floors file beside the
	// stored file, <class>.floors.json, judges as the committed one does.
	bare := t.TempDir()
	copyFile := func(from, to string) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(stored, filepath.Join(bare, class+".bench"))
	fileArgs := []string{"check", "--mode", "stored", "--baseline-file", filepath.Join(bare, class+".bench"), "--current-bin", bin,
		"--config", "none", "--count", "6", "--benchtime", "5ms", "--format", "json"}
	if res := invoke(t, bare, "", fileArgs...); res.code == 2 || decodeReport(t, res.stdout).Settings.FloorsFile != "" {
		t.Errorf("--baseline-file without a floors file beside it: exit %d, floors %q\n%s", res.code,
			decodeReport(t, res.stdout).Settings.FloorsFile, res.stderr)
	}
	copyFile(filepath.Join(r.dir, "baselines", class+".floors.json"), filepath.Join(bare, class+".floors.json"))
	res = invoke(t, bare, "", fileArgs...)
	if res.code == 2 {
		t.Fatalf("--baseline-file with floors beside it: exit %d\n%s", res.code, res.stderr)
	}
	rep = decodeReport(t, res.stdout)
	if rep.Settings.FloorsFile != filepath.Join(bare, class+".floors.json") || !strings.Contains(res.stderr, "cross-host floors from") {
		t.Errorf("--baseline-file: floors file %q, want the one beside it\n%s", rep.Settings.FloorsFile, res.stderr)
	}
	for _, c := range rep.Comparisons {
		if c.Threshold != 9 || c.ThresholdFrom != "hosts" || c.Verdict == "regression" {
			t.Errorf("--baseline-file %s: %s at threshold %v from %q, want judged by the 900%% floor", c.Name, c.Verdict, c.Threshold, c.ThresholdFrom)
		}
	}
	if res := invoke(t, bare, "", append(fileArgs, "--floors", "none")...); res.code == 2 || decodeReport(t, res.stdout).Settings.FloorsFile != "" {
		t.Errorf("--baseline-file --floors none: exit %d, floors still read\n%s", res.code, res.stderr)
	}
	write(t, bare, class+".floors.json", strings.Replace(fl.String(), class, "gpu-other", 1))
	if res := invoke(t, bare, "", fileArgs...); res.code != 2 || !strings.Contains(res.stderr, "holds the floors of class gpu-other") {
		t.Errorf("--baseline-file beside floors of another class: exit %d\n%s", res.code, res.stderr)
	}
}

// TestCompareFloors checks that compare --floors judges two result files as a stored check would: a 20%
// slowdown inside a 30% cross-host floor is no regression, and a missing or corrupt floors file is exit 2.
func TestCompareFloors(t *testing.T) {
	dir := t.TempDir()
	base := write(t, dir, "base.txt", good+samples("A", 10, 1000, "")+samples("B", 10, 2000, ""))
	slow := write(t, dir, "slow.txt", good+samples("A", 10, 1200, "")+samples("B", 10, 2000, ""))
	fl := fmt.Sprintf(`{"schema": %q, "class": "cpu-test", "source": "test", "snapshots": [], "pairs": [], "families": [], "benchmarks": [{"name": "A", "unit": "sec/op", "snapshots": 2, "floor": 0.3, "from": "benchmark"}]}`+"\n", noise.FloorsSchema)
	floors := write(t, dir, "f.floors.json", fl)
	if res := invoke(t, dir, "", "compare", "--config", "none", base, slow); res.code != 1 {
		t.Fatalf("without floors: exit %d, want 1 (the slowdown is a regression)\n%s", res.code, res.stdout)
	}
	res := invoke(t, dir, "", "compare", "--config", "none", "--floors", floors, "--format", "json", base, slow)
	if res.code != 0 {
		t.Fatalf("with a 30%% floor: exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, c := range decodeReport(t, res.stdout).Comparisons {
		if c.Name == "A" && c.Unit == "sec/op" && (c.Threshold != 0.3 || c.ThresholdFrom != "hosts") {
			t.Errorf("A: threshold %v from %q, want 0.3 from hosts", c.Threshold, c.ThresholdFrom)
		}
	}
	write(t, dir, "bad.floors.json", "{")
	for _, f := range []string{"missing.floors.json", "bad.floors.json"} {
		if res := invoke(t, dir, "", "compare", "--config", "none", "--floors", f, base, slow); res.code != 2 || !strings.Contains(res.stderr, f) {
			t.Errorf("--floors %s: exit %d, want 2 naming the file\n%s", f, res.code, res.stderr)
		}
	}
}

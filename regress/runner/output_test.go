package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/parse"
)

func scanAll(out string) *scan {
	s := &scan{}
	lines := strings.Split(out, "\n")
	for _, l := range lines[:len(lines)-1] {
		s.line(l)
	}
	s.end(lines[len(lines)-1])
	return s
}

func TestScanKeepsResultsAndConfig(t *testing.T) {
	s := scanAll(`goos: linux
goarch: amd64
pkg: example.com/x
cpu: AMD EPYC
device: cpu
class: cpu-amd64-amd-epyc
Unit GB/s better=higher
run-health: ok
BenchmarkA-2   	    1000	      1234 ns/op	  5.5 GB/s
a log line: dropped (its key has spaces)
    indented log
--- BENCH: BenchmarkA-2
    x_test.go:9: note
BenchmarkF/s=1-2         	       1	       541.0 ns/op
--- FAIL: BenchmarkF/s=2
    x_test.go:4: boom
    more
--- FAIL: BenchmarkF
BenchmarkZ-2             	       1	       431.0 ns/op
FAIL
exit status 1
`)
	want := `goos: linux
goarch: amd64
pkg: example.com/x
cpu: AMD EPYC
device: cpu
class: cpu-amd64-amd-epyc
Unit GB/s better=higher
run-health: ok
BenchmarkA-2   	    1000	      1234 ns/op	  5.5 GB/s
BenchmarkF/s=1-2         	       1	       541.0 ns/op
BenchmarkZ-2             	       1	       431.0 ns/op
`
	if got := s.out.String(); got != want {
		t.Errorf("kept:\n%s\nwant:\n%s", got, want)
	}
	if s.results != 3 {
		t.Errorf("results = %d, want 3", s.results)
	}
	fails := deepest(s.fails)
	if len(fails) != 1 || fails[0].name != "F/s=2" || fails[0].msg != "x_test.go:4: boom" {
		t.Errorf("failures = %+v, want F/s=2 with its first message line", fails)
	}
	if s.partial != "" {
		t.Errorf("partial = %q", s.partial)
	}
	// What is kept parses as a result file.
	if _, err := parse.NewReader(strings.NewReader(s.out.String())).ReadSide([]string{"-"}); err != nil {
		t.Errorf("kept output does not parse: %v", err)
	}
}

func TestScanCrash(t *testing.T) {
	s := scanAll("goos: linux\nBenchmarkP/s=1-2         \t       1\t       361.0 ns/op\nBenchmarkP/s=2-2         \t")
	if s.partial != "BenchmarkP/s=2-2" {
		t.Errorf("partial = %q, want the unterminated name", s.partial)
	}
	if trimName(s.partial) != "P/s=2" {
		t.Errorf("trimName = %q", trimName(s.partial))
	}
	msg, top := crashInfo(`panic: kaboom

goroutine 9 [running]:
example.com/x.BenchmarkP.func2(0x4f4c56ee908?)
	/tmp/bx/x_test.go:5 +0x3e
testing.(*B).runN(0x4f4c56ee908, 0x1)
	/usr/local/go/src/testing/benchmark.go:219 +0x190

goroutine 1 [chan receive]:
example.com/x.BenchmarkOther(0x1)
`)
	if msg != "panic: kaboom" || top != "BenchmarkP" {
		t.Errorf("crashInfo = %q, %q", msg, top)
	}
	msg, top = crashInfo("panic: q\n\ngoroutine 5 [running]:\nbx.BenchmarkQ(0xee38f5ee308)\n\t/tmp/bx/y_test.go:3 +0x58\n")
	if msg != "panic: q" || top != "BenchmarkQ" {
		t.Errorf("crashInfo = %q, %q", msg, top)
	}
	if _, top := crashInfo("fatal error: out of memory\n\ngoroutine 1 [running]:\nmain.main()\n"); top != "" {
		t.Errorf("a crash outside benchmarks named %q", top)
	}
}

func TestTrimName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkA-8":           "A",
		"BenchmarkA":             "A",
		"BenchmarkA/n=1024-16":   "A/n=1024",
		"BenchmarkA/impl=x-y":    "A/impl=x-y",
		"BenchmarkRoPE/rows=8-2": "RoPE/rows=8",
	} {
		if got := trimName(in); got != want {
			t.Errorf("trimName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsConfigLine(t *testing.T) {
	for l, want := range map[string]bool{
		"goos: linux": true, "copy-gbps: 64.1": true, "round: 3": true, "key:": true,
		"Unit x better=lower": false, "PASS": false, "ok  \tpkg\t1.2s": false, "panic: boom": true,
		"Key: v": false, "two words: v": false, "url:http": false, "    x.go:3: msg": false,
	} {
		if got := isConfigLine(l); got != want {
			t.Errorf("isConfigLine(%q) = %v, want %v", l, got, want)
		}
	}
}

func TestConcatClearsEarlierConfig(t *testing.T) {
	var b bytes.Buffer
	Concat(&b, []byte("round: 0\nnote: a\nBenchmarkA 1 1 ns/op\n"), []byte("pkg: p\nBenchmarkA 1 2 ns/op"), nil)
	want := "round: 0\nnote: a\nBenchmarkA 1 1 ns/op\nround:\nnote:\npkg: p\nBenchmarkA 1 2 ns/op\nround:\nnote:\npkg:\n"
	if b.String() != want {
		t.Errorf("Concat =\n%s\nwant\n%s", b.String(), want)
	}
	side, err := parse.NewReader(strings.NewReader(b.String())).ReadSide([]string{"-"})
	if err != nil {
		t.Fatal(err)
	}
	if got := side.Configs[side.Results[1].Config]; got.Get("round") != "" || got.Get("note") != "" || got.Get("pkg") != "p" {
		t.Errorf("second file's result sees config %v: the first file's keys leaked", got)
	}
}

func TestSlugMatchesKernels(t *testing.T) {
	if got := GPUClass("NVIDIA H200"); got != "gpu-nvidia-h200" {
		t.Errorf("GPUClass = %q", got)
	}
	if got := GPUClass("Tesla T4"); got != "gpu-nvidia-tesla-t4" {
		t.Errorf("GPUClass = %q", got)
	}
	if !strings.HasPrefix(CPUClass(), "cpu-") {
		t.Errorf("CPUClass = %q", CPUClass())
	}
}

func TestResolveDevice(t *testing.T) {
	for _, tc := range []struct {
		device string
		tags   []string
		gpu    string
		want   string
	}{
		{"auto", nil, "NVIDIA H200", "cpu"}, // not built with cuda
		{"auto", []string{"cuda"}, "", "cpu"},
		{"auto", []string{"cuda"}, "NVIDIA H200", "cuda"},
		{"cpu", []string{"cuda"}, "NVIDIA H200", "cpu"},
		{"cuda", nil, "", "cuda"},
	} {
		if got := ResolveDevice(tc.device, tc.tags, tc.gpu); got != tc.want {
			t.Errorf("ResolveDevice(%s, %v, %q) = %s, want %s", tc.device, tc.tags, tc.gpu, got, tc.want)
		}
	}
}

func TestTestFlags(t *testing.T) {
	got := TestFlags([]string{"-benchmem", "-cpu", "1,4", "--timeout=1h", "-kernels.seed=3", "x", "-test.v"})
	want := []string{"-test.benchmem", "-test.cpu", "1,4", "-test.timeout=1h", "-kernels.seed=3", "x", "-test.v"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("TestFlags = %q, want %q", got, want)
	}
}

func TestHeader(t *testing.T) {
	h := Header{Commit: "abc", Class: "cpu-x", Go: "go1.26.8", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))}
	want := "commit: abc\nclass: cpu-x\ngo: go1.26.8\nregress-version: " + Version + "\ndate: 2026-01-02T02:04:05Z\n"
	if got := string(h.Lines()); got != want {
		t.Errorf("Lines =\n%s\nwant\n%s", got, want)
	}
	if got := ResultClass([]byte("class: gpu-a\nBenchmarkA 1 1 ns/op\nclass: gpu-a\n"), "cpu-b"); got != "gpu-a" {
		t.Errorf("ResultClass = %q, want the suite's", got)
	}
	if got := ResultClass([]byte("BenchmarkA 1 1 ns/op\n"), "cpu-b"); got != "cpu-b" {
		t.Errorf("ResultClass = %q, want the predicted", got)
	}
}

func TestProgressPlain(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	p := NewProgress(&b, false)
	p.now = func() time.Time { return now }
	p.Start(10)
	p.Status("round 1/5 baseline")
	now = now.Add(4 * time.Second)
	p.Add(2) // too soon for a line
	now = now.Add(8 * time.Second)
	p.Add(2)
	p.Shrink(2)
	now = now.Add(9 * time.Second)
	p.Add(4)
	p.Finish()
	want := `regress: 0/10 benchmarks, 0:00 elapsed
regress: 4/10 benchmarks, 0:12 elapsed, ETA 0:18 (round 1/5 baseline)
regress: 8/8 benchmarks, 0:21 elapsed (done)
`
	if b.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProgressLive(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, true)
	p.Start(4)
	p.Add(2)
	p.Finish()
	out := b.String()
	if !strings.Contains(out, "\r\x1b[K") || !strings.Contains(out, "2/4 benchmarks") || !strings.HasSuffix(out, "(done)\n") {
		t.Errorf("live output %q", out)
	}
}

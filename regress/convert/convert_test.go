package convert

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/parse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The inputs were written by the tools themselves (testdata/README.md says
// how), except nvbench.json, written to nvbench's JSON schema.
var goldens = []struct {
	format, file string
	opt          Options
	golden       string
	samples      int
	warnings     []string
}{
	{PytestBenchmark, "pytest-benchmark.json", Options{}, "pytest-benchmark.golden", 42, nil},
	{PytestBenchmark, "pytest-benchmark-aggregates.json", Options{AllowAggregates: true}, "pytest-benchmark-aggregates.golden", 6,
		[]string{"only aggregates for 6 benchmark(s)"}},
	{GBench, "gbench.json", Options{}, "gbench.golden", 20,
		[]string{"library was built as debug"}},
	{GBench, "gbench-aggregates.json", Options{AllowAggregates: true}, "gbench-aggregates.golden", 4,
		[]string{"library was built as debug", "only aggregates for 4 benchmark(s)"}},
	{NVBench, "nvbench.json", Options{}, "nvbench.golden", 24, nil},
	{NVBench, "nvbench-aggregates.json", Options{AllowAggregates: true}, "nvbench-aggregates.golden", 6,
		[]string{"only aggregates for 6 benchmark(s)"}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.file, func(t *testing.T) {
			res, err := File(g.format, filepath.Join("testdata", g.file), nil, g.opt)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", g.golden)
			if *update {
				if err := os.WriteFile(golden, res.Text, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Text, want) {
				t.Errorf("output differs from %s (go test -update rewrites it):\n%s", golden, res.Text)
			}
			if res.Samples != g.samples {
				t.Errorf("%d samples, want %d", res.Samples, g.samples)
			}
			if len(res.Warnings) != len(g.warnings) {
				t.Errorf("warnings %q, want %d", res.Warnings, len(g.warnings))
			}
			for i, w := range g.warnings {
				if i < len(res.Warnings) && !strings.Contains(res.Warnings[i], w) {
					t.Errorf("warning %d: %q lacks %q", i, res.Warnings[i], w)
				}
			}
			// What it writes is what regress reads, sample for sample.
			side, err := parse.NewReader(nil).ReadSide([]string{golden})
			if err != nil {
				t.Fatal(err)
			}
			if len(side.Results) != g.samples {
				t.Errorf("regress reads %d results, want %d", len(side.Results), g.samples)
			}
		})
	}
}

func errorOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	return e
}

// TestErrors checks that bad input is an *Error naming the file and the
// line where the problem is.
func TestErrors(t *testing.T) {
	pytest := func(data string) string {
		return `{
  "machine_info": {"cpu": {"brand_raw": "X"}},
  "benchmarks": [
    {
      "name": "test_a",
      "fullname": "b.py::test_a",
      "params": null,
      "stats": {
        "iterations": 1,
        "data": ` + data + `
      }
    }
  ],
  "version": "4.0.0"
}
`
	}
	for _, c := range []struct {
		name, format, data string
		opt                Options
		line               int
		msg                string
	}{
		{"empty", PytestBenchmark, "\n\n", Options{}, 0, "empty file"},
		{"syntax", PytestBenchmark, "{\n  \"benchmarks\": [\n    {\"name\": \"a\",,}\n  ]\n}\n", Options{}, 3, "malformed JSON"},
		{"truncated", GBench, "{\n  \"benchmarks\": [\n", Options{}, 3, "unexpected end of file"},
		{"trailing data", GBench, "{\"benchmarks\": []}\n{}\n", Options{}, 2, "unexpected data after"},
		{"not an object", NVBench, "[1, 2]\n", Options{}, 1, "want an object"},
		{"no benchmarks", PytestBenchmark, "{\n  \"context\": {}\n}\n", Options{}, 1, `no "benchmarks" list`},
		{"no results", GBench, "{\"context\": {}, \"benchmarks\": []}\n", Options{}, 0, "no benchmark results"},
		{"sample of the wrong type", PytestBenchmark, pytest("[1e-6,\n 2e-6,\n \"fast\"]"), Options{}, 12, `stats.data: want a number, got "fast"`},
		{"negative sample", PytestBenchmark, pytest("[1e-6,\n -2e-6]"), Options{}, 11, "not a finite, non-negative number"},
		{"empty data", PytestBenchmark, pytest("[]"), Options{}, 10, "stats.data is empty"},
		{"wrong type inside an object", PytestBenchmark, strings.Replace(pytest("[1e-6]"), `"brand_raw": "X"`, `"brand_raw": 7`, 1), Options{}, 2, "cpu.brand_raw: want a string, got number"},
		{"aggregates refused", PytestBenchmark, strings.Replace(pytest("null"), `"iterations": 1,`, `"iterations": 1, "median": 1e-6,`, 1), Options{}, 0,
			"only aggregates, no samples, for 1 benchmark(s) (test_a): run pytest with --benchmark-json=FILE, or add --benchmark-save-data"},
		{"gbench time unit", GBench, "{\"benchmarks\": [\n {\"name\": \"BM_a\", \"run_type\": \"iteration\", \"iterations\": 5,\n  \"real_time\": 1, \"cpu_time\": 1,\n  \"time_unit\": \"fortnights\"}\n]}\n", Options{}, 4, `time_unit "fortnights"`},
		{"gbench aggregates refused", GBench, "{\"benchmarks\": [\n {\"name\": \"BM_a_median\", \"run_name\": \"BM_a\", \"run_type\": \"aggregate\", \"aggregate_name\": \"median\", \"iterations\": 5, \"real_time\": 1, \"cpu_time\": 1, \"time_unit\": \"ns\"}\n]}\n", Options{}, 0,
			"only aggregates, no samples, for 1 benchmark(s) (BM_a): run without --benchmark_report_aggregates_only"},
		{"nvbench version", NVBench, "{\n \"meta\": {\"version\": {\"json\": {\"major\": 2, \"string\": \"2.0.0\"}}},\n \"benchmarks\": []}\n", Options{}, 2, "file version 2.0.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert(c.format, []byte(c.data), "in.json", c.opt)
			if err == nil {
				t.Fatal("no error")
			}
			e := errorOf(t, err)
			if e.File != "in.json" || e.Line != c.line || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("got %q (line %d), want in.json:%d: ...%s...", err, e.Line, c.line, c.msg)
			}
		})
	}
}

// TestAggregatesRefused: each tool's aggregates-only file, as the tool
// wrote it, is refused without AllowAggregates, saying how to keep samples.
func TestAggregatesRefused(t *testing.T) {
	for _, c := range []struct{ format, file, how string }{
		{PytestBenchmark, "pytest-benchmark-aggregates.json", "--benchmark-save-data"},
		{GBench, "gbench-aggregates.json", "--benchmark_report_aggregates_only"},
		{NVBench, "nvbench-aggregates.json", "--jsonbin"},
	} {
		_, err := File(c.format, filepath.Join("testdata", c.file), nil, Options{})
		if err == nil {
			t.Errorf("%s: converted", c.file)
			continue
		}
		if e := errorOf(t, err); !strings.Contains(e.Msg, "only aggregates") || !strings.Contains(e.Msg, c.how) || !e.AggregatesOnly {
			t.Errorf("%s: %v", c.file, err)
		}
	}
}

// TestNVBenchSampleFiles: a sample file that is missing or of the wrong
// size is an error naming it.
func TestNVBenchSampleFiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "nvbench.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nvbench.json", data)
	path := filepath.Join(dir, "nvbench.json")
	_, err = File(NVBench, path, nil, Options{})
	e := errorOf(t, err)
	if e.File != path || e.Line == 0 || !strings.Contains(e.Msg, "sample file nvbench.json-bin/0.bin") || !strings.Contains(e.Msg, "no such file") {
		t.Errorf("missing sample file: %v", err)
	}
	for i := 0; i < 3; i++ {
		b, err := os.ReadFile(filepath.Join("testdata", "nvbench.json-bin", strconv.Itoa(i)+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			b = b[:len(b)-4]
		}
		write(filepath.Join("nvbench.json-bin", strconv.Itoa(i)+".bin"), b)
	}
	_, err = File(NVBench, path, nil, Options{})
	e = errorOf(t, err)
	if !strings.HasSuffix(e.File, filepath.Join("nvbench.json-bin", "1.bin")) || !strings.Contains(e.Msg, "28 bytes, want 8 float32 samples") {
		t.Errorf("short sample file: %v", err)
	}
	// Older nvbench named the file relative to where it ran.
	write("nvbench.json", bytes.ReplaceAll(data, []byte(`"nvbench.json-bin/`), []byte(`"build/out/nvbench.json-bin/`)))
	write(filepath.Join("nvbench.json-bin", "1.bin"), mustRead(t, filepath.Join("testdata", "nvbench.json-bin", "1.bin")))
	res, err := File(NVBench, path, nil, Options{})
	if err != nil || res.Samples != 24 {
		t.Errorf("legacy paths: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"BM_Sum<float>/1024/real_time", "BenchmarkBM_Sum/type=float/1024"},
		{"BM_Map<int, std::string>/8/repeats:5/threads:4", "BenchmarkBM_Map/type=int,std::string/8/threads=4"},
		{"BM_RMSNorm/Rows:4/cols:256/min_time:0.500/manual_time", "BenchmarkBM_RMSNorm/rows=4/cols=256"},
	} {
		if got := gbenchName(c.in); got != c.want {
			t.Errorf("gbenchName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ name, full, file, test string }{
		{"test_a[bf16-4096]", "bench/test_x.py::test_a[bf16-4096]", "bench/test_x.py", "test_a"},
		{"test_b", "t.py::TestNorm::test_b", "t.py", "TestNorm.test_b"},
		{"test_c[x::y]", "", "", "test_c"},
	} {
		if f, tn := pytestNames(c.name, c.full); f != c.file || tn != c.test {
			t.Errorf("pytestNames(%q, %q) = %q, %q", c.name, c.full, f, tn)
		}
	}
	if got := protectProcs("BenchmarkX/k=-1"); got != "BenchmarkX/k=-1-1" {
		t.Errorf("protectProcs: %q", got)
	}
	if got := Segment("Shape Label", "(4096, 4096)/x"); got != "shape-label=(4096,_4096)_x" {
		t.Errorf("Segment: %q", got)
	}
}

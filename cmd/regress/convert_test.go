package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const convertTestdata = "../../regress/convert/testdata"

func TestConvertVerb(t *testing.T) {
	dir := t.TempDir()
	td, err := filepath.Abs(convertTestdata)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("writes the golden conversion and passes warnings on", func(t *testing.T) {
		res := invoke(t, dir, "", "convert", "--from", "gbench", filepath.Join(td, "gbench.json"), "--out", "g.bench")
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		got, err := os.ReadFile(filepath.Join(dir, "g.bench"))
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := os.ReadFile(filepath.Join(td, "gbench.golden")); string(got) != string(want) {
			t.Errorf("g.bench differs from gbench.golden:\n%s", got)
		}
		if !strings.Contains(res.stderr, "regress convert: warning: "+filepath.Join(td, "gbench.json")+": the Google Benchmark library was built as debug") {
			t.Errorf("stderr lacks the warning:\n%s", res.stderr)
		}
		// What it wrote compares (Google Benchmark's BM_Broken failed); 5
		// repetitions a side are too few to judge, so exit 3, INCONCLUSIVE.
		cmp := invoke(t, dir, "", "compare", "g.bench", "g.bench", "--format", "csv")
		if cmp.code != 3 || !strings.Contains(cmp.stdout, "BM_RMSNorm/rows=16/cols=256") || !strings.Contains(cmp.stderr, "need ≥ 6 samples a side (have 5)") {
			t.Errorf("compare: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
		}
	})

	t.Run("standard input, nvbench samples beside the file", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(td, "pytest-benchmark.json"))
		if err != nil {
			t.Fatal(err)
		}
		res := invoke(t, dir, string(data), "convert", "--from", "pytest-benchmark", "-")
		if want, _ := os.ReadFile(filepath.Join(td, "pytest-benchmark.golden")); res.code != 0 || res.stdout != string(want) {
			t.Errorf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		res = invoke(t, td, "", "convert", "nvbench.json", "--from", "nvbench")
		if want, _ := os.ReadFile(filepath.Join(td, "nvbench.golden")); res.code != 0 || res.stdout != string(want) {
			t.Errorf("nvbench: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("aggregates only: refused, or one sample each with a warning", func(t *testing.T) {
		res := invoke(t, td, "", "convert", "--from", "pytest-benchmark", "pytest-benchmark-aggregates.json")
		if res.code != 2 || res.stdout != "" || !strings.Contains(res.stderr, "regress convert: pytest-benchmark-aggregates.json: only aggregates, no samples, for 6 benchmark(s)") ||
			!strings.Contains(res.stderr, "; or convert each aggregate as one sample with --allow-aggregates\n") {
			t.Errorf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		res = invoke(t, td, "", "convert", "--from", "pytest-benchmark", "--allow-aggregates", "pytest-benchmark-aggregates.json")
		if res.code != 0 || strings.Count(res.stdout, "\nBenchmark") != 6 || !strings.Contains(res.stderr, "warning: pytest-benchmark-aggregates.json: only aggregates for 6 benchmark(s)") {
			t.Errorf("--allow-aggregates: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("bad input exits 2 naming file and line", func(t *testing.T) {
		write(t, dir, "bad.json", "{\n  \"benchmarks\": [\n    {\"name\": \"BM_a\", \"iterations\": 3,\n     \"real_time\": \"slow\"}\n  ]\n}\n")
		res := invoke(t, dir, "", "convert", "--from", "gbench", "bad.json", "--out", "never.bench")
		if res.code != 2 || !strings.Contains(res.stderr, "regress convert: bad.json:4: real_time: want a number, got \"slow\"") {
			t.Errorf("exit %d\n%s", res.code, res.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "never.bench")); err == nil {
			t.Error("--out written for bad input")
		}
		res = invoke(t, dir, "", "convert", "--from", "gbench", "missing.json")
		if res.code != 2 || !strings.Contains(res.stderr, "regress convert: missing.json: no such file or directory") {
			t.Errorf("missing file: exit %d\n%s", res.code, res.stderr)
		}
	})

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"convert", "x.json"},
			{"convert", "--from", "csv", "x.json"},
			{"convert", "--from", "gbench"},
			{"convert", "--from", "gbench", "a.json", "b.json"},
		} {
			res := invoke(t, dir, "", args...)
			if res.code != 2 || !strings.HasSuffix(res.stderr, "; see 'regress help convert'\n") {
				t.Errorf("%v: exit %d\n%s", args, res.code, res.stderr)
			}
		}
	})
}

package regress

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/synth"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// FuzzCompare feeds arbitrary baseline and current results through the
// whole pipeline: parse, group, statistics, verdict and every renderer. It
// must never panic; when the input is accepted, the report must be valid.
func FuzzCompare(f *testing.F) {
	for _, name := range []string{"units.txt", "zero.txt", "smallSample.txt", "crc-old.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "benchstat", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, data)
	}
	s := synth.Default(1)
	s.Benchmarks = 4
	b, c := s.Generate(map[int]synth.Effect{0: {Time: 1.2}})
	f.Add(b, c)
	f.Add([]byte("Unit x better=higher\nBenchmarkA 1 1 x\n"), []byte("Unit x better=lower\nBenchmarkA 1 1 x\n"))
	f.Add([]byte("class: a\nBenchmarkA-8 1 0 ns/op\n"), []byte("class: b\nBenchmarkA-8 1 NaN ns/op\n"))
	f.Add([]byte("pkg: a\nBenchmarkA 1 5 ns/op\npkg: b\nBenchmarkA 1 5 ns/op\n"), []byte("BenchmarkA-4 1 5 ns/op 3 B/op\n"))
	f.Fuzz(func(t *testing.T, base, cur []byte) {
		rd := parse.NewReader(bytes.NewReader(base))
		bs, err := rd.ReadSide([]string{"-"})
		if err != nil {
			return
		}
		rd2 := parse.NewReader(bytes.NewReader(cur))
		cs, err := rd2.ReadSide([]string{"-"})
		if err != nil {
			return
		}
		r := verdict.Judge(group.Pair(bs, cs), verdict.Options{Config: config.Default(), Units: rd.Units()})
		if err := r.Validate(); err != nil {
			t.Fatalf("invalid report: %v", err)
		}
		for _, format := range render.Formats {
			var out bytes.Buffer
			if err := render.Write(&out, r, format); err != nil {
				t.Fatalf("render %s: %v", format, err)
			}
		}
	})
}

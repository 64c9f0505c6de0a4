package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the report decoder, which reads
// artifacts from forks. It must never panic; an error must name the file
// and fit on one line; an accepted report must be valid, and must read
// back unchanged from what Write makes of it.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "publish", "comment", "testdata", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	var buf bytes.Buffer
	sample().Write(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"kernelwatch.regress/v1","comparisons":[{},{}]}`))
	f.Add([]byte(`{"comparisons":null,"warnings":null,"verdict":"pass","schema":"kernelwatch.regress/v1","counts":{}}`))
	f.Add([]byte(`{"schema":"kernelwatch.regress/v1","schema":"x"}`))
	lim := Limits{Bytes: 1 << 20, Element: 64 << 10, Comparisons: 100, Samples: 1000, Warnings: 100}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadLimited(bytes.NewReader(data), "f.json", lim)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "f.json: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid report: %v", err)
		}
		var once, twice bytes.Buffer
		if err := r.Write(&once); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLimited(bytes.NewReader(once.Bytes()), "f.json", DefaultLimits)
		if err != nil {
			t.Fatalf("cannot read what Write made: %v\n%s", err, once.String())
		}
		back.Write(&twice)
		if once.String() != twice.String() {
			t.Fatalf("round trip changed the report:\n%s\n%s", once.String(), twice.String())
		}
	})
}

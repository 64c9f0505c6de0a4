package noise

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {1, 5}, {0.99, 4.96}, {0.25, 2}} {
		if got := Quantile(v, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Errorf("Quantile of nothing is not NaN")
	}
}

func TestReadWrite(t *testing.T) {
	f := &File{Schema: Schema, Class: "cpu-x", Rounds: 20, K: K, Entries: []Entry{{Name: "A", Unit: "sec/op", Rounds: 20, Spread: 0.01, P99: 0.3, Observed: 0.2}}}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	g, err := Read(&b, "x.noise.json")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := g.Lookup("A", "sec/op")
	if !ok || e.Floor() != 0.15 || e.Unstable() {
		t.Errorf("entry %+v floor %v unstable %v", e, e.Floor(), e.Unstable())
	}
	if (Entry{P99: 0.6}).Unstable() != true {
		t.Errorf("a floor of 30%% is not unstable")
	}
	for _, bad := range []string{
		`{"schema":"other"}`,
		`{"schema":"kernelwatch.noise/v1","benchmarks":[{"name":"A","unit":"sec/op","rounds":20,"p99":-1}]}`,
		`{"schema":"kernelwatch.noise/v1","benchmarks":[{"name":"","unit":"sec/op","rounds":20,"p99":0.1}]}`,
		`{"schema":"kernelwatch.noise/v1","extra":1}`,
		`not json`,
	} {
		if _, err := Read(strings.NewReader(bad), "bad.json"); err == nil || !strings.HasPrefix(err.Error(), "bad.json: ") {
			t.Errorf("Read(%s): err %v, want one naming the file", bad, err)
		}
	}
	if f, err := Load("/nonexistent/x.noise.json"); f != nil || err != nil {
		t.Errorf("missing file: %v, %v; want nil, nil", f, err)
	}
}

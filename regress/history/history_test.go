package history

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/parse"
)

const h100Class = "gpu-nvidia-h100-80gb-hbm3"

// suiteModel is the H100 suite as stored: for each benchmark, in file
// order, the median of each unit it reports.
type suiteModel struct {
	names []string
	units map[string][]unitValue
}

type unitValue struct {
	unit  string // as written in the file: ns/op, GB/s, ...
	value float64
}

// loadSuite reads the committed H100 baseline (410 benchmarks, 2,162
// series).
func loadSuite(t testing.TB) *suiteModel {
	t.Helper()
	data, err := os.ReadFile("../../baselines/" + h100Class + ".bench")
	if err != nil {
		t.Fatal(err)
	}
	// The file's own units, before benchunit tidies them, in line order.
	m := &suiteModel{units: map[string][]unitValue{}}
	samples := map[string]map[string][]float64{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0][:strings.LastIndex(f[0], "-")]
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
			m.names = append(m.names, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			var v float64
			fmt.Sscan(f[i], &v)
			if len(samples[name][f[i+1]]) == 0 {
				m.units[name] = append(m.units[name], unitValue{unit: f[i+1]})
			}
			samples[name][f[i+1]] = append(samples[name][f[i+1]], v)
		}
	}
	for _, name := range m.names {
		for i, u := range m.units[name] {
			v := slices.Sorted(slices.Values(samples[name][u.unit]))
			m.units[name][i].value = v[len(v)/2]
		}
	}
	return m
}

// snapshots renders n snapshots of the suite, each with perSnap samples
// per benchmark whose time varies by cv (log-normal; rates vary inversely,
// exact units not at all). From snapshot at on, benchmarks for which step
// returns a factor run that factor slower.
func (m *suiteModel) snapshots(n, perSnap int, cv float64, seed uint64, at int, step func(name string) float64) []Snapshot {
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Snapshot, n)
	var b bytes.Buffer
	for s := range out {
		b.Reset()
		fmt.Fprintf(&b, "class: %s\ncommit: c%03d\nUnit GB/s better=higher\nUnit pct-copy better=higher\nUnit p99-ns better=lower\n"+
			"Unit scratch-B better=lower assume=exact\nUnit hot-ns better=lower\nUnit TFLOP/s better=higher\nUnit pct-mma better=higher\n", h100Class, s)
		for r := 0; r < perSnap; r++ {
			for _, name := range m.names {
				f := math.Exp(cv * rng.NormFloat64())
				if s >= at && step != nil {
					f *= step(name)
				}
				b.WriteString(name + "-16\t1")
				for _, u := range m.units[name] {
					v := u.value
					switch {
					case u.unit == "scratch-B":
					case strings.HasSuffix(u.unit, "/s") || strings.HasPrefix(u.unit, "pct-"):
						v /= f
					default:
						v *= f
					}
					fmt.Fprintf(&b, "\t%.6g %s", v, u.unit)
				}
				b.WriteString("\n")
			}
		}
		label := fmt.Sprintf("c%03d", s)
		out[s] = Snapshot{Name: label + ":baselines/" + h100Class + ".bench", Label: label, Commit: label,
			Time: t0.Add(time.Duration(s) * time.Hour), Data: bytes.Clone(b.Bytes())}
	}
	return out
}

func loadConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Load("../../benchmarks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHistoryDiscipline is the acceptance test of history alerts: 200
// snapshots of a suite modelled on the committed H100 baseline (its 410
// benchmarks and 2,162 series, benchmarks.yaml's thresholds, 0.5% noise
// per sample, 3 samples a snapshot).
//
//   - Noise only: no step is gated, though the search lists a few (about
//     1 series in 200 has a p < 0.01 split by chance).
//   - A step of twice its threshold in every fp32 RMSNorm benchmark at
//     snapshot 120: every series of those benchmarks (all their units but
//     the exact scratch-B) has a step at snapshot 120 ± 1, every one of
//     them that is fail-gated is gated, and nothing else is.
func TestHistoryDiscipline(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,162-series history")
	}
	m := loadSuite(t)
	cfg := loadConfig(t)
	if len(m.names) < 400 {
		t.Fatalf("%d benchmarks in the H100 baseline, want its 410", len(m.names))
	}
	const n, at, cv = 200, 120, 0.005
	opt := Options{Class: h100Class, Source: "synthetic", Config: cfg}

	start := time.Now()
	h, err := Build(m.snapshots(n, 3, cv, 1, n, nil), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("noise only: %d series, %d snapshots, %d steps listed, %d gated (%.1fs)", len(h.Series), len(h.Snapshots), len(h.Steps), len(h.Gated()), time.Since(start).Seconds())
	if len(h.Series) < 2000 {
		t.Fatalf("%d series, want ≥ 2000", len(h.Series))
	}
	for _, st := range h.Gated() {
		t.Errorf("noise only: gated step in %s %s at %s: %+.2f%% (threshold %.2g%%), p %.3g, adjusted %.3g",
			st.Name, st.Unit, st.Label, 100*float64(st.Delta), 100*st.Threshold, st.P, float64(st.PAdjusted))
	}

	stepped := func(name string) bool { return strings.HasPrefix(name, "BenchmarkRMSNorm/dtype=fp32/") }
	factor := func(name string) float64 {
		if !stepped(name) {
			return 1
		}
		return 1 + 2*cfg.Resolve(strings.TrimPrefix(name, "Benchmark"), h100Class, "sec/op").Threshold
	}
	start = time.Now()
	h, err = Build(m.snapshots(n, 3, cv, 2, at, factor), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stepped: %d steps listed, %d gated (%.1fs)", len(h.Steps), len(h.Gated()), time.Since(start).Seconds())
	found := map[int]bool{}
	for _, st := range h.Steps {
		s := h.Series[st.Series]
		in := stepped("Benchmark"+s.Name) && s.Unit != "scratch-B"
		near := st.Point >= at-1 && st.Point <= at+1
		if in && near {
			found[st.Series] = true
		}
		switch {
		case st.Gated && !(in && near):
			t.Errorf("gated step in %s %s at %s (%+.2f%%, p adj %.3g): not a stepped series at its commit", s.Name, s.Unit, st.Label, 100*float64(st.Delta), float64(st.PAdjusted))
		case in && near && s.Gate == "fail" && !st.Gated:
			t.Errorf("%s %s: the %+.2f%% step at %s (threshold %.2g%%, p %.3g, adjusted %.3g) is not gated", s.Name, s.Unit, 100*float64(st.Delta), st.Label, 100*st.Threshold, st.P, float64(st.PAdjusted))
		}
	}
	want := 0
	for i, s := range h.Series {
		if stepped("Benchmark"+s.Name) && s.Unit != "scratch-B" {
			want++
			if !found[i] {
				t.Errorf("%s %s: no step at snapshot %d ± 1", s.Name, s.Unit, at)
			}
		}
	}
	t.Logf("%d of %d stepped series found at snapshot %d ± 1", len(found), want, at)
}

// TestHistoryCorrection: 2,000 independent series of pure noise, each
// with a threshold far below its noise, so that every step the search
// lists is past its threshold and only the correction across series stands
// between it and the gate. Uncorrected, the search's p < 0.01 lists about
// 1 series in 200 (half of them worse); corrected, none is gated.
func TestHistoryCorrection(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2,000-series history")
	}
	cfg, err := config.Parse([]byte("version: 1\ndefaults: {threshold: 0.2%}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &suiteModel{units: map[string][]unitValue{}}
	for i := 0; i < 2000; i++ {
		name := fmt.Sprintf("BenchmarkNoise/i=%d", i)
		m.names = append(m.names, name)
		m.units[name] = []unitValue{{"ns/op", 1e5}}
	}
	h, err := Build(m.snapshots(200, 1, 0.01, 4, 200, nil), Options{Class: h100Class, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	worse := 0
	for _, st := range h.Steps {
		if st.Worse && st.PastThreshold {
			worse++
		}
		if st.Gated {
			t.Errorf("gated step in pure noise: %s at %s, %+.2f%%, p %.3g, adjusted %.3g", st.Name, st.Label, 100*float64(st.Delta), st.P, float64(st.PAdjusted))
		}
	}
	t.Logf("%d steps listed in %d series of noise, %d of them worse and past the threshold; none gated", len(h.Steps), len(h.Series), worse)
	if worse == 0 {
		t.Fatal("no worse step past its threshold was listed: the test would pass without the correction")
	}
}

// TestStepWithinThresholdIsNotGated: a clear step smaller than the
// benchmark's threshold is listed as worse, never gated — the Copy bf16
// +0.23% step against its 0.5% threshold.
func TestStepWithinThresholdIsNotGated(t *testing.T) {
	cfg := loadConfig(t)
	const name = "BenchmarkCopy/dtype=bf16/rows=4096/cols=65536/impl=fused"
	m := &suiteModel{names: []string{name}, units: map[string][]unitValue{name: {{"ns/op", 364000}}}}
	snaps := m.snapshots(60, 5, 0.0005, 3, 30, func(string) float64 { return 1.0023 })
	h, err := Build(snaps, Options{Class: h100Class, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != 1 {
		t.Fatalf("%d steps, want the +0.23%% one: %+v", len(h.Steps), h.Steps)
	}
	st := h.Steps[0]
	if !st.Worse || st.PastThreshold || st.Gated || st.Threshold != 0.005 || st.Point < 29 || st.Point > 31 {
		t.Errorf("step %+v: want worse, within its 0.5%% threshold, not gated, at 30", st)
	}
	// Twice the threshold, the same step is gated.
	h, err = Build(m.snapshots(60, 5, 0.0005, 3, 30, func(string) float64 { return 1.01 }), Options{Class: h100Class, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if g := h.Gated(); len(g) != 1 || g[0].P > 0.05 {
		t.Errorf("+1%% step: gated %+v, want it", g)
	}
}

// The parse package reads result files for Collect; this checks the
// generated snapshots parse as one side with the suite's series.
func TestModelParses(t *testing.T) {
	m := loadSuite(t)
	snaps := m.snapshots(1, 1, 0.005, 1, 1, nil)
	side, err := parse.NewReader(bytes.NewReader(snaps[0].Data)).ReadSide([]string{"-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Results) != len(m.names) {
		t.Errorf("%d results, want %d", len(side.Results), len(m.names))
	}
}

// TestCollectRecordsCode checks that each point carries the code fingerprint its samples share: none when the
// file has no code lines, none when they disagree or say "none".
func TestCollectRecordsCode(t *testing.T) {
	data := []string{
		"class: gpu-x\nBenchmarkK/a 1 10 ns/op\nBenchmarkK/a 1 11 ns/op\n",
		"class: gpu-x\ncode: 111111111111\nBenchmarkK/a 1 10 ns/op\ncode: 222222222222\nBenchmarkK/b 1 5 ns/op\n" +
			"code: 111111111111\nBenchmarkK/a 1 11 ns/op\ncode: none\nBenchmarkK/b 1 5 ns/op\n",
		"class: gpu-x\ncode: 333333333333\nBenchmarkK/a 1 10 ns/op\ncode: 444444444444\nBenchmarkK/a 1 10 ns/op\n",
	}
	var snaps []Snapshot
	for i, d := range data {
		snaps = append(snaps, Snapshot{Name: fmt.Sprintf("s%d", i), Label: fmt.Sprintf("s%d", i), Data: []byte(d)})
	}
	h, err := Collect(snaps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string][]string{}
	for _, s := range h.Series {
		if s.Unit != "sec/op" {
			continue
		}
		for _, p := range s.Points {
			codes[s.Name] = append(codes[s.Name], fmt.Sprintf("s%d=%s", p.Snapshot, p.Code))
		}
	}
	if got, want := strings.Join(codes["K/a"], " "), "s0= s1=111111111111 s2="; got != want {
		t.Errorf("K/a codes %q, want %q (none in s0; s2's samples disagree)", got, want)
	}
	if got, want := strings.Join(codes["K/b"], " "), "s1="; got != want {
		t.Errorf("K/b codes %q, want %q (one sample says none)", got, want)
	}
}

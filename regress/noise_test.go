package regress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// noisySuite writes the two sides of a suite of quiet benchmarks (CV 1%)
// and one noisy one, Noisy (CV cv), rounds interleaved rounds of one
// sample per side each, with round: lines as regress check writes them.
// Every sample is its own process: independent log-normal noise, 5% of
// samples slowed by up to 30%. slow multiplies Noisy's current side.
func noisySuite(t testing.TB, seed uint64, rounds int, cv, slow float64) (base, cur string) {
	rng := rand.New(rand.NewPCG(seed, 8))
	var b, c strings.Builder
	for _, w := range []*strings.Builder{&b, &c} {
		w.WriteString("class: cpu-test\nUnit ns/op better=lower\n")
	}
	sample := func(cv float64) float64 {
		v := math.Exp(rng.NormFloat64() * math.Sqrt(math.Log1p(cv*cv)))
		if rng.Float64() < 0.05 {
			v *= 1 + 0.3*rng.Float64()
		}
		return v
	}
	for r := 1; r <= rounds; r++ {
		for side, w := range []*strings.Builder{&b, &c} {
			fmt.Fprintf(w, "round: %d\n", r)
			for i := 0; i < 20; i++ {
				fmt.Fprintf(w, "BenchmarkQuiet%d-2\t100\t%.1f ns/op\n", i, 1000*(1+float64(i))*sample(0.01))
			}
			v := 50000 * sample(cv)
			if side == 1 {
				v *= slow
			}
			fmt.Fprintf(w, "BenchmarkNoisy-2\t100\t%.1f ns/op\n", v)
		}
	}
	dir := t.TempDir()
	base, cur = filepath.Join(dir, "base.bench"), filepath.Join(dir, "cur.bench")
	os.WriteFile(base, []byte(b.String()), 0o644)
	os.WriteFile(cur, []byte(c.String()), 0o644)
	return base, cur
}

// TestNoiseFloor is the acceptance test of issue #12 for calibration: a
// benchmark with 8% noise gets an effective threshold above the configured
// 5% from an A/A calibration of 20 rounds (the default), stops failing A/A
// comparisons (at most 1% of them, from several times that), and a 25%
// slowdown of it is still caught in ≥ 95% of comparisons.
func TestNoiseFloor(t *testing.T) {
	// Calibrate: 20 interleaved A/A rounds.
	bf, cf := noisySuite(t, 1, 20, 0.08, 1)
	rd := parse.NewReader(nil)
	a, err := rd.ReadSide([]string{bf})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rd.ReadSide([]string{cf})
	if err != nil {
		t.Fatal(err)
	}
	nf := noise.Measure(group.Pair(a, b), "cpu-test")
	noisy, ok := nf.Lookup("Noisy", "sec/op")
	quiet, _ := nf.Lookup("Quiet3", "sec/op")
	if !ok || len(nf.Entries) != 21 || noisy.Rounds != 20 {
		t.Fatalf("noise file: %d entries, Noisy %+v", len(nf.Entries), noisy)
	}
	t.Logf("calibrated: Noisy p99 |Δ| %.1f%% → floor %.1f%% (k %g); Quiet3 p99 %.1f%% → floor %.1f%%",
		100*noisy.P99, 100*noisy.Floor(), noise.K, 100*quiet.P99, 100*quiet.Floor())
	if !(noisy.Floor() > 0.05) || noisy.Unstable() || !(quiet.Floor() < 0.05) {
		t.Fatalf("want Noisy's floor above 5%% and stable, Quiet3's below 5%%")
	}
	withNoise := func(string) (*noise.File, string, error) { return nf, "cpu-test.noise.json", nil }
	compare := func(seed uint64, slow float64, nfor func(string) (*noise.File, string, error)) *report.Comparison {
		bf, cf := noisySuite(t, seed, 10, 0.08, slow)
		r, err := Compare(Input{Baseline: []string{bf}, Current: []string{cf}, NoiseFor: nfor}, verdict.Options{Config: config.Default()})
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Comparisons {
			if c := &r.Comparisons[i]; c.Name == "Noisy" {
				return c
			}
		}
		t.Fatal("no Noisy comparison")
		return nil
	}

	const trials = 300
	failPlain, failFloor := 0, 0
	for seed := uint64(100); seed < 100+trials; seed++ {
		if compare(seed, 1, nil).Fails() {
			failPlain++
		}
		c := compare(seed, 1, withNoise)
		if c.Fails() {
			failFloor++
		}
		if seed == 100 && (c.ThresholdFrom != "noise" || *c.ConfiguredThreshold != 0.05 || c.Threshold != noisy.Floor()) {
			t.Errorf("Noisy judged by threshold %v from %q (configured %v), want the floor %v from noise", c.Threshold, c.ThresholdFrom, *c.ConfiguredThreshold, noisy.Floor())
		}
	}
	caught := 0
	const slowTrials = 100
	for seed := uint64(1000); seed < 1000+slowTrials; seed++ {
		if c := compare(seed, 1.25, withNoise); c.Fails() && c.Verdict == report.Regression {
			caught++
		}
	}
	t.Logf("A/A: Noisy failed the gate in %d of %d comparisons at the configured 5%%, in %d of %d with the noise floor; a 25%% slowdown was caught in %d of %d",
		failPlain, trials, failFloor, trials, caught, slowTrials)
	if failPlain == 0 {
		t.Errorf("Noisy never failed A/A without the floor: the test shows nothing")
	}
	// The floor is built so that identical code exceeds it about once in
	// a hundred comparisons or less (package noise); a calibration of 20
	// rounds estimates it within about ±25%.
	if failFloor*100 > trials || failFloor*4 > failPlain {
		t.Errorf("Noisy failed A/A %d times in %d with the noise floor (%d without), want ≤ 1%% and a quarter of the failures without", failFloor, trials, failPlain)
	}
	if caught < 95 {
		t.Errorf("25%% slowdown caught %d of %d times, want ≥ 95", caught, slowTrials)
	}
}

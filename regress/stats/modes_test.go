package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// logNormal returns n samples of center·e^(cv·N(0,1)).
func logNormal(rng *rand.Rand, n int, center, cv float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = center * math.Exp(cv*rng.NormFloat64())
	}
	return v
}

// TestModesFalsePositives measures how often one unimodal log-normal side
// is called two-modal, at the sample sizes and noise-to-threshold ratios
// kernelwatch sees (GPU: CV 0.1–1% against thresholds of 0.5–1.5%; CPU: CV
// up to 3% against 5%), and holds the rates the rule's comment states.
func TestModesFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const trials = 20000
	for _, n := range []int{6, 10, 20} {
		worst := 0.0
		for _, cv := range []float64{0.001, 0.003, 0.01, 0.03} {
			for _, th := range []float64{0.005, 0.015, 0.05} {
				flagged := 0
				for i := 0; i < trials; i++ {
					if Modes(logNormal(rng, n, 500e-6, cv), th) != nil {
						flagged++
					}
				}
				worst = math.Max(worst, float64(flagged)/trials)
			}
		}
		limit := 0.01
		if n >= 10 {
			limit = 0.001
		}
		t.Logf("n=%d: at most %.3f%% of unimodal sides flagged (CV 0.1–3%%, threshold 0.5–5%%)", n, 100*worst)
		if worst > limit {
			t.Errorf("n=%d: %.3f%% of unimodal log-normal sides called two-modal, want ≤ %.1f%%", n, 100*worst, 100*limit)
		}
	}
}

// bimodal returns nLow samples around low and the rest of n around high,
// each with a within-mode CV, shuffled.
func bimodal(rng *rand.Rand, n, nLow int, low, high, cv float64) []float64 {
	v := append(logNormal(rng, nLow, low, cv), logNormal(rng, n-nLow, high, cv)...)
	rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
	return v
}

// TestModesDetectsTwoModes checks detection on data shaped like the H100
// suite's two-mode benchmarks: RoPE bf16 1024×262144 fused (processes at
// 720 or 837 µs, 0.2–0.5% apart within a mode) in every mix with at least
// 2 processes per mode, and its naive twin (19.03 or 19.15 ms, modes 0.6%
// apart with 0.03% within) against its 0.5% threshold.
func TestModesDetectsTwoModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name            string
		low, high, cv   float64
		threshold, rate float64
	}{
		{"RoPE fused", 720e-6, 837e-6, 0.003, 0.005, 0.999},
		{"RoPE fused, 0.5% within", 720e-6, 837e-6, 0.005, 0.005, 0.99},
		{"RoPE naive", 19.033e-3, 19.146e-3, 0.0003, 0.005, 0.99},
	} {
		for nLow := 2; nLow <= 8; nLow++ {
			const trials = 2000
			found := 0
			for i := 0; i < trials; i++ {
				m := Modes(bimodal(rng, 10, nLow, tc.low, tc.high, tc.cv), tc.threshold)
				if m != nil && m[0].N == nLow && near(m[0].Center, tc.low, 4*tc.cv) && near(m[1].Center, tc.high, 4*tc.cv) {
					found++
				}
			}
			if rate := float64(found) / trials; rate < tc.rate {
				t.Errorf("%s, %d+%d: found the modes in %.1f%% of samples, want ≥ %.1f%%", tc.name, nLow, 10-nLow, 100*rate, 100*tc.rate)
			}
		}
	}
	// The recorded processes of RoPE/dtype=bf16/rows=1024/cols=262144 in
	// baselines/gpu-nvidia-h100-80gb-hbm3.bench (ns).
	rope := []float64{720112, 722640, 835072, 835552, 835712, 836544, 836624, 836688, 837280, 837504}
	m := Modes(rope, 0.005)
	if len(m) != 2 || m[0].N != 2 || m[1].N != 8 || math.Abs(m[0].Center-721376) > 1 || math.Abs(m[1].Center-836584) > 1 {
		t.Errorf("recorded RoPE processes: modes %+v, want 721376 ×2 and 836584 ×8", m)
	}
	// Modes closer than the threshold cannot move a verdict: not reported.
	if m := Modes(rope, 0.20); m != nil {
		t.Errorf("modes 16%% apart reported against a 20%% threshold: %+v", m)
	}
	// One slow process is an outlier, not a mode.
	fp8 := []float64{273664, 273680, 272992, 273792, 316992, 273376, 273360, 272912, 273072, 273344}
	if m := Modes(fp8, 0.005); m != nil {
		t.Errorf("one process of 10 at +16%%: modes %+v, want none", m)
	}
}

func TestModesLikeAndSameModes(t *testing.T) {
	base := []float64{720, 721, 722, 836, 837, 838, 836, 837, 835, 836}
	mb := Modes(base, 0.005)
	if mb == nil {
		t.Fatal("baseline: no modes")
	}
	// One current process in the fast mode: alone it is an outlier, with
	// the baseline's modes it is a visit.
	cur := []float64{721, 836, 837, 838, 836, 837, 835, 836, 837, 836}
	if Modes(cur, 0.005) != nil {
		t.Fatal("current: a lone fast process made two modes on its own")
	}
	mc := ModesLike(cur, mb, 0.005)
	if len(mc) != 2 || mc[0].N != 1 || mc[1].N != 9 {
		t.Fatalf("current with the baseline's modes: %+v, want 1 + 9", mc)
	}
	if !SameModes(mb, mc, 0.005) {
		t.Errorf("same centers not recognized: %+v %+v", mb, mc)
	}
	// All current processes in one mode: no second mode to find.
	if m := ModesLike([]float64{836, 837, 838, 836, 837, 835}, mb, 0.005); m != nil {
		t.Errorf("one-mode current side: %+v", m)
	}
	// A fast process that is not at the fast mode's speed is not a visit.
	if m := ModesLike([]float64{780, 836, 837, 838, 836, 837}, mb, 0.005); m != nil {
		t.Errorf("780 taken for a visit to the 721 mode: %+v", m)
	}
	// A mode that moved beyond the threshold is not the same mode.
	moved := []float64{720, 721, 722, 850, 851, 852, 850, 851, 849, 850}
	if mm := Modes(moved, 0.005); SameModes(mb, mm, 0.005) {
		t.Errorf("slow mode moved +1.7%% but SameModes says same: %+v %+v", mb, mm)
	}
}

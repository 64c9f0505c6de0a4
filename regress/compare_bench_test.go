package regress

import (
	"runtime"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/synth"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// BenchmarkCompare compares two files of 500,000 result lines each
// (1,000,000 lines: 5,000 benchmarks × 3 units × 100 samples per side),
// parse to report. It reports the peak heap in use as peak-heap-B (sampled
// after each phase; the process's peak RSS is measured separately, see the
// README).
func BenchmarkCompare(b *testing.B) {
	s := synth.Default(7)
	s.Benchmarks, s.Samples = 5000, 100
	eff := map[int]synth.Effect{}
	for i := 0; i < 50; i++ {
		eff[i*97] = synth.Effect{Time: 1.1}
	}
	bf, cf := writeSides(b, s, eff)
	runtime.GC()
	var peak uint64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := Compare(Input{Baseline: []string{bf}, Current: []string{cf}}, verdict.Options{Config: config.Default()})
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if len(r.Comparisons) != 15000 {
			b.Fatalf("%d comparisons, want 15000", len(r.Comparisons))
		}
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
	b.ReportMetric(1e6, "lines/op")
}

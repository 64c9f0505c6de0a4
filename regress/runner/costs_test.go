package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/harness"
)

func TestCostsKeyMatchesHarness(t *testing.T) {
	if CostsKey != harness.CostsKey {
		t.Fatalf("runner.CostsKey %q, harness.CostsKey %q", CostsKey, harness.CostsKey)
	}
}

// TestScanTakesCostsOut checks that the costs line is read and not kept: kept, it would become configuration
// of the next round's results, different in every process.
func TestScanTakesCostsOut(t *testing.T) {
	s := scanAll("device: cuda\nBenchmarkX/a-8 \t 10 \t 5 ns/op\nPASS\nrun-health: ok\n" +
		CostsKey + ": total=10.0000 open=0.5 modules=1.5 copy=0.25 inputs=0.75 warmup=1 sampling=5 timed=3.5 flush=0.5\n")
	if strings.Contains(s.out.String(), CostsKey) {
		t.Errorf("costs line kept in the results:\n%s", s.out.String())
	}
	if !s.costsOK || s.total != 10*time.Second || s.costs.Timed != 3500*time.Millisecond || s.costs.Other != time.Second {
		t.Fatalf("costs = %+v total %v ok %v", s.costs, s.total, s.costsOK)
	}
	var c Costs
	c.add(12*time.Second, s.total, s.costs, true)
	c.add(3*time.Second, 0, Costs{}, false) // a process without a costs line: all of it is process time
	want := map[string]time.Duration{
		"process start and exit": 5 * time.Second, "context and modules": 2 * time.Second, "copy reference": 250 * time.Millisecond,
		"inputs": 750 * time.Millisecond, "warm-up": time.Second, "L2 flushes": 500 * time.Millisecond,
		"timed launches": 3500 * time.Millisecond, "launch gaps": time.Second, "other": time.Second,
	}
	var sum time.Duration
	for _, p := range c.Phases() {
		if p.Time != want[p.Name] {
			t.Errorf("%s = %v, want %v", p.Name, p.Time, want[p.Name])
		}
		sum += p.Time
	}
	if sum != 15*time.Second || c.Processes != 2 || c.Reported != 1 {
		t.Errorf("phases add up to %v over %d processes (%d reported), want 15s over 2 (1)", sum, c.Processes, c.Reported)
	}
	if _, _, err := parseCosts(CostsKey + ": total=x"); err == nil {
		t.Error("a malformed costs line parsed")
	}
}

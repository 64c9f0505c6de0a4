package verdict

import (
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/group"
)

// sideValues is a side's configuration values: the copy bandwidths of its
// processes (start and end) and its run-health lines.
func sideValues(start, end []string, health ...string) map[string][]string {
	return map[string][]string{"copy-gbps": start, "copy-gbps-end": end, "run-health": health}
}

func TestHealthWarning(t *testing.T) {
	degraded := []string{"ok", "degraded"}
	tests := []struct {
		name      string
		base, cur map[string][]string
		threshold float64
		want      string // "" for no warning
	}{
		{"busy on both sides", sideValues([]string{"58.9", "59.2"}, []string{"55.0"}, degraded...),
			sideValues([]string{"59.0", "58.1"}, []string{"55.4"}, degraded...), 0.05,
			"the copy reference drifted 7.1% during the run on both sides (baseline 7.1%, current 6.1%): the machine was busy; rerun on an idle runner or widen thresholds"},
		{"degraded but small against the threshold", sideValues([]string{"59.0", "58.1"}, []string{"57.3"}, degraded...),
			sideValues([]string{"58.8", "59.1"}, []string{"57.5"}, degraded...), 0.05, ""},
		{"the sides differ", sideValues([]string{"100.0", "100.4"}, nil, "ok"),
			sideValues([]string{"94.0", "94.3"}, nil, "ok"), 0.05,
			"the copy reference ran 6% slower on the current side than on the baseline (median 94.2 against 100.2 GB/s)"},
		{"one side busy", sideValues([]string{"100.0", "99.5"}, nil, "ok"),
			sideValues([]string{"100.1", "92.0", "99.9"}, nil, degraded...), 0.05,
			"the copy reference drifted 8.1% during the run on the current side only (baseline 0.5%)"},
		{"a GPU's small drift", sideValues([]string{"2979.0", "2972.1"}, nil, "ok"),
			sideValues([]string{"2978.2", "2970.0"}, nil, "ok"), 0.005, ""},
		{"a GPU's drift beyond its 0.5% threshold", sideValues([]string{"2979.0", "2955.0"}, nil, degraded...),
			sideValues([]string{"2978.2", "2950.0"}, nil, degraded...), 0.005,
			"drifted 0.9% during the run on both sides"},
		{"a plain Go module", map[string][]string{}, map[string][]string{}, 0.05, ""},
		{"degraded without readings", sideValues(nil, nil, "ok"), sideValues(nil, nil, degraded...), 0.05,
			"run-health is degraded on the current side, and no copy bandwidth says by how much"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := healthWarning(&group.Grouping{BaseValues: tc.base, CurValues: tc.cur}, tc.threshold)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestOneHealthWarningPerReport: a report whose both sides are degraded
// says so once, and a report whose drift is small says nothing.
func TestOneHealthWarningPerReport(t *testing.T) {
	judgeWith := func(base, cur map[string][]string) []string {
		g := &group.Grouping{Series: []*group.Series{{Name: "A", Unit: "sec/op", Base: noisy(1, 10), Cur: noisy(1, 10)}},
			BaseConfig: map[string]string{}, CurConfig: map[string]string{}, BaseValues: base, CurValues: cur}
		var out []string
		for _, w := range Judge(g, Options{Config: config.Default()}).Warnings {
			if strings.Contains(w, "run-health") || strings.Contains(w, "copy reference") {
				out = append(out, w)
			}
		}
		return out
	}
	busy := judgeWith(sideValues([]string{"59.2", "34.3"}, nil, "ok", "degraded"), sideValues([]string{"58.4", "52.4"}, nil, "ok", "degraded"))
	if len(busy) != 1 {
		t.Errorf("busy machine: %d warnings %q, want 1", len(busy), busy)
	}
	if quiet := judgeWith(sideValues([]string{"59.2", "58.4"}, nil, "degraded"), sideValues([]string{"58.9", "58.1"}, nil, "degraded")); len(quiet) != 0 {
		t.Errorf("1.4%% drift against a 5%% threshold: %q", quiet)
	}
}

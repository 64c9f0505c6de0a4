package comment

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
)

// chart is a small mermaid bar chart of the largest changes, as magnitudes
// (mermaid draws bars from the axis minimum, so negative bars would mislead)
// with ▲ marking worse and ▼ better; only regressions, improvements and
// missed budgets, the changes the statistics stand behind. Labels keep only
// letters, digits, spaces and "/=._-", so no benchmark name can break out of
// the chart syntax.
func chart(r *report.Report) string {
	type bar struct {
		label string
		w     float64
	}
	var bars []bar
	for _, c := range render.Ordered(r) {
		switch c.Verdict {
		case report.Regression, report.Improvement, report.OverBudget:
		default:
			continue // only changes the statistics stand behind
		}
		w := worse(c)
		if math.IsNaN(w) || math.IsInf(w, 0) || w == 0 {
			continue
		}
		bars = append(bars, bar{chartLabel(render.Name(c) + " " + c.Unit), w})
	}
	if len(bars) == 0 {
		return ""
	}
	sort.SliceStable(bars, func(i, j int) bool { return math.Abs(bars[i].w) > math.Abs(bars[j].w) })
	if len(bars) > 8 {
		bars = bars[:8]
	}
	labels := make([]string, len(bars))
	values := make([]string, len(bars))
	top := 0.0
	for i, b := range bars {
		arrow := "▲ "
		if b.w < 0 {
			arrow = "▼ "
		}
		labels[i] = `"` + arrow + b.label + `"`
		v := math.Abs(b.w) * 100
		values[i] = strconv.FormatFloat(v, 'f', 1, 64)
		top = math.Max(top, v)
	}
	return "```mermaid\nxychart-beta horizontal\n" +
		"  title \"Largest changes, % of baseline (▲ worse, ▼ better)\"\n" +
		"  x-axis [" + strings.Join(labels, ", ") + "]\n" +
		"  y-axis \"change %\" 0 --> " + strconv.FormatFloat(math.Ceil(top), 'f', 0, 64) + "\n" +
		"  bar [" + strings.Join(values, ", ") + "]\n```\n"
}

func chartLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/=._- ", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	// Keep both ends: kernels differ at the start, variants at the end.
	rs := []rune(b.String())
	if len(rs) > 40 {
		rs = append(append(rs[:17:17], '…'), rs[len(rs)-22:]...)
	}
	return string(rs)
}

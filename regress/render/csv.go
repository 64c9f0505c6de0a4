package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// csvHeader names the columns of CSV.
var csvHeader = []string{"name", "config", "unit", "better",
	"baseline_center", "baseline_lo", "baseline_hi", "baseline_n",
	"current_center", "current_lo", "current_hi", "current_n",
	"delta", "delta_lo", "delta_hi", "p", "p_adjusted", "threshold", "gate", "verdict", "warnings"}

// CSV writes a header row and one row per comparison, in report order, with
// full-precision numbers; a value that does not exist is an empty cell. The
// config cell joins the distinguishing configuration as k=v;k=v and the
// warnings cell joins the comparison's warnings with "; ". Text cells that a
// spreadsheet would take for a formula are prefixed with an apostrophe.
func CSV(w io.Writer, r *report.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		row := []string{csvText(c.Name), csvText(joinConfig(c.Config, ";")), csvText(c.Unit), c.Better}
		row = append(row, csvSummary(c.Baseline)...)
		row = append(row, csvSummary(c.Current)...)
		row = append(row, csvNumber(c.Delta), csvNumber(c.DeltaLo), csvNumber(c.DeltaHi),
			csvNumber(c.P), csvNumber(c.PAdjusted), csvNumber(report.Number(c.Threshold)),
			c.Gate, c.Verdict, csvText(strings.Join(c.Warnings, "; ")))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvSummary(s *report.Summary) []string {
	if s == nil {
		return []string{"", "", "", ""}
	}
	return []string{csvNumber(s.Center), csvNumber(s.Lo), csvNumber(s.Hi), strconv.Itoa(s.N)}
}

func csvNumber(n report.Number) string {
	if !n.Valid() {
		return ""
	}
	return formatG(float64(n))
}

// csvText defuses text that spreadsheets would evaluate as a formula.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

package regress

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// printed is one row of benchstat's output: the values it printed for a
// benchmark compared across two columns.
type printed struct {
	name, unit                         string
	oldCenter, oldCI, newCenter, newCI string
	delta, p, n                        string
	oldFull, newFull                   float64 // CSV output only: full-precision centers
}

// TestMatchesBenchstat runs kernelwatch on benchstat's own test inputs
// (regress/testdata/benchstat) and checks that the medians, confidence
// intervals, deltas and p-values equal what benchstat printed, to the
// printed precision.
func TestMatchesBenchstat(t *testing.T) {
	dir := filepath.Join("testdata", "benchstat")
	cases := []struct {
		golden   string
		old, new string // files; "" new means split old by its note: before/after
	}{
		{"crcIgnore.stdout", "crc-old.txt", "crc-new.txt"}, // benchstat -ignore note crc-old.txt crc-new.txt
		{"csvOldNew.stdout", "old.txt", "new.txt"},         // benchstat -format csv old.txt new.txt
		{"smallSample.stdout", "smallSample.txt", ""},      // benchstat -col note smallSample.txt
		{"zero.stdout", "zero.txt", ""},
		{"units.stdout", "units.txt", ""},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			old, cur := filepath.Join(dir, tc.old), filepath.Join(dir, tc.new)
			if tc.new == "" {
				old, cur = splitByNote(t, old)
			}
			r, err := Compare(Input{Baseline: []string{old}, Current: []string{cur}},
				verdict.Options{Config: config.Default()})
			if err != nil {
				t.Fatal(err)
			}
			var rows []printed
			if strings.HasPrefix(tc.golden, "csv") {
				rows = readBenchstatCSV(t, filepath.Join(dir, tc.golden))
			} else {
				rows = readBenchstatText(t, filepath.Join(dir, tc.golden))
			}
			if len(rows) == 0 {
				t.Fatal("no rows read from the golden file")
			}
			for _, row := range rows {
				c := find(r, row.name, row.unit)
				if c == nil {
					t.Errorf("%s %s: benchstat printed it, kernelwatch has no such comparison", row.name, row.unit)
					continue
				}
				got := format(c)
				if row.oldFull != 0 || row.newFull != 0 {
					if float64(c.Baseline.Center) != row.oldFull || float64(c.Current.Center) != row.newFull {
						t.Errorf("%s %s: centers %v, %v; benchstat %v, %v", row.name, row.unit,
							float64(c.Baseline.Center), float64(c.Current.Center), row.oldFull, row.newFull)
					}
					got.oldCenter, got.newCenter = row.oldCenter, row.newCenter
				}
				got.name, got.unit, got.oldFull, got.newFull = row.name, row.unit, row.oldFull, row.newFull
				if got != row {
					t.Errorf("%s %s:\nkernelwatch %+v\nbenchstat   %+v", row.name, row.unit, got, row)
				}
			}
			t.Logf("%d rows match benchstat", len(rows))
		})
	}
}

// format prints a comparison's figures the way benchstat prints them.
func format(c *report.Comparison) printed {
	bc, cc := float64(c.Baseline.Center), float64(c.Current.Center)
	sc := benchunit.CommonScale([]float64{bc, cc}, benchunit.ClassOf(c.Unit))
	ci := func(s *report.Summary) string {
		return benchmath.Summary{Center: float64(s.Center), Lo: float64(s.Lo), Hi: float64(s.Hi)}.PctRangeString()
	}
	p := float64(c.P)
	if !c.P.Valid() {
		p = 0 // exact units: kernelwatch reports no p; benchstat's AssumeExact says 0
	}
	cmp := benchmath.Comparison{P: p, N1: c.Baseline.N, N2: c.Current.N, Alpha: 0.05}
	ps, n := "", ""
	if s := cmp.String(); strings.HasPrefix(s, "p=") {
		ps, n, _ = strings.Cut(s, " ")
	} else {
		n = s
	}
	return printed{
		oldCenter: sc.Format(bc), oldCI: ci(c.Baseline),
		newCenter: sc.Format(cc), newCI: ci(c.Current),
		delta: cmp.FormatDelta(bc, cc), p: ps, n: n,
	}
}

func find(r *report.Report, name, unit string) *report.Comparison {
	name = regexp.MustCompile(`-\d+$`).ReplaceAllString(name, "")
	for i := range r.Comparisons {
		if r.Comparisons[i].Name == name && r.Comparisons[i].Unit == unit {
			return &r.Comparisons[i]
		}
	}
	return nil
}

var (
	sup     = `[⁰¹²³⁴⁵⁶⁷⁸⁹]`
	rowRE   = regexp.MustCompile(`^(\S+)\s+(\S+) ± (\S+)(?:\s+` + sup + `+)?\s+(\S+) ± (\S+)(?:\s+` + sup + `+)?\s+(\S+) \((?:(p=\S+) )?(n=\S+)\)`)
	unitRE  = regexp.MustCompile(`^\s*│\s*(\S+)\s*│`)
	pRowsRE = regexp.MustCompile(`^` + sup)
)

// readBenchstatText reads the rows of benchstat's text tables.
func readBenchstatText(t *testing.T, path string) []printed {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []printed
	unit, header := "", 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "│"):
			header++
			if header == 2 {
				m := unitRE.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("%s: no unit in %q", path, line)
				}
				unit = m[1]
			}
			continue
		case line == "" || strings.HasPrefix(line, "geomean") || pRowsRE.MatchString(line) || strings.Contains(line, ": "):
			header = 0
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: cannot read row %q", path, line)
		}
		rows = append(rows, printed{name: m[1], unit: unit, oldCenter: m[2], oldCI: m[3], newCenter: m[4], newCI: m[5], delta: m[6], p: m[7], n: m[8]})
	}
	return rows
}

// readBenchstatCSV reads benchstat's -format csv output.
func readBenchstatCSV(t *testing.T, path string) []printed {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []printed
	unit := ""
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, ",") && !strings.Contains(line, ",") {
			continue // config line
		}
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err != nil || len(rec) < 7 {
			continue
		}
		switch {
		case rec[0] == "" && rec[1] != "" && rec[2] == "CI":
			unit = rec[1]
		case rec[0] == "" || rec[0] == "geomean":
		default:
			o, err1 := strconv.ParseFloat(rec[1], 64)
			n, err2 := strconv.ParseFloat(rec[3], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: bad row %q", path, line)
			}
			p, cnt, _ := strings.Cut(rec[6], " ")
			rows = append(rows, printed{name: rec[0], unit: unit, oldCI: rec[2], newCI: rec[4], delta: rec[5], p: p, n: cnt, oldFull: o, newFull: n})
		}
	}
	return rows
}

// splitByNote writes the "note: before" and "note: after" results of path
// to two files, as benchstat's "-col note" reads them.
func splitByNote(t *testing.T, path string) (before, after string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b, a strings.Builder
	side := &b
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "note: before":
			side = &b
		case line == "note: after":
			side = &a
		case strings.HasPrefix(line, "Benchmark"):
			fmt.Fprintln(side, line)
		default:
			fmt.Fprintln(&b, line)
			fmt.Fprintln(&a, line)
		}
	}
	dir := t.TempDir()
	before, after = filepath.Join(dir, "before.txt"), filepath.Join(dir, "after.txt")
	if err := os.WriteFile(before, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(after, []byte(a.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return before, after
}

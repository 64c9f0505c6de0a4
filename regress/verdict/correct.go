package verdict

import (
	"math"
	"sort"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// Test is one hypothesis test for Correct: a comparison of a report, or a
// step of a history (package history), which corrects its change points'
// p-values with the same code so that a history over thousands of series
// keeps the gate's family-wise error rate as a report does.
type Test struct {
	// P is the test's p-value.
	P float64
	// Gate names the test's family: tests are corrected among those of the
	// same gate, so warn-only tests never dilute the family that decides
	// the exit code. "" leaves the test out of every family.
	Gate string
	// Hypothesis groups the tests of one hypothesis, such as the units of
	// one benchmark derived from the same samples: within a family, tests
	// with the same non-empty Hypothesis count once, with the p of the
	// first of them. "" makes the test a hypothesis of its own.
	Hypothesis string
	// PastFloor says the test's effect is beyond its threshold. Under
	// floor-holm only those tests are corrected; the others cannot change
	// a verdict and stay out of the family.
	PastFloor bool
}

// Correct returns the adjusted p-value of each test under method
// (report.FloorHolm, Holm, BH or NoCorrect), NaN for a test outside every
// family, and the size of each gate's family in hypotheses.
//
// Holm's step-down and Benjamini–Hochberg's step-up run over each family's
// hypotheses sorted by p (stably: hypotheses of equal p keep their order of
// first appearance, so the same input always gives the same output).
func Correct(tests []Test, method string) (adjusted []float64, families map[string]int) {
	adjusted = make([]float64, len(tests))
	fams := map[string][][]int{} // gate → hypotheses → test indexes
	hyp := map[string]map[string]int{}
	var gates []string // in order of first appearance, so that the result does not depend on map order
	for i, t := range tests {
		adjusted[i] = math.NaN()
		if t.Gate == "" || method == report.FloorHolm && !t.PastFloor {
			continue
		}
		if _, ok := fams[t.Gate]; !ok {
			gates = append(gates, t.Gate)
			hyp[t.Gate] = map[string]int{}
		}
		if h, ok := hyp[t.Gate][t.Hypothesis]; ok && t.Hypothesis != "" {
			fams[t.Gate][h] = append(fams[t.Gate][h], i)
			continue
		}
		hyp[t.Gate][t.Hypothesis] = len(fams[t.Gate])
		fams[t.Gate] = append(fams[t.Gate], []int{i})
	}
	families = map[string]int{}
	for _, g := range gates {
		fam := fams[g]
		families[g] = len(fam)
		k := len(fam)
		p := func(h []int) float64 { return tests[h[0]].P }
		set := func(h []int, adj float64) {
			for _, i := range h {
				adjusted[i] = adj
			}
		}
		sort.SliceStable(fam, func(i, j int) bool { return p(fam[i]) < p(fam[j]) })
		switch method {
		case report.Holm, report.FloorHolm:
			run := 0.0
			for i, h := range fam {
				run = math.Max(run, math.Min(1, float64(k-i)*p(h)))
				set(h, run)
			}
		case report.BH:
			run := 1.0
			for i := k - 1; i >= 0; i-- {
				run = math.Min(run, math.Min(1, float64(k)/float64(i+1)*p(fam[i])))
				set(fam[i], run)
			}
		default:
			for _, h := range fam {
				for _, i := range h {
					adjusted[i] = tests[i].P
				}
			}
		}
	}
	return adjusted, families
}

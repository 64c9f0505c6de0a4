package verdict

import (
	"fmt"
	"math"

	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/stats"
)

// Two-mode comparisons.
//
// When a side's samples fall in two modes (stats.Modes, at the
// comparison's final threshold), its median says how often a process drew
// each mode more than how fast either mode is, and which mode a process
// draws need not depend on the code under test. A change in the mix is
// therefore never a regression or an improvement:
//
//   - both sides in two modes: the comparison is judged mode by mode
//     (stats.CompareModes). Its test is the two modes' U tests combined,
//     which goes into the multiple-comparison correction in place of the
//     medians' (p stays the medians', as benchstat reports it; p_adjusted
//     is the modes'); its effect is each mode center's change. A mode that
//     moved beyond the threshold, significantly, is a regression or an
//     improvement (both directions at once: inconclusive); modes with the
//     same centers (each within the threshold of its counterpart) are
//     unchanged whatever the medians say, and under floor-holm stay out of
//     the corrected family, like any change below the effect floor.
//   - one side in two modes, the other's median within the threshold of one
//     of them, the medians further apart than the threshold: the difference
//     may be only the mix. The verdict is inconclusive. While the one-mode
//     side has too few processes to have shown the other mode at the
//     two-mode side's mix, its warning says how many more would (at 95%)
//     and WantsMoreRounds is true; once it has enough, the warning says the
//     mix differs, with how likely that many misses were at the other
//     side's mix — still no regression, since a mix is not a speed. A
//     one-mode side in neither mode is a change whatever the mix: the
//     medians decide.
//
// A side that shows two modes only with the other side's help (a lone
// process in a mode the other side has twice or more, stats.ModesLike)
// counts as two-modal.

// findModes finds the modes of each side at the comparison's threshold
// and, when both sides have two, compares them mode by mode: the test
// that the correction and the verdict then use.
func findModes(it *item) {
	it.testP = it.change.P
	if it.exact || !(it.c.Threshold > 0) {
		return
	}
	th := it.c.Threshold
	var bm, cm []stats.Mode
	if it.base != nil {
		bm = stats.Modes(it.base.Values, th)
	}
	if it.cur != nil {
		cm = stats.Modes(it.cur.Values, th)
	}
	switch {
	case bm != nil && cm == nil && it.cur != nil:
		cm = stats.ModesLike(it.cur.Values, bm, th)
	case cm != nil && bm == nil && it.base != nil:
		bm = stats.ModesLike(it.base.Values, cm, th)
	}
	it.bModes, it.cModes = bm, cm
	if bm != nil {
		it.c.Baseline.Modes = reportModes(bm)
	}
	if cm != nil {
		it.c.Current.Modes = reportModes(cm)
	}
	if bm != nil && cm != nil {
		mc := stats.CompareModes(it.base.Values, it.cur.Values, bm, cm)
		it.modes = &mc
		it.testP, it.minP = mc.P, mc.MinP
	}
}

func reportModes(ms []stats.Mode) []report.Mode {
	out := make([]report.Mode, len(ms))
	for i, m := range ms {
		out[i] = report.Mode{Center: m.Center, N: m.N}
	}
	return out
}

// pastFloor reports whether the comparison's effect is beyond its
// threshold: the medians' delta, or for two sides of two modes a mode
// center's change.
func (it *item) pastFloor() bool {
	c := &it.c
	if it.modes != nil {
		d := it.modes.Delta
		return worse(c, d[0]) || worse(c, d[1]) || better(c, d[0]) || better(c, d[1])
	}
	d := float64(c.Delta)
	return worse(c, d) || better(c, d)
}

// modeVerdict applies the two-mode rules to v, the verdict the medians
// reached (significant: the comparison's test, after the correction, is
// below alpha), and returns the verdict that stands, adding a warning that
// says why when the modes decide.
func modeVerdict(it *item, v string, significant bool) string {
	c := &it.c
	bm, cm := it.bModes, it.cModes
	if bm == nil && cm == nil {
		return v
	}
	warn := func(format string, args ...any) { c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...)) }
	delta := float64(c.Delta)
	medianMoved := worse(c, delta) || better(c, delta)
	if mc := it.modes; mc != nil {
		dLo, dHi := mc.Delta[0], mc.Delta[1]
		moved := fmt.Sprintf("the lower mode moved %+.2f%% and the upper %+.2f%% (threshold %s)", 100*dLo, 100*dHi, pct(c.Threshold))
		mix := fmt.Sprintf("%d + %d processes against %d + %d", cm[0].N, cm[1].N, bm[0].N, bm[1].N)
		worseMode, betterMode := worse(c, dLo) || worse(c, dHi), better(c, dLo) || better(c, dHi)
		switch {
		case !worseMode && !betterMode && medianMoved:
			warn("both sides fall in the same two modes: %s, and the median moved %+.2f%% only because the mix changed (%s), so unchanged", moved, 100*delta, mix)
			return report.Unchanged
		case !worseMode && !betterMode:
			warn("both sides fall in the same two modes: %s; the mix is %s", moved, mix)
			return report.Unchanged
		case worseMode && betterMode:
			warn("both sides fall in two modes and they moved apart: %s; one mode is worse, the other better", moved)
			return report.Inconclusive
		case !significant:
			warn("both sides fall in two modes and %s, but the modes' samples (%s) do not show it at alpha %s (modes' p %.3g)", moved, mix, fmtG(it.policy.Alpha), it.testP)
			return report.Unchanged
		case worseMode:
			warn("both sides fall in two modes and %s: judged by the modes (modes' p %.3g), not by the mix (%s)", moved, it.testP, mix)
			return report.Regression
		}
		warn("both sides fall in two modes and %s: judged by the modes (modes' p %.3g), not by the mix (%s)", moved, it.testP, mix)
		return report.Improvement
	}
	two, oneSide, twoName, oneName := bm, it.cur, "baseline", "current"
	if cm != nil {
		two, oneSide, twoName, oneName = cm, it.base, "current", "baseline"
	}
	if oneSide == nil {
		return v
	}
	in := modeOf(two, oneSide.Center, c.Threshold)
	if in < 0 || !medianMoved {
		return v
	}
	missing := two[1-in]
	total := two[0].N + two[1].N
	names := []string{"lower", "upper"}
	head := fmt.Sprintf("only the %s falls in two modes (%d + %d processes) and the %s's median is in its %s mode: the median's %+.2f%% may be the mix of the modes rather than a change of either, so no verdict; ",
		twoName, two[0].N, two[1].N, oneName, names[in], 100*delta)
	if more := moreToSee(missing.N, total, len(oneSide.Values)); more > 0 {
		noun := "processes"
		if more == 1 {
			noun = "process"
		}
		warn("%sa %s process in the %s mode would settle it: if the %s visits that mode as often as the %s (%d of %d), %d more %s would show one with 95%% probability — more rounds wanted",
			head, oneName, names[1-in], oneName, twoName, missing.N, total, more, noun)
	} else {
		warn("%snone of the %s's %d processes is in the %s mode, which the %s's mix (%d of %d) would give with probability %.2g: the mix differs, and a mix is not a speed (it can follow the memory placement a build gets)",
			head, oneName, len(oneSide.Values), names[1-in], twoName, missing.N, total, math.Pow(1-float64(missing.N)/float64(total), float64(len(oneSide.Values))))
	}
	return report.Inconclusive
}

// moreToSee is how many more processes a side that has had none of its n in
// a mode that k of total processes of the other side drew needs before, at
// the other side's mix, it would have seen one with probability 0.95; 0
// when its n already should have (more rounds would settle nothing).
func moreToSee(k, total, n int) int {
	return max(processesToSee(k, total)-n, 0)
}

// modeOf returns the index of the mode whose center x is within threshold
// of, or -1.
func modeOf(modes []stats.Mode, x, threshold float64) int {
	for i, m := range modes {
		if math.Abs(x/m.Center-1) <= threshold {
			return i
		}
	}
	return -1
}

// processesToSee is how many processes it takes to see, with probability
// 0.95, at least one in a mode that k of n processes drew: the smallest m
// with (1 − k/n)^m ≤ 0.05.
func processesToSee(k, n int) int {
	f := float64(k) / float64(n)
	if f >= 1 {
		return 1
	}
	return int(math.Ceil(math.Log(0.05) / math.Log1p(-f)))
}

func pct(f float64) string { return fmt.Sprintf("%.3g%%", 100*f) }

func fmtG(f float64) string { return fmt.Sprintf("%g", f) }

// WantsMoreRounds reports whether more rounds (processes on each side)
// could settle comparison c: exactly one side falls in two modes, the
// other side's median lies within the threshold of one of them, the
// medians differ by more than the threshold, and the one-mode side has
// too few processes yet to say that it does not visit the other mode as
// often as the two-mode side does (at 95%). More processes of the one-mode
// side would show whether it visits the other mode too (then only the mix
// differed) or not. It reads only the report, so it works on a report read
// back from JSON; the sequential sampling of regress check calls it to
// decide whether to run another round.
func WantsMoreRounds(c *report.Comparison) bool {
	if c.Baseline == nil || c.Current == nil || c.Gate == report.GateOff || !c.Delta.Valid() {
		return false
	}
	two, one := c.Baseline, c.Current
	if len(c.Current.Modes) == 2 {
		two, one = c.Current, c.Baseline
	}
	if len(two.Modes) != 2 || len(one.Modes) != 0 || !one.Center.Valid() {
		return false
	}
	in := -1
	for i, m := range two.Modes {
		if math.Abs(float64(one.Center)/m.Center-1) <= c.Threshold {
			in = i
			break
		}
	}
	d := float64(c.Delta)
	return in >= 0 && (worse(c, d) || better(c, d)) && moreToSee(two.Modes[1-in].N, two.N, one.N) > 0
}

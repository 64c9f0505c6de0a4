package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// SequentialSummary is the one-line account of the rounds regress check
// added beyond the configured ones: "rounds: 10 configured, up to 40 within
// 4m; 3 benchmarks wanted more: 2 can now detect the threshold, 1 still cannot
// (stopped at the budget)"; "" without a Sequential section.
func SequentialSummary(r *report.Report) string {
	sq := r.Sequential
	if sq == nil {
		return ""
	}
	limits := fmt.Sprintf("up to %d", sq.MaxRounds)
	if sq.BudgetSeconds > 0 {
		budget := time.Duration(sq.BudgetSeconds * float64(time.Second)).Round(time.Second).String()
		if strings.HasSuffix(budget, "m0s") {
			budget = strings.TrimSuffix(budget, "0s")
		}
		limits += " within " + budget
	}
	line := fmt.Sprintf("rounds: %d configured, %s", sq.Rounds, limits)
	if len(sq.Benchmarks) == 0 {
		return line + "; every gated comparison could detect its threshold after them"
	}
	still := 0
	for _, b := range sq.Benchmarks {
		if b.Underpowered {
			still++
		}
	}
	noun := "benchmarks"
	if len(sq.Benchmarks) == 1 {
		noun = "benchmark"
	}
	line += fmt.Sprintf("; %d %s wanted more: %d can now detect the threshold, %d still cannot", len(sq.Benchmarks), noun, len(sq.Benchmarks)-still, still)
	return line + " (" + sequentialStop(sq.Stopped) + ")"
}

// sequentialStop says why no more rounds were added.
func sequentialStop(stopped string) string {
	switch stopped {
	case report.SeqDetectable:
		return "no benchmark wanted more"
	case report.SeqMaxRounds:
		return "stopped at max_rounds"
	case report.SeqBudget:
		return "stopped at the budget"
	case report.SeqDeadline:
		return "stopped at the deadline"
	case report.SeqSignal:
		return "interrupted"
	}
	return stopped
}

// sequentialRow describes one benchmark that wanted more rounds: its rounds,
// what it can detect now, and whether it still falls short.
func sequentialRow(b *report.SequentialBenchmark) (name, rounds, detects, status string) {
	name = b.Name
	if len(b.Config) > 0 {
		name += " [" + joinConfig(b.Config, " ") + "]"
	}
	rounds = fmt.Sprintf("%d rounds", b.Rounds)
	switch {
	case b.Detectable == nil || !b.Detectable.Valid():
		detects = "detects nothing"
	default:
		detects = fmt.Sprintf("detects ≥ %.1f%%", 100*float64(*b.Detectable))
	}
	var notes []string
	if b.Reason == report.SeqTwoMode {
		notes = append(notes, "two modes")
	}
	if b.Underpowered {
		notes = append(notes, "still underpowered")
	}
	return name, rounds, detects, strings.Join(notes, ", ")
}

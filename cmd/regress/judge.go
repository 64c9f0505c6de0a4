package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/config"
	"github.com/kernelwatch/kernelwatch/regress/render"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// judgeFlags are the flags shared by every verb that produces a report.
type judgeFlags struct {
	config     string
	format     string
	out        string
	alpha      float64
	threshold  string
	minSamples int
	correction string
	forceClass bool
	ignore     listFlag
	github     bool
	noise      string
	noiseRef   string // check --baselines-ref: read the noise file there
}

func (j *judgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.config, "config", "", "benchmarks.yaml to use (default: the one at the repository root, if any; \"none\" for built-in defaults)")
	fs.StringVar(&j.format, "format", "text", "output format: "+strings.Join(render.Formats, ", "))
	fs.BoolVar(&j.github, "github", false, "also publish the report like 'regress comment' does: job summary, step outputs and the sticky pull-request comment (token from GITHUB_TOKEN)")
	fs.StringVar(&j.out, "out", "", "write the report to this file (atomically) instead of standard output")
	fs.Float64Var(&j.alpha, "alpha", 0, "significance level (default 0.05 or benchmarks.yaml defaults.alpha)")
	fs.StringVar(&j.threshold, "threshold", "", "effect floor, e.g. 5% or 0.05 (default 5% or benchmarks.yaml defaults.threshold); rules still override it")
	fs.IntVar(&j.minSamples, "min-samples", 0, "samples per side needed for a verdict (default 6)")
	fs.StringVar(&j.correction, "correction", "", "multiple-comparison correction: floor-holm (default), holm, bh, none")
	fs.BoolVar(&j.forceClass, "force-class", false, "compare results of different hardware classes")
	fs.StringVar(&j.noise, "noise", "", "calibrated noise file (regress calibrate) whose floors raise the thresholds (default: baselines/<class>.noise.json if present; \"none\" to ignore it)")
	fs.Var(&j.ignore, "ignore", "configuration keys that never split comparisons (comma-separated, repeatable)")
}

// options loads the configuration and applies the command-line overrides.
func (j *judgeFlags) options(e *env) (verdict.Options, error) {
	var opt verdict.Options
	if !slices.Contains(render.Formats, j.format) {
		return opt, fmt.Errorf("--format %q: want one of %s", j.format, strings.Join(render.Formats, ", "))
	}
	cfg, err := loadConfig(e, j.config)
	if err != nil {
		return opt, err
	}
	if j.alpha != 0 {
		if !(j.alpha > 0 && j.alpha < 1) {
			return opt, fmt.Errorf("--alpha %v: want a number between 0 and 1", j.alpha)
		}
		cfg.Defaults.Alpha = j.alpha
	}
	if j.threshold != "" {
		t, err := config.ParseFraction(j.threshold)
		if err != nil {
			return opt, fmt.Errorf("--threshold: %w", err)
		}
		cfg.Defaults.Threshold = t
	}
	if j.minSamples != 0 {
		if j.minSamples < 2 {
			return opt, fmt.Errorf("--min-samples %d: want at least 2", j.minSamples)
		}
		cfg.Defaults.MinSamples = j.minSamples
	}
	switch j.correction {
	case "", report.FloorHolm, report.Holm, report.BH, report.NoCorrect:
	default:
		return opt, fmt.Errorf("--correction %q: want floor-holm, holm, bh or none", j.correction)
	}
	opt.Config = cfg
	opt.Correction = j.correction
	opt.ForceClass = j.forceClass
	return opt, nil
}

// loadConfig loads the benchmarks.yaml that --config names: "" for the
// one at the root of the enclosing repository (the defaults when there is
// none), "none" for the defaults.
func loadConfig(e *env, path string) (*config.Config, error) {
	switch path {
	case "none":
		return config.Default(), nil
	case "":
		if found, ok := config.Find(e.dir); ok {
			return config.Load(found)
		}
		return config.Default(), nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.dir, path)
	}
	return config.Load(path)
}

// emit renders r where the flags say.
func (j *judgeFlags) emit(e *env, r *report.Report) error {
	write := func(w io.Writer) error { return render.Write(w, r, j.format) }
	path := ""
	if j.out == "" {
		if err := write(e.stdout); err != nil {
			return err
		}
	} else {
		path = j.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.dir, path)
		}
		if err := writeAtomic(path, write); err != nil {
			return fmt.Errorf("--out %s: %w", j.out, err)
		}
	}
	if !j.github {
		return nil
	}
	if j.format != "json" {
		path = "" // the report output names a JSON report only
	}
	if err := publishReport(e, r, path, githubDefaults()); err != nil {
		return fmt.Errorf("--github: %w", err)
	}
	return nil
}

// relErr shortens absolute paths under dir in error messages back to what
// the user typed.
func relErr(err error, dir string) error {
	msg := err.Error()
	if dir != "" {
		msg = strings.ReplaceAll(msg, dir+string(filepath.Separator), "")
	}
	return errors.New(msg)
}

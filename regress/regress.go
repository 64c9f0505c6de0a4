// Package regress wires the comparison pipeline of kernelwatch:
//
//	parse (result files) → group (pair the sides) → stats (benchmath) → verdict → report
//
// with the calibrated noise of the class (package noise) read, when the
// caller says where, once the sides have named their hardware class.
//
// Each step is its own package with one job; rendering (package render) and
// publishing come after the report and import nothing from before it but the
// report model. Compare is the library entry point used by the regress
// command.
package regress

import (
	"fmt"
	"io"

	"github.com/kernelwatch/kernelwatch/regress/group"
	"github.com/kernelwatch/kernelwatch/regress/noise"
	"github.com/kernelwatch/kernelwatch/regress/parse"
	"github.com/kernelwatch/kernelwatch/regress/report"
	"github.com/kernelwatch/kernelwatch/regress/verdict"
)

// Input names the result files of each side.
type Input struct {
	// Baseline and Current are file names; "-" reads Stdin (once).
	Baseline, Current []string
	Stdin             io.Reader
	// Ignore names configuration keys that must never split comparisons,
	// on top of group.RunKeys.
	Ignore []string
	// NoiseFor, when set, returns the calibrated noise of the results'
	// hardware class and the name of its file (nil when there is none).
	NoiseFor func(class string) (f *noise.File, name string, err error)
}

// Compare reads both sides and judges them. An error means bad input (a
// file that cannot be read or parsed); a report whose verdict is no-data
// means the input was good but nothing was comparable.
func Compare(in Input, opt verdict.Options) (*report.Report, error) {
	rd := parse.NewReader(in.Stdin)
	base, err := rd.ReadSide(in.Baseline)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	cur, err := rd.ReadSide(in.Current)
	if err != nil {
		return nil, fmt.Errorf("current: %w", err)
	}
	g := group.Pair(base, cur, in.Ignore...)
	if in.NoiseFor != nil {
		class := g.CurConfig[group.ClassKey]
		if class == "" {
			class = g.BaseConfig[group.ClassKey]
		}
		if opt.Noise, opt.NoiseFile, err = in.NoiseFor(class); err != nil {
			return nil, err
		}
	}
	opt.Units = rd.Units()
	if opt.BaseFiles == nil {
		opt.BaseFiles = base.Files
	}
	if opt.CurFiles == nil {
		opt.CurFiles = cur.Files
	}
	return verdict.Judge(g, opt), nil
}

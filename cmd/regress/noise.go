package main

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/kernelwatch/kernelwatch/regress/noise"
)

// noiseFor returns the loader of the calibrated noise file that --noise
// names: none, a file, or by default baselines/<class>.noise.json in the
// working tree, or at the tip of check's --baselines-ref when it is there,
// used only when present.
func (j *judgeFlags) noiseFor(e *env) func(class string) (*noise.File, string, error) {
	if j.noise == "none" {
		return nil
	}
	return func(class string) (*noise.File, string, error) {
		var f *noise.File
		var name string
		var err error
		switch {
		case j.noise != "":
			name = j.noise
			if f, err = noise.Load(absPath(e, j.noise)); err == nil && f == nil {
				err = fmt.Errorf("--noise %s: no such file", j.noise)
			}
		case class == "" || !classPattern.MatchString(class):
			return nil, "", nil
		case j.noiseRef != "":
			ctx, stop := notifyContext()
			defer stop()
			name = noise.Path(class)
			data, at, ok, rerr := readStored(ctx, e, j.noiseRef, name)
			if rerr != nil {
				return nil, "", rerr
			}
			if ok {
				name = at.Short() + ":" + name
				f, err = noise.Read(bytes.NewReader(data), name)
				break
			}
			fallthrough // not on the branch: the working tree's, if any
		default:
			path := filepath.Join(baselineDir(e), class+".noise.json")
			name = relPath(e, path)
			f, err = noise.Load(path)
		}
		if err != nil {
			return nil, "", relErr(err, e.dir)
		}
		if f != nil && class != "" && f.Class != class {
			return nil, "", fmt.Errorf("%s is the noise of class %s, the results are of class %s", name, f.Class, class)
		}
		return f, name, nil
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/kernelwatch/kernelwatch/regress/gitref"
	"github.com/kernelwatch/kernelwatch/regress/noise"
)

// loadFloors reads the cross-host floors of a stored check: the --floors
// file, or baselines/<class>.floors.json at the commit the stored baseline
// was read from (at.SHA empty: no repository, so only --floors), if there.
// loadFloorsBeside is its form for --baseline-file.
func (ck *checker) loadFloors(ctx context.Context, repo *gitref.Repo, at gitref.Commit, class string) error {
	var fl *noise.Floors
	var name string
	var err error
	switch f := ck.c.floors; {
	case f == "none":
		return nil
	case f != "":
		name = f
		if fl, err = noise.LoadFloors(absPath(ck.e, f)); err == nil && fl == nil {
			err = fmt.Errorf("--floors %s: no such file", f)
		}
	case repo == nil || at.SHA == "":
		return nil
	default:
		path := noise.FloorsPath(class)
		data, ok, serr := repo.Show(ctx, at, path)
		if serr != nil || !ok {
			return serr
		}
		name = at.Short() + ":" + path
		fl, err = noise.ReadFloors(bytes.NewReader(data), name)
	}
	if err != nil {
		return err
	}
	if class != "" && fl.Class != class {
		return fmt.Errorf("%s holds the floors of class %s, the stored baseline is of class %s", name, fl.Class, class)
	}
	ck.floors, ck.floorsName = fl, name
	ck.info("cross-host floors from %s (%d snapshots)", name, len(fl.Snapshots))
	return nil
}

// loadFloorsBeside reads the cross-host floors of a stored check whose
// baseline is the file stored (--baseline-file): the --floors file, or
// <class>.floors.json in stored's directory, if there (a host without git
// keeps a copy of baselines/ as committed). class is the stored file's.
func (ck *checker) loadFloorsBeside(stored, class string) error {
	if ck.c.floors != "" || class == "" {
		return ck.loadFloors(context.Background(), nil, gitref.Commit{}, class)
	}
	path := filepath.Join(filepath.Dir(stored), class+".floors.json")
	fl, err := noise.LoadFloors(path)
	if err != nil || fl == nil {
		return err
	}
	if fl.Class != class {
		return fmt.Errorf("%s holds the floors of class %s, the stored baseline is of class %s", path, fl.Class, class)
	}
	ck.floors, ck.floorsName = fl, path
	ck.info("cross-host floors from %s (%d snapshots)", path, len(fl.Snapshots))
	return nil
}

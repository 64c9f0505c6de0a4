package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/parse"

	"github.com/kernelwatch/kernelwatch/regress/gitref"
)

// storeFlags say where stored files (baselines, noise files) go: the
// working tree (default), a commit on the checked-out branch (--commit) or
// a commit on a separate branch (--baselines-ref), for a main that is
// protected against the pushes of a workflow.
type storeFlags struct {
	commit bool
	ref    string
}

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.commit, "commit", false, "also commit the stored file (on the checked-out branch, or on --baselines-ref)")
	fs.StringVar(&s.ref, "baselines-ref", "", "`BRANCH` store by committing to this branch (e.g. kernelwatch-baselines) with git plumbing: the working tree, the index and main are not touched")
}

// store writes files (paths relative to the repository root) where the
// flags say and returns a description of where they went.
func (s *storeFlags) store(ctx context.Context, e *env, files map[string][]byte, message string) (string, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if s.ref != "" {
		repo, err := gitref.Open(ctx, e.dir)
		if err != nil {
			return "", fmt.Errorf("--baselines-ref: %w", err)
		}
		st, err := repo.StoreFiles(ctx, s.ref, files, message)
		if err != nil {
			return "", fmt.Errorf("--baselines-ref %s: %w", s.ref, err)
		}
		if !st.Changed {
			return fmt.Sprintf("unchanged on %s", st.Commit.Label()), nil
		}
		return fmt.Sprintf("committed to %s (push it: git push origin %s)", st.Commit.Label(), s.ref), nil
	}
	root := filepath.Dir(baselineDir(e))
	for _, p := range paths {
		abs := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", err
		}
		data := files[p]
		if err := writeAtomic(abs, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return "", err
		}
	}
	if !s.commit {
		return "commit it to make it main's", nil
	}
	repo, err := gitref.Open(ctx, e.dir)
	if err != nil {
		return "", fmt.Errorf("--commit: %w", err)
	}
	c, err := repo.CommitPaths(ctx, message, paths...)
	if err != nil {
		return "", fmt.Errorf("--commit: %w", err)
	}
	return "committed as " + c.Label(), nil
}

// readStored reads a stored file (path relative to the repository root)
// from the tip of --baselines-ref: ok is false when it is not there.
func readStored(ctx context.Context, e *env, ref, path string) (data []byte, at gitref.Commit, ok bool, err error) {
	repo, err := gitref.Open(ctx, e.dir)
	if err != nil {
		return nil, at, false, err
	}
	if at, err = repo.Resolve(ctx, ref); err != nil {
		return nil, at, false, fmt.Errorf("--baselines-ref %w", err)
	}
	data, ok, err = repo.Show(ctx, at, path)
	return data, at, ok, err
}

// showStored is baseline show --baselines-ref: what the branch stores for
// class.
func showStored(e *env, ref, class string) int {
	ctx, stop := notifyContext()
	defer stop()
	path := "baselines/" + class + ".bench"
	data, at, ok, err := readStored(ctx, e, ref, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s baseline show: %v\n", programName, err)
		return exitError
	}
	if !ok {
		fmt.Fprintf(e.stderr, "%s baseline show: no baseline for class %s on %s (%s); store one with: %s baseline save --baselines-ref %s\n",
			programName, class, at.Label(), path, programName, ref)
		return exitNoData
	}
	rd := parse.NewReader(bytes.NewReader(data))
	if _, err := rd.ReadSide([]string{"-"}); err != nil {
		fmt.Fprintf(e.stderr, "%s baseline show: %s:%s%s\n", programName, at.Short(), path, strings.TrimPrefix(err.Error(), "-"))
		return exitError
	}
	printBaseline(e, path+" on "+at.Label(), data)
	return exitPass
}

package runner

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binary is the compiled test binary of one package, or a suite command
// (CommandSuite).
type Binary struct {
	// Pkg is the import path; "" for a prebuilt binary of unknown origin
	// and for a command.
	Pkg string
	// Path is the executable; "" for a command.
	Path string
	// Dir is the directory it runs in: the package's source directory, so
	// tests find their testdata as under go test; for a command, the
	// checkout of its side.
	Dir string
	// Command, when not nil, makes this a command suite: the program and
	// its arguments, run instead of a test binary (see command.go).
	Command []string
	// Format is the format of a command's results: "" or "go" for Go
	// benchmark format, else a format of regress/convert.
	Format string
}

// CommandSuite is a suite command (benchmarks.yaml's suite.command and
// suite.format) run in dir, the checkout of one side.
func CommandSuite(dir string, argv []string, format string) Binary {
	return Binary{Dir: dir, Command: argv, Format: format}
}

// GoVersion returns the Go version the binary was built with, "" when it
// cannot be read (or for a command).
func (b Binary) GoVersion() string {
	if b.Command != nil {
		return ""
	}
	info, err := buildinfo.ReadFile(b.Path)
	if err != nil {
		return ""
	}
	return info.GoVersion
}

// BuildError is a package that does not compile; Output is what the go
// command printed (the compiler's messages).
type BuildError struct {
	Dir    string
	Output string
}

func (e *BuildError) Error() string {
	line, _, _ := strings.Cut(strings.TrimSpace(e.Output), "\n")
	return "build failed: " + line
}

// Build compiles a test binary (`go test -c`) for every package that
// patterns match in dir and that has test files, into out. tags are the
// build tags. The binaries come in `go list` order.
func Build(ctx context.Context, dir string, patterns, tags []string, out string) ([]Binary, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var tagArgs []string
	if len(tags) > 0 {
		tagArgs = []string{"-tags=" + strings.Join(tags, ",")}
	}
	args := append([]string{"list"}, tagArgs...)
	args = append(args, "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}")
	args = append(args, patterns...)
	listed, err := goCmd(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var bins []Binary
	for _, line := range strings.Split(strings.TrimSpace(listed), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[2] == "0" && f[3] == "0" {
			continue // no test files: no benchmarks
		}
		name := fmt.Sprintf("%02d-%s.test", len(bins), filepath.Base(f[0]))
		bins = append(bins, Binary{Pkg: f[0], Dir: f[1], Path: filepath.Join(out, name)})
	}
	for _, b := range bins {
		args := append([]string{"test", "-c", "-o", b.Path}, tagArgs...)
		if _, err := goCmd(ctx, dir, append(args, b.Pkg)...); err != nil {
			return nil, err
		}
	}
	return bins, nil
}

// goCmd runs the go command in dir. A failure is a BuildError carrying its
// output, unless ctx was cancelled.
func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := command(ctx, "go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("go %s: %w", args[0], err)
		}
		out := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		if out == "" {
			out = "go " + args[0] + ": " + err.Error()
		}
		return "", &BuildError{Dir: dir, Output: out}
	}
	return stdout.String(), nil
}

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/runner"
)

const versionSynopsis = ""

const versionHelp = `Prints the version of regress (the regress-version its result files record),
the module it was built from with the module's version ("(devel)" when built
from a checkout), the VCS revision it was built at (+dirty when the working
tree had changes) and the Go version. "regress --version" is the same.

Exit codes: 0.
`

func runVersion(e *env, args []string) int {
	fs := newFlagSet("version")
	pos, code, ok := parseArgs(e, "version", fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return failer(e, "version")(usagef("unexpected argument %q", pos[0]))
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(e.stdout, versionText(bi))
	return exitPass
}

// versionText describes the build: regress's version, then the module,
// the VCS revision and the toolchain from the binary's build information.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", programName, runner.Version)
	if bi == nil {
		b.WriteString("module:   unknown (the binary carries no build information)\n")
		fmt.Fprintf(&b, "go:       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return b.String()
	}
	mod := bi.Main.Path
	if mod == "" {
		mod = "unknown"
	}
	if bi.Main.Version != "" {
		mod += " " + bi.Main.Version
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		rev = "unknown (built without version control information: go run, go test or -buildvcs=false)"
	} else {
		if settings["vcs.modified"] == "true" {
			rev += "+dirty"
		}
		if t := settings["vcs.time"]; t != "" {
			rev += " (" + t + ")"
		}
	}
	fmt.Fprintf(&b, "module:   %s\n", mod)
	fmt.Fprintf(&b, "revision: %s\n", rev)
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	fmt.Fprintf(&b, "go:       %s %s/%s\n", bi.GoVersion, goos, goarch)
	return b.String()
}

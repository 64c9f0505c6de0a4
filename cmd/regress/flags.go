package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, splitList(s)...)
	return nil
}

// splitList splits "a,b" into its non-empty parts.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseInterspersed parses args with fs, allowing flags after positional
// arguments (regress compare old.txt new.txt --format json). "--" ends flag
// parsing; what follows is returned as positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints nothing by itself: errors go through the verb's one-line message
// and -h through regress help.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(programName+" "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// hiddenPrefix starts the usage text of a flag that help and the command
// reference leave out: an old spelling kept so that scripts keep working.
const hiddenPrefix = "\x00"

// alias registers old as a hidden second spelling of the flag name: it is
// accepted and sets the same value, but only name is listed, so that every
// verb spells one thing one way.
func alias(fs *flag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	fs.Var(f.Value, old, hiddenPrefix+"old spelling of --"+name)
}

func hidden(f *flag.Flag) bool { return strings.HasPrefix(f.Usage, hiddenPrefix) }

// usageError is a mistake on the command line itself: the message names
// the flag or argument, and the verb's message points at its help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errUsage matches every usageError (errors.Is(err, errUsage)).
var errUsage = errors.New("usage")

func (e *usageError) Is(target error) bool { return target == errUsage }

// usagef returns a usageError.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// failer returns the verb's error exit: "regress VERB: message" on standard
// error, with a pointer to the verb's help after a mistake on the command
// line, and exit 2.
func failer(e *env, name string) func(error) int {
	return func(err error) int {
		msg := interrupted(err).Error()
		if errors.Is(err, errUsage) {
			msg += "; see '" + programName + " help " + name + "'"
		}
		fmt.Fprintf(e.stderr, "%s %s: %s\n", programName, name, msg)
		return exitError
	}
}

// parseArgs parses a verb's arguments (flags may follow positional ones).
// -h, -help and --help print the verb's help on standard output; ok is then
// false and code 0. A flag error is printed as failer prints it; ok is then
// false and code 2.
func parseArgs(e *env, name string, fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(e.stdout, lookupVerb(name))
		return nil, exitPass, false
	}
	if err != nil {
		return nil, failer(e, name)(flagError(fs, err)), false
	}
	return pos, 0, true
}

var (
	undefinedRE = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	needsArgRE  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	badValueRE  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
)

// flagError rewrites the flag package's parse errors to name the flag as
// the help spells it and to say what was wanted: "flag --count: invalid
// value "x": want an integer".
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if m := undefinedRE.FindStringSubmatch(msg); m != nil {
		return usagef("flag --%s: not a flag of %s", m[1], fs.Name())
	}
	if m := needsArgRE.FindStringSubmatch(msg); m != nil {
		return usagef("flag --%s: needs a value", m[1])
	}
	if m := badValueRE.FindStringSubmatch(msg); m != nil {
		why := m[3]
		if why == "parse error" || why == "value out of range" {
			why = "want " + valueKind(fs.Lookup(m[2]))
		}
		return usagef("flag --%s: invalid value %q: %s", m[2], m[1], why)
	}
	return usagef("%s", msg)
}

// valueKind says what a flag's value must look like, for error messages.
func valueKind(f *flag.Flag) string {
	if f == nil {
		return "a valid value"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "an integer"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 30s or 2m"
	}
	return "a valid value"
}

// writeAtomic writes the output of fill to path through a temporary file in
// the same directory and a rename, so readers never see a partial file.
func writeAtomic(path string, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; a report or a baseline is meant to be
	// read by others (and committed), so it gets the mode of a new file.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

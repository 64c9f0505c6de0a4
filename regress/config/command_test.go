package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/convert"
)

func TestSuiteCommand(t *testing.T) {
	c := mustParse(t, `version: 1
suite:
  command: [python3, bench.py, "--rows 4096", ""]
  format: pytest-benchmark
  count: 8
  bench: RMSNorm
`)
	want := Suite{Command: []string{"python3", "bench.py", "--rows 4096", ""}, Format: "pytest-benchmark", Count: 8, Bench: "RMSNorm"}
	if !reflect.DeepEqual(c.Suite, want) {
		t.Errorf("Suite = %#v, want %#v", c.Suite, want)
	}
	c = mustParse(t, "version: 1\nsuite:\n  command: [./bench.sh]\n")
	if c.Suite.Format != "go" || c.Suite.Packages != nil {
		t.Errorf("a command without format: Format %q, Packages %v; want go and none", c.Suite.Format, c.Suite.Packages)
	}
	if got, want := SuiteFormats, append([]string{"go"}, convert.Formats...); !slices.Equal(got, want) {
		t.Errorf("SuiteFormats = %v, want go and the converters' %v", got, want)
	}
}

func TestSuiteCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		desc, src string
		line      int
		want      string
	}{
		{"with packages", "version: 1\nsuite:\n  packages: [./...]\n  count: 3\n  command: [./bench.sh]\n", 5,
			"suite.command and suite.packages: a suite is either Go packages (go test -bench) or a command, not both"},
		{"with packages after", "version: 1\nsuite:\n  command: [./bench.sh]\n  packages: [./...]\n", 4, "suite.command and suite.packages"},
		{"with tags", "version: 1\nsuite:\n  command: [./bench.sh]\n  tags: [cuda]\n", 4, "suite.tags are Go build tags"},
		{"format without command", "version: 1\nsuite:\n  packages: [./...]\n  format: gbench\n", 4, "suite.format is the output format of suite.command, and there is no command"},
		{"unknown format", "version: 1\nsuite:\n  command: [./b]\n  format: json\n", 4, `format "json": want go, pytest-benchmark, gbench or nvbench`},
		{"a string", "version: 1\nsuite:\n  command: python3 bench.py\n", 3, "command: want a list of strings, the program first"},
		{"empty", "version: 1\nsuite:\n  command: []\n", 3, "command: empty list"},
		{"empty program", "version: 1\nsuite:\n  command: [\" \", x]\n", 3, "command: empty program name"},
		{"a mapping argument", "version: 1\nsuite:\n  command:\n    - python3\n    - {a: b}\n", 5, "command: argument 1: want a string, got a mapping"},
		{"a null argument", "version: 1\nsuite:\n  command: [python3, ~]\n", 3, "command: argument 1: want a string"},
		{"unknown key stays an error", "version: 1\nsuite:\n  command: [./b]\n  cmd: [./c]\n", 4, `unknown key "cmd" in suite`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "bench.yaml")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want *Error", err)
			}
			if e.File != "bench.yaml" || e.Line != tc.line || !strings.Contains(e.Msg, tc.want) {
				t.Errorf("got %q (line %d), want bench.yaml:%d: ...%s...", err, e.Line, tc.line, tc.want)
			}
		})
	}
}

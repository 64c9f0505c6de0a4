// Package doctest holds the rules that keep the project's documentation
// true: README.md and docs/*.md are read as fenced blocks, and what a block
// claims decides what the doc test (doctest_test.go) does with it.
//
// The opinion: a command in the docs is either run by a test or says why it
// cannot be. So a block's info string is a contract:
//
//   - ```sh — commands the test runs with bash (-e, -o pipefail) in the
//     root of a fresh clone of the working tree, regress installed from it
//     by go install ./cmd/regress, no network. They must exit 0; a command
//     expected to fail says with which code (code=0; regress compare a b ||
//     code=$? and then test $code -eq 1). "cmd || test $? -eq 1" is refused:
//     it passes when cmd succeeds.
//   - ```sh gpu, ```sh github — commands that need a GPU host, or GitHub
//     (or the network); listed by the test, not run.
//   - ```sh ci — commands .ci/run runs itself (every line of the block must
//     appear in .ci/run): the main job and the whole test suite, too slow or
//     too recursive to run again from the doc test.
//   - ```text output — the output of the ```sh block just before it,
//     trimmed: its lines must appear in that output in order, runs of lines
//     separated by a line "…" where output was left out.
//   - any other language (text, yaml, go, json, …) is not run; but a block
//     without a language whose lines look like commands ("$ ", "regress ",
//     "go ") is an error, and so is a shell block spelled bash, shell or
//     console: the reader could not tell whether anything checks it.
//
// Besides blocks, the rules here check relative links (the file exists,
// and a #fragment names a heading of it) and that no page cites documents
// or issues outside the repository.
package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Block is one fenced code block of a markdown file.
type Block struct {
	File string // the file's path relative to the repository root
	Line int    // the line of the opening fence, 1-based
	Info string // the info string after the fence: "sh", "sh gpu", "text output", ""
	Body string // the lines between the fences, the fence's indentation removed
}

// Where locates the block in messages: "README.md:42".
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Kind is what the doc test does with a block.
type Kind int

const (
	Other  Kind = iota // not run: an example of a file, of output, of code
	Run                // ```sh: run on a fresh clone
	Listed             // ```sh gpu|github|ci: listed, not run
	Output             // ```text output: checked against the previous Run block's output
)

// Tags of ```sh blocks that are not run, and why.
var Tags = map[string]string{
	"gpu":    "needs a GPU host",
	"github": "needs GitHub or the network",
	"ci":     "run by .ci/run itself",
}

// lenientFailure is an expected failure that accepts success too.
var lenientFailure = regexp.MustCompile(`\|\|\s*(test|\[)\s+"?\$\?"?\s+-eq\s+\d+`)

var shellSpellings = map[string]bool{"bash": true, "shell": true, "console": true, "zsh": true, "shell-session": true, "sh-session": true}

// Classify says what the doc test does with b, or why b breaks the
// convention; the second result is the tag of a Listed block.
func Classify(b Block) (Kind, string, error) {
	fields := strings.Fields(b.Info)
	lang, tags := "", []string(nil)
	if len(fields) > 0 {
		lang, tags = fields[0], fields[1:]
	}
	switch {
	case lang == "sh" && len(tags) == 0:
		if m := lenientFailure.FindString(b.Body); m != "" {
			return Run, "", fmt.Errorf("%s: %q also passes when the command succeeds: write code=0; cmd || code=$? and then test $code -eq N", b.Where(), m)
		}
		return Run, "", nil
	case lang == "sh" && len(tags) == 1 && Tags[tags[0]] != "":
		return Listed, tags[0], nil
	case lang == "sh":
		return Other, "", fmt.Errorf("%s: ```%s: a sh block is run unless tagged gpu, github or ci", b.Where(), b.Info)
	case shellSpellings[lang]:
		return Other, "", fmt.Errorf("%s: ```%s: write commands as ```sh (run on a fresh clone) or ```sh gpu|github|ci (not run)", b.Where(), b.Info)
	case lang == "text" && len(tags) == 1 && tags[0] == "output":
		return Output, "", nil
	case lang == "text" && len(tags) > 0:
		return Other, "", fmt.Errorf("%s: ```%s: the only tag of a text block is output", b.Where(), b.Info)
	case lang == "":
		if l, ok := commandLine(b.Body); ok {
			return Other, "", fmt.Errorf("%s: a block without a language holds a command (%q): tag it ```sh (run by the doc test), ```sh gpu|github|ci (not run), or ```text if it is output", b.Where(), l)
		}
	}
	return Other, "", nil
}

// commandLine returns the first line of body that looks like a command.
func commandLine(body string) (string, bool) {
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimLeft(l, " \t")
		for _, p := range []string{"$ ", "regress ", "go "} {
			if strings.HasPrefix(t, p) {
				return strings.TrimSpace(l), true
			}
		}
	}
	return "", false
}

var fence = regexp.MustCompile("^( *)(```+|~~~+)\\s*([^`]*?)\\s*$")

// Parse returns the fenced blocks of a markdown file, in order. Fences may
// be indented (in list items); a block ends at a fence of the same character
// at least as long. An unclosed block is an error.
func Parse(file string, data []byte) ([]Block, error) {
	var blocks []Block
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var open *Block
	var marker, indent string
	var body []string
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if open == nil {
			if m := fence.FindStringSubmatch(line); m != nil {
				open = &Block{File: file, Line: n, Info: m[3]}
				indent, marker, body = m[1], m[2], nil
			}
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, marker[:1]) && strings.Trim(t, marker[:1]) == "" && len(t) >= len(marker) {
			open.Body = strings.Join(body, "\n")
			if len(body) > 0 {
				open.Body += "\n"
			}
			blocks = append(blocks, *open)
			open = nil
			continue
		}
		body = append(body, strings.TrimPrefix(line, indent))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if open != nil {
		return nil, fmt.Errorf("%s: the block opened with %s is never closed", open.Where(), marker)
	}
	return blocks, nil
}

// MatchOutput checks an Output block against what its command printed: the
// block's lines, trailing spaces aside, must appear in the output in order;
// a line "…" (or "...") stands for any number of lines left out, and
// elsewhere consecutive lines must be consecutive in the output too. It
// returns the first line that could not be matched.
func MatchOutput(want, got string) error {
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
		return out
	}
	var segments [][]string
	cur := []string(nil)
	for _, l := range lines(want) {
		if t := strings.TrimSpace(l); t == "…" || t == "..." {
			if len(cur) > 0 {
				segments = append(segments, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		segments = append(segments, cur)
	}
	out := lines(got)
	at := 0
	for _, seg := range segments {
		found := -1
		for i := at; i+len(seg) <= len(out); i++ {
			ok := true
			for j := range seg {
				if out[i+j] != seg[j] {
					ok = false
					break
				}
			}
			if ok {
				found = i
				break
			}
		}
		if found < 0 {
			for _, l := range seg {
				if !contains(out[at:], l) {
					return fmt.Errorf("line %q is not in the output (after its line %d)", l, at)
				}
			}
			return fmt.Errorf("lines %q are not consecutive in the output (after its line %d); put a line \"…\" where lines were left out", seg, at)
		}
		at = found + len(seg)
	}
	return nil
}

func contains(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// outsideRefs finds citations of documents or issues outside the repository.
var outsideRefs = regexp.MustCompile(`(?i)design §|design\.md|issue #?[0-9]+`)

// OutsideReferences returns "file:line: text" for every line of a page that
// cites a document or an issue outside the repository.
func OutsideReferences(file string, data []byte) []string {
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		for _, m := range outsideRefs.FindAllString(l, -1) {
			out = append(out, fmt.Sprintf("%s:%d: %q cites what is outside the repository", file, i+1, m))
		}
	}
	return out
}

var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// BrokenLinks checks the relative links of a page (under root, at path file):
// the target file exists, and a #fragment names one of its headings.
// Links into fenced blocks and inline code are ignored.
func BrokenLinks(root, file string, data []byte) []string {
	var out []string
	inFence := false
	for i, l := range strings.Split(string(data), "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		l = inlineCode.ReplaceAllString(l, "")
		for _, m := range link.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			where := fmt.Sprintf("%s:%d: link %s", file, i+1, target)
			info, err := os.Stat(filepath.Join(root, dest))
			if err != nil {
				out = append(out, where+": no such file "+dest)
				continue
			}
			if frag == "" || info.IsDir() || !strings.HasSuffix(dest, ".md") {
				continue
			}
			page, err := os.ReadFile(filepath.Join(root, dest))
			if err != nil {
				out = append(out, where+": "+err.Error())
				continue
			}
			if !Anchors(page)[frag] {
				out = append(out, where+": "+dest+" has no heading #"+frag)
			}
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`]*`")

// Anchors returns the fragments GitHub gives the headings of a page: the
// heading in lower case, without punctuation other than hyphens and
// underscores, spaces turned into hyphens, "-1", "-2", … for repeats.
func Anchors(page []byte) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(string(page), "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if h == "" || h[0] != ' ' {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if !out[a] {
			out[a] = true
			continue
		}
		for n := 1; ; n++ {
			if s := fmt.Sprintf("%s-%d", a, n); !out[s] {
				out[s] = true
				break
			}
		}
	}
	return out
}

// MaxReadmeLines is how long README.md may be: a user guide that fits a
// sitting, with the reference in docs/.
const MaxReadmeLines = 250

// Pages returns the documentation under root that these rules cover:
// README.md, then docs/*.md in name order.
func Pages(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	pages := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		pages = append(pages, filepath.ToSlash(rel))
	}
	return pages, nil
}

// Check applies every rule that needs no command run to the pages under
// root: the blocks' info strings, an Output block right after a Run block,
// ```sh ci blocks that .ci/run really runs, links, outside references and
// README.md's length. It returns the blocks of every page in order, and one
// line per problem found.
func Check(root string) ([]Block, []string, error) {
	pages, err := Pages(root)
	if err != nil {
		return nil, nil, err
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		return nil, nil, err
	}
	var all []Block
	var problems []string
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, nil, err
		}
		if page == "README.md" {
			if n := bytes.Count(data, []byte("\n")); n > MaxReadmeLines {
				problems = append(problems, fmt.Sprintf("README.md: %d lines, more than %d: move reference into docs/", n, MaxReadmeLines))
			}
		}
		problems = append(problems, OutsideReferences(page, data)...)
		problems = append(problems, BrokenLinks(root, page, data)...)
		blocks, err := Parse(page, data)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		prev := Other
		for _, b := range blocks {
			kind, tag, err := Classify(b)
			if err != nil {
				problems = append(problems, err.Error())
			}
			if kind == Output && prev != Run {
				problems = append(problems, fmt.Sprintf("%s: a ```text output block must follow the ```sh block whose output it shows", b.Where()))
			}
			if kind == Listed && tag == "ci" {
				for _, l := range strings.Split(b.Body, "\n") {
					cmd, _, _ := strings.Cut(l, " #")
					if cmd = strings.TrimSpace(cmd); cmd != "" && !strings.HasPrefix(cmd, "#") && !bytes.Contains(ci, []byte(cmd)) {
						problems = append(problems, fmt.Sprintf("%s: ```sh ci, but .ci/run does not run %q", b.Where(), cmd))
					}
				}
			}
			prev = kind
			all = append(all, b)
		}
	}
	return all, problems, nil
}

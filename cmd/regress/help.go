package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpWidth is the width help text is wrapped to.
const helpWidth = 80

// printHelp prints v's help: the usage line, what the verb does and its
// flags, as its own flag set declares them (hidden old spellings left out).
func printHelp(w io.Writer, v *verb) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%s", usageLine(v), v.help)
	if v.name == "baseline" {
		b.WriteString("\nactions:\n")
		for _, a := range verbs {
			if strings.HasPrefix(a.name, "baseline ") {
				fmt.Fprintf(&b, "  %-14s %s\n", a.name, a.summary)
			}
		}
		fmt.Fprintf(&b, "\n'%s help baseline save' and '%s help baseline show' list their flags.\n", programName, programName)
	}
	if flags := listedFlags(v); len(flags) > 0 {
		b.WriteString("\nflags:\n")
		for _, f := range flags {
			writeFlag(&b, f)
		}
	}
	io.WriteString(w, b.String())
}

// usageLine is "usage: regress VERB SYNOPSIS".
func usageLine(v *verb) string {
	return strings.TrimSpace(fmt.Sprintf("usage: %s %s %s", programName, v.name, v.synopsis))
}

// listedFlags returns the flags help lists for v, in name order.
func listedFlags(v *verb) []*flag.Flag {
	if v.flags == nil {
		return nil
	}
	var out []*flag.Flag
	v.flags().VisitAll(func(f *flag.Flag) {
		if !hidden(f) {
			out = append(out, f)
		}
	})
	return out
}

// flagUsage splits a flag's usage into the name of its value and its
// description. A usage that starts with a back-quoted word names the value
// with it ("`N` rounds …" is --count N); otherwise the value is named as
// flag.UnquoteUsage names it, and a boolean flag takes none.
func flagUsage(f *flag.Flag) (value, text string) {
	if rest, ok := strings.CutPrefix(f.Usage, "`"); ok {
		if name, text, ok := strings.Cut(rest, "` "); ok && !strings.ContainsAny(name, " `") {
			return name, text
		}
	}
	name, text := flag.UnquoteUsage(f)
	return strings.ToUpper(name), text
}

// flagSpelling is how help writes a flag: "--count N", "--quiet".
func flagSpelling(f *flag.Flag) string {
	name, _ := flagUsage(f)
	if name == "" {
		return "--" + f.Name
	}
	return "--" + f.Name + " " + name
}

// flagText is the description of a flag, with its default when the text
// does not already say it.
func flagText(f *flag.Flag) string {
	_, text := flagUsage(f)
	switch f.DefValue {
	case "", "0", "0s", "false":
	default:
		if !strings.Contains(text, "default") {
			text += " (default " + f.DefValue + ")"
		}
	}
	return text
}

// writeFlag writes one flag of a help text: its spelling, then its
// description wrapped beside it (under it, when the spelling is long).
func writeFlag(b *strings.Builder, f *flag.Flag) {
	const col = 26
	spell := "  " + flagSpelling(f)
	lines := wrap(flagText(f), helpWidth-col)
	if len(spell) > col-2 {
		b.WriteString(spell + "\n")
		spell = ""
	}
	for _, l := range lines {
		fmt.Fprintf(b, "%-*s%s\n", col, spell, l)
		spell = ""
	}
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// commandReference is docs/commands.md: the exit codes, then for every verb
// its usage, what it does and a table of its flags, from the same flag sets
// the verbs parse with (TestCommandReference keeps the committed file in
// step with them).
func commandReference() string {
	var b strings.Builder
	b.WriteString("# regress command reference\n\n")
	b.WriteString("Generated from the verbs' own flag sets by `go test ./cmd/regress -run TestCommandReference -update`;\n")
	b.WriteString("edit the flags and help texts in `cmd/regress`, not this file. `regress help VERB` prints the same\n")
	b.WriteString("help in a terminal:\n\n")
	b.WriteString("```sh\nregress help check\n```\n\n")
	b.WriteString("Verbs: ")
	var links []string
	for _, v := range verbs {
		links = append(links, "[`"+v.name+"`](#"+anchor("regress "+v.name)+")")
	}
	b.WriteString(strings.Join(links, " · ") + ". Bare `regress` is `regress check`.\n\n")
	b.WriteString("## Exit codes\n\nEvery verb exits with one of these (a verb's help says what each means for it):\n\n")
	b.WriteString("| code | meaning |\n|--:|:--|\n")
	for _, c := range exitCodes {
		fmt.Fprintf(&b, "| %d | %s |\n", c.code, mdCell(c.meaning))
	}
	for i := range verbs {
		v := &verbs[i]
		fmt.Fprintf(&b, "\n## regress %s\n\n", v.name)
		fmt.Fprintf(&b, "%s.\n\n", upperFirst(v.summary))
		fmt.Fprintf(&b, "```text\n%s\n\n%s```\n", usageLine(v), v.help)
		flags := listedFlags(v)
		if len(flags) == 0 {
			continue
		}
		b.WriteString("\n| flag | meaning |\n|:--|:--|\n")
		for _, f := range flags {
			fmt.Fprintf(&b, "| `%s` | %s |\n", flagSpelling(f), mdCell(flagText(f)))
		}
	}
	return b.String()
}

// anchor is GitHub's heading anchor of a heading made of lower-case words.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mdCell escapes text for a markdown table cell: pipes, angle brackets and
// the characters that would start emphasis or code.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}

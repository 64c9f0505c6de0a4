package comment

import (
	"regexp"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// ClassOf returns the hardware class of r as a slug: the current side's
// class: line, else the baseline's, else "default".
func ClassOf(r *report.Report) string {
	for _, cfg := range []map[string]string{r.Current.Config, r.Baseline.Config} {
		if c := cfg["class"]; c != "" {
			return Slug(c)
		}
	}
	return "default"
}

// Slug reduces a hardware class to the characters a class slug may have
// (lower-case letters, digits, '.', '_', '-'), at most 100 bytes, so that
// untrusted text can neither break out of the hidden marker nor make two
// markers that look alike.
func Slug(class string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(class) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		switch {
		case ok && r == '-' && dash:
		case ok:
			b.WriteRune(r)
			dash = r == '-'
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 100 {
		s = strings.Trim(s[:100], "-")
	}
	if s == "" {
		return "default"
	}
	return s
}

// The hidden lines that start every comment kernelwatch writes. The first
// line keys the comment (one per pull request and hardware class; v1 is the
// layout version), the second records the head commit it reports on, so
// that an older run never overwrites a newer commit's comment.
const (
	markerPrefix = "<!-- kernelwatch:v1 class="
	headPrefix   = "<!-- kernelwatch:head sha="
	markerSuffix = " -->"
)

// Marker returns the first line of the comment for class (a slug).
func Marker(class string) string { return markerPrefix + Slug(class) + markerSuffix }

// Meta is what the hidden lines of a kernelwatch comment record.
type Meta struct {
	Class   string // hardware class slug
	HeadSHA string // the head commit reported on; empty if not recorded
}

// Parse reads the hidden lines at the start of a comment body. ok is false
// when the body does not start with a kernelwatch marker.
func Parse(body string) (m Meta, ok bool) {
	lines := strings.SplitN(strings.ReplaceAll(body, "\r\n", "\n"), "\n", 3)
	first := lines[0]
	if !strings.HasPrefix(first, markerPrefix) || !strings.HasSuffix(first, markerSuffix) {
		return m, false
	}
	m.Class = strings.TrimSuffix(strings.TrimPrefix(first, markerPrefix), markerSuffix)
	if m.Class == "" || Slug(m.Class) != m.Class {
		return Meta{}, false
	}
	if len(lines) > 1 && strings.HasPrefix(lines[1], headPrefix) && strings.HasSuffix(lines[1], markerSuffix) {
		if sha := strings.TrimSuffix(strings.TrimPrefix(lines[1], headPrefix), markerSuffix); IsSHA(sha) {
			m.HeadSHA = sha
		}
	}
	return m, true
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// IsSHA reports whether s looks like a (possibly abbreviated) commit hash.
func IsSHA(s string) bool { return shaRE.MatchString(s) }

var repoRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// IsRepository reports whether s looks like owner/name.
func IsRepository(s string) bool { return repoRE.MatchString(s) && !strings.Contains(s, "..") }

package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// CodeKey is the config line the suite prints before each GPU benchmark's result: a fingerprint of the code the
// benchmark ran — for each launch of its timed Run, the module's contents (a hash of its PTX), the kernel, its
// grid, block, cluster and dynamic shared memory, its scalar arguments (device pointers left out: where a buffer
// lies is not code), and the library calls it makes. Two results with the same fingerprint ran the same kernels
// the same way, whatever the commit; a kernel edit, a plan that chooses other kernels or tiles, and a variant
// build (Redirect) each change it. regress never splits comparisons on it; `regress calibrate --across-history`
// learns cross-host floors only from snapshots whose benchmark ran the same code, so that a stored baseline's
// own kernel changes do not pass for host noise. CodeNone is printed for a benchmark whose launch cannot say,
// after one that could, so that an earlier fingerprint does not carry over to it.
const (
	CodeKey  = "code"
	CodeNone = "none"
)

// codeDescriber is a Launch that can describe the code it runs, one string a launch step; false when it cannot.
type codeDescriber interface {
	codeParts() ([]string, bool)
}

// codeFingerprint is the fingerprint of a launch's parts: the first 12 hex digits of the SHA-256 of the parts,
// each followed by a NUL.
func codeFingerprint(parts []string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// printCode prints the CodeKey config line of launch l when it differs from the last one printed: l's
// fingerprint, or CodeNone once a fingerprint has been printed and l has none. A process that runs no
// describable launch (the CPU backend) prints none at all.
func (s *Suite) printCode(l Launch) {
	code := CodeNone
	if d, ok := l.(codeDescriber); ok {
		if parts, ok := d.codeParts(); ok && len(parts) > 0 {
			code = codeFingerprint(parts)
		}
	}
	if code == s.lastCode || code == CodeNone && s.lastCode == "" {
		return
	}
	fmt.Fprintf(s.Out, "%s: %s\n", CodeKey, code)
	s.lastCode = code
}

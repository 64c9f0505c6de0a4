package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/group"
)

// codeLaunch is a Launch whose code is parts (nil: it cannot say).
type codeLaunch struct {
	Launch
	parts []string
}

func (l codeLaunch) codeParts() ([]string, bool) { return l.parts, l.parts != nil }

// plainLaunch is a Launch that cannot describe its code, as the CPU backend's.
type plainLaunch struct{ Launch }

func TestPrintCode(t *testing.T) {
	var out strings.Builder
	s := &Suite{Out: &out}
	a := codeLaunch{parts: []string{"rmsnorm@0011 rmsnorm_block_f32 grid=8192 block=512 cluster=0 smem=0 maps=0 args=p,p,p,2000,4000"}}
	b := codeLaunch{parts: []string{"rmsnorm@0011 rmsnorm_block_f32 grid=8192 block=256 cluster=0 smem=0 maps=0 args=p,p,p,2000,4000"}}
	for _, l := range []Launch{plainLaunch{}, a, a, b, plainLaunch{}, plainLaunch{}, codeLaunch{}, a} {
		s.printCode(l)
	}
	fa, fb := codeFingerprint(a.parts), codeFingerprint(b.parts)
	if len(fa) != 12 || fa == fb {
		t.Fatalf("fingerprints %q and %q: want 12 hex digits each, different for another block size", fa, fb)
	}
	// Nothing before the first describable launch; each change once; none after a fingerprint, once.
	want := "code: " + fa + "\ncode: " + fb + "\ncode: none\ncode: " + fa + "\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	s = &Suite{Out: &out}
	for range 3 {
		s.printCode(plainLaunch{})
	}
	if out.Len() != 0 {
		t.Errorf("a run without describable launches printed %q, want nothing", out.String())
	}
}

func TestCodeKeyIsARunKey(t *testing.T) {
	// regress must never split a comparison on the fingerprint, and must read the same words the harness prints.
	if CodeKey != group.CodeKey || CodeNone != group.CodeNone || !slices.Contains(group.RunKeys, CodeKey) {
		t.Errorf("harness prints %q / %q; regress reads %q / %q, run keys %v", CodeKey, CodeNone, group.CodeKey,
			group.CodeNone, group.RunKeys)
	}
}

func TestCodeFingerprintSeparatesParts(t *testing.T) {
	// The parts are delimited, so that moving text between two of them changes the fingerprint.
	if codeFingerprint([]string{"ab", "c"}) == codeFingerprint([]string{"a", "bc"}) {
		t.Error(`["ab" "c"] and ["a" "bc"] have the same fingerprint`)
	}
	if codeFingerprint([]string{"x"}) != codeFingerprint([]string{"x"}) {
		t.Error("the fingerprint is not a function of the parts")
	}
}

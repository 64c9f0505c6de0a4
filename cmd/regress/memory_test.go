package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/kernelwatch/kernelwatch/regress/report"
)

// memoryChildEnv names the report the child process of
// TestCommentMemoryBound publishes.
const memoryChildEnv = "KERNELWATCH_TEST_MEMORY_REPORT"

// TestCommentMemoryChild is the child of TestCommentMemoryBound: it runs
// `regress comment --dry-run` on the report named by memoryChildEnv in
// this process, whose peak memory the parent measures.
func TestCommentMemoryChild(t *testing.T) {
	path := os.Getenv(memoryChildEnv)
	if path == "" {
		t.Skip("run by TestCommentMemoryBound")
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, dir: t.TempDir()}
	code := run(e, []string{"comment", "--dry-run", "--repo", "o/r", path})
	fmt.Printf("exit %d\n%s", code, errb.String())
}

// hugeReport writes a report of about size bytes whose comparisons are n
// copies of one comparison (JSON text), and returns its path.
func hugeReport(t *testing.T, comparison string, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, `{"schema":%q,"verdict":"pass","comparisons":[%s`, report.Schema, comparison)
	for n := 0; n < size; n += len(comparison) + 1 {
		w.WriteString("," + comparison)
	}
	w.WriteString(`],"counts":{}}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// TestCommentMemoryBound publishes hostile reports of 27 MB (a size that
// zips to kilobytes and passes the workflow's size checks) in a child
// process and checks that each is refused within 256 MB of peak memory: a
// report of empty comparisons, and one of well-formed comparisons past the
// count limit.
func TestCommentMemoryBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the child's peak RSS as Linux reports it (KiB)")
	}
	valid := `{"name":"A","config":{},"unit":"sec/op","better":"lower","baseline":{"center":1,"lo":1,"hi":1,"n":3,"values":[1,1,1]},` +
		`"current":{"center":1,"lo":1,"hi":1,"n":3,"values":[1,1,1]},"delta":0,"delta_lo":0,"delta_hi":0,"p":1,"p_adjusted":1,` +
		`"threshold":0.05,"gate":"fail","verdict":"unchanged"}`
	for _, tc := range []struct {
		name, comparison, want string
	}{
		{"empty comparisons", "{}", `comparison 0 (""): unknown verdict ""`},
		{"too many comparisons", valid, fmt.Sprintf("more than %d comparisons", report.DefaultLimits.Comparisons)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := hugeReport(t, tc.comparison, 27<<20)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCommentMemoryChild$", "-test.v")
			cmd.Env = append(os.Environ(), memoryChildEnv+"="+path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			t.Logf("peak RSS %.1f MiB", float64(rss)/(1<<20))
			if !strings.Contains(string(out), "exit 2\n") || !strings.Contains(string(out), tc.want) {
				t.Errorf("child output lacks exit 2 and %q:\n%.2000s", tc.want, out)
			}
			if rss >= 256<<20 {
				t.Errorf("peak RSS %d MiB, want under 256 MiB", rss>>20)
			}
		})
	}
}

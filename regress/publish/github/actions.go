package github

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
)

// SummaryBudget returns how many bytes may still be appended to the job
// summary file at path (GITHUB_STEP_SUMMARY) before it reaches GitHub's
// 1 MiB limit for one step.
func SummaryBudget(path string) (int, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return comment.SummaryBudget, nil
	}
	if err != nil {
		return 0, err
	}
	return max(comment.SummaryBudget-int(st.Size()), 0), nil
}

// AppendSummary appends text to the job summary file at path.
func AppendSummary(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("job summary: %w", err)
	}
	return f.Close()
}

// Output is one step output.
type Output struct{ Name, Value string }

// WriteOutputs appends outputs to the file at path (GITHUB_OUTPUT) in the
// multi-line form name<<DELIMITER, with a random delimiter that the value
// cannot contain, so no value can inject another output.
func WriteOutputs(path string, outs []Output) error {
	var b strings.Builder
	for _, o := range outs {
		if o.Name == "" || strings.ContainsAny(o.Name, "<=\n\r") {
			return fmt.Errorf("output name %q", o.Name)
		}
		var delim string
		for {
			var buf [12]byte
			if _, err := rand.Read(buf[:]); err != nil {
				return err
			}
			delim = "ghadelimiter_" + hex.EncodeToString(buf[:])
			if !strings.Contains(o.Value, delim) {
				break
			}
		}
		b.WriteString(o.Name + "<<" + delim + "\n" + o.Value + "\n" + delim + "\n")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("step outputs: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("step outputs: %w", err)
	}
	return f.Close()
}

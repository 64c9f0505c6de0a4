package github

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestWorkflowHygiene checks what actionlint does not: in the repository's
// workflows and action.yml, every third-party action is pinned by a full
// commit SHA, no shell script contains a ${{ }} expression (inputs reach
// scripts through env), every workflow starts from permissions: {} and
// every job grants its own.
func TestWorkflowHygiene(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	files = append(files, filepath.Join(root, "action.yml"))
	if len(files) < 5 {
		t.Fatalf("found %d workflow files", len(files))
	}
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	type step struct {
		Uses, Run string
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Permissions *map[string]string `yaml:"permissions"`
			Jobs        map[string]struct {
				Permissions *map[string]string `yaml:"permissions"`
				Steps       []step             `yaml:"steps"`
			} `yaml:"jobs"`
			Runs struct {
				Steps []step `yaml:"steps"`
			} `yaml:"runs"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(f)
		steps := doc.Runs.Steps
		if name != "action.yml" {
			if doc.Permissions == nil || len(*doc.Permissions) != 0 {
				t.Errorf("%s: want top-level permissions: {}", name)
			}
			for job, j := range doc.Jobs {
				if j.Permissions == nil {
					t.Errorf("%s: job %s grants no permissions of its own", name, job)
				}
				steps = append(steps, j.Steps...)
			}
		}
		for _, s := range steps {
			if s.Uses != "" && !strings.HasPrefix(s.Uses, "./") && !pinned.MatchString(s.Uses) {
				t.Errorf("%s: %s is not pinned by a full commit SHA", name, s.Uses)
			}
			if strings.Contains(s.Run, "${{") {
				t.Errorf("%s: a run script contains an expression; pass it through env:\n%s", name, s.Run)
			}
		}
	}
}

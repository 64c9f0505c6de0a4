package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestActionUploadsReport checks the composite action's artifact upload as
// written: the artifact input uploads nothing by default; the upload step
// comes after the step whose outputs it reads, runs also after a failing
// gate (always(), as the publish step), uploads the report and the result files under
// the input's name, and pins actions/upload-artifact by the same full
// commit SHA as the workflows do.
func TestActionUploadsReport(t *testing.T) {
	root := filepath.Join("..", "..")
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Steps []struct {
				ID   string            `yaml:"id"`
				If   string            `yaml:"if"`
				Uses string            `yaml:"uses"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	in, ok := action.Inputs["artifact"]
	if !ok || in.Default != "" {
		t.Fatalf("action.yml: input artifact %v with default %q, want one that uploads nothing by default", ok, in.Default)
	}
	// The SHA the workflows pin upload-artifact to.
	pinned := regexp.MustCompile(`uses: actions/upload-artifact@([0-9a-f]{40}) # v`)
	workflows, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	want := ""
	for _, f := range workflows {
		data, _ := os.ReadFile(f)
		if m := pinned.FindSubmatch(data); m != nil {
			want = string(m[1])
		}
	}
	if want == "" {
		t.Fatal("no workflow pins actions/upload-artifact by a full SHA")
	}
	ids := map[string]int{}
	uploads := 0
	for i, s := range action.Runs.Steps {
		if s.ID != "" {
			ids[s.ID] = i
		}
		if !strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			continue
		}
		uploads++
		if s.Uses != "actions/upload-artifact@"+want {
			t.Errorf("action.yml step %d uses %s, want the workflows' actions/upload-artifact@%s", i+1, s.Uses, want)
		}
		cond := strings.Join(strings.Fields(s.If), " ")
		if !(strings.Contains(cond, "always()") || strings.Contains(cond, "!cancelled()")) || !strings.Contains(cond, "inputs.artifact != ''") || strings.Contains(cond, "success()") {
			t.Errorf("action.yml upload step: if %q, want it to run after a failing gate (always() or !cancelled()) and only with inputs.artifact", s.If)
		}
		if name := strings.TrimSpace(s.With["name"]); name != "${{ inputs.artifact }}" {
			t.Errorf("action.yml upload step: name %q, want ${{ inputs.artifact }}", name)
		}
		refs := regexp.MustCompile(`steps\.([A-Za-z0-9_-]+)\.outputs\.(report|results)`).FindAllStringSubmatch(s.With["path"]+" "+s.If, -1)
		seen := map[string]bool{}
		for _, m := range refs {
			seen[m[2]] = true
			if j, ok := ids[m[1]]; !ok || j >= i {
				t.Errorf("action.yml upload step reads steps.%s.outputs.%s: no earlier step has id %s", m[1], m[2], m[1])
			}
		}
		if !seen["report"] || !seen["results"] {
			t.Errorf("action.yml upload step: path %q, want the report and the results outputs", s.With["path"])
		}
	}
	if uploads != 1 {
		t.Errorf("action.yml has %d upload-artifact steps, want 1", uploads)
	}
}

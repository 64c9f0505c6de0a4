package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// readAction reads this repository's action.yml (ghAction, as the workflow
// tests run it).
func readAction(t *testing.T) ghAction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action ghAction
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return action
}

// TestActionUploadsReport checks the composite action's artifact upload as
// written: the artifact input uploads nothing by default; the upload step
// comes after the step whose outputs it reads, runs also after a failing
// gate (always(), as the publish step), uploads the report and the result files under
// the input's name, and pins actions/upload-artifact by the same full
// commit SHA as the workflows do.
func TestActionUploadsReport(t *testing.T) {
	root := filepath.Join("..", "..")
	action := readAction(t)
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

// TestActionKeepsJITCache checks the composite action's CUDA JIT cache as
// written: on by default (input jit-cache), restored before the step that
// runs the benchmarks and saved after it by actions/cache's restore and save
// halves pinned to one full commit SHA, both on the same directory (the
// driver's: CUDA_CACHE_PATH, else ~/.nv/ComputeCache); saved also after a
// failing gate (always()), under the key the restore computed, and only when
// the restore was not an exact hit and the benchmark step found the directory
// (a runner without a GPU has none, and would get a warning every run).
func TestActionKeepsJITCache(t *testing.T) {
	action := readAction(t)
	if in, ok := action.Inputs["jit-cache"]; !ok || in.Default != "true" {
		t.Fatalf("action.yml: input jit-cache %v with default %q, want one that keeps the cache by default", ok, in.Default)
	}
	restore, save, regress := -1, -1, -1
	sha := regexp.MustCompile(`^actions/cache/(restore|save)@([0-9a-f]{40})$`)
	shas := map[string]bool{}
	for i, s := range action.Runs.Steps {
		if s.ID == "regress" {
			regress = i
		}
		m := sha.FindStringSubmatch(s.Uses)
		if strings.HasPrefix(s.Uses, "actions/cache") && m == nil {
			t.Errorf("action.yml step %d uses %s, want actions/cache/restore or /save pinned by a full SHA", i+1, s.Uses)
			continue
		}
		if m == nil {
			continue
		}
		shas[m[2]] = true
		if m[1] == "restore" {
			restore = i
		} else {
			save = i
		}
	}
	if restore < 0 || save < 0 || regress < 0 {
		t.Fatalf("action.yml: restore step %d, save step %d, regress step %d; want all three", restore, save, regress)
	}
	if len(shas) != 1 {
		t.Errorf("action.yml: actions/cache pinned to %d different SHAs, want one", len(shas))
	}
	r, s, g := action.Runs.Steps[restore], action.Runs.Steps[save], action.Runs.Steps[regress]
	if !(restore < regress && regress < save) {
		t.Errorf("action.yml: restore at step %d, regress at %d, save at %d; want restore, regress, save in that order", restore+1, regress+1, save+1)
	}
	if !strings.Contains(r.If, "inputs.jit-cache == 'true'") || r.ID == "" {
		t.Errorf("action.yml restore step: id %q, if %q; want an id and the jit-cache input as its condition", r.ID, r.If)
	}
	path := r.With["path"]
	if path != s.With["path"] || !strings.Contains(path, "env.CUDA_CACHE_PATH") || !strings.Contains(path, "~/.nv/ComputeCache") {
		t.Errorf("action.yml: restore path %q, save path %q; want the same, CUDA_CACHE_PATH else ~/.nv/ComputeCache", path, s.With["path"])
	}
	cond := strings.Join(strings.Fields(s.If), " ")
	for _, want := range []string{"always()", "steps." + r.ID + ".outputs.cache-hit != 'true'", "steps.regress.outputs.jit-cache == 'yes'"} {
		if !strings.Contains(cond, want) {
			t.Errorf("action.yml save step: if %q lacks %q", s.If, want)
		}
	}
	if key := strings.TrimSpace(s.With["key"]); key != "${{ steps."+r.ID+".outputs.cache-primary-key }}" {
		t.Errorf("action.yml save step: key %q, want the restore step's cache-primary-key", key)
	}
	if !strings.Contains(g.Run, `[ -d "${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}" ]; then echo "jit-cache=yes" >> "$GITHUB_OUTPUT"`) {
		t.Error("action.yml regress step: does not set output jit-cache=yes only where the cache directory exists")
	}
}

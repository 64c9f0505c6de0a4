package github

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

type trustStep struct {
	ID, Name, If, Uses, Run string
	Env                     map[string]string
	With                    map[string]string
}

type trustJob struct {
	If          string            `yaml:"if"`
	RunsOn      any               `yaml:"runs-on"`
	Environment any               `yaml:"environment"`
	Needs       any               `yaml:"needs"`
	Permissions map[string]string `yaml:"permissions"`
	Steps       []trustStep       `yaml:"steps"`
}

type trustWorkflow struct {
	On   map[string]any      `yaml:"on"`
	Jobs map[string]trustJob `yaml:"jobs"`
	Runs struct {
		Steps []trustStep `yaml:"steps"`
	} `yaml:"runs"`
}

func readWorkflow(t *testing.T, file string) (trustWorkflow, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	var w trustWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return w, string(data)
}

// hostedLabels are GitHub-hosted runners: a fresh VM for every job.
var hostedLabels = map[string]bool{"ubuntu-latest": true, "ubuntu-24.04": true, "ubuntu-22.04": true}

// runsPullRequestCode reports whether a job checks out the pull request
// or runs this repository's action from it.
func runsPullRequestCode(j trustJob) bool {
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") || s.Uses == "./" {
			return true
		}
	}
	return false
}

func needsOf(j trustJob) []string {
	switch v := j.Needs.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, n := range v {
			out = append(out, fmt.Sprint(n))
		}
		return out
	}
	return nil
}

// holdsToken reports whether a step's environment carries a token.
func holdsToken(s trustStep) bool {
	for _, v := range s.Env {
		if strings.Contains(v, "github.token") || strings.Contains(v, "secrets.") || strings.Contains(v, "inputs.github-token") {
			return true
		}
	}
	return false
}

// TestWorkflowTrust checks, by reading the YAML, the properties
// docs/security.md says the workflows enforce:
//
//   - regress-pr.yml runs a pull request's code only on a GitHub-hosted
//     runner or in a job that waits in the approval environment, with
//     read-only permissions and no secrets; it uploads reports only under
//     the allow-listed names, the GPU one from the join of the approved GPU
//     job, whose name and environment are the ones regress comment checks;
//   - regress-comment.yml runs no pull request code and gives its token to
//     one command, regress comment --from-run, which takes the status
//     context and the class from the allow-list, not from the artifact;
//   - regress-main.yml runs only on main, and its benchmarks never hold the
//     write token;
//   - action.yml gives the token to its publishing step only.
func TestWorkflowTrust(t *testing.T) {
	t.Run("regress-pr", func(t *testing.T) {
		w, text := readWorkflow(t, ".github/workflows/regress-pr.yml")
		if len(w.On) != 1 || !contains(w.On, "pull_request") {
			t.Errorf("triggers %v, want pull_request only", w.On)
		}
		if strings.Contains(text, "secrets.") {
			t.Error("uses secrets")
		}
		uploads := map[string]string{} // artifact name → job
		for name, j := range w.Jobs {
			for perm, v := range j.Permissions {
				if v != "read" {
					t.Errorf("job %s: %s: %s; a pull request's jobs read only", name, perm, v)
				}
			}
			env, _ := j.Environment.(string)
			label, _ := j.RunsOn.(string)
			if runsPullRequestCode(j) && !hostedLabels[label] && env != DefaultApproval.Environment {
				t.Errorf("job %s runs the pull request's code on %v without environment %s", name, j.RunsOn, DefaultApproval.Environment)
			}
			for _, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(s.With["name"], "regress-report") {
					uploads[s.With["name"]] = name
				}
			}
		}
		allowed := map[string]bool{}
		for _, a := range ReportArtifacts {
			allowed[a.Name] = true
		}
		for art, job := range uploads {
			if !allowed[art] {
				t.Errorf("job %s uploads %s, which regress comment --from-run would ignore", job, art)
			}
		}
		gpu, ok := w.Jobs[DefaultApproval.Job]
		if env, _ := gpu.Environment.(string); !ok || env != DefaultApproval.Environment {
			t.Errorf("job %s (DefaultApproval.Job) has environment %v, want %s", DefaultApproval.Job, gpu.Environment, DefaultApproval.Environment)
		}
		if j := uploads["regress-report-gpu"]; j == "" || !slices.Contains(needsOf(w.Jobs[j]), DefaultApproval.Job) {
			t.Errorf("regress-report-gpu is uploaded by job %q, which does not need job %s", j, DefaultApproval.Job)
		}
		cpu, approved := w.Jobs["cpu"], w.Jobs["cpu-approved"]
		if !reflect.DeepEqual(cpu.Steps, approved.Steps) || cpu.If != "${{ vars.REGRESS_RUNS_ON == '' }}" || approved.If != "${{ vars.REGRESS_RUNS_ON != '' }}" {
			t.Errorf("cpu and cpu-approved must be one check, on ubuntu-latest or, with REGRESS_RUNS_ON, behind the approval: ifs %q, %q", cpu.If, approved.If)
		}
	})

	t.Run("regress-comment", func(t *testing.T) {
		w, _ := readWorkflow(t, ".github/workflows/regress-comment.yml")
		if len(w.On) != 1 || !contains(w.On, "workflow_run") {
			t.Errorf("triggers %v, want workflow_run only", w.On)
		}
		for name, j := range w.Jobs {
			want := map[string]string{"actions": "read", "contents": "read", "pull-requests": "write", "statuses": "write"}
			if !maps.Equal(j.Permissions, want) {
				t.Errorf("job %s: permissions %v, want %v", name, j.Permissions, want)
			}
			withToken := 0
			for _, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "actions/checkout@") && (s.With["ref"] != "" || s.With["persist-credentials"] != "false") {
					t.Errorf("checkout %v: only the default branch, without credentials", s.With)
				}
				for _, bad := range []string{"--status-context", "gh api", "unzip", "download-artifact", "curl"} {
					if strings.Contains(s.Run+s.Uses, bad) {
						t.Errorf("step %q: %s; the artifacts are regress comment --from-run's to read", s.Name, bad)
					}
				}
				if holdsToken(s) {
					withToken++
					if strings.TrimSpace(s.Run) != `"$RUNNER_TEMP/regress-bin" comment --from-run` {
						t.Errorf("step %q holds the token and runs:\n%s", s.Name, s.Run)
					}
				}
			}
			if withToken != 1 {
				t.Errorf("job %s: %d steps hold the token, want 1", name, withToken)
			}
		}
	})

	t.Run("regress-main", func(t *testing.T) {
		w, _ := readWorkflow(t, ".github/workflows/regress-main.yml")
		for ev := range w.On {
			if ev != "push" && ev != "workflow_dispatch" {
				t.Errorf("trigger %s: only main's code may run with a write token", ev)
			}
		}
		if push, _ := w.On["push"].(map[string]any); fmt.Sprint(push["branches"]) != "[main]" {
			t.Errorf("push trigger %v, want branches [main]", w.On["push"])
		}
		for _, j := range w.Jobs {
			for _, s := range j.Steps {
				if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
					t.Error("checkout persists the token in .git/config, where the benchmarks can read it")
				}
				if holdsToken(s) && strings.Contains(s.Run, `regress" run`) {
					t.Errorf("step %q runs the benchmarks with the token", s.Name)
				}
			}
		}
	})

	t.Run("action", func(t *testing.T) {
		w, _ := readWorkflow(t, "action.yml")
		var holders []string
		for _, s := range w.Runs.Steps {
			if holdsToken(s) {
				holders = append(holders, s.ID)
			}
			if s.ID == "regress" && !strings.Contains(s.Run, "unset GITHUB_TOKEN") {
				t.Error("the benchmark step does not drop a GITHUB_TOKEN the calling job set")
			}
			if s.ID == "publish" && (strings.Contains(s.Run, "check") || strings.Contains(s.Run, "judge") || strings.Contains(s.Run, "go build")) {
				t.Errorf("the publishing step builds or runs the suite:\n%s", s.Run)
			}
		}
		if !slices.Equal(holders, []string{"publish"}) {
			t.Errorf("steps holding the token: %v, want [publish]", holders)
		}
	})
}

func contains(m map[string]any, k string) bool { _, ok := m[k]; return ok }

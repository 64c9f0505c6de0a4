package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The test below runs the GPU jobs of .github/workflows/regress-pr.yml as a
// runner would, on this machine: the plan job's script, each matrix shard's
// steps (the composite action in shard mode, then the upload), and the join
// job's steps (the download, the composite action in join mode, the
// upload), against a temporary repository. Steps of third-party actions are
// emulated where they move files (upload-artifact, download-artifact, with
// the layout GitHub gives them) and skipped where the test stands in for
// them (checkout, setup-go); anything else in the workflow fails the test,
// so it cannot silently stop covering the workflow. The one command replaced
// is the action's `go build ./cmd/regress`, by a copy of regress built once
// for the test: a -trimpath build of every dependency would take a minute
// on the CI machine.

// ghStep is a step of a workflow job or of a composite action.
type ghStep struct {
	ID               string            `yaml:"id"`
	Name             string            `yaml:"name"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	With             map[string]string `yaml:"with"`
}

type ghJob struct {
	If       string            `yaml:"if"`
	Needs    any               `yaml:"needs"`
	Outputs  map[string]string `yaml:"outputs"`
	Steps    []ghStep          `yaml:"steps"`
	Strategy struct {
		Matrix map[string]string `yaml:"matrix"`
	} `yaml:"strategy"`
}

type ghAction struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Steps []ghStep `yaml:"steps"`
	} `yaml:"runs"`
}

// ghRunner runs workflow steps. ctx holds the values of the expression
// contexts ("github.run_id", "vars.REGRESS_COUNT", "matrix.shard", ...).
type ghRunner struct {
	t         *testing.T
	root      string // this repository: the action and the workflows
	workspace string // the checkout of the repository under test
	temp      string // RUNNER_TEMP
	artifacts string // where uploaded artifacts are kept, one directory each
	path      string // PATH, with the go shim first
	action    ghAction
	ctx       map[string]string
	env       []string        // added to every script's environment
	log       strings.Builder // everything the scripts printed
	// started, when set, is called with each script's process once it
	// runs, as the runner would later signal it.
	started func(*os.Process)
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// value evaluates the expressions the workflows use: a context value, a
// string literal, and a || b.
func (g *ghRunner) value(expr string) string {
	g.t.Helper()
	for _, alt := range strings.Split(expr, "||") {
		alt = strings.TrimSpace(alt)
		var v string
		switch {
		case strings.HasPrefix(alt, "'") && strings.HasSuffix(alt, "'") && len(alt) >= 2:
			v = strings.ReplaceAll(alt[1:len(alt)-1], "''", "'")
		case regexp.MustCompile(`^[a-z]+(\.[A-Za-z0-9_-]+)+$`).MatchString(alt):
			ctx, _, _ := strings.Cut(alt, ".")
			known := false
			v, known = g.ctx[alt]
			if !known && ctx != "vars" && ctx != "steps" && ctx != "inputs" {
				g.t.Fatalf("expression %q: the test does not know %s", expr, alt)
			}
		default:
			g.t.Fatalf("expression %q: not supported by the test", expr)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// expand replaces every ${{ }} in s by its value.
func (g *ghRunner) expand(s string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string {
		return g.value(exprRE.FindStringSubmatch(m)[1])
	})
}

// cond evaluates an if: condition of the forms the workflows use: terms
// joined by &&, each !cancelled(), always(), or a != or == between a
// context value and a string literal. After a failed step, a condition
// without a status function is false, as on GitHub.
func (g *ghRunner) cond(s string, failed bool) bool {
	g.t.Helper()
	if s == "" {
		return !failed
	}
	s = strings.TrimSpace(s)
	if m := exprRE.FindStringSubmatch(s); m != nil && m[0] == s {
		s = m[1]
	}
	if failed && !strings.Contains(s, "cancelled()") && !strings.Contains(s, "always()") {
		return false
	}
	for _, term := range strings.Split(s, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "!cancelled()", term == "always()":
		case strings.Contains(term, "!="):
			a, b, _ := strings.Cut(term, "!=")
			if g.value(a) == g.value(b) {
				return false
			}
		case strings.Contains(term, "=="):
			a, b, _ := strings.Cut(term, "==")
			if g.value(a) != g.value(b) {
				return false
			}
		default:
			g.t.Fatalf("condition %q: term %q not supported by the test", s, term)
		}
	}
	return true
}

// script runs a bash step the way the runner does, and returns its exit code
// and the outputs it wrote to $GITHUB_OUTPUT.
func (g *ghRunner) script(name, script, dir string, env map[string]string) (int, map[string]string) {
	g.t.Helper()
	stepDir, err := os.MkdirTemp(g.temp, "step")
	if err != nil {
		g.t.Fatal(err)
	}
	file := filepath.Join(stepDir, "script.sh")
	out, summary := filepath.Join(stepDir, "output"), filepath.Join(stepDir, "summary")
	for _, f := range []string{out, summary} {
		os.WriteFile(f, nil, 0o644)
	}
	os.WriteFile(file, []byte(script), 0o644)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GITHUB_") && !strings.HasPrefix(k, "RUNNER_") && k != "PATH" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+g.path, "RUNNER_TEMP="+g.temp, "GITHUB_OUTPUT="+out,
		"GITHUB_STEP_SUMMARY="+summary, "GITHUB_ACTION_PATH="+g.root, "GITHUB_WORKSPACE="+g.workspace,
		"GITHUB_REPOSITORY=example/suite", "GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID="+g.ctx["github.run_id"])
	cmd.Env = append(cmd.Env, g.env...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var output syncBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	if g.started != nil {
		go g.started(cmd.Process)
	}
	cmd.Wait()
	fmt.Fprintf(&g.log, "== %s\n%s", name, output.String())
	data, _ := os.ReadFile(out)
	outputs := parseOutputs(g.t, string(data))
	sum, _ := os.ReadFile(summary)
	outputs["(summary)"] = string(sum)
	return cmd.ProcessState.ExitCode(), outputs
}

// parseOutputs reads a $GITHUB_OUTPUT file as the runner does: name=value
// lines and name<<DELIMITER blocks.
func parseOutputs(t *testing.T, data string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("GITHUB_OUTPUT: %s<<%s is not closed", name, delim)
			}
			out[name] = strings.Join(value, "\n")
		} else if name, value, ok := strings.Cut(l, "="); ok {
			out[name] = value
		} else if l != "" {
			t.Fatalf("GITHUB_OUTPUT: bad line %q", l)
		}
	}
	return out
}

// runAction runs the composite action (uses: ./) with the step's inputs and
// returns its exit code and outputs.
func (g *ghRunner) runAction(with map[string]string) (int, map[string]string) {
	g.t.Helper()
	saved := g.ctx
	g.ctx = map[string]string{}
	for k, v := range saved {
		if !strings.HasPrefix(k, "steps.") {
			g.ctx[k] = v
		}
	}
	defer func() { g.ctx = saved }()
	for name, in := range g.action.Inputs {
		g.ctx["inputs."+name] = g.expand(in.Default)
	}
	for name, v := range with {
		if _, ok := g.action.Inputs[name]; !ok {
			g.t.Fatalf("the workflow gives the action an input it does not have: %s", name)
		}
		g.ctx["inputs."+name] = g.expand(v)
	}
	code := 0
	var summary string
	for _, s := range g.action.Runs.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/cache/restore@"):
			// The JIT cache (input jit-cache): the test's runner keeps no
			// cache, so a restore that runs misses (no cache-hit output).
			if g.cond(s.If, code != 0) {
				g.ctx["steps."+s.ID+".outcome"] = "success"
				g.ctx["steps."+s.ID+".outputs.cache-primary-key"] = "kernelwatch-cuda-jit-test"
			}
		case strings.HasPrefix(s.Uses, "actions/cache/save@"):
			// Saving is the runner's business; its condition is still
			// evaluated, so that it stays of a form the runner reads.
			_ = g.cond(s.If, code != 0)
		case s.Uses != "":
			// setup-go, only with inputs.go-version: the test brings Go.
			if g.cond(s.If, false) {
				g.t.Fatalf("action step %s would run; the test cannot", s.Uses)
			}
		case !g.cond(s.If, code != 0):
			// A step after a failure runs only if its condition says so.
		case s.Run != "":
			if s.Shell != "bash" {
				g.t.Fatalf("action step %q: shell %q", s.ID, s.Shell)
			}
			env := map[string]string{}
			for k, v := range s.Env {
				env[k] = g.expand(v)
			}
			dir := filepath.Join(g.workspace, g.expand(s.WorkingDirectory))
			stepCode, outputs := g.script("action step "+s.ID, s.Run, dir, env)
			summary += outputs["(summary)"]
			for k, v := range outputs {
				g.ctx["steps."+s.ID+".outputs."+k] = v
			}
			if stepCode != 0 {
				code = stepCode // the action fails with its last failing step
			}
		}
	}
	out := map[string]string{"(summary)": summary}
	for name, o := range g.action.Outputs {
		out[name] = g.expand(o.Value)
	}
	return code, out
}

// copyDir copies the regular files of src (not recursively) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dst, 0o755)
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil && e.Type().IsRegular() {
			os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644)
		}
	}
}

// runJob runs the steps of a job and reports whether it succeeded, and the
// exit code and outputs of the step with id kw. The job's own outputs go to
// the needs.<name>.outputs context.
func (g *ghRunner) runJob(name string, job ghJob) (ok bool, kwCode int, kw map[string]string) {
	g.t.Helper()
	failed := false
	for _, s := range job.Steps {
		if !g.cond(s.If, failed) {
			continue
		}
		var code int
		var outputs map[string]string
		switch {
		case s.Run != "":
			env := map[string]string{}
			for k, v := range s.Env {
				env[k] = g.expand(v)
			}
			code, outputs = g.script(name+": "+s.Name, g.expand(s.Run), g.workspace, env)
		case s.Uses == "./":
			code, outputs = g.runAction(s.With)
		case strings.HasPrefix(s.Uses, "actions/checkout@"), strings.HasPrefix(s.Uses, "actions/setup-go@"):
			// The test made the checkout and brings Go.
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			// A directory's files go to the artifact's root.
			src := g.expand(s.With["path"])
			artifact := filepath.Join(g.artifacts, g.expand(s.With["name"]))
			if fi, err := os.Stat(src); err == nil && fi.IsDir() {
				copyDir(g.t, src, artifact)
			} else if err == nil {
				copyDir(g.t, filepath.Dir(src), artifact+".tmp")
				os.MkdirAll(artifact, 0o755)
				os.Rename(filepath.Join(artifact+".tmp", filepath.Base(src)), filepath.Join(artifact, filepath.Base(src)))
				os.RemoveAll(artifact + ".tmp")
			} else if s.With["if-no-files-found"] == "error" {
				code = 1
			}
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			// With a pattern and no merge-multiple, each artifact
			// lands in a directory of its name under path.
			pattern, dst := g.expand(s.With["pattern"]), g.expand(s.With["path"])
			if pattern == "" || dst == "" || s.With["merge-multiple"] != "" {
				g.t.Fatalf("download step %q: the test emulates pattern and path only", s.Name)
			}
			entries, _ := os.ReadDir(g.artifacts)
			for _, e := range entries {
				if ok, _ := filepath.Match(pattern, e.Name()); ok {
					copyDir(g.t, filepath.Join(g.artifacts, e.Name()), filepath.Join(dst, e.Name()))
				}
			}
		default:
			g.t.Fatalf("job %s: step uses %s, which the test does not emulate", name, s.Uses)
		}
		if s.ID != "" {
			for k, v := range outputs {
				g.ctx["steps."+s.ID+".outputs."+k] = v
			}
		}
		if s.ID == "kw" {
			kwCode, kw = code, outputs
		}
		failed = failed || code != 0
	}
	for out, expr := range job.Outputs {
		g.ctx["needs."+name+".outputs."+out] = g.expand(expr)
	}
	for k := range g.ctx {
		if strings.HasPrefix(k, "steps.") {
			delete(g.ctx, k)
		}
	}
	return !failed, kwCode, kw
}

// regressPR is the part of regress-pr.yml the tests run.
type regressPR struct {
	Jobs map[string]ghJob `yaml:"jobs"`
}

// newGHRunner reads the workflow and the action, and prepares a runner for
// them: a go that hands out regress for the action's build step, and a
// checkout of a repository holding fourBenchmarks whose pull request's head is
// its base (an A/A run).
func newGHRunner(t *testing.T) (*ghRunner, regressPR) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var workflow regressPR
	g := &ghRunner{t: t, root: root, temp: t.TempDir(), artifacts: t.TempDir()}
	for file, v := range map[string]any{".github/workflows/regress-pr.yml": &workflow, "action.yml": &g.action} {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	shim := t.TempDir()
	regressBin := buildRegress(t)
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	write(t, shim, "go", fmt.Sprintf(`#!/bin/bash
if [ "$1" = build ] && [ "${@: -1}" = ./cmd/regress ] && [ "$PWD" = %q ]; then
  while [ $# -gt 0 ] && [ "$1" != -o ]; do shift; done
  exec cp %q "$2"
fi
exec %q "$@"
`, root, regressBin, realGo))
	os.Chmod(filepath.Join(shim, "go"), 0o755)
	g.path = shim + string(os.PathListSeparator) + os.Getenv("PATH")

	src := &gitRepo{t: t, dir: t.TempDir()}
	src.git("init", "-q", "-b", "main")
	src.write("go.mod", "module example.com/suite\n\ngo 1.26\n")
	src.write("suite_test.go", fourBenchmarks)
	src.write("gpu.yaml", "version: 1\nsuite:\n  benchtime: 1ms\ndefaults: {threshold: 900%}\n")
	src.git("add", "-A")
	src.git("commit", "-qm", "suite")
	g.workspace = src.clone()
	g.ctx = map[string]string{
		"github.run_id": "4711", "github.base_ref": "main", "github.token": "",
		"runner.temp": g.temp, "vars.REGRESS_GPU_RUNS_ON": `["self-hosted","gpu"]`,
		"vars.REGRESS_GPU_CONFIG": "gpu.yaml", "vars.REGRESS_COUNT": "6",
	}
	return g, workflow
}

// planShards runs the gpu-plan job for n shards and returns the values of
// the gpu job's matrix.
func planShards(t *testing.T, g *ghRunner, workflow regressPR, n int) []int {
	t.Helper()
	g.ctx["vars.REGRESS_GPU_SHARDS"] = fmt.Sprint(n)
	plan := workflow.Jobs["gpu-plan"]
	if !g.cond(plan.If, false) {
		t.Fatalf("gpu-plan does not run with REGRESS_GPU_RUNS_ON set")
	}
	ok, _, _ := g.runJob("gpu-plan", plan)
	if !ok || g.ctx["needs.gpu-plan.outputs.count"] != fmt.Sprint(n) {
		t.Fatalf("gpu-plan: ok %v, outputs %v\n%s", ok, g.ctx, g.log.String())
	}
	g.ctx["needs.gpu-plan.result"] = "success"
	m := exprRE.FindStringSubmatch(workflow.Jobs["gpu"].Strategy.Matrix["shard"])
	var shards []int
	if m == nil || !strings.HasPrefix(m[1], "fromJSON(") || json.Unmarshal([]byte(g.value(strings.TrimSuffix(strings.TrimPrefix(m[1], "fromJSON("), ")"))), &shards) != nil {
		t.Fatalf("gpu matrix %q", workflow.Jobs["gpu"].Strategy.Matrix["shard"])
	}
	return shards
}

// TestGPUWorkflowShardsAndJoin runs regress-pr.yml's GPU jobs over two
// shards of a temporary repository and checks that the join job gates on
// one report over all of them, and names a shard that is missing.
func TestGPUWorkflowShardsAndJoin(t *testing.T) {
	t.Parallel()
	g, workflow := newGHRunner(t)
	shards := planShards(t, g, workflow, 2)
	if !slices.Equal(shards, []int{1, 2}) {
		t.Fatalf("matrix %v, want [1 2]", shards)
	}
	gpu := workflow.Jobs["gpu"]
	for _, shard := range shards {
		g.ctx["matrix.shard"] = fmt.Sprint(shard)
		ok, code, kw := g.runJob("gpu", gpu)
		if !ok || code != 0 || kw["results"] == "" {
			t.Fatalf("gpu shard %d: ok %v, exit %d, outputs %v\n%s", shard, ok, code, kw, g.log.String())
		}
	}
	delete(g.ctx, "matrix.shard")
	var names []string
	entries, _ := os.ReadDir(g.artifacts)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"regress-shard-gpu-1", "regress-shard-gpu-2"}) {
		t.Fatalf("artifacts after the shards: %v", names)
	}

	join := workflow.Jobs["gpu-join"]
	if !g.cond(join.If, false) || !slices.Contains(needs(join), "gpu") {
		t.Fatalf("gpu-join does not run after the shards")
	}
	ok, code, kw := g.runJob("gpu-join", join)
	t.Logf("join: exit %d, outputs %v", code, kw)
	if !ok || code != 0 {
		t.Fatalf("gpu-join: ok %v, exit %d\n%s", ok, code, g.log.String())
	}
	rep := readReportFile(t, filepath.Join(g.artifacts, "regress-report-gpu", "report.json"))
	if len(rep.Comparisons) != 4 || rep.Verdict != "pass" || len(rep.Current.Files) != 2 || rep.Current.Config["seed"] != "4711" || rep.Current.Config["count"] != "6" {
		t.Errorf("uploaded report: %s, %d comparisons, files %v, config %v", rep.Verdict, len(rep.Comparisons), rep.Current.Files, rep.Current.Config)
	}
	for _, c := range rep.Comparisons {
		if c.Current.N != 6 {
			t.Errorf("%s: %d samples, want 6", c.Name, c.Current.N)
		}
	}
	if !strings.Contains(kw["(summary)"], "PASS: 0 regressions, 4 unchanged") || kw["verdict"] != "pass" || kw["report"] == "" {
		t.Errorf("join job summary or outputs:\n%s\n%v", kw["(summary)"], kw)
	}

	// Shard 2's job failed before it uploaded: the join names it.
	os.RemoveAll(filepath.Join(g.artifacts, "regress-shard-gpu-2"))
	os.RemoveAll(filepath.Join(g.artifacts, "regress-report-gpu"))
	os.RemoveAll(filepath.Join(g.temp, "regress-shards"))
	g.log.Reset()
	ok, code, _ = g.runJob("gpu-join", join)
	if ok || code != 2 || !strings.Contains(g.log.String(), "regress judge: missing shard 2/2 (have 1/2 in ") {
		t.Errorf("join without shard 2: ok %v, exit %d\n%s", ok, code, g.log.String())
	}
	if _, err := os.Stat(filepath.Join(g.artifacts, "regress-report-gpu")); err == nil {
		t.Errorf("a report was uploaded for an incomplete set of shards")
	}
}

// needs lists the jobs a job needs.
func needs(j ghJob) []string {
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

// TestGPUWorkflowShardCutShort stops a GPU shard's check step the way the
// runner stops a step at its timeout (SIGTERM to the step's shell) while the
// check runs: the action passes the signal on, the check compares the rounds
// that finished, the shard's results still go up, and the join reports the
// run incomplete, in its report and job summary, and exits 2.
func TestGPUWorkflowShardCutShort(t *testing.T) {
	t.Parallel()
	g, workflow := newGHRunner(t)
	g.ctx["vars.REGRESS_COUNT"] = "500"
	if shards := planShards(t, g, workflow, 1); !slices.Equal(shards, []int{1}) {
		t.Fatalf("matrix %v, want [1]", shards)
	}
	log := filepath.Join(t.TempDir(), "invocations")
	g.env = []string{"INVOCATION_LOG=" + log}
	g.started = func(p *os.Process) {
		// Once the third benchmark invocation (round 2) has started.
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if data, _ := os.ReadFile(log); strings.Count(string(data), "start\n") >= 3 {
				p.Signal(syscall.SIGTERM)
				return
			}
		}
	}
	g.ctx["matrix.shard"] = "1"
	ok, code, kw := g.runJob("gpu", workflow.Jobs["gpu"])
	g.started = nil
	delete(g.ctx, "matrix.shard")
	if ok || code != 2 || kw["results"] == "" {
		t.Fatalf("cut-short shard: ok %v, exit %d, outputs %v; want a failed step with results\n%s", ok, code, kw, g.log.String())
	}
	cur, err := os.ReadFile(filepath.Join(g.artifacts, "regress-shard-gpu-1", "current.bench"))
	if err != nil || !strings.Contains(string(cur), "stopped: signal\n") {
		t.Fatalf("uploaded shard results: %v\n%s\n%s", err, cur, g.log.String())
	}

	ok, code, kw = g.runJob("gpu-join", workflow.Jobs["gpu-join"])
	rep := readReportFile(t, filepath.Join(g.artifacts, "regress-report-gpu", "report.json"))
	in := rep.Incomplete
	t.Logf("join: exit %d, incomplete %+v", code, in)
	if ok || code != 2 || in == nil || in.Reason != "signal" || in.Planned != 500 || in.Rounds < 1 {
		t.Errorf("join of a cut-short shard: ok %v, exit %d, incomplete %+v\n%s", ok, code, in, g.log.String())
	}
	want := fmt.Sprintf("INCOMPLETE (%d of 500 rounds, interrupted)", in.Rounds)
	if !strings.Contains(kw["(summary)"], "### ⚠️ "+want) || !strings.Contains(kw["(summary)"], "**Incomplete:**") {
		t.Errorf("join job summary lacks %q:\n%s", want, kw["(summary)"])
	}
}

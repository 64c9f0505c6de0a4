package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leakySuite is a benchmark package that writes every credential it can
// find in its environment to $LEAK_FILE, after a line saying it ran.
const leakySuite = `package leaky

import (
	"fmt"
	"os"
	"testing"
)

func BenchmarkLeak(b *testing.B) {
	f, err := os.OpenFile(os.Getenv("LEAK_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "ran")
	for _, k := range []string{"GITHUB_TOKEN", "REGRESS_GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "deploy_secret"} {
		if v := os.Getenv(k); v != "" {
			fmt.Fprintf(f, "%s=%s\n", k, v)
		}
	}
	for b.Loop() {
	}
}
`

// TestCheckKeepsTokensFromBenchmarks runs regress check on a suite whose
// benchmark writes os.Getenv("GITHUB_TOKEN") and the like to a file, with
// those variables set as a CI job would set them: the benchmark runs, and
// writes none of them.
func TestCheckKeepsTokensFromBenchmarks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a benchmark")
	}
	secrets := map[string]string{
		"GITHUB_TOKEN": "ghs_jobTokenSecret1", "REGRESS_GITHUB_TOKEN": "ghp_regressSecret2", "GH_TOKEN": "gho_cliSecret3",
		"ACTIONS_RUNTIME_TOKEN": "runtimeSecret4", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidcSecret5",
		"ACTIONS_ID_TOKEN_REQUEST_URL": "https://oidc.example/secret6", "deploy_secret": "lowercaseSecret7",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	leak := filepath.Join(t.TempDir(), "leak")
	t.Setenv("LEAK_FILE", leak)
	bin := buildTestPackage(t, "leaky", leakySuite)
	res := invoke(t, t.TempDir(), "", "check", "--baseline-bin", bin, "--current-bin", bin, "--config", "none",
		"--count", "2", "--benchtime", "1x", "--quiet")
	data, err := os.ReadFile(leak)
	if err != nil || strings.Count(string(data), "ran\n") < 4 { // two rounds, two sides
		t.Fatalf("the benchmark did not run (exit %d): %v\n%s\n%s", res.code, err, data, res.stderr)
	}
	for k, v := range secrets {
		if strings.Contains(string(data), v) {
			t.Errorf("the benchmark saw %s", k)
		}
	}
}

package runner

import (
	"slices"
	"testing"
)

func TestCredential(t *testing.T) {
	for _, name := range []string{"GITHUB_TOKEN", "REGRESS_GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GH_HOST",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
		"ACTIONS_RESULTS_URL", "ACTIONS_CACHE_URL", "my_secret", "Npm_Token", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
		"DOCKER_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "OPENAI_API_KEY", "SSH_AUTH_SOCK", "gh_pat"} {
		if !Credential(name) {
			t.Errorf("%s is not treated as a credential", name)
		}
	}
	for _, name := range []string{"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "GOCACHE", "GITHUB_WORKSPACE", "GITHUB_SHA",
		"RUNNER_TEMP", "LD_LIBRARY_PATH", "GOMAXPROCS", "KERNELS_DEVICE", "TMPDIR"} {
		if Credential(name) {
			t.Errorf("%s is treated as a credential", name)
		}
	}
}

func TestScrub(t *testing.T) {
	got := scrub([]string{"PATH=/bin", "GITHUB_TOKEN=ghs_x", "gh_token=y", "A==b", "CUDA_VISIBLE_DEVICES=0"}, []string{"CUDA_VISIBLE_DEVICES=3"})
	want := []string{"PATH=/bin", "A==b", "CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=3"}
	if !slices.Equal(got, want) {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}

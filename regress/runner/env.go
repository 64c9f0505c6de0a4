package runner

import (
	"os"
	"strings"
)

// The code under test is a pull request's, and so anyone's: the processes
// that run it (the test binaries, listing and benchmarking, and any suite
// command) get this process's environment without the variables that may
// hold a credential. The workflows already keep the publishing token out of
// the step that runs the benchmarks; this is the second line, for tokens a
// calling job sets for its own reasons (GITHUB_TOKEN in a job's env: is
// common) and for the runner's own (ACTIONS_RUNTIME_TOKEN, the OIDC request
// token of a job with id-token: write).

// credentialWords mark a variable that may hold a credential wherever they
// appear in its name (compared upper-cased).
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "APIKEY", "ACCESS_KEY"}

// credentialPrefixes mark a variable by the start of its name: the GitHub
// CLI's settings (GH_TOKEN, GH_ENTERPRISE_TOKEN, and whatever a workflow
// names GH_*), the Actions runtime's address and token, and the OIDC token
// request of id-token: write.
var credentialPrefixes = []string{"GH_", "ACTIONS_RUNTIME_", "ACTIONS_ID_TOKEN_REQUEST_", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_URL"}

// credentialNames are other variables that give access: an SSH agent.
var credentialNames = []string{"SSH_AUTH_SOCK"}

// Credential reports whether an environment variable of this name may hold
// a credential, and so is kept from the code under test: a name containing
// TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, PRIVATE_KEY, API_KEY, APIKEY
// or ACCESS_KEY, or starting with GH_, ACTIONS_RUNTIME_,
// ACTIONS_ID_TOKEN_REQUEST_, ACTIONS_RESULTS_URL or ACTIONS_CACHE_URL, or
// SSH_AUTH_SOCK; letter case does not matter.
func Credential(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, c := range credentialNames {
		if n == c {
			return true
		}
	}
	return false
}

// ChildEnv is the environment of a process that runs the code under test
// (a test binary, a suite command): this process's environment without the
// variables Credential marks, then extra (a lane's CUDA_VISIBLE_DEVICES),
// which is the caller's and kept as given.
func ChildEnv(extra ...string) []string {
	return scrub(os.Environ(), extra)
}

func scrub(environ, extra []string) []string {
	out := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !Credential(name) {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

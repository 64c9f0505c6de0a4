package github

import (
	"strings"
	"testing"
	"time"
)

// TestTokenNeverLeaks drives every failure path against a server that
// repeats the Authorization header in its error messages, and checks that
// neither the errors nor the log contain the token.
func TestTokenNeverLeaks(t *testing.T) {
	faults := []*fault{
		{method: "POST", path: `.*`, status: 422, body: `{"message":"Validation Failed: AUTH","errors":[{"message":"bad AUTH"}]}`},
		{method: "POST", path: `.*`, status: 403, body: `{"message":"Resource not accessible by integration AUTH"}`},
		{method: "GET", path: `.*`, status: 500, body: `{"message":"boom AUTH"}`},
		{method: "GET", path: `.*`, status: 404, body: `{"message":"Not Found AUTH"}`},
		{method: "GET", path: `.*`, status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"message":"slow down AUTH"}`},
		{method: "GET", path: `.*`, status: 401, body: `{"message":"Bad credentials AUTH"}`},
		{method: "GET", path: `.*`, status: 200, body: `{"login": AUTH`}, // broken JSON with the token in it
		{method: "GET", path: `.*`, status: 200, delay: 5 * time.Second, body: `{}`},
	}
	for _, ft := range faults {
		t.Run(ft.method+" "+itoa(int64(ft.status)), func(t *testing.T) {
			c, f, log := setup(t, func(cfg *Config) { cfg.Timeout, cfg.MaxAttempts = 100*time.Millisecond, 2 })
			f.echoToken = true
			f.prs = []fakePR{{Number: 7, HeadSHA: shaB, HeadRepo: baseRepo, HeadBranch: "x", State: "open"}}
			ft.times = 100
			f.addFault(ft)
			var msgs []string
			add := func(err error) {
				if err != nil {
					msgs = append(msgs, err.Error())
				}
			}
			_, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
			add(err)
			_, err = c.FindPR(ctx(t), Target{Repo: baseRepo, HeadSHA: shaA, HeadRepo: "fork/repo", HeadBranch: "b", Event: "workflow_run"})
			add(err)
			add(c.SetStatus(ctx(t), baseRepo, shaA, "kw", "failure", "d", ""))
			_, err = Publish(ctx(t), c, Publication{Report: loadReport(t), Target: Target{Repo: baseRepo, PR: 7, HeadSHA: shaA}, Comment: true, StatusContext: "kw"})
			add(err)
			if len(msgs) == 0 {
				t.Fatal("no error at all: the fault did not bite")
			}
			all := strings.Join(msgs, "\n") + "\n" + log.String()
			if strings.Contains(all, testToken) {
				t.Errorf("token leaked:\n%s", all)
			}
			sent := false
			for _, r := range f.requests {
				sent = sent || r.Auth == "Bearer "+testToken
			}
			if !sent {
				t.Error("the token was never sent: the test proves nothing")
			}
		})
	}
}

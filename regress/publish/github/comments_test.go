package github

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kernelwatch/kernelwatch/regress/publish/comment"
)

const (
	class = "gpu-nvidia-h100-80gb-hbm3"
	shaA  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC  = "cccccccccccccccccccccccccccccccccccccccc"
)

// body is a comment body for class reporting on sha.
func body(sha, text string) string {
	return comment.Marker(class) + "\n<!-- kernelwatch:head sha=" + sha + " -->\n" + text + "\n"
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantLog(t *testing.T, f *fakeGitHub, want ...string) {
	t.Helper()
	if got := f.log(); !slices.Equal(got, want) {
		t.Errorf("requests:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestFirstCommentIsCreated(t *testing.T) {
	c, f, _ := setup(t)
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Created || !strings.Contains(res.URL, "#issuecomment-") {
		t.Errorf("result %+v", res)
	}
	wantLog(t, f, "GET /user", "GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments")
	post := f.last("POST")
	testMethod(t, post, "POST")
	testBody(t, post, "body", body(shaA, "hello"))
	if post.Query != "" {
		t.Errorf("create has query %q", post.Query)
	}
	if q := f.requests[1].Query; !strings.Contains(q, "per_page=100") {
		t.Errorf("list query %q, want per_page=100", q)
	}
}

func TestOwnCommentOnPage3IsEdited(t *testing.T) {
	c, f, _ := setup(t)
	f.pageSize = 2
	for i := 0; i < 5; i++ {
		f.addComment(7, "someone", "User", "LGTM")
	}
	ours := f.addComment(7, "octo-user", "User", body(shaA, "old"))
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "new"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Updated || res.ID != ours.ID {
		t.Errorf("result %+v, want update of %d", res, ours.ID)
	}
	wantLog(t, f, "GET /user",
		"GET /repos/base/repo/issues/7/comments", "GET /repos/base/repo/issues/7/comments", "GET /repos/base/repo/issues/7/comments",
		"PATCH /repos/base/repo/issues/comments/1006")
	testBody(t, f.last("PATCH"), "body", body(shaA, "new"))
	if n := len(f.comments[7]); n != 6 {
		t.Errorf("%d comments, want 6 (no duplicate)", n)
	}
	if f.requests[3].Query != "page=3&per_page=100" {
		t.Errorf("third list query %q", f.requests[3].Query)
	}
}

func TestSpoofedMarkerIsIgnored(t *testing.T) {
	c, f, _ := setup(t)
	spoof := f.addComment(7, "mallory", "User", body(shaA, "fake results"))
	botSpoof := f.addComment(7, "octo-user", "Bot", body(shaA, "other type")) // same login, different type: still ours for a user token
	_ = botSpoof
	f.me = ""                                     // installation token
	f.author = user{"github-actions[bot]", "Bot"} // its comments
	f.addComment(7, "github-actions", "User", body(shaA, "lookalike login"))
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "real"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Created {
		t.Fatalf("result %+v, want a new comment", res)
	}
	if f.count("PATCH") != 0 {
		t.Error("edited a comment that is not ours")
	}
	if spoof.Body != body(shaA, "fake results") {
		t.Error("the spoofed comment changed")
	}
	// The next run finds the bot's own comment and edits it.
	res, err = c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "real 2"))
	if err != nil || res.Action != Updated {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	if got := f.comments[7][len(f.comments[7])-1]; got.Body != body(shaA, "real 2") || got.User.Login != "github-actions[bot]" {
		t.Errorf("updated %+v", got)
	}
	if f.count("GET /user") != 1 {
		t.Errorf("GET /user asked %d times, want once", f.count("GET /user"))
	}
}

func TestOtherClassIsAnotherComment(t *testing.T) {
	c, f, _ := setup(t)
	f.addComment(7, "octo-user", "User", comment.Marker("cpu-amd64-x")+"\ncpu results\n")
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "gpu"))
	if err != nil || res.Action != Created {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestUnchangedBodyIsNotPatched(t *testing.T) {
	c, f, _ := setup(t)
	f.addComment(7, "octo-user", "User", strings.ReplaceAll(body(shaA, "same"), "\n", "\r\n"))
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "same"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Unchanged || f.count("PATCH") != 0 || f.count("POST") != 0 {
		t.Errorf("result %+v; requests %q", res, f.log())
	}
}

func TestOlderRunDoesNotOverwriteNewerSHA(t *testing.T) {
	c, f, _ := setup(t)
	f.prs = []fakePR{{Number: 7, HeadSHA: shaB, HeadRepo: baseRepo, HeadBranch: "x", State: "open"}}
	newer := f.addComment(7, "octo-user", "User", body(shaB, "results for B"))

	// A run for A (older than the head B) finishes late.
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "results for A"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Skipped || f.count("PATCH") != 0 || newer.Body != body(shaB, "results for B") {
		t.Fatalf("older run: %+v; requests %q", res, f.log())
	}

	// Neither is the head: overwrite only a known ancestor.
	f.prs[0].HeadSHA = shaC
	f.compare[shaB+"..."+shaA] = "behind"
	if res, _ := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "A again")); res.Action != Skipped {
		t.Errorf("A behind B: %+v", res)
	}
	delete(f.compare, shaB+"..."+shaA) // unknown order (force push): keep
	if res, _ := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "A again")); res.Action != Skipped {
		t.Errorf("unknown order: %+v", res)
	}
	f.compare[shaB+"..."+shaA] = "ahead"
	if res, _ := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "A descends")); res.Action != Updated {
		t.Errorf("A ahead of B: %+v", res)
	}

	// The head's own run always writes.
	res, err = c.Upsert(ctx(t), baseRepo, 7, class, shaC, body(shaC, "results for C"))
	if err != nil || res.Action != Updated || newer.Body != body(shaC, "results for C") {
		t.Fatalf("head run: %+v, %v", res, err)
	}
}

func TestBodyByteBoundary(t *testing.T) {
	c, f, _ := setup(t)
	pad := func(n int) string {
		b := body(shaA, "")
		return b + strings.Repeat("x", n-len(b))
	}
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, pad(65536))
	if err != nil || res.Action != Created {
		t.Fatalf("65,536 bytes: %+v, %v", res, err)
	}
	n := len(f.log())
	_, err = c.Upsert(ctx(t), baseRepo, 8, class, shaA, pad(65537))
	if err == nil || !strings.Contains(err.Error(), "65537 bytes") {
		t.Fatalf("65,537 bytes: %v", err)
	}
	if len(f.log()) != n {
		t.Errorf("an oversized body was sent: %q", f.log()[n:])
	}
	// Multibyte: 65,536 bytes are far fewer characters, accepted.
	b := body(shaA, "")
	multi := b + strings.Repeat("日", (65536-len(b))/3)
	if _, err := c.Upsert(ctx(t), baseRepo, 9, class, shaA, multi); err != nil {
		t.Fatalf("multibyte body: %v", err)
	}
}

func TestCreate422(t *testing.T) {
	c, f, _ := setup(t)
	f.maxRunes = 100 // GitHub's limit, shrunk
	_, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, strings.Repeat("y", 200)))
	if err == nil || !strings.Contains(err.Error(), "422 GitHub rejected the request as invalid: Validation Failed; body is too long") {
		t.Fatalf("error %v", err)
	}
	if f.count("POST") != 1 {
		t.Errorf("%d creates; a 422 must not be repeated", f.count("POST"))
	}
}

func TestForbiddenNamesPermission(t *testing.T) {
	for _, tc := range []struct {
		header, want string
	}{
		{"issues=write; pull_requests=write", "issues: write or pull-requests: write"},
		{"", "pull-requests: write"}, // GitHub did not say: what commenting needs
	} {
		c, f, _ := setup(t)
		h := map[string]string{}
		if tc.header != "" {
			h["X-Accepted-GitHub-Permissions"] = tc.header
		}
		f.addFault(&fault{method: "POST", path: `/repos/base/repo/issues/\d+/comments`, times: 1, status: 403, header: h,
			body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`})
		_, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
		if err == nil || !strings.Contains(err.Error(), "lacks the permission "+tc.want) {
			t.Errorf("header %q: error %v", tc.header, err)
		}
		if f.count("SLEEP") != 0 {
			t.Errorf("a permission error was retried: %q", f.log())
		}
	}
}

func TestSecondaryLimitsWaitRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		body   string
	}{
		{"403 secondary", 403, map[string]string{"Retry-After": "3"},
			`{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`},
		{"429", 429, map[string]string{"Retry-After": "3"}, `{"message":"Too Many Requests"}`},
		{"403 primary", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "RESET"},
			`{"message":"API rate limit exceeded"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f, _ := setup(t)
			if tc.header["X-RateLimit-Reset"] == "RESET" {
				tc.header["X-RateLimit-Reset"] = itoa(time.Now().Add(2 * time.Second).Unix())
			}
			// On the create: a rate-limited request was not processed, so
			// even a POST is repeated.
			f.addFault(&fault{method: "POST", path: `/repos/base/repo/issues/7/comments`, times: 1, status: tc.status,
				header: tc.header, body: tc.body})
			res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
			if err != nil || res.Action != Created {
				t.Fatalf("%+v, %v", res, err)
			}
			log := f.log()
			if log[len(log)-3] != "POST /repos/base/repo/issues/7/comments" || !strings.HasPrefix(log[len(log)-2], "SLEEP ") ||
				log[len(log)-1] != "POST /repos/base/repo/issues/7/comments" {
				t.Errorf("requests %q", log)
			}
			if d, _ := time.ParseDuration(strings.TrimPrefix(log[len(log)-2], "SLEEP ")); d < time.Second || d > 4*time.Second {
				t.Errorf("waited %s, want what GitHub asked (~2-3s)", d)
			}
			if len(f.comments[7]) != 1 {
				t.Errorf("%d comments", len(f.comments[7]))
			}
		})
	}
}

func TestWaitBeyondCapFailsAtOnce(t *testing.T) {
	c, f, _ := setup(t) // MaxWait one minute
	f.addFault(&fault{method: "GET", path: `/user`, times: 5, status: 429, header: map[string]string{"Retry-After": "3600"},
		body: `{"message":"Too Many Requests"}`})
	start := time.Now()
	_, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("error %v", err)
	}
	if f.count("SLEEP") != 0 || f.count("GET") != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("requests %q", f.log())
	}
}

func Test500Then200(t *testing.T) {
	c, f, _ := setup(t)
	f.addFault(&fault{method: "GET", path: `/repos/base/repo/issues/7/comments`, times: 2, status: 502, body: `{"message":"Server Error"}`})
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err != nil || res.Action != Created {
		t.Fatalf("%+v, %v", res, err)
	}
	wantLog(t, f, "GET /user", "GET /repos/base/repo/issues/7/comments", "SLEEP 500ms",
		"GET /repos/base/repo/issues/7/comments", "SLEEP 1s", "GET /repos/base/repo/issues/7/comments",
		"POST /repos/base/repo/issues/7/comments")
}

func TestFailedCreateIsNotRepeatedBlindly(t *testing.T) {
	// The create succeeds on GitHub's side but the answer is a 502: the
	// client must list again and find it, not create a duplicate.
	c, f, _ := setup(t)
	f.addFault(&fault{method: "POST", path: `/repos/base/repo/issues/7/comments`, times: 1, status: 502, process: true,
		body: `{"message":"Bad Gateway"}`})
	res, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != Unchanged || len(f.comments[7]) != 1 {
		t.Errorf("result %+v, %d comments", res, len(f.comments[7]))
	}
	wantLog(t, f, "GET /user", "GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments",
		"GET /repos/base/repo/issues/7/comments")

	// Not processed: listed again, then created once more.
	c, f, _ = setup(t)
	f.addFault(&fault{method: "POST", path: `/repos/base/repo/issues/7/comments`, times: 1, status: 500, body: `{"message":"boom"}`})
	res, err = c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err != nil || res.Action != Created || len(f.comments[7]) != 1 {
		t.Fatalf("%+v, %v, %d comments", res, err, len(f.comments[7]))
	}
	wantLog(t, f, "GET /user", "GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments",
		"GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments")
}

func TestSlowServerAndTimeout(t *testing.T) {
	c, f, _ := setup(t) // 2s per attempt
	f.addFault(&fault{method: "GET", path: `/user`, times: 1, status: 200, delay: 100 * time.Millisecond, body: `{"login":"octo-user"}`})
	if _, err := c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x")); err != nil {
		t.Fatalf("slow but in time: %v", err)
	}

	short := func(cfg *Config) { cfg.Timeout, cfg.MaxAttempts = 150*time.Millisecond, 3 }
	c2, f, _ := setup(t, short)
	f.addFault(&fault{method: "GET", path: `/user`, times: 10, status: 200, delay: 10 * time.Second, body: `{}`})
	start := time.Now()
	_, err := c2.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err == nil || !strings.Contains(err.Error(), "no answer within 150ms") {
		t.Fatalf("error %v", err)
	}
	if f.count("GET") != 3 || time.Since(start) > 5*time.Second {
		t.Errorf("%d attempts in %s", f.count("GET"), time.Since(start))
	}

	// A create that times out is not repeated before listing.
	c3, f3, _ := setup(t, short)
	f3.addFault(&fault{method: "POST", path: `/repos/base/repo/issues/7/comments`, times: 1, status: 201, delay: 10 * time.Second, body: `{}`})
	res, err := c3.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err != nil || res.Action != Created {
		t.Fatalf("%+v, %v", res, err)
	}
	wantLog(t, f3, "GET /user", "GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments",
		"GET /repos/base/repo/issues/7/comments", "POST /repos/base/repo/issues/7/comments")
}

func TestCancelledContextStops(t *testing.T) {
	c, f, _ := setup(t)
	f.addFault(&fault{method: "GET", path: `/user`, times: 1, status: 200, delay: 10 * time.Second, body: `{}`})
	cx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Upsert(cx, baseRepo, 7, class, shaA, body(shaA, "x"))
	if err == nil || !errors.Is(cx.Err(), context.DeadlineExceeded) || f.count("GET") != 1 {
		t.Fatalf("%v; %q", err, f.log())
	}
}

func TestBadCredentials(t *testing.T) {
	_, f, _ := setup(t)
	c, err := New(Config{Token: "wrong-token-value", APIURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Upsert(ctx(t), baseRepo, 7, class, shaA, body(shaA, "x"))
	if err == nil || !strings.Contains(err.Error(), "401 Bad credentials: GitHub rejected the token") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token-value") {
		t.Error("the error contains the token")
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Package github publishes a kernelwatch report on GitHub: the sticky
// pull-request comment, the commit status, the job summary and the step
// outputs. It wraps go-github with the policies kernelwatch needs and
// go-github leaves to its callers:
//
//   - one comment per (pull request, hardware class), found by its hidden
//     marker and by its author across every page of comments, edited in
//     place, left alone when unchanged or when it already reports a newer
//     head commit, and never someone else's;
//   - its own retries: backoff on 5xx and network errors, waiting out
//     Retry-After and rate-limit resets (including HTTP 429, which go-github
//     v60 reports as a plain error), within a cap on the total wait; a create
//     is never repeated blindly — the comments are listed again first;
//   - errors that say what to do: a 403 "Resource not accessible by
//     integration" names the permission the job lacks;
//   - the token comes from the environment only and never appears in an
//     error or a log line, and no log line can act as a workflow command;
//   - a pull request's run is published from its artifacts only as far as
//     an allow-list and, for a fork's GPU report, an approval confirmed
//     through the API allow (RunReports).
package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v60/github"

	"github.com/kernelwatch/kernelwatch/internal/logsafe"
)

// DefaultBotLogin is the author of comments written with a workflow's
// GITHUB_TOKEN (an installation token, for which GET /user is forbidden).
const DefaultBotLogin = "github-actions[bot]"

// TokenFrom returns the API token from the environment: REGRESS_GITHUB_TOKEN
// if set, else GITHUB_TOKEN. It is never taken from a flag, where it would
// end up in shell history and process listings.
func TokenFrom(getenv func(string) string) string {
	if t := strings.TrimSpace(getenv("REGRESS_GITHUB_TOKEN")); t != "" {
		return t
	}
	return strings.TrimSpace(getenv("GITHUB_TOKEN"))
}

// Config configures a Client.
type Config struct {
	// Token authenticates every request (from TokenFrom).
	Token string
	// APIURL is the REST API root: GITHUB_API_URL, https://api.github.com by
	// default, https://HOST/api/v3 on GitHub Enterprise Server.
	APIURL string
	// BotLogin is the login our comments carry when the token cannot call
	// GET /user (an installation token). Default DefaultBotLogin. When
	// Identity is set, /user is not asked at all.
	BotLogin string
	// Identity, when set, is the login of the token's owner; kernelwatch
	// then skips GET /user.
	Identity string
	// Timeout bounds each attempt of each request (default 30s).
	Timeout time.Duration
	// MaxWait caps the time spent waiting between retries over the whole
	// life of the client (default 2m); a wait GitHub asks for beyond it
	// fails at once instead.
	MaxWait time.Duration
	// MaxAttempts bounds the attempts of one request (default 5).
	MaxAttempts int
	// Log receives one line per notable event (retries, skipped edits).
	Log io.Writer
	// Transport is the underlying transport (default http.DefaultTransport).
	Transport http.RoundTripper
	// sleep waits for d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// now is the clock; tests replace it.
	now func() time.Time
}

// Client talks to one GitHub (or GitHub Enterprise Server) API.
type Client struct {
	gh       *gh.Client
	download *http.Client // artifact downloads from signed addresses: no token
	token    string
	botLogin string
	identity string
	log      io.Writer
	logMu    sync.Mutex
	me       *identity
}

// identity is whom comments written with our token are authored by.
type identity struct {
	login string
	bot   bool // an installation token: the author must also be of type Bot
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("no GitHub token: set GITHUB_TOKEN (or REGRESS_GITHUB_TOKEN) in the environment of this step")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.github.com"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 2 * time.Minute
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.BotLogin == "" {
		cfg.BotLogin = DefaultBotLogin
	}
	if cfg.sleep == nil {
		cfg.sleep = sleepCtx
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	base := cfg.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := &Client{token: cfg.Token, botLogin: cfg.BotLogin, identity: cfg.Identity, log: cfg.Log,
		download: &http.Client{Transport: base, Timeout: 4 * cfg.Timeout}}
	rt := &retryTransport{
		base: base, timeout: cfg.Timeout, maxWait: cfg.MaxWait, maxAttempts: cfg.MaxAttempts,
		sleep: cfg.sleep, now: cfg.now, logf: c.logf,
	}
	api := strings.TrimRight(cfg.APIURL, "/") + "/"
	client, err := gh.NewClient(&http.Client{Transport: rt}).WithAuthToken(cfg.Token).WithEnterpriseURLs(api, api)
	if err != nil {
		return nil, fmt.Errorf("GITHUB_API_URL %q: %w", c.redact(cfg.APIURL), err)
	}
	client.UserAgent = "kernelwatch-regress"
	c.gh = client
	return c, nil
}

// redact removes the token from s.
func (c *Client) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, "***")
}

// logf writes one redacted line to the log.
func (c *Client) logf(format string, args ...any) {
	if c.log == nil {
		return
	}
	line := logsafe.Text(c.redact(fmt.Sprintf(format, args...)))
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintln(c.log, line)
}

// whoAmI returns the author our comments carry. A personal token may call
// GET /user; an installation token gets 403 "Resource not accessible by
// integration", and its comments are written by the bot login.
func (c *Client) whoAmI(ctx context.Context) (*identity, error) {
	if c.me != nil {
		return c.me, nil
	}
	if c.identity != "" {
		c.me = &identity{login: c.identity, bot: strings.HasSuffix(c.identity, "[bot]")}
		return c.me, nil
	}
	u, resp, err := c.gh.Users.Get(ctx, "")
	switch {
	case err == nil && u.GetLogin() != "":
		c.me = &identity{login: u.GetLogin(), bot: u.GetType() == "Bot"}
	case resp != nil && resp.StatusCode == http.StatusForbidden && isIntegrationDenied(err):
		c.me = &identity{login: c.botLogin, bot: true}
	case err == nil:
		return nil, errors.New("GET /user: no login in the answer")
	default:
		return nil, c.explain("find out whom the token belongs to (GET /user)", "", err)
	}
	return c.me, nil
}

// owns reports whether a comment by u was written with our token.
func (me *identity) owns(u *gh.User) bool {
	if u == nil || !strings.EqualFold(u.GetLogin(), me.login) {
		return false
	}
	return !me.bot || u.GetType() == "Bot"
}

func splitRepo(repo string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("repository %q: want owner/name", repo)
	}
	return owner, name, nil
}

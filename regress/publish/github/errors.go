package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// isIntegrationDenied reports whether err is GitHub's answer to a token
// that lacks a permission: 403 "Resource not accessible by integration"
// (installation tokens) or "... by personal access token" (fine-grained
// tokens).
func isIntegrationDenied(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden &&
		strings.Contains(strings.ToLower(er.Message), "resource not accessible by")
}

// explain turns an API error into one line that says what failed and what
// to do. what describes the operation ("update the comment"); need is the
// workflow permission it takes ("pull-requests: write"), used when GitHub
// does not say.
func (c *Client) explain(what, need string, err error) error {
	var (
		er  *gh.ErrorResponse
		rl  *gh.RateLimitError
		ab  *gh.AbuseRateLimitError
		msg string
	)
	var te *timeoutError
	switch {
	case errors.Is(err, errGaveUp):
		msg = err.Error()
	case errors.As(err, &te):
		msg = te.Error() + " (the request may still have been processed)"
	case errors.Is(err, context.Canceled):
		msg = "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		msg = "ran out of time (the command's deadline passed)"
	case errors.As(err, &rl):
		msg = fmt.Sprintf("rate limit exhausted until %s: GitHub refuses further calls before then (%s)",
			rl.Rate.Reset.Time.UTC().Format("15:04:05 MST"), rl.Message)
	case errors.As(err, &ab):
		msg = "secondary rate limit: GitHub asked to slow down for longer than kernelwatch waits (--max-wait): " + ab.Message
	case errors.As(err, &er) && er.Response != nil:
		msg = c.explainResponse(er, need)
	default:
		msg = err.Error()
	}
	return errors.New(c.redact("cannot " + what + ": " + msg))
}

func (c *Client) explainResponse(er *gh.ErrorResponse, need string) string {
	code := er.Response.StatusCode
	detail := er.Message
	for _, e := range er.Errors {
		if e.Message != "" {
			detail += "; " + e.Message
		} else if e.Code != "" {
			detail += fmt.Sprintf("; %s %s.%s", e.Code, e.Resource, e.Field)
		}
	}
	switch {
	case code == http.StatusUnauthorized:
		return fmt.Sprintf("401 %s: GitHub rejected the token; check GITHUB_TOKEN or REGRESS_GITHUB_TOKEN", detail)
	case code == http.StatusForbidden && isIntegrationDenied(er):
		perms := acceptedPermissions(er.Response.Header.Get("X-Accepted-GitHub-Permissions"))
		if perms == "" {
			perms = need
		}
		if perms == "" {
			return "403 " + detail + ": the token lacks a permission this call needs"
		}
		return fmt.Sprintf("403 %s: the token lacks the permission %s; grant it under `permissions:` of the job "+
			"(pull_request runs from forks always get a read-only token: publish from the workflow_run workflow instead)",
			detail, perms)
	case code == http.StatusForbidden && er.Response.Header.Get("X-RateLimit-Remaining") == "0":
		return "403 rate limit exhausted: " + detail
	case code == http.StatusTooManyRequests:
		return "429 too many requests: GitHub kept asking to slow down for longer than kernelwatch waits (--max-wait): " + detail
	case code == http.StatusForbidden:
		return "403 " + detail
	case code == http.StatusNotFound:
		return "404 " + detail + ": the repository, pull request or comment does not exist or the token cannot see it"
	case code == http.StatusUnprocessableEntity:
		return "422 GitHub rejected the request as invalid: " + detail
	case code >= 500:
		return fmt.Sprintf("%d %s: GitHub failed; try again later", code, strings.TrimSpace(detail+" "+http.StatusText(code)))
	}
	return fmt.Sprintf("%d %s", code, detail)
}

// uncertain reports whether a failed request may still have been acted on
// (a 5xx answer, a timeout, a broken connection), so that a create must
// not be repeated before looking.
func uncertain(err error) bool {
	var (
		er *gh.ErrorResponse
		rl *gh.RateLimitError
		ab *gh.AbuseRateLimitError
	)
	switch {
	case errors.Is(err, context.Canceled), errors.As(err, &rl), errors.As(err, &ab):
		return false
	case errors.As(err, &er) && er.Response != nil:
		return er.Response.StatusCode >= 500
	}
	return true
}

// acceptedPermissions turns an X-Accepted-GitHub-Permissions header
// ("issues=write; pull_requests=write": alternatives separated by ';',
// permissions of one alternative by ',') into workflow permission syntax:
// "issues: write or pull-requests: write".
func acceptedPermissions(h string) string {
	var alts []string
	for _, alt := range strings.Split(h, ";") {
		var all []string
		for _, p := range strings.Split(alt, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || k == "" || v == "" || strings.ContainsAny(k+v, " \t`") {
				continue
			}
			all = append(all, strings.ReplaceAll(k, "_", "-")+": "+v)
		}
		if len(all) > 0 {
			alts = append(alts, strings.Join(all, " and "))
		}
	}
	return strings.Join(alts, " or ")
}

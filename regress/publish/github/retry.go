package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// retryTransport is kernelwatch's retry policy, under go-github so that
// go-github only ever sees the final answer:
//
//   - 429, and 403 with Retry-After, an exhausted rate limit
//     (X-RateLimit-Remaining: 0) or a secondary-rate-limit message, mean the
//     request was not processed: wait as long as GitHub says (Retry-After,
//     else until X-RateLimit-Reset, else a backoff) and try again, whatever
//     the method;
//   - 5xx answers and network errors: back off and try again, but only for
//     requests that are safe to repeat (GET, PATCH, PUT, DELETE, and POSTs
//     marked with idempotent). A POST that may have been processed is
//     returned to the caller, who lists before creating again;
//   - every attempt has its own timeout; the total time spent waiting
//     between attempts over the client's life is capped, and a wait beyond
//     the cap is not started at all.
type retryTransport struct {
	base        http.RoundTripper
	timeout     time.Duration
	maxWait     time.Duration
	maxAttempts int
	sleep       func(context.Context, time.Duration) error
	now         func() time.Time
	logf        func(string, ...any)

	mu     sync.Mutex
	waited time.Duration
}

type idempotentKey struct{}

// idempotent marks ctx's POST requests as safe to repeat (a commit status:
// the latest one per context wins).
func idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func repeatable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	v, _ := req.Context().Value(idempotentKey{}).(bool)
	return v
}

// maxBody bounds what is read of one API answer.
const maxBody = 32 << 20

// errGaveUp wraps the last failure when the retry budget is spent.
var errGaveUp = errors.New("gave up")

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		resp, err := t.attempt(req)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, why, retry := t.classify(req, resp, err, attempt)
		if !retry {
			return resp, err
		}
		if attempt >= t.maxAttempts {
			t.logf("%s %s: %s; giving up after %d attempts", req.Method, req.URL.Path, why, attempt)
			return resp, gaveUp(err, fmt.Sprintf("%d attempts", attempt))
		}
		t.mu.Lock()
		over := t.waited+wait > t.maxWait
		if !over {
			t.waited += wait
		}
		left := t.maxWait - t.waited
		t.mu.Unlock()
		if over {
			t.logf("%s %s: %s; waiting %s would pass the cap on the total wait (%s left of %s); giving up",
				req.Method, req.URL.Path, why, wait.Round(time.Second), left.Round(time.Second), t.maxWait)
			return resp, gaveUp(err, "the cap on the total wait")
		}
		t.logf("%s %s: %s; retrying in %s (attempt %d of %d)", req.Method, req.URL.Path, why, wait.Round(time.Millisecond), attempt+1, t.maxAttempts)
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// gaveUp returns the final error: a network error wrapped with errGaveUp,
// or nil when there is a response for go-github to turn into an error.
func gaveUp(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w after %s: %w", errGaveUp, what, err)
}

// attempt sends one copy of req under its own timeout and reads the whole
// answer, so the timeout covers the body too.
func (t *retryTransport) attempt(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	defer cancel()
	r := req.Clone(ctx)
	if req.Body != nil && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			return nil, &timeoutError{t.timeout, err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			return nil, &timeoutError{t.timeout, err}
		}
		return nil, err
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("answer larger than %d bytes", maxBody)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

// timeoutError is an attempt that got no (complete) answer in time.
type timeoutError struct {
	limit time.Duration
	err   error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within %s", e.limit)
}
func (e *timeoutError) Unwrap() error { return e.err }
func (e *timeoutError) Timeout() bool { return true }

// classify decides whether to try again and after how long.
func (t *retryTransport) classify(req *http.Request, resp *http.Response, err error, attempt int) (wait time.Duration, why string, retry bool) {
	backoff := time.Duration(500*(1<<min(attempt-1, 5))) * time.Millisecond
	if err != nil {
		if !repeatable(req) && !neverSent(err) {
			return 0, "", false // the server may have acted on it: the caller lists first
		}
		return backoff, "network error: " + err.Error(), true
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		return t.rateWait(resp, backoff), "429 too many requests", true
	case code == http.StatusForbidden && rateLimited(resp):
		return t.rateWait(resp, backoff), "403 rate limit", true
	case code >= 500 && code <= 599 && code != http.StatusNotImplemented:
		if !repeatable(req) {
			return 0, "", false
		}
		return backoff, resp.Status, true
	}
	return 0, "", false
}

// neverSent reports whether err happened before the request could reach
// the server (so even a create is safe to repeat).
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// rateLimited reports whether a 403 is a rate limit rather than a refusal.
func rateLimited(resp *http.Response) bool {
	if resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return true
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	msg := strings.ToLower(string(body))
	return strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "rate limit exceeded") ||
		strings.Contains(msg, "abuse detection")
}

// rateWait is how long GitHub asks to wait: Retry-After (seconds or an
// HTTP date), else until X-RateLimit-Reset when the limit is exhausted,
// else fallback.
func (t *retryTransport) rateWait(resp *http.Response, fallback time.Duration) time.Duration {
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if when, err := http.ParseTime(v); err == nil {
			return max(when.Sub(t.now()), 0)
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(s, 0).Sub(t.now())+time.Second, 0)
		}
	}
	if resp.StatusCode == http.StatusForbidden {
		return max(fallback, time.Minute) // GitHub: wait at least a minute on a secondary limit
	}
	return fallback
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

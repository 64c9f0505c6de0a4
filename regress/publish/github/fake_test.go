package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testToken is the token every test client sends; no output may contain it.
const testToken = "ghs_SECRETtokenDoNotLeak0123456789"

// apiPrefix is the path under which WithEnterpriseURLs puts the API: a
// non-empty prefix, so code that builds absolute paths fails loudly.
const apiPrefix = "/api/v3"

// fakeGitHub is a small stateful GitHub: comments, pull requests, commit
// comparisons and statuses of one base repository "base/repo", with
// injectable faults and every request recorded.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	me        string // GET /user login; "" answers 403 as for an installation token
	author    user   // who comments we create are by
	pageSize  int
	comments  map[int][]*fakeComment
	nextID    int64
	prs       []fakePR
	compare   map[string]string // "base...head" → status
	statuses  []map[string]any
	faults    []*fault
	requests  []recorded
	maxRunes  int
	echoToken bool // error bodies repeat the Authorization header, as a hostile server might
	// The artifacts, jobs and approvals of workflow runs (any run id).
	artifacts []fakeArtifact
	jobs      []map[string]any
	approvals []map[string]any
}

// fakeArtifact is an artifact of run RunID; its zip is served from /blob/ID
// outside the API, as GitHub serves it from a signed storage address.
type fakeArtifact struct {
	ID      int64
	Name    string
	RunID   int64
	Size    int64 // listed size; 0 means len(Zip)
	Expired bool
	Zip     []byte
}

type user struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type fakeComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User user   `json:"user"`
	URL  string `json:"html_url"`
}

type fakePR struct {
	Number             int
	HeadSHA, HeadRepo  string
	HeadBranch, State  string
	AssociatedInCommit bool // listed by /commits/{sha}/pulls (same-repo heads)
}

// fault answers the next times requests matching method and path (a
// regexp over the path without the API prefix) instead of the fake.
type fault struct {
	method, path string
	times        int
	status       int
	header       map[string]string
	body         string
	delay        time.Duration // answer only after this long (or when the client gives up)
	process      bool          // let the fake act on the request, then answer with the fault
}

type recorded struct {
	Method, Path, Query, Body, Auth string
}

func (r recorded) String() string { return r.Method + " " + r.Path }

const baseRepo = "base/repo"

// setup starts a fake GitHub and a client for it, the go-github way: the
// client's base URL has the non-empty path prefix /api/v3/.
func setup(t *testing.T, configure ...func(*Config)) (*Client, *fakeGitHub, *bytes.Buffer) {
	t.Helper()
	f := &fakeGitHub{t: t, me: "octo-user", author: user{"octo-user", "User"}, pageSize: 100,
		comments: map[int][]*fakeComment{}, nextID: 1000, compare: map[string]string{}, maxRunes: 65536}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	var log bytes.Buffer
	cfg := Config{
		Token: testToken, APIURL: f.srv.URL + "/", Log: &log, Timeout: 2 * time.Second, MaxWait: time.Minute,
		sleep: func(ctx context.Context, d time.Duration) error { f.slept(d); return ctx.Err() },
	}
	for _, fn := range configure {
		fn(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(log.String(), testToken) {
			t.Errorf("the log contains the token:\n%s", log.String())
		}
	})
	return c, f, &log
}

// slept records a wait the client asked for (tests never really wait).
func (f *fakeGitHub) slept(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, recorded{Method: "SLEEP", Path: d.String()})
}

func (f *fakeGitHub) addFault(ft *fault) { f.mu.Lock(); f.faults = append(f.faults, ft); f.mu.Unlock() }

func (f *fakeGitHub) addComment(pr int, login, typ, body string) *fakeComment {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := &fakeComment{ID: f.nextID, Body: body, User: user{login, typ},
		URL: fmt.Sprintf("https://github.example/%s/pull/%d#issuecomment-%d", baseRepo, pr, f.nextID)}
	f.comments[pr] = append(f.comments[pr], c)
	return c
}

// log returns the recorded requests as "METHOD /path" lines (sleeps as
// "SLEEP 2s").
func (f *fakeGitHub) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, r.String())
	}
	return out
}

// count counts the recorded requests "METHOD" or "METHOD /path".
func (f *fakeGitHub) count(what string) int {
	n := 0
	for _, l := range f.log() {
		if l == what || strings.HasPrefix(l, what+" ") {
			n++
		}
	}
	return n
}

func (f *fakeGitHub) last(method string) recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if f.requests[i].Method == method {
			return f.requests[i]
		}
	}
	f.t.Fatalf("no %s request", method)
	return recorded{}
}

// testMethod and testBody check a recorded request, as go-github's tests do.
func testMethod(t *testing.T, r recorded, want string) {
	t.Helper()
	if r.Method != want {
		t.Errorf("request method %s, want %s", r.Method, want)
	}
}

func testBody(t *testing.T, r recorded, wantField, want string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("request body %q: %v", r.Body, err)
	}
	if got, _ := m[wantField].(string); got != want {
		t.Errorf("request body %s = %.200q, want %.200q", wantField, got, want)
	}
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path, ok := strings.CutPrefix(r.URL.Path, apiPrefix)
	f.mu.Lock()
	f.requests = append(f.requests, recorded{r.Method, path, r.URL.RawQuery, string(body), r.Header.Get("Authorization")})
	f.mu.Unlock()
	if id, isBlob := strings.CutPrefix(r.URL.Path, "/blob/"); isBlob && r.Method == "GET" {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, a := range f.artifacts {
			if strconv.FormatInt(a.ID, 10) == id {
				w.Header().Set("Content-Type", "application/zip")
				w.Write(a.Zip)
				return
			}
		}
		http.Error(w, "no such blob", http.StatusNotFound)
		return
	}
	if !ok {
		f.t.Errorf("request outside the API prefix: %s %s", r.Method, r.URL.Path)
		http.Error(w, "not under "+apiPrefix, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		f.json(w, r, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	if ft := f.takeFault(r.Method, path); ft != nil {
		if ft.delay > 0 {
			select {
			case <-time.After(ft.delay):
			case <-r.Context().Done():
				return
			}
		}
		if !ft.process {
			f.writeFault(w, r, ft)
			return
		}
		f.route(httptest.NewRecorder(), r, path, body)
		f.writeFault(w, r, ft)
		return
	}
	f.route(w, r, path, body)
}

func (f *fakeGitHub) takeFault(method, path string) *fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ft := range f.faults {
		if ft.times > 0 && ft.method == method && regexp.MustCompile("^"+ft.path+"$").MatchString(path) {
			ft.times--
			return ft
		}
	}
	return nil
}

func (f *fakeGitHub) writeFault(w http.ResponseWriter, r *http.Request, ft *fault) {
	for k, v := range ft.header {
		w.Header().Set(k, v)
	}
	b := ft.body
	if f.echoToken {
		b = strings.Replace(b, "AUTH", r.Header.Get("Authorization"), -1)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ft.status)
	io.WriteString(w, b)
}

func (f *fakeGitHub) json(w http.ResponseWriter, r *http.Request, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

var (
	reComments    = regexp.MustCompile(`^/repos/base/repo/issues/(\d+)/comments$`)
	reComment     = regexp.MustCompile(`^/repos/base/repo/issues/comments/(\d+)$`)
	rePull        = regexp.MustCompile(`^/repos/base/repo/pulls/(\d+)$`)
	reCommitPulls = regexp.MustCompile(`^/repos/base/repo/commits/([0-9a-f]+)/pulls$`)
	reCompare     = regexp.MustCompile(`^/repos/base/repo/compare/([0-9a-f]+)\.\.\.([0-9a-f]+)$`)
	reStatus      = regexp.MustCompile(`^/repos/base/repo/statuses/([0-9a-f]+)$`)
	reArtifacts   = regexp.MustCompile(`^/repos/base/repo/actions/runs/(\d+)/artifacts$`)
	reArtifactZip = regexp.MustCompile(`^/repos/base/repo/actions/artifacts/(\d+)/zip$`)
	reJobs        = regexp.MustCompile(`^/repos/base/repo/actions/runs/(\d+)/jobs$`)
	reApprovals   = regexp.MustCompile(`^/repos/base/repo/actions/runs/(\d+)/approvals$`)
)

func (f *fakeGitHub) route(w http.ResponseWriter, r *http.Request, path string, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var m []string
	switch {
	case r.Method == "GET" && path == "/user":
		if f.me == "" {
			f.json(w, r, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
				"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user"})
			return
		}
		f.json(w, r, 200, user{f.me, "User"})
	case r.Method == "GET" && match(reComments, path, &m):
		pr, _ := strconv.Atoi(m[1])
		all := f.comments[pr]
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		size := f.pageSize
		if pp, _ := strconv.Atoi(r.URL.Query().Get("per_page")); pp > 0 && pp < size {
			size = pp
		}
		pages := max((len(all)+size-1)/size, 1)
		lo, hi := min((page-1)*size, len(all)), min(page*size, len(all))
		if page < pages {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(page+1))
			next := f.srv.URL + r.URL.Path + "?" + q.Encode()
			q.Set("page", strconv.Itoa(pages))
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next, f.srv.URL+r.URL.Path+"?"+q.Encode()))
		}
		f.json(w, r, 200, all[lo:hi])
	case r.Method == "POST" && match(reComments, path, &m):
		pr, _ := strconv.Atoi(m[1])
		var in struct{ Body string }
		json.Unmarshal(body, &in)
		if n := len([]rune(in.Body)); n > f.maxRunes {
			f.json(w, r, 422, map[string]any{"message": "Validation Failed",
				"errors": []map[string]string{{"resource": "IssueComment", "code": "custom", "field": "body",
					"message": fmt.Sprintf("body is too long (maximum is %d characters)", f.maxRunes)}}})
			return
		}
		f.nextID++
		c := &fakeComment{ID: f.nextID, Body: in.Body, User: f.author,
			URL: fmt.Sprintf("https://github.example/%s/pull/%d#issuecomment-%d", baseRepo, pr, f.nextID)}
		f.comments[pr] = append(f.comments[pr], c)
		f.json(w, r, 201, c)
	case r.Method == "PATCH" && match(reComment, path, &m):
		id, _ := strconv.ParseInt(m[1], 10, 64)
		var in struct{ Body string }
		json.Unmarshal(body, &in)
		for _, cs := range f.comments {
			for _, c := range cs {
				if c.ID == id {
					c.Body = in.Body
					f.json(w, r, 200, c)
					return
				}
			}
		}
		f.json(w, r, 404, map[string]any{"message": "Not Found"})
	case r.Method == "GET" && match(rePull, path, &m):
		n, _ := strconv.Atoi(m[1])
		for _, p := range f.prs {
			if p.Number == n {
				f.json(w, r, 200, prJSON(p))
				return
			}
		}
		f.json(w, r, 404, map[string]any{"message": "Not Found"})
	case r.Method == "GET" && path == "/repos/base/repo/pulls":
		q := r.URL.Query()
		var out []any
		for _, p := range f.prs {
			if q.Get("state") != "" && q.Get("state") != p.State {
				continue
			}
			if h := q.Get("head"); h != "" && h != strings.Split(p.HeadRepo, "/")[0]+":"+p.HeadBranch {
				continue
			}
			out = append(out, prJSON(p))
		}
		f.json(w, r, 200, out)
	case r.Method == "GET" && match(reCommitPulls, path, &m):
		var out []any
		for _, p := range f.prs {
			if p.HeadSHA == m[1] && p.AssociatedInCommit {
				out = append(out, prJSON(p))
			}
		}
		f.json(w, r, 200, out)
	case r.Method == "GET" && match(reCompare, path, &m):
		st, ok := f.compare[m[1]+"..."+m[2]]
		if !ok {
			f.json(w, r, 404, map[string]any{"message": "No common ancestor"})
			return
		}
		f.json(w, r, 200, map[string]any{"status": st})
	case r.Method == "POST" && match(reStatus, path, &m):
		var in map[string]any
		json.Unmarshal(body, &in)
		if d, _ := in["description"].(string); len([]rune(d)) > 140 {
			f.json(w, r, 422, map[string]any{"message": "description is too long (maximum is 140 characters)"})
			return
		}
		in["sha"] = m[1]
		f.statuses = append(f.statuses, in)
		f.json(w, r, 201, in)
	case r.Method == "GET" && match(reArtifacts, path, &m):
		run, _ := strconv.ParseInt(m[1], 10, 64)
		var list []map[string]any
		for _, a := range f.artifacts {
			if a.RunID != run {
				continue
			}
			size := a.Size
			if size == 0 {
				size = int64(len(a.Zip))
			}
			list = append(list, map[string]any{"id": a.ID, "name": a.Name, "size_in_bytes": size, "expired": a.Expired,
				"archive_download_url": fmt.Sprintf("%s%s/repos/base/repo/actions/artifacts/%d/zip", f.srv.URL, apiPrefix, a.ID),
				"workflow_run":         map[string]any{"id": a.RunID}})
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		size := 30
		if pp, _ := strconv.Atoi(r.URL.Query().Get("per_page")); pp > 0 {
			size = pp
		}
		lo, hi := min((page-1)*size, len(list)), min(page*size, len(list))
		if hi < len(list) {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(page+1))
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, f.srv.URL+r.URL.Path+"?"+q.Encode()))
		}
		f.json(w, r, 200, map[string]any{"total_count": len(list), "artifacts": list[lo:hi]})
	case r.Method == "GET" && match(reArtifactZip, path, &m):
		w.Header().Set("Location", f.srv.URL+"/blob/"+m[1])
		w.WriteHeader(http.StatusFound)
	case r.Method == "GET" && match(reJobs, path, &m):
		f.json(w, r, 200, map[string]any{"total_count": len(f.jobs), "jobs": f.jobs})
	case r.Method == "GET" && match(reApprovals, path, &m):
		list := f.approvals
		if list == nil {
			list = []map[string]any{}
		}
		f.json(w, r, 200, list)
	default:
		f.json(w, r, 404, map[string]any{"message": "Not Found (fake)"})
	}
}

func match(re *regexp.Regexp, s string, m *[]string) bool {
	*m = re.FindStringSubmatch(s)
	return *m != nil
}

func prJSON(p fakePR) map[string]any {
	return map[string]any{"number": p.Number, "state": p.State,
		"head": map[string]any{"sha": p.HeadSHA, "ref": p.HeadBranch, "repo": map[string]any{"full_name": p.HeadRepo}},
		"base": map[string]any{"ref": "main", "repo": map[string]any{"full_name": baseRepo}}}
}

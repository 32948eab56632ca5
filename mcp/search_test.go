package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// These tests drive the search tools through the go-sdk client over the
// in-memory transport, with the real stack behind them: the fake
// OpenProject over HTTP, the real client, sync.OpenUser with bbolt and
// bleve in a temp dir, one Worker.Sync, and the production UserIndex.

// searchGen is small enough for a fast sync and big enough that every
// kind has several items per project.
var searchGen = opgen.GenOptions{Seed: 11, WorkPackages: 300, Comments: 600, WikiPages: 30, Meetings: 15}

// searchEnv is one server over a synced user.
type searchEnv struct {
	fake   *optest.Server
	data   *optest.Dataset
	base   string
	client *openproject.Client
	user   *sync.User
	idx    *mcp.UserIndex
	cs     *sdk.ClientSession
}

// newSearchEnv syncs alice's data once and connects a client to a server
// over it.
func newSearchEnv(t testing.TB, opts mcp.Options) *searchEnv {
	t.Helper()
	return newSearchEnvOf(t, searchGen, opts)
}

// newSearchEnvOf is newSearchEnv of the instance gen generates.
func newSearchEnvOf(t testing.TB, gen opgen.GenOptions, opts mcp.Options) *searchEnv {
	t.Helper()
	data := opgen.Generate(gen)
	fake, base := optesting.Start(t, data, optest.Options{})
	e := &searchEnv{fake: fake, data: data, base: base, client: testClient(t, base, optest.AliceKey)}
	u, err := sync.OpenUser(t.Context(), t.TempDir(), e.client, sync.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	if _, err := u.Worker.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.user = u
	e.idx = mcp.NewUserIndex(mcp.UserIndexOptions{Schedule: "@every 2m"})
	e.idx.SetUser(u)
	e.cs = connectInMemory(t, mcp.NewServer(e.client, e.idx, opts))
	return e
}

// testClient is a real client whose retries do not sleep.
func testClient(t testing.TB, base, key string) *openproject.Client {
	t.Helper()
	c, err := openproject.New(openproject.Config{BaseURL: base, APIKey: key, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func connectInMemory(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

// callOK calls a tool that must succeed and decodes its structured answer.
func callOK[T any](t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, resultText(res))
	}
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	// The text content carries the same JSON, for clients that ignore
	// structured content.
	var fromText T
	if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil {
		t.Errorf("%s: text content is not the JSON answer: %v", name, err)
	}
	return out
}

// callErr calls a tool that must answer with a tool error and returns its
// text.
func callErr(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, resultText(res))
	}
	return resultText(res)
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// answer mirrors the search tools' result for the assertions.
type answer struct {
	Query             string `json:"query"`
	MatchMode         string `json:"matchMode"`
	Total             int    `json:"total"`
	TotalIsLowerBound bool   `json:"totalIsLowerBound"`
	Offset            int    `json:"offset"`
	PageSize          int    `json:"pageSize"`
	NextOffset        int    `json:"nextOffset"`
	Note              string `json:"note"`
	Results           []struct {
		Kind    string `json:"kind"`
		ID      int64  `json:"id"`
		Title   string `json:"title"`
		Status  string `json:"status"`
		Closed  *bool  `json:"closed"`
		Project *struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"project"`
		UpdatedAt      *time.Time `json:"updatedAt"`
		Score          float64    `json:"score"`
		MatchedFields  []string   `json:"matchedFields"`
		Snippet        string     `json:"snippet"`
		MatchedComment *struct {
			ActivityID int64  `json:"activityId"`
			Snippet    string `json:"snippet"`
		} `json:"matchedComment"`
		MatchedAgendaItems []struct {
			ID    int64  `json:"id"`
			Title string `json:"title"`
		} `json:"matchedAgendaItems"`
	} `json:"results"`
	Index struct {
		User *struct {
			ID    int64  `json:"id"`
			Login string `json:"login"`
		} `json:"user"`
		Ready    bool   `json:"ready"`
		Complete bool   `json:"complete"`
		Note     string `json:"note"`
		Kinds    map[string]struct {
			Items     int        `json:"items"`
			LastSync  *time.Time `json:"lastSync"`
			Complete  bool       `json:"complete"`
			LastError string     `json:"lastError"`
		} `json:"kinds"`
	} `json:"index"`
}

func (a answer) ids(kind string) []int64 {
	var out []int64
	for _, r := range a.Results {
		if r.Kind == kind {
			out = append(out, r.ID)
		}
	}
	return out
}

// stored returns alice's stored entities of the synced store, so tests
// pick queries from what the index really holds.
func (e *searchEnv) storedWPs(t testing.TB) []openproject.WorkPackage {
	t.Helper()
	var out []openproject.WorkPackage
	if err := e.user.Store.ScanWorkPackages(t.Context(), 500, func(ws []openproject.WorkPackage) error {
		out = append(out, ws...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *searchEnv) storedMeetings(t testing.TB) []openproject.Meeting {
	t.Helper()
	var out []openproject.Meeting
	if err := e.user.Store.ScanMeetings(t.Context(), 500, func(ms []openproject.Meeting) error {
		out = append(out, ms...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *searchEnv) storedWiki(t testing.TB) []openproject.WikiPage {
	t.Helper()
	var out []openproject.WikiPage
	if err := e.user.Store.ScanWikiPages(t.Context(), 500, func(ps []openproject.WikiPage) error {
		out = append(out, ps...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// TestSearchTools_Valid calls every search tool with valid input and
// checks the answer's shape: ranked hits of the right kind, matched
// fields, snippets, the matched comment or agenda items, paging, and an
// index block that says the crawl is complete.
func TestSearchTools_Valid(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	wps := e.storedWPs(t)
	target := wps[len(wps)/2]

	t.Run("search everything", func(t *testing.T) {
		a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": target.Subject})
		if len(a.Results) == 0 || !slices.Contains(a.ids("work_package")[:min(3, len(a.ids("work_package")))], target.ID) {
			t.Fatalf("%q: work package %d not among the top hits: %+v", target.Subject, target.ID, a.Results)
		}
		r := a.Results[0]
		if r.Score <= 0 || len(r.MatchedFields) == 0 || r.Title == "" || r.Project == nil || r.UpdatedAt == nil {
			t.Errorf("result lacks fields: %+v", r)
		}
		if !a.Index.Ready || !a.Index.Complete || len(a.Index.Kinds) != 5 || a.Index.Note != "" {
			t.Errorf("index block: %+v", a.Index)
		}
		for k, kf := range a.Index.Kinds {
			if kf.LastSync == nil || !kf.Complete {
				t.Errorf("kind %s: %+v", k, kf)
			}
		}
		if a.Offset != 1 || a.PageSize != 20 || a.MatchMode != "fuzzy" {
			t.Errorf("paging %d/%d mode %s", a.Offset, a.PageSize, a.MatchMode)
		}
	})

	t.Run("typo tolerant", func(t *testing.T) {
		// Drop one letter from the longest word of the subject.
		words := strings.Fields(target.Subject)
		long := slices.MaxFunc(words, func(a, b string) int { return len(a) - len(b) })
		typo := strings.Replace(target.Subject, long, long[:len(long)-2]+long[len(long)-1:], 1)
		a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": typo, "kinds": []string{"work_package"}})
		if !slices.Contains(a.ids("work_package"), target.ID) {
			t.Errorf("typo %q did not find %d", typo, target.ID)
		}
		exact := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": typo, "kinds": []string{"work_package"}, "matchMode": "exact"})
		if exact.MatchMode != "exact" || slices.Contains(exact.ids("work_package"), target.ID) {
			t.Errorf("exact mode matched the typo %q: %v", typo, exact.ids("work_package"))
		}
	})

	t.Run("kinds and project", func(t *testing.T) {
		a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": firstWords(target.Subject, 2), "kinds": []string{"work_package", "wiki_page"}, "projectId": "website-relaunch", "pageSize": 5})
		for _, r := range a.Results {
			if (r.Kind != "work_package" && r.Kind != "wiki_page") || r.Project == nil || r.Project.ID != 1 {
				t.Errorf("result outside kinds or project 1: %+v", r)
			}
		}
		if len(a.Index.Kinds) != 2 || len(a.Results) > 5 {
			t.Errorf("index kinds %v, %d results", a.Index.Kinds, len(a.Results))
		}
		b := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": firstWords(target.Subject, 2), "kinds": []string{"work_package", "wiki_page"}, "projectId": 1, "pageSize": 5})
		ja, _ := json.Marshal(a.Results)
		jb, _ := json.Marshal(b.Results)
		if len(a.Results) == 0 || string(ja) != string(jb) {
			t.Errorf("projectId by identifier and by number differ (or found nothing):\n%s\n%s", ja, jb)
		}
	})

	t.Run("paging", func(t *testing.T) {
		p1 := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": "the", "pageSize": 3})
		if p1.Total <= 3 || p1.NextOffset != 2 {
			t.Fatalf("page 1: total %d next %d", p1.Total, p1.NextOffset)
		}
		p2 := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": "the", "pageSize": 3, "offset": 2})
		if p2.Offset != 2 || len(p2.Results) == 0 || p2.Results[0].ID == p1.Results[0].ID && p2.Results[0].Kind == p1.Results[0].Kind {
			t.Errorf("page 2 repeats page 1: %+v", p2.Results)
		}
	})

	// Following nextOffset walks every result once: no duplicate, no gap,
	// as many as the exact total, past the re-ranked candidates and for
	// queries of one word and of several.
	t.Run("walk every page", func(t *testing.T) {
		for _, query := range []string{"report", "release plan review"} {
			for _, size := range []int{7, 20} {
				seen := map[string]bool{}
				total, pages := -1, 0
				for offset := 1; offset > 0; pages++ {
					a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": query, "pageSize": size, "offset": offset})
					if total < 0 {
						total = a.Total
					}
					if a.Total != total || a.TotalIsLowerBound {
						t.Fatalf("%q page %d: total %d (lower bound %v), first page said %d", query, offset, a.Total, a.TotalIsLowerBound, total)
					}
					for _, r := range a.Results {
						k := fmt.Sprintf("%s:%d", r.Kind, r.ID)
						if seen[k] {
							t.Fatalf("%q size %d: %s again on page %d", query, size, k, offset)
						}
						seen[k] = true
					}
					if a.NextOffset == 0 && len(seen) < min(total, 1000) {
						t.Fatalf("%q size %d: no nextOffset after %d of %d results", query, size, len(seen), total)
					}
					offset = a.NextOffset
				}
				if want := min(total, 1000); len(seen) != want || total <= 30 {
					t.Errorf("%q size %d: walked %d results in %d pages, total %d (want all, and more than the 30 re-ranked)", query, size, len(seen), pages, total)
				}
			}
		}
	})

	t.Run("work packages by comment and status", func(t *testing.T) {
		var wp openproject.WorkPackage
		var comment string
		for _, w := range wps {
			acts, _, _ := e.user.Store.Activities(w.ID)
			for _, a := range acts {
				if a.IsComment() && len(strings.Fields(a.Comment)) >= 6 {
					wp, comment = w, a.Comment
				}
			}
			if comment != "" {
				break
			}
		}
		q := firstWords(comment, 6)
		a := callOK[answer](t, e.cs, "openproject_search_work_packages", map[string]any{"query": q})
		i := slices.Index(a.ids("work_package"), wp.ID)
		if i < 0 {
			t.Fatalf("comment words %q did not find work package %d", q, wp.ID)
		}
		if a.Results[i].MatchedComment == nil || a.Results[i].MatchedComment.Snippet == "" {
			t.Errorf("no matched comment: %+v", a.Results[i])
		}
		for _, status := range []string{"open", "closed", wp.Status.Title, fmt.Sprint(wp.Status.ID)} {
			s := callOK[answer](t, e.cs, "openproject_search_work_packages", map[string]any{"query": firstWords(wp.Subject, 3), "status": status, "pageSize": 50})
			for _, r := range s.Results {
				switch status {
				case "open", "closed":
					if r.Closed == nil || *r.Closed != (status == "closed") {
						t.Errorf("status %s: got %+v", status, r)
					}
				default:
					if r.Status != wp.Status.Title {
						t.Errorf("status %s: got %q", status, r.Status)
					}
				}
			}
			if (status == wp.Status.Title || (status == "closed") == wp.Closed && (status == "open" || status == "closed")) && !slices.Contains(s.ids("work_package"), wp.ID) {
				t.Errorf("status %s lost work package %d", status, wp.ID)
			}
		}
	})

	t.Run("wiki pages", func(t *testing.T) {
		pages := e.storedWiki(t)
		p := pages[0]
		a := callOK[answer](t, e.cs, "openproject_search_wiki_pages", map[string]any{"query": p.Title, "limit": 5})
		if !slices.Contains(a.ids("wiki_page"), p.ID) || len(a.Results) > 5 {
			t.Errorf("wiki title %q: %v", p.Title, a.ids("wiki_page"))
		}
		recent := callOK[answer](t, e.cs, "openproject_search_wiki_pages", map[string]any{"refreshCache": true})
		if len(recent.Results) == 0 || !strings.Contains(recent.Note, "refreshCache is ignored") {
			t.Errorf("no-query listing: %d results, note %q", len(recent.Results), recent.Note)
		}
	})

	t.Run("meetings with agenda items", func(t *testing.T) {
		var m openproject.Meeting
		var item string
		for _, x := range e.storedMeetings(t) {
			for _, it := range x.AgendaItems {
				if len(strings.Fields(it.Title)) >= 3 {
					m, item = x, it.Title
				}
			}
			if item != "" {
				break
			}
		}
		a := callOK[answer](t, e.cs, "openproject_search_meetings", map[string]any{"query": item})
		i := slices.Index(a.ids("meeting"), m.ID)
		if i < 0 {
			t.Fatalf("agenda item %q did not find meeting %d", item, m.ID)
		}
		if len(a.Results[i].MatchedAgendaItems) == 0 {
			t.Errorf("no matched agenda items: %+v", a.Results[i])
		}
	})

	t.Run("sync status", func(t *testing.T) {
		type statusAnswer struct {
			Ready    bool `json:"ready"`
			Complete bool `json:"complete"`
			Kinds    map[string]struct {
				Store    int        `json:"store"`
				Index    *int       `json:"index"`
				LastSync *time.Time `json:"last_sync"`
			} `json:"kinds"`
			User     struct{ Login string } `json:"user"`
			Schedule string                 `json:"schedule"`
			DataDir  string                 `json:"dataDir"`
		}
		st := callOK[statusAnswer](t, e.cs, "openproject_sync_status", nil)
		n, _ := e.user.Store.Count(kind.WorkPackage)
		wpk := st.Kinds["work_package"]
		if !st.Ready || !st.Complete || wpk.Store != n || wpk.Index == nil || *wpk.Index != n || wpk.LastSync == nil {
			t.Errorf("sync status: %+v", st)
		}
		// The data directory is the operator's, not the caller's, to know.
		if st.User.Login != "alice" || st.Schedule != "@every 2m" || st.DataDir != "" {
			t.Errorf("user %q schedule %q dir %q", st.User.Login, st.Schedule, st.DataDir)
		}
		if len(st.Kinds) != len(kind.All()) {
			t.Errorf("kinds %v", st.Kinds)
		}
	})
}

// TestSearchTools_BadInput: every bad argument is a tool error naming the
// parameter.
func TestSearchTools_BadInput(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	tests := []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"openproject_search", map[string]any{"query": "  "}, "query"},
		{"openproject_search", map[string]any{}, "query"},
		{"openproject_search", map[string]any{"query": strings.Repeat("a", 501)}, "query"},
		{"openproject_search", map[string]any{"query": "x", "kinds": []string{"bug"}}, "kinds"},
		{"openproject_search", map[string]any{"query": "x", "matchMode": "fuzzzy"}, "matchMode"},
		{"openproject_search", map[string]any{"query": "x", "pageSize": 101}, "pageSize"},
		{"openproject_search", map[string]any{"query": "x", "offset": -1}, "offset"},
		{"openproject_search", map[string]any{"query": "x", "offset": 60, "pageSize": 20}, "offset"},
		{"openproject_search", map[string]any{"query": "x", "projectId": "no-such-project"}, "projectId"},
		{"openproject_search", map[string]any{"query": "x", "projectId": 1.5}, "projectId"},
		{"openproject_search", map[string]any{"query": "x", "projectId": -3}, "projectId"},
		{"openproject_search", map[string]any{"query": "x", "bogus": 1}, "bogus"},
		{"openproject_search_work_packages", map[string]any{"status": "open"}, "query"},
		{"openproject_search_work_packages", map[string]any{"query": "x", "status": strings.Repeat("s", 101)}, "status"},
		{"openproject_search_work_packages", map[string]any{"query": "x", "pageSize": 0.5}, "pageSize"},
		{"openproject_search_wiki_pages", map[string]any{"limit": 101}, "limit"},
		{"openproject_search_wiki_pages", map[string]any{"query": "x", "matchMode": "regex"}, "matchMode"},
		{"openproject_search_meetings", map[string]any{"query": ""}, "query"},
		{"openproject_search_meetings", map[string]any{"query": "x", "projectId": true}, "projectId"},
		{"openproject_sync_status", map[string]any{"verbose": true}, "verbose"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.param, func(t *testing.T) {
			msg := callErr(t, e.cs, tt.tool, tt.args)
			if !strings.Contains(msg, tt.param) {
				t.Errorf("error %q does not name %s", msg, tt.param)
			}
			if strings.Contains(msg, "internal error") {
				t.Errorf("bad input reported as internal error: %q", msg)
			}
		})
	}
}

// TestSearchTools_NotReady: before the index is open every search tool
// says so in a structured answer instead of a bare empty list.
func TestSearchTools_NotReady(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
	_, base := optesting.Start(t, data, optest.Options{})
	idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
	// Nothing opens this index: no search need wait for it.
	cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), idx, mcp.Options{OpenWait: -1}))
	for tool, args := range searchToolArgs() {
		a := callOK[answer](t, cs, tool, args)
		if a.Index.Ready || len(a.Results) != 0 || !strings.Contains(a.Index.Note, "nothing can be concluded") {
			t.Errorf("%s before the index is ready: %+v", tool, a)
		}
	}
	st := callOK[map[string]any](t, cs, "openproject_sync_status", nil)
	if st["ready"] != false || !strings.Contains(fmt.Sprint(st["note"]), "being opened or built") {
		t.Errorf("sync status before ready: %v", st)
	}
	// Live tools do not depend on the index.
	if res := call(t, cs, "openproject_list_projects", nil); res.IsError {
		t.Errorf("list projects while the index is not ready: %s", resultText(res))
	}
}

// TestSearchWaitsForOpen: a search arriving while the index is being
// opened waits for the outcome (bounded by Options.OpenWait) instead of
// answering "not ready" at once; one-shot clients start the server and
// search in the same breath.
func TestSearchWaitsForOpen(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
	_, base := optesting.Start(t, data, optest.Options{})
	t.Run("the outcome answers", func(t *testing.T) {
		idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
		// An hour: the test ends by the outcome, not the bound.
		cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), idx, mcp.Options{OpenWait: time.Hour}))
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "openproject_search", Arguments: map[string]any{"query": "budget"}})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		// The search is waiting when the open fails; if it did not wait,
		// it answered "not ready" already.
		select {
		case res := <-done:
			t.Fatalf("the search answered before the index opened: %s", resultText(res))
		case <-time.After(100 * time.Millisecond):
		}
		idx.SetOpenError(&openproject.Error{Kind: openproject.ErrNetwork, Method: "GET", Path: "/api/v3/users/me", Err: errors.New("connection refused")})
		res := <-done
		if res == nil || !res.IsError || !strings.Contains(resultText(res), "cannot reach OpenProject") {
			t.Errorf("after the open failed the search answered %s; want the failure", resultText(res))
		}
	})
	t.Run("bounded", func(t *testing.T) {
		idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
		cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), idx, mcp.Options{OpenWait: time.Millisecond}))
		a := callOK[answer](t, cs, "openproject_search", map[string]any{"query": "budget"})
		if a.Index.Ready || !strings.Contains(a.Index.Note, "nothing can be concluded") {
			t.Errorf("an index that never opens: %+v; want the not-ready answer", a)
		}
	})
}

// TestSearchOpenErrors: when the index cannot be opened because
// OpenProject did not answer as it should, the search says what to check
// (the URL, the key), not that OpenProject is "unavailable".
func TestSearchOpenErrors(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
	_, base := optesting.Start(t, data, optest.Options{})
	me := func(kind error, status int, cause error) error {
		return fmt.Errorf("open user: %w", &openproject.Error{Kind: kind, Status: status, Method: "GET", Path: "/api/v3/users/me", Err: cause})
	}
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"unreachable", me(openproject.ErrNetwork, 0, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")),
			[]string{"cannot reach OpenProject at " + base, "connection refused", "check OPENPROJECT_BASE_URL"}},
		{"wrong path", me(openproject.ErrNotFound, 404, nil), []string{"does not answer as OpenProject's API", "answered 404", "without /api/v3"}},
		{"wrong key", me(openproject.ErrUnauthenticated, 401, nil), []string{"rejected the API key", "check OPENPROJECT_API_KEY"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
			idx.SetOpenError(c.err)
			cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), idx, mcp.Options{}))
			res := call(t, cs, "openproject_search", map[string]any{"query": "budget"})
			text := resultText(res)
			if !res.IsError {
				t.Fatalf("no error: %s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not say %q", text, w)
				}
			}
		})
	}
}

// searchToolArgs is one valid call of each search tool.
func searchToolArgs() map[string]map[string]any {
	return map[string]map[string]any{
		"openproject_search":               {"query": "budget"},
		"openproject_search_work_packages": {"query": "budget"},
		"openproject_search_wiki_pages":    {"query": "budget"},
		"openproject_search_meetings":      {"query": "budget"},
	}
}

// TestSearchTools_UpstreamFault: a failure of OpenProject never reads as
// "no results". A rejected key while opening the index is a tool error
// naming the key; a failed sync after the index exists still answers from
// the index, with the failure in the index block; another process holding
// the index is named too.
func TestSearchTools_UpstreamFault(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	t.Run("rejected key before the index opened", func(t *testing.T) {
		data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
		_, base := optesting.Start(t, data, optest.Options{})
		client := testClient(t, base, "not-a-key")
		_, err := sync.OpenUser(t.Context(), t.TempDir(), client, sync.UserOptions{})
		if !errors.Is(err, openproject.ErrUnauthenticated) {
			t.Fatalf("OpenUser with a bad key: %v", err)
		}
		idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
		idx.SetOpenError(err)
		cs := connectInMemory(t, mcp.NewServer(client, idx, mcp.Options{}))
		for tool, args := range searchToolArgs() {
			msg := callErr(t, cs, tool, args)
			if !strings.Contains(msg, "API key") || !strings.Contains(msg, "request id") {
				t.Errorf("%s: %q", tool, msg)
			}
		}
		if msg := callErr(t, cs, "openproject_sync_status", nil); !strings.Contains(msg, "API key") {
			t.Errorf("sync status: %q", msg)
		}
	})

	t.Run("sync failing after the index exists", func(t *testing.T) {
		e := newSearchEnv(t, mcp.Options{})
		e.fake.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages", FailNext: 1000, FailStatus: 500})
		if _, err := e.user.Worker.Sync(t.Context()); err == nil {
			t.Fatal("sync during the outage succeeded")
		}
		target := e.storedWPs(t)[0]
		for tool, args := range searchToolArgs() {
			args["query"] = target.Subject
			a := callOK[answer](t, e.cs, tool, args)
			if tool == "openproject_search" || tool == "openproject_search_work_packages" {
				if !slices.Contains(a.ids("work_package"), target.ID) {
					t.Errorf("%s: the index stopped answering during the outage", tool)
				}
				// Completeness and freshness are separate facts: the crawl
				// stays complete, the failure is reported beside it.
				kf := a.Index.Kinds["work_package"]
				if !a.Index.Complete || !kf.Complete || kf.LastError == "" || !strings.Contains(a.Index.Note, "failed") {
					t.Errorf("%s: outage not reported, or completeness lost: %+v", tool, a.Index)
				}
			}
		}
		st := callOK[map[string]any](t, e.cs, "openproject_sync_status", nil)
		wp := st["kinds"].(map[string]any)["work_package"].(map[string]any)
		if wp["last_error"] == nil || st["complete"] != true {
			t.Errorf("sync status during the outage: %v", st)
		}
	})

	t.Run("index held by another process", func(t *testing.T) {
		idx := mcp.NewUserIndex(mcp.UserIndexOptions{})
		idx.SetOpenError(&sync.LockedError{Dir: "/data/op/5", Err: errors.New("timeout")})
		data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
		_, base := optesting.Start(t, data, optest.Options{})
		cs := connectInMemory(t, mcp.NewServer(testClient(t, base, optest.AliceKey), idx, mcp.Options{}))
		if msg := callErr(t, cs, "openproject_search", map[string]any{"query": "x"}); !strings.Contains(msg, "another opsearch process") {
			t.Errorf("locked: %q", msg)
		}
	})
}

// TestReadYourWrites: a work package created, and a comment added,
// through the write tools are found by the next search, with no sync in
// between.
func TestReadYourWrites(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{})
	before, _ := e.user.Store.SyncState(kind.WorkPackage)
	word := fmt.Sprintf("quuxfrobnic%d", time.Now().UnixNano()%100000)

	created := callOK[map[string]any](t, e.cs, "openproject_create_work_package", map[string]any{
		"projectId": "website-relaunch", "subject": "Calibrate the " + word + " relay", "description": "created by the read-your-writes test",
	})
	raw, _ := json.Marshal(created)
	var wp struct {
		ID int64 `json:"id"`
	}
	for _, k := range []string{"workPackage", "work_package"} {
		if m, ok := created[k].(map[string]any); ok {
			b, _ := json.Marshal(m)
			_ = json.Unmarshal(b, &wp)
		}
	}
	if wp.ID == 0 {
		_ = json.Unmarshal(raw, &wp)
	}
	if wp.ID == 0 {
		t.Fatalf("create answer has no id: %s", raw)
	}
	a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": word})
	if len(a.Results) == 0 || a.Results[0].Kind != "work_package" || a.Results[0].ID != wp.ID {
		t.Fatalf("search for %q right after creating %d: %+v", word, wp.ID, a.Results)
	}

	// A comment is searchable at once too, and shows as the matched comment.
	word2 := strings.Replace(word, "quuxfrobnic", "zephyrwick", 1) // no prefix of the first word
	other := e.storedWPs(t)[3]
	if res := call(t, e.cs, "openproject_add_comment", map[string]any{"workPackageId": other.ID, "comment": "the " + word2 + " gauge is back"}); res.IsError {
		t.Fatalf("add comment: %s", resultText(res))
	}
	b := callOK[answer](t, e.cs, "openproject_search_work_packages", map[string]any{"query": word2})
	if len(b.Results) == 0 || b.Results[0].ID != other.ID || b.Results[0].MatchedComment == nil {
		t.Fatalf("search for the new comment %q: %+v", word2, b.Results)
	}

	after, _ := e.user.Store.SyncState(kind.WorkPackage)
	if !after.LastStarted.Equal(before.LastStarted) {
		t.Error("a sync ran in between; the test proves nothing")
	}
}

// TestSearchTools_ReadOnly: a read-only server lists no write tool, and
// the search tools work the same.
func TestSearchTools_ReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newSearchEnv(t, mcp.Options{ReadOnly: true})
	names := toolNames(t, e.cs)
	for _, n := range []string{"openproject_create_work_package", "openproject_update_work_package", "openproject_add_comment", "openproject_log_time", "openproject_create_relation"} {
		if slices.Contains(names, n) {
			t.Errorf("read-only server lists %s", n)
		}
	}
	for _, n := range []string{"openproject_search", "openproject_search_work_packages", "openproject_search_wiki_pages", "openproject_search_meetings", "openproject_sync_status"} {
		if !slices.Contains(names, n) {
			t.Errorf("read-only server lacks %s", n)
		}
	}
	callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": "budget"})
	if msg := callErr(t, e.cs, "openproject_create_work_package", map[string]any{"projectId": 1, "subject": "x"}); !strings.Contains(strings.ToLower(msg), "read-only") {
		t.Errorf("write on a read-only server: %q", msg)
	}
}

func toolNames(t testing.TB, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// TestToolsList_Contract: every tool has explicit annotations and a
// description on every parameter, the search tools are marked local and
// read-only, and the whole tools/list answer stays within 24 KB.
func TestToolsList_Contract(t *testing.T) {
	data := opgen.Generate(opgen.GenOptions{Seed: 1, WorkPackages: 10})
	_, base := optesting.Start(t, data, optest.Options{})
	srv := mcp.NewServer(testClient(t, base, optest.AliceKey), mcp.NewUserIndex(mcp.UserIndexOptions{}), mcp.Options{Logger: slog.New(slog.DiscardHandler)})
	cs := connectInMemory(t, srv)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 24*1024 {
		t.Errorf("tools/list is %d bytes, over 24 KB", len(raw))
	}
	t.Logf("%d tools, tools/list %d bytes", len(res.Tools), len(raw))
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not explicit: %+v", tool.Name, a)
			continue
		}
		if strings.HasPrefix(tool.Name, "openproject_search") || tool.Name == "openproject_sync_status" {
			if !a.ReadOnlyHint || *a.OpenWorldHint || *a.DestructiveHint || !a.IdempotentHint {
				t.Errorf("%s: search tools are local and read-only: %+v", tool.Name, a)
			}
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		sch, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(sch, &s)
		for name, p := range s.Properties {
			if p.Description == "" {
				t.Errorf("%s: parameter %s has no description", tool.Name, name)
			}
		}
	}
}

// TestSearchDuringSync runs searches and a write while a sync commits
// changes: every call answers, and the sync does not undo the write.
func TestSearchDuringSync(t *testing.T) {
	e := newSearchEnv(t, mcp.Options{})
	for _, wp := range e.storedWPs(t)[:50] {
		if err := e.fake.UpdateWorkPackage(wp.ID, func(w *openproject.WorkPackage) { w.Subject += " xylorevised" }); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.user.Worker.Sync(t.Context())
		done <- err
	}()
	word := fmt.Sprintf("concurrentkiwi%d", time.Now().UnixNano()%100000)
	callOK[map[string]any](t, e.cs, "openproject_create_work_package", map[string]any{"projectId": 1, "subject": "Peel the " + word})
	for i := 0; i < 20; i++ {
		callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": "xylorevised"})
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a := callOK[answer](t, e.cs, "openproject_search", map[string]any{"query": word})
	if len(a.Results) != 1 {
		t.Errorf("write lost around a concurrent sync: %+v", a.Results)
	}
	r := callOK[answer](t, e.cs, "openproject_search_work_packages", map[string]any{"query": "xylorevised", "pageSize": 100})
	if r.Total != 50 {
		t.Errorf("sync changes not searchable: total %d", r.Total)
	}
}

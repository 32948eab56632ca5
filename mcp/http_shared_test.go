package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/opsearch/opsearch/internal/optesting/pgtest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// The shared index's acceptance over the wire: a team server keeping one
// index for the instance answers every user, over MCP and REST, exactly
// what a server keeping one index per user answers them.

// mixedGen is a data set whose users see different things: projects by
// membership and publicity, kinds by role, single shared work packages,
// internal comments.
var mixedGen = opgen.GenOptions{Seed: 11, WorkPackages: 400, Comments: 600, WikiPages: 60, Meetings: 30, MixedPermissions: true}

// mixedKeys are the mixed set's users who are not administrators.
var mixedKeys = []string{optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey, "opsearch-user-7"}

// modeServer is a team server in one index mode.
type modeServer struct {
	mgr  *mcp.HTTPUsers
	ts   *httptest.Server
	logs *lockedBuffer
}

func startModeServer(t *testing.T, base string, shared *sync.SharedOptions, verify ...bool) *modeServer {
	return startModeServerIdle(t, base, shared, 0, verify...)
}

// startModeServerIdle is startModeServer with an idle timeout (0: the
// default).
func startModeServerIdle(t *testing.T, base string, shared *sync.SharedOptions, idle time.Duration, verify ...bool) *modeServer {
	return startModeServerStore(t, base, shared, idle, "", verify...)
}

// startModeServerStore is startModeServerIdle with the shared store in
// the PostgreSQL database storeURL ("": a file in the data dir): one
// replica of a team server.
func startModeServerStore(t testing.TB, base string, shared *sync.SharedOptions, idle time.Duration, storeURL string, verify ...bool) *modeServer {
	t.Helper()
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mgr, err := sync.NewManager(sync.ManagerOptions[*mcp.HTTPUser]{
		DataDir: t.TempDir(),
		NewClient: func(key string) (sync.UserAPI, error) {
			return openproject.New(openproject.Config{BaseURL: base, APIKey: key, EitherScheme: true, Timeout: 20 * time.Second, Logger: logger})
		},
		Attach:      mcp.HTTPAttach(mcp.UserIndexOptions{Schedule: "@every 1h"}, mcp.HTTPUserHooks{}),
		Schedule:    "@every 1h",
		IdleTimeout: idle,
		UserOptions: sync.UserOptions{Logger: logger, WorkerOptions: sync.Options{Logger: logger}, StoreURL: storeURL},
		Shared:      shared,
		Logger:      logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcp.NewHTTPHandler(mcp.HTTPOptions{BaseURL: base, Logger: logger, Manager: mgr, VerifyResults: len(verify) > 0 && verify[0],
		// Every search asks again: the test removes a membership right
		// after a search.
		VerifyTTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	s := &modeServer{mgr: mgr, ts: httptest.NewServer(h), logs: logs}
	t.Cleanup(func() {
		s.ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := mgr.Close(ctx); err != nil {
			t.Errorf("close manager: %v", err)
		}
		out := logs.String()
		for _, k := range append([]string{optest.AdminKey}, mixedKeys...) {
			if strings.Contains(out, k) {
				t.Errorf("the log contains the API key %s", k)
			}
		}
	})
	waitBuilt(t, mgr)
	return s
}

// teamMode is one way to run a team server with a shared index.
type teamMode struct {
	name string
	// serve starts it: users sync through crawl and search through
	// search, the same server when there is one.
	serve func(t *testing.T, base string, opts *sync.SharedOptions, idle time.Duration, verify bool) (crawl, search *modeServer)
}

// teamModes are the shared index's two deployments, for the leak tests
// to run through both: one process with its store in a file, and two
// replicas sharing a PostgreSQL store (skipped without PostgreSQL),
// users crawling through replica A and searching through replica B,
// whose index only follows the store.
//
// In -short mode (CI's race run) only the one process runs: the replicas
// double the slowest tests under the race detector, and the full run
// covers them; replica-specific tests (TestHTTPReplicas*, TestReplicas*)
// still run there.
func teamModes() []teamMode {
	modes := allTeamModes()
	if testing.Short() {
		return modes[:1]
	}
	return modes
}

func allTeamModes() []teamMode {
	return []teamMode{
		{"single", func(t *testing.T, base string, opts *sync.SharedOptions, idle time.Duration, verify bool) (*modeServer, *modeServer) {
			s := startModeServerStore(t, base, opts, idle, "", verify)
			return s, s
		}},
		{"replicas", func(t *testing.T, base string, opts *sync.SharedOptions, idle time.Duration, verify bool) (*modeServer, *modeServer) {
			dsn := pgtest.Schema(t)
			return startModeServerStore(t, base, opts, idle, dsn, verify), startModeServerStore(t, base, opts, idle, dsn, verify)
		}},
	}
}

// syncThrough waits for key's first sync through crawl, then for search
// to hold what it committed, and returns key's session with search
// (synced there too) and the user id search reports.
func syncThrough(t *testing.T, crawl, search *modeServer, key string) (*sdk.ClientSession, int64) {
	t.Helper()
	if crawl != search {
		waitSynced(t.Context(), t, crawl.connect(t, key))
		search.caughtUp(t)
	}
	cs := search.connect(t, key)
	return cs, waitSynced(t.Context(), t, cs)
}

// caughtUp waits until a replica's index has applied everything in its
// store; it returns at once for a server that does not follow one.
func (s *modeServer) caughtUp(t *testing.T) {
	t.Helper()
	for {
		st, ok := s.mgr.Follow()
		if !ok || !st.Building && st.Behind == 0 {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *modeServer) connect(t *testing.T, key string) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: s.ts.URL + "/mcp", HTTPClient: httpClient(map[string]string{"X-OpenProject-Api-Key": key})}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// restSearch calls openproject_search through the REST bridge and
// returns its structured answer.
func (s *modeServer) restSearch(t testing.TB, key string, args map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(args)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.ts.URL+"/api/tools/openproject_search", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		IsError bool           `json:"isError"`
		Data    map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != http.StatusOK || out.IsError {
		t.Fatalf("REST search %v: HTTP %d, %s", args, resp.StatusCode, raw)
	}
	return out.Data
}

// mixedQueries draws search arguments from the data set as people type
// them: parts of titles, comments (internal ones too, which must find
// nothing for whoever may not read them), wiki text and agenda items,
// with kinds, exact matching, pages and a project.
func mixedQueries(d *optest.Dataset, n int) []map[string]any {
	r := rand.New(rand.NewPCG(3, 5))
	words := func(s string) string {
		f := strings.Fields(s)
		k := 1 + r.IntN(4)
		if len(f) <= k {
			return s
		}
		i := r.IntN(len(f) - k + 1)
		return strings.Join(f[i:i+k], " ")
	}
	var texts, internal []string
	for _, wp := range d.WorkPackages {
		texts = append(texts, wp.Subject)
	}
	for _, a := range d.Activities {
		if a.Comment == "" {
			continue
		}
		if a.Internal {
			internal = append(internal, openproject.PlainText(a.Comment))
		} else {
			texts = append(texts, openproject.PlainText(a.Comment))
		}
	}
	for _, w := range d.WikiPages {
		texts = append(texts, w.Title, openproject.PlainText(w.Text))
	}
	for _, m := range d.Meetings {
		texts = append(texts, m.Title)
	}
	var out []map[string]any
	for i := 0; len(out) < n; i++ {
		src := texts
		if i%4 == 0 && len(internal) > 0 {
			src = internal
		}
		q := strings.TrimSpace(words(src[r.IntN(len(src))]))
		if strings.IndexFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue // nothing to search for: the tool refuses it
		}
		args := map[string]any{"query": q}
		switch i % 6 {
		case 1:
			args["kinds"] = []string{"work_package"}
		case 2:
			args["matchMode"] = "exact"
		case 3:
			args["offset"], args["pageSize"] = 2, 5
		case 4:
			args["projectId"] = 1
		case 5:
			args["kinds"] = []string{"meeting", "wiki_page"}
		}
		out = append(out, args)
	}
	return out
}

// comparable is a search answer without what differs by design: the
// index state (whose crawl, which counts) and the time taken.
func comparable(t *testing.T, ans map[string]any) string {
	t.Helper()
	c := map[string]any{}
	for k, v := range ans {
		if k != "index" && k != "tookMs" {
			c[k] = v
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHTTPSharedIndexEqualsPerUser: six users of the mixed-permissions
// set use a team server with one shared index and one with an index per
// user; for a few hundred queries each, over MCP and REST, the shared
// server answers exactly what the per-user one does (results, order,
// totals, snippets, matched comments and agenda items), names the user
// whose view answered, and says how current that view is. Through
// replicas, users crawl through replica A and search through replica B,
// whose index only follows the store.
func TestHTTPSharedIndexEqualsPerUser(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls six users twice and runs thousands of searches")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	d := opgen.Generate(mixedGen)
	_, base := optesting.Start(t, d, optest.Options{})
	perUser := startModeServer(t, base, nil)
	own, ids := map[string]*sdk.ClientSession{}, map[string]int64{}
	for _, key := range mixedKeys {
		own[key] = perUser.connect(t, key)
		ids[key] = waitSynced(t.Context(), t, own[key])
	}
	queries := mixedQueries(d, 200)
	// Projects by identifier, the user's and others': an identifier the
	// user may not see resolves as unknown, as in their own index, not
	// to a silent empty answer that would tell the project exists.
	for _, p := range d.Projects {
		queries = append(queries, map[string]any{"query": "status", "projectId": p.Identifier})
	}
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) {
			crawl, shared := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, 0, false)
			sessions := map[string]*sdk.ClientSession{}
			for _, key := range mixedKeys {
				cs, got := syncThrough(t, crawl, shared, key)
				if got != ids[key] {
					t.Fatalf("%s: the shared server says user %d, the per-user one %d", key, got, ids[key])
				}
				sessions[key] = cs
			}
			shared.caughtUp(t)
			// Each user's view was computed after their own crawl, and
			// later crawls only hid what entered a project they see:
			// until the next refresh a shared answer may hold less than
			// the per-user one, never more.
			for _, key := range mixedKeys {
				for _, args := range queries[:60] {
					wide := map[string]any{"query": args["query"], "pageSize": 100}
					var mine, ours struct {
						Total   int `json:"total"`
						Results []struct {
							Kind string `json:"kind"`
							ID   int64  `json:"id"`
						} `json:"results"`
					}
					if err := httpCall(t.Context(), own[key], "openproject_search", wide, &mine); err != nil {
						t.Fatal(err)
					}
					if err := httpCall(t.Context(), sessions[key], "openproject_search", wide, &ours); err != nil {
						t.Fatal(err)
					}
					if mine.Total > 100 {
						continue
					}
					held := map[string]bool{}
					for _, r := range mine.Results {
						held[r.Kind+fmt.Sprint(r.ID)] = true
					}
					for _, r := range ours.Results {
						if !held[r.Kind+fmt.Sprint(r.ID)] {
							t.Fatalf("%s, before the views' refresh, searching %q: the shared server shows %s %d, which the user's own index lacks", key, args["query"], r.Kind, r.ID)
						}
					}
				}
			}
			// Computed again now, every view sees the shared store as it
			// ends up.
			if err := shared.mgr.RefreshViews(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, key := range mixedKeys {
				t.Run(key, func(t *testing.T) {
					compareAnswers(t, queries, ids[key], own[key], sessions[key],
						func(args map[string]any) (string, string) {
							return comparable(t, shared.restSearch(t, key, args)), comparable(t, perUser.restSearch(t, key, args))
						})
				})
			}
		})
	}
}

// compareAnswers runs queries through a user's own index (own) and the
// shared one (shared, answering as user), over MCP and, for every
// fourth, REST (rest returns the shared and the per-user answer), and
// fails for every answer that differs, and when too few find anything
// for the comparison to mean much.
func compareAnswers(t *testing.T, queries []map[string]any, user int64, own, shared *sdk.ClientSession, rest func(map[string]any) (string, string)) {
	t.Helper()
	differ, found := 0, 0
	for i, args := range queries {
		var mine, ours map[string]any
		errOwn := httpCall(t.Context(), own, "openproject_search", args, &mine)
		errOurs := httpCall(t.Context(), shared, "openproject_search", args, &ours)
		if errOwn != nil || errOurs != nil {
			if fmt.Sprint(errOwn) != fmt.Sprint(errOurs) {
				t.Fatalf("search %v: per-user says %v, shared %v", args, errOwn, errOurs)
			}
			continue
		}
		if res, _ := mine["results"].([]any); len(res) > 0 {
			found++
		}
		if a, b := comparable(t, ours), comparable(t, mine); a != b {
			differ++
			if differ <= 3 {
				t.Errorf("MCP %v:\nshared   %.600s\nper-user %.600s", args, a, b)
			}
		}
		idx, _ := ours["index"].(map[string]any)
		who, _ := idx["user"].(map[string]any)
		if id, _ := who["id"].(float64); int64(id) != user {
			t.Fatalf("the shared answer names user %v, want %d", idx["user"], user)
		}
		if _, ok := idx["permissions"].(map[string]any); !ok {
			t.Fatalf("the shared answer does not say how current the user's permissions are: %v", idx)
		}
		if i%4 == 0 {
			if a, b := rest(args); a != b {
				differ++
				if differ <= 3 {
					t.Errorf("REST %v:\nshared   %.600s\nper-user %.600s", args, a, b)
				}
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d answers differ", differ)
	}
	if found < len(queries)/3 {
		t.Errorf("only %d of %d queries found anything: the test proves little", found, len(queries))
	}
	t.Logf("%d queries (%d with results), every fourth over REST too", len(queries), found)
}

// TestHTTPSharedRevocation removes bob from his private project in
// OpenProject while he uses a shared team server: after the next
// scheduled refresh of his view, no search of his finds anything of that
// project, while alice's searches are unchanged. Through replicas, bob
// and alice crawl through replica A and search through replica B.
//
// It runs in -short mode too, so the race detector sees the shared
// team server: two crawls, views refreshed every 100 ms under searches.
func TestHTTPSharedRevocation(t *testing.T) {
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) { testRevocation(t, mode) })
	}
}

func testRevocation(t *testing.T, mode teamMode) {
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	crawl, shared := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: 100 * time.Millisecond}, 0, false)
	private, subject := bobPrivate(t, d)
	bobID := waitSynced(t.Context(), t, crawl.connect(t, optest.BobKey))
	waitSynced(t.Context(), t, crawl.connect(t, optest.AliceKey))
	bob, alice := shared.connect(t, optest.BobKey), shared.connect(t, optest.AliceKey)

	inPrivate := func(cs *sdk.ClientSession) int {
		t.Helper()
		var ans struct {
			Total int `json:"total"`
		}
		if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": subject, "projectId": private}, &ans); err != nil {
			t.Fatal(err)
		}
		return ans.Total
	}
	// A replica's index follows the crawl within milliseconds; a minute
	// bounds a failure.
	found := time.Now().Add(time.Minute)
	for inPrivate(bob) == 0 {
		if time.Now().After(found) {
			t.Fatalf("bob finds nothing of his private project searching %q", subject)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := inPrivate(alice); n != 0 {
		t.Fatalf("alice finds %d items of bob's private project", n)
	}
	if err := op.SetMembership(private, bobID, nil); err != nil {
		t.Fatal(err)
	}
	// The view is refreshed every 100 ms; a minute is a bound on a
	// failure, not a measure of speed.
	deadline := time.Now().Add(time.Minute)
	for inPrivate(bob) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a minute after his removal bob still finds items of the project")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var st struct {
		Permissions *struct {
			CheckedAt time.Time `json:"checkedAt"`
		} `json:"permissions"`
	}
	if err := httpCall(t.Context(), bob, "openproject_sync_status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Permissions == nil || st.Permissions.CheckedAt.IsZero() {
		t.Errorf("sync status does not say when bob's permissions were checked: %+v", st)
	}
}

// TestHTTPVerifyResults removes bob from his private project while
// servers serve him: one that checks results with OpenProject
// (--verify-results) and keeps an index per user withholds the results
// its index still holds and says so; a shared one that checks stops
// showing the project at once, by computing his view again; a shared one
// that does not check still shows them until its next refresh, which is
// what the check is for. The shared servers run in both deployments
// (teamModes).
func TestHTTPVerifyResults(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls bob five times")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	type answer struct {
		Total   int    `json:"total"`
		Note    string `json:"note"`
		Results []any  `json:"results"`
	}
	// setup starts the fake, and returns bob's search in his private
	// project and the removal of his membership.
	setup := func(t *testing.T) (string, func(*sdk.ClientSession) answer, func(int64)) {
		d := opgen.Generate(mixedGen)
		op, base := optesting.Start(t, d, optest.Options{})
		private, subject := bobPrivate(t, d)
		search := func(cs *sdk.ClientSession) answer {
			t.Helper()
			var a answer
			if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": subject, "projectId": private}, &a); err != nil {
				t.Fatal(err)
			}
			return a
		}
		remove := func(bob int64) {
			if err := op.SetMembership(private, bob, nil); err != nil {
				t.Fatal(err)
			}
		}
		return base, search, remove
	}
	t.Run("per-user", func(t *testing.T) {
		base, search, remove := setup(t)
		s := startModeServer(t, base, nil, true)
		cs, bob := syncThrough(t, s, s, optest.BobKey)
		if a := search(cs); a.Total == 0 {
			t.Fatal("bob finds nothing of his private project")
		}
		remove(bob)
		a := search(cs)
		if len(a.Results) != 0 || !strings.Contains(a.Note, "withheld: OpenProject no longer shows them to you") {
			t.Errorf("%d results, note %q; want none, and a note saying they were withheld", len(a.Results), a.Note)
		}
	})
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) {
			base, search, remove := setup(t)
			hour := func() *sync.SharedOptions { return &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour} }
			crawl, served := mode.serve(t, base, hour(), 0, true)
			verified, bob := syncThrough(t, crawl, served, optest.BobKey)
			crawl, served = mode.serve(t, base, hour(), 0, false)
			unchecked, _ := syncThrough(t, crawl, served, optest.BobKey)
			for _, cs := range []*sdk.ClientSession{verified, unchecked} {
				if a := search(cs); a.Total == 0 {
					t.Fatal("bob finds nothing of his private project")
				}
			}
			remove(bob)
			if a := search(verified); a.Total != 0 || len(a.Results) != 0 {
				t.Errorf("verified: bob still finds %d items of the project he was removed from", a.Total)
			}
			if a := search(unchecked); a.Total == 0 {
				t.Error("the unchecked shared server no longer shows the project before its refresh: the test shows nothing about checking")
			}
		})
	}
}

// TestHTTPVerifyResultsUnreachable: results OpenProject cannot be asked
// about are withheld, and the answer says so; nothing is claimed shown.
func TestHTTPVerifyResultsUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls bob and waits out the client's retries")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	s := startModeServer(t, base, nil, true)
	cs := s.connect(t, optest.BobKey)
	waitSynced(t.Context(), t, cs)
	op.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages/", ErrorRate: 1, ErrorStatuses: []int{500}})
	var a struct {
		Note    string `json:"note"`
		Results []struct {
			Kind string `json:"kind"`
		} `json:"results"`
	}
	if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": d.WorkPackages[0].Subject, "kinds": []string{"work_package"}}, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Results) != 0 || !strings.Contains(a.Note, "withheld: OpenProject could not be asked") {
		t.Errorf("%d results, note %q; want none, and a note saying they could not be checked", len(a.Results), a.Note)
	}
}

// TestHTTPSharedIdleStopAndReturn: a user of the shared index who idles
// out is stopped (their view and worker go, the shared store stays open
// for the others) and, returning, answers as before without crawling
// everything again.
func TestHTTPSharedIdleStopAndReturn(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls two users")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) {
			d := opgen.Generate(mixedGen)
			op, base := optesting.Start(t, d, optest.Options{})
			crawl, s := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, 200*time.Millisecond, false)
			search := func(key string) string {
				t.Helper()
				cs := s.connect(t, key)
				waitSynced(t.Context(), t, cs)
				var ans map[string]any
				if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": d.WorkPackages[3].Subject}, &ans); err != nil {
					t.Fatal(err)
				}
				_ = cs.Close()
				return comparable(t, ans)
			}
			for _, key := range []string{optest.AliceKey, optest.BobKey} {
				cs, _ := syncThrough(t, crawl, s, key)
				_ = cs.Close()
			}
			first := search(optest.AliceKey)
			bob := search(optest.BobKey)
			s.waitIdle(t)
			before := op.RequestCount("GET /api/v3/work_packages/")
			if again := search(optest.AliceKey); again != first {
				t.Errorf("alice's answer changed after she returned:\nbefore %.300s\nafter  %.300s", first, again)
			}
			if again := search(optest.BobKey); again != bob {
				t.Errorf("bob's answer changed after he returned")
			}
			if n := op.RequestCount("GET /api/v3/work_packages/") - before; n > 50 {
				t.Errorf("returning users fetched %d work package activities: their crawl started over", n)
			}
		})
	}
}

// wpAttachmentLists counts the work package attachment lists op served.
func wpAttachmentLists(op *optest.Server) int {
	n := 0
	for r, c := range op.Requests() {
		if strings.HasPrefix(r, "GET /api/v3/work_packages/") && strings.HasSuffix(r, "/attachments") {
			n += c
		}
	}
	return n
}

// TestHTTPSharedCrawlKey: with an administrator's key as the crawl
// account, the shared store is filled before anyone asks, and a user's
// first sync costs a few dozen requests (issue 14: at most 60) while
// their answers stay exactly their own. Through replicas, both hold the
// crawl key, one crawls, and both say how the crawl went.
func TestHTTPSharedCrawlKey(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the whole mixed set")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	perUser := startModeServer(t, base, nil)
	own := perUser.connect(t, opgen.CarolKey)
	waitSynced(t.Context(), t, own)
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) {
			start := op.RequestCount("GET /api/v3/work_packages/") - wpAttachmentLists(op)
			crawl, s := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour, CrawlKey: optest.AdminKey}, 0, false)
			// A minute bounds a failure; the crawl takes about a second.
			deadline := time.Now().Add(time.Minute)
			for _, srv := range []*modeServer{crawl, s} {
				for {
					if last, ok := srv.mgr.CrawlReport(); ok {
						if last.Err != nil {
							t.Fatalf("the crawl account's sync failed: %v", last.Err)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the crawl account has not synced a minute after the start")
					}
					time.Sleep(20 * time.Millisecond)
				}
				resp, err := http.Get(srv.ts.URL + "/health")
				if err != nil {
					t.Fatal(err)
				}
				var health struct {
					Index string `json:"index"`
					Crawl *struct {
						OK bool `json:"ok"`
					} `json:"crawl"`
				}
				err = json.NewDecoder(resp.Body).Decode(&health)
				_ = resp.Body.Close()
				if err != nil || health.Index != "shared" || health.Crawl == nil || !health.Crawl.OK {
					t.Errorf("/health says index %q, crawl %+v (%v); want shared and the crawl's success", health.Index, health.Crawl, err)
				}
			}
			if n := op.RequestCount("GET /api/v3/work_packages/") - wpAttachmentLists(op) - start; crawl != s && n > len(d.WorkPackages)+100 {
				t.Errorf("%d work package requests for %d work packages: both replicas crawled", n, len(d.WorkPackages))
			}
			s.caughtUp(t)
			before := op.TotalRequests()
			cs := s.connect(t, opgen.CarolKey)
			waitSynced(t.Context(), t, cs)
			if n := op.TotalRequests() - before; n > 60 {
				t.Errorf("carol's first sync of a store the crawl account filled took %d requests, want at most 60", n)
			} else {
				t.Logf("carol's view and first sync: %d requests", n)
			}
			for _, args := range mixedQueries(d, 40) {
				var a, b map[string]any
				if err := httpCall(t.Context(), cs, "openproject_search", args, &a); err != nil {
					t.Fatal(err)
				}
				if err := httpCall(t.Context(), own, "openproject_search", args, &b); err != nil {
					t.Fatal(err)
				}
				if comparable(t, a) != comparable(t, b) {
					t.Fatalf("%v: the shared answer differs from carol's own:\nshared   %.500s\nper-user %.500s", args, comparable(t, a), comparable(t, b))
				}
			}
		})
	}
}

// bobPrivate returns the id of bob's private project in d and the
// subject of one of its work packages.
func bobPrivate(t *testing.T, d *optest.Dataset) (int64, string) {
	t.Helper()
	var private int64
	for _, p := range d.Projects {
		if p.Identifier == "bob-private" {
			private = p.ID
		}
	}
	for _, wp := range d.WorkPackages {
		if wp.Project.ID == private {
			return private, wp.Subject
		}
	}
	t.Fatal("test data: bob-private has no work packages")
	return 0, ""
}

// TestHTTPSharedViewOutage: while OpenProject fails, a view cannot be
// computed again; the user's previous view keeps answering, exactly as
// before, and the answer says the refresh failed.
func TestHTTPSharedViewOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a user and waits out the client's retries")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) { testViewOutage(t, mode) })
	}
}

func testViewOutage(t *testing.T, mode teamMode) {
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	crawl, s := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, 0, false)
	cs, _ := syncThrough(t, crawl, s, optest.AliceKey)
	args := map[string]any{"query": d.WorkPackages[3].Subject}
	var before map[string]any
	if err := httpCall(t.Context(), cs, "openproject_search", args, &before); err != nil {
		t.Fatal(err)
	}
	op.SetFaults(optest.Faults{PathPrefix: "/api/v3/projects", ErrorRate: 1, ErrorStatuses: []int{503}})
	if err := s.mgr.RefreshViews(t.Context()); err == nil {
		t.Fatal("a view was computed while OpenProject failed")
	}
	var during struct {
		Index struct {
			Permissions *struct {
				LastError string `json:"lastError"`
			} `json:"permissions"`
		} `json:"index"`
	}
	var raw map[string]any
	if err := httpCall(t.Context(), cs, "openproject_search", args, &raw); err != nil {
		t.Fatalf("search during the outage: %v", err)
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &during); err != nil {
		t.Fatal(err)
	}
	if comparable(t, raw) != comparable(t, before) {
		t.Errorf("the answer changed while the view could not be refreshed:\nbefore %.300s\nduring %.300s", comparable(t, before), comparable(t, raw))
	}
	if p := during.Index.Permissions; p != nil {
		t.Logf("lastError: %s", p.LastError)
	}
	if p := during.Index.Permissions; p == nil || p.LastError == "" {
		t.Errorf("the answer does not say the permissions could not be refreshed: %+v", p)
	}
	op.SetFaults(optest.Faults{})
	if err := s.mgr.RefreshViews(t.Context()); err != nil {
		t.Fatalf("refresh after the outage: %v", err)
	}
	var after map[string]any
	if err := httpCall(t.Context(), cs, "openproject_search", args, &after); err != nil {
		t.Fatal(err)
	}
	if idx, _ := after["index"].(map[string]any); idx != nil {
		if p, _ := idx["permissions"].(map[string]any); p == nil || p["lastError"] != nil {
			t.Errorf("after the outage the answer still reports a refresh failure: %v", p)
		}
	}
}

// TestHTTPSharedReturnDuringOutage: a user of the shared index who left
// (idle) and returns while OpenProject cannot list projects is served
// through the view they left with, kept current since, as in their own
// index; the answer says their permissions could not be checked.
func TestHTTPSharedReturnDuringOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a user and waits out the client's retries")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) { testReturnDuringOutage(t, mode) })
	}
}

func testReturnDuringOutage(t *testing.T, mode teamMode) {
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	crawl, s := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, 200*time.Millisecond, false)
	args := map[string]any{"query": d.WorkPackages[3].Subject}
	search := func() (map[string]any, error) {
		cs := s.connect(t, optest.AliceKey)
		defer func() { _ = cs.Close() }()
		var ans map[string]any
		err := httpCall(t.Context(), cs, "openproject_search", args, &ans)
		return ans, err
	}
	cs, _ := syncThrough(t, crawl, s, optest.AliceKey)
	_ = cs.Close()
	before, err := search()
	if err != nil {
		t.Fatal(err)
	}
	s.waitIdle(t)
	op.SetFaults(optest.Faults{PathPrefix: "/api/v3/projects", ErrorRate: 1, ErrorStatuses: []int{503}})
	during, err := search()
	if err != nil {
		t.Fatalf("returning during the outage: %v", err)
	}
	if comparable(t, during) != comparable(t, before) {
		t.Errorf("the answer changed:\nbefore %.300s\nduring %.300s", comparable(t, before), comparable(t, during))
	}
	idx, _ := during["index"].(map[string]any)
	if p, _ := idx["permissions"].(map[string]any); p == nil || p["lastError"] == nil {
		t.Errorf("the answer does not say the permissions could not be checked: %v", idx["permissions"])
	}
}

// waitIdle waits until the server has stopped every user for being idle.
func (s *modeServer) waitIdle(t *testing.T) {
	t.Helper()
	// A minute bounds a failure; the tests' idle timeouts are far shorter.
	deadline := time.Now().Add(time.Minute)
	for s.mgr.ActiveUsers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d users still active a minute after their last request", s.mgr.ActiveUsers())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPReplicasShareViews: two replicas serving alice compute her
// view once between them per refresh period. The one that finds it due
// with nothing newer shared asks OpenProject and shares the answers
// through the store; the other derives the same view from them without a
// request.
func TestHTTPReplicasShareViews(t *testing.T) {
	dsn := pgtest.Schema(t)
	d := opgen.Generate(mixedGen)
	op, base := optesting.Start(t, d, optest.Options{})
	opts := &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}
	a, b := startModeServerStore(t, base, opts, 0, dsn), startModeServerStore(t, base, opts, 0, dsn)
	viaA, _ := syncThrough(t, a, a, optest.AliceKey)
	// b opens alice after a did: its view, asked in full, is the newest.
	viaB, _ := syncThrough(t, a, b, optest.AliceKey)

	renew := func(s *modeServer) int {
		t.Helper()
		before := op.TotalRequests()
		if err := s.mgr.RefreshViews(t.Context()); err != nil {
			t.Fatal(err)
		}
		return op.TotalRequests() - before
	}
	if n := renew(a); n != 0 {
		t.Errorf("replica a asked OpenProject %d times for the view b had just shared", n)
	}
	if n := renew(b); n == 0 {
		t.Error("replica b, with nothing newer shared than its own view, renewed it without asking")
	}
	if n := renew(a); n != 0 {
		t.Errorf("replica a asked OpenProject %d times for the view b had just renewed", n)
	}
	for _, args := range mixedQueries(d, 30) {
		var x, y map[string]any
		if err := httpCall(t.Context(), viaA, "openproject_search", args, &x); err != nil {
			t.Fatal(err)
		}
		if err := httpCall(t.Context(), viaB, "openproject_search", args, &y); err != nil {
			t.Fatal(err)
		}
		if comparable(t, x) != comparable(t, y) {
			t.Fatalf("%v: the replicas answer alice differently:\na %.500s\nb %.500s", args, comparable(t, x), comparable(t, y))
		}
	}
}

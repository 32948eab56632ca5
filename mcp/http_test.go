package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/metrics"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// The HTTP tests run the multi-user handler on a real loopback listener
// and talk to it with the go-sdk clients (Streamable HTTP and legacy SSE)
// and plain HTTP (the REST bridge), against the fake OpenProject.

// httpGen is small, so a user's first sync takes well under a second.
var httpGen = opgen.GenOptions{Seed: 5, Projects: 6, Users: 12, WorkPackages: 150, Comments: 300, WikiPages: 10, Meetings: 8}

type httpEnv struct {
	t    testing.TB
	op   *optest.Server
	data *optest.Dataset
	base string
	mgr  *mcp.HTTPUsers
	ts   *httptest.Server
	// crawl is the server users sync through: ts, but for replicas
	// (httpEnvOpts.team), where it is replica A and ts replica B.
	crawl *httptest.Server
	logs  *lockedBuffer
	alice int64 // alice-private's project id
	bob   int64 // bob-private's project id
}

type httpEnvOpts struct {
	readOnly  bool
	serverKey string
	idle      time.Duration
	latency   time.Duration
	gen       *opgen.GenOptions
	dataDir   string
	origins   []string
	maxUsers  int
	// probeEvery is HTTPOptions.ProbeEvery (0: the default).
	probeEvery time.Duration
	// lockTimeout is how long opening a user waits for another
	// process's lock (0: the default).
	lockTimeout time.Duration
	// allowedHosts is HTTPOptions.AllowedHosts.
	allowedHosts []string
	// localAddr, if set, is the address every connection reports it
	// arrived on, as in a container, where clients reach the server
	// through a non-loopback interface.
	localAddr net.Addr
	// searchSlots is HTTPOptions.SearchSlots.
	searchSlots *mcp.SearchSlots
	// webhookSecret is HTTPOptions.WebhookSecret.
	webhookSecret string
	// adminToken is HTTPOptions.AdminToken; with it the server's syncs
	// and searches feed a metrics.Metrics the status page shows.
	adminToken string
	// team serves every user from one shared index: "single" keeps it
	// in a file, "replicas" runs two servers sharing a PostgreSQL store
	// (teamModes); "" keeps an index per user.
	team string
	// audit is UserIndexOptions.Audit: each user's audit log.
	audit *audit.Options
	// confirmWrites is HTTPOptions.ConfirmWrites.
	confirmWrites bool
}

func newHTTPEnv(t testing.TB, o httpEnvOpts) *httpEnv {
	t.Helper()
	gen := httpGen
	if o.gen != nil {
		gen = *o.gen
	}
	data := opgen.Generate(gen)
	op, base := optesting.Start(t, data, optest.Options{Latency: o.latency})
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o.dataDir == "" {
		o.dataDir = t.TempDir()
	}
	t.Cleanup(func() {
		// Registered before the servers', so it runs after they
		// closed: no key may reach a log line, whatever the test did.
		out := logs.String()
		for _, u := range data.Users {
			if u.APIKey != "" && strings.Contains(out, u.APIKey) {
				t.Errorf("the log contains %s's API key", u.Login)
			}
		}
		if strings.Contains(out, "wrong-key") {
			t.Error("the log contains a rejected key")
		}
	})
	var shared *sync.SharedOptions
	var storeURL string
	switch o.team {
	case "":
	case "single":
		shared = &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}
	case "replicas":
		shared, storeURL = &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, pgtest.Schema(t)
	default:
		t.Fatalf("unknown team mode %q", o.team)
	}
	var (
		hooks   mcp.HTTPUserHooks
		stats   func() mcp.OperatorStats
		observe func(time.Duration, string)
	)
	if o.adminToken != "" {
		m := metrics.New()
		// As the command's hooks do (cmd/opsearch userMetrics).
		hooks.OnSync = func(u *sync.User, rep sync.Report, err error) {
			m.ObserveSync(rep, err)
			for _, k := range kind.All() {
				if n, err := u.Store.Count(k); err == nil {
					m.SetDocuments(u.Dir, string(k), n)
				}
			}
		}
		observe = m.ObserveSearch
		stats = func() mcp.OperatorStats {
			s := m.Snapshot()
			return mcp.OperatorStats{Syncs: s.Syncs, LastError: s.LastError, Documents: s.Documents, Latencies: s.Latencies, DiskBytes: 1234567}
		}
	}
	serve := func(dataDir string) (*mcp.HTTPUsers, *httptest.Server) {
		mgr, err := sync.NewManager(sync.ManagerOptions[*mcp.HTTPUser]{
			DataDir: dataDir,
			NewClient: func(key string) (sync.UserAPI, error) {
				return openproject.New(openproject.Config{BaseURL: base, APIKey: key, EitherScheme: true, Timeout: 20 * time.Second, Logger: logger})
			},
			Attach:      mcp.HTTPAttach(mcp.UserIndexOptions{Schedule: "@every 1h", Audit: o.audit, Logger: logger}, hooks),
			Schedule:    "@every 1h",
			IdleTimeout: o.idle,
			MaxUsers:    o.maxUsers,
			UserOptions: sync.UserOptions{Logger: logger, LockTimeout: o.lockTimeout, WorkerOptions: sync.Options{Logger: logger}, StoreURL: storeURL},
			Shared:      shared,
			Logger:      logger,
		})
		if err != nil {
			t.Fatal(err)
		}
		h, err := mcp.NewHTTPHandler(mcp.HTTPOptions{
			BaseURL: base, ServerKey: o.serverKey, ReadOnly: o.readOnly, ConfirmWrites: o.confirmWrites, Logger: logger, Manager: mgr,
			AllowedOrigins: o.origins, ProbeEvery: o.probeEvery, AllowedHosts: o.allowedHosts, SearchSlots: o.searchSlots,
			WebhookSecret: o.webhookSecret, AdminToken: o.adminToken, Stats: stats, ObserveSearch: observe,
		})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewUnstartedServer(h)
		if o.localAddr != nil {
			ts.Listener = localAddrListener{ts.Listener, o.localAddr}
		}
		ts.Start()
		t.Cleanup(func() {
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := mgr.Close(ctx); err != nil {
				t.Errorf("close manager: %v", err)
			}
		})
		return mgr, ts
	}
	mgr, ts := serve(o.dataDir)
	crawl := ts
	if o.team == "replicas" {
		var a *mcp.HTTPUsers
		a, crawl = serve(t.TempDir())
		waitBuilt(t, a)
		waitBuilt(t, mgr)
	}
	e := &httpEnv{t: t, op: op, data: data, base: base, mgr: mgr, ts: ts, crawl: crawl, logs: logs}
	for _, p := range data.Projects {
		switch p.Identifier {
		case "alice-private":
			e.alice = p.ID
		case "bob-private":
			e.bob = p.ID
		}
	}
	if e.alice == 0 || e.bob == 0 {
		t.Fatal("the generated data has no private projects")
	}
	return e
}

// localAddrListener is a loopback listener whose connections say they
// arrived on addr: the server sees what it would behind a container's
// published port, while the test still dials 127.0.0.1.
type localAddrListener struct {
	net.Listener
	addr net.Addr
}

func (l localAddrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return localAddrConn{c, l.addr}, nil
}

type localAddrConn struct {
	net.Conn
	addr net.Addr
}

func (c localAddrConn) LocalAddr() net.Addr { return c.addr }

// headerRT adds headers to every request of a client.
type headerRT struct {
	base http.RoundTripper
	hdr  map[string]string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

func httpClient(hdr map[string]string) *http.Client {
	return &http.Client{Transport: headerRT{http.DefaultTransport, hdr}}
}

// connectStreamable opens an MCP session over Streamable HTTP.
func (e *httpEnv) connectStreamable(ctx context.Context, path string, hdr map[string]string) (*sdk.ClientSession, error) {
	return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: e.ts.URL + path, HTTPClient: httpClient(hdr)}, nil)
}

// connectSSE opens an MCP session over the legacy SSE transport.
func (e *httpEnv) connectSSE(ctx context.Context, path string, hdr map[string]string) (*sdk.ClientSession, error) {
	return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
		&sdk.SSEClientTransport{Endpoint: e.ts.URL + path, HTTPClient: httpClient(hdr)}, nil)
}

// call runs a tool and decodes its structured answer into out.
func httpCall(ctx context.Context, cs *sdk.ClientSession, name string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error: %s", name, contentText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func contentText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type statusOut struct {
	User *struct {
		ID int64 `json:"id"`
	} `json:"user"`
	SyncsSinceStart int `json:"syncsSinceStart"`
	LastSync        *struct {
		OK bool `json:"ok"`
	} `json:"lastSync"`
}

type searchOut struct {
	Results []struct {
		Title   string `json:"title"`
		Project *struct {
			ID int64 `json:"id"`
		} `json:"project"`
	} `json:"results"`
	Total int `json:"total"`
}

// waitSynced polls openproject_sync_status until the user's first sync
// ended, and returns the user id the server reports.
func waitSynced(ctx context.Context, t testing.TB, cs *sdk.ClientSession) int64 {
	t.Helper()
	// Bounded by the test binary's -timeout, not here: under the race
	// detector on a busy machine a first sync takes minutes.
	for {
		var st statusOut
		if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
			t.Fatalf("sync status: %v", err)
		}
		if st.LastSync != nil {
			if !st.LastSync.OK {
				t.Fatalf("the first sync failed: %+v", st)
			}
			return st.User.ID
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkSearch searches for the other user's codename (no result may be in
// the other's private project) and for one's own (found, in one's own
// project).
func checkSearch(ctx context.Context, search func(q string) (searchOut, error), own, other string, ownProject, otherProject int64) error {
	got, err := search(other)
	if err != nil {
		return err
	}
	for _, r := range got.Results {
		if r.Project != nil && r.Project.ID == otherProject {
			return fmt.Errorf("LEAK: searching %q found %q in the other user's private project", other, r.Title)
		}
	}
	got, err = search(own)
	if err != nil {
		return err
	}
	if len(got.Results) == 0 {
		return fmt.Errorf("searching %q found nothing", own)
	}
	if !slices.ContainsFunc(got.Results, func(r struct {
		Title   string `json:"title"`
		Project *struct {
			ID int64 `json:"id"`
		} `json:"project"`
	}) bool {
		return r.Project != nil && r.Project.ID == ownProject
	}) {
		return fmt.Errorf("searching %q found nothing in the user's own private project", own)
	}
	return nil
}

// checkGetAttachment: openproject_get_attachment gives u their own file's
// text, and for the other user's file an error that holds nothing of it.
func checkGetAttachment(ctx context.Context, e *httpEnv, u user, own int64, ownPhrase string, other int64, otherPhrase string) error {
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"Authorization": "Bearer " + u.key})
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close() }()
	var got struct {
		Text string `json:"text"`
	}
	if err := httpCall(ctx, cs, "openproject_get_attachment", map[string]any{"id": own}, &got); err != nil {
		return fmt.Errorf("get own attachment: %w", err)
	}
	if !strings.Contains(got.Text, ownPhrase) {
		return fmt.Errorf("own attachment's text %q lacks %q", got.Text, ownPhrase)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_get_attachment", Arguments: map[string]any{"id": other}})
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(res)
	if !res.IsError || strings.Contains(string(raw), otherPhrase) || strings.Contains(string(raw), "private-notes") {
		return fmt.Errorf("LEAK: the other user's attachment %d answered %s", other, raw)
	}
	return nil
}

// user is one test user with their codename and private project.
type user struct {
	name, key, codename, other string
	project, otherProject      int64
}

func (e *httpEnv) users() []user {
	return []user{
		{"alice", optest.AliceKey, "Nightingale", "Kestrel", e.alice, e.bob},
		{"bob", optest.BobKey, "Kestrel", "Nightingale", e.bob, e.alice},
	}
}

// waitBuilt waits until a replica serves: its index holds the shared
// store as it was when it started (a load balancer's readiness check
// waits for the same). It returns at once for any other server.
func waitBuilt(t testing.TB, mgr *mcp.HTTPUsers) {
	t.Helper()
	// A minute bounds a failure; an empty store builds in milliseconds.
	deadline := time.Now().Add(time.Minute)
	for {
		st, ok := mgr.Follow()
		if !ok || !st.Building {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica is still building its index a minute after its start: %d of %d documents", st.Done, st.Total)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncUsers waits for alice's and bob's first syncs over Streamable HTTP
// (through replica A, and for replica B to hold what they committed,
// with replicas).
func (e *httpEnv) syncUsers(ctx context.Context) {
	e.t.Helper()
	for _, u := range e.users() {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: e.crawl.URL + "/mcp", HTTPClient: httpClient(map[string]string{"X-OpenProject-Api-Key": u.key})}, nil)
		if err != nil {
			e.t.Fatalf("%s: connect: %v", u.name, err)
		}
		waitSynced(ctx, e.t, cs)
		_ = cs.Close()
	}
	for {
		st, ok := e.mgr.Follow()
		if !ok || !st.Building && st.Behind == 0 {
			return
		}
		select {
		case <-ctx.Done():
			e.t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// rest calls the REST bridge.
func (e *httpEnv) rest(path string, hdr map[string]string, body string) (int, map[string]any) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.ts.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// TestHTTPIsolation: alice and bob search at once, over every transport,
// for each other's codenames and their own; neither ever sees the other's
// private project. It runs with an index per user and through both
// deployments of the shared index (teamModes).
func TestHTTPIsolation(t *testing.T) {
	for _, team := range httpTeams() {
		name := team
		if name == "" {
			name = "per-user"
		}
		t.Run(name, func(t *testing.T) { testIsolation(t, team) })
	}
}

// httpTeams are the server modes of newHTTPEnv the leak tests run
// through: per-user indexes, one shared index, and replicas of one (not
// in -short mode, as teamModes).
func httpTeams() []string {
	if testing.Short() {
		return []string{"", "single"}
	}
	return []string{"", "single", "replicas"}
}

func testIsolation(t *testing.T, team string) {
	e := newHTTPEnv(t, httpEnvOpts{team: team})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A file in each private project whose words are in no other text:
	// its owner finds it, the other user never does, by any transport,
	// and cannot read it by id.
	files := map[string]struct {
		phrase string
		id     int64
	}{}
	for name, f := range map[string]struct {
		project int64
		phrase  string
	}{"alice": {e.alice, "juniper filament crossword"}, "bob": {e.bob, "saffron periscope almanac"}} {
		var wp int64
		for _, w := range e.op.Dataset().WorkPackages {
			if w.Project.ID == f.project {
				wp = w.ID
				break
			}
		}
		a, err := e.op.AddAttachment(optest.Attachment{
			Attachment: openproject.Attachment{FileName: name + "-private-notes.txt", ContentType: "text/plain",
				Container: openproject.Ref{ID: wp, Href: fmt.Sprintf("/api/v3/work_packages/%d", wp)}},
			Content: []byte("Private notes: the " + f.phrase + " stays in this project."),
		})
		if err != nil {
			t.Fatal(err)
		}
		files[name] = struct {
			phrase string
			id     int64
		}{f.phrase, a.ID}
	}
	e.syncUsers(ctx)

	type transport struct {
		name   string
		search func(u user) (func(q string) (searchOut, error), func(), error)
	}
	mcpSearch := func(cs *sdk.ClientSession) func(q string) (searchOut, error) {
		return func(q string) (searchOut, error) {
			var out searchOut
			err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": q, "pageSize": 50}, &out)
			return out, err
		}
	}
	transports := []transport{
		{"streamable", func(u user) (func(string) (searchOut, error), func(), error) {
			cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"Authorization": "Bearer " + u.key})
			if err != nil {
				return nil, nil, err
			}
			return mcpSearch(cs), func() { _ = cs.Close() }, nil
		}},
		{"sse", func(u user) (func(string) (searchOut, error), func(), error) {
			// alice brings her key in the query, bob in a header.
			path, hdr := "/sse?apiKey="+url.QueryEscape(u.key), map[string]string(nil)
			if u.name == "bob" {
				path, hdr = "/sse", map[string]string{"X-OpenProject-Api-Key": u.key}
			}
			cs, err := e.connectSSE(ctx, path, hdr)
			if err != nil {
				return nil, nil, err
			}
			return mcpSearch(cs), func() { _ = cs.Close() }, nil
		}},
		{"rest", func(u user) (func(string) (searchOut, error), func(), error) {
			return func(q string) (searchOut, error) {
				body, _ := json.Marshal(map[string]any{"query": q, "pageSize": 50})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/api/tools/openproject_search", bytes.NewReader(body))
				req.Header.Set("X-OpenProject-Api-Key", u.key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return searchOut{}, err
				}
				defer func() { _ = resp.Body.Close() }()
				var out struct {
					IsError bool      `json:"isError"`
					Data    searchOut `json:"data"`
				}
				if resp.StatusCode != 200 {
					return searchOut{}, fmt.Errorf("REST status %d", resp.StatusCode)
				}
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					return searchOut{}, err
				}
				if out.IsError {
					return searchOut{}, fmt.Errorf("REST tool error")
				}
				return out.Data, nil
			}, func() {}, nil
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			var wg gosync.WaitGroup
			errs := make(chan error, 8)
			for _, u := range e.users() {
				wg.Go(func() {
					search, done, err := tr.search(u)
					if err != nil {
						errs <- fmt.Errorf("%s: connect: %w", u.name, err)
						return
					}
					defer done()
					// Several rounds, interleaved with the other user's.
					other := "alice"
					if u.name == "alice" {
						other = "bob"
					}
					for range 5 {
						if err := checkSearch(ctx, search, u.codename, u.other, u.project, u.otherProject); err != nil {
							errs <- fmt.Errorf("%s: %w", u.name, err)
							return
						}
						// The same of the text inside attached files.
						if err := checkSearch(ctx, search, files[u.name].phrase, files[other].phrase, u.project, u.otherProject); err != nil {
							errs <- fmt.Errorf("%s, attached files: %w", u.name, err)
							return
						}
					}
					if tr.name == "streamable" {
						if err := checkGetAttachment(ctx, e, u, files[u.name].id, files[u.name].phrase, files[other].id, files[other].phrase); err != nil {
							errs <- fmt.Errorf("%s: %w", u.name, err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
	if n := e.mgr.ActiveUsers(); n != 2 {
		t.Errorf("active users = %d, want 2", n)
	}
}

func TestHTTPUnauthorized(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, hdr := range []map[string]string{nil, {"X-OpenProject-Api-Key": "wrong-key"}, {"Authorization": "Bearer wrong-key"}} {
		if _, err := e.connectStreamable(ctx, "/mcp", hdr); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("streamable with %v: err = %v, want Unauthorized", hdr, err)
		}
		if _, err := e.connectSSE(ctx, "/sse", hdr); err == nil {
			t.Errorf("SSE with %v: connected", hdr)
		}
		if code, _ := e.rest("/api/tools/openproject_search", hdr, `{"query":"x"}`); code != http.StatusUnauthorized {
			t.Errorf("REST with %v: status %d, want 401", hdr, code)
		}
	}
	// SSE: the status itself.
	resp, err := http.Get(e.ts.URL + "/sse?apiKey=wrong-key")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /sse with a rejected key: %d", resp.StatusCode)
	}
	// The rejected key was asked about once, however often it came: as
	// an API key, then as an OAuth token.
	if n := e.op.RequestCount("/api/v3/users/me"); n != 2 {
		t.Errorf("/users/me requests = %d, want 2", n)
	}
}

func TestHTTPKeyValidationCached(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	var wg gosync.WaitGroup
	for range 20 {
		wg.Go(func() {
			e.rest("/api/tools/openproject_sync_status", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, "{}")
			e.rest("/api/tools/openproject_sync_status", map[string]string{"X-OpenProject-Api-Key": "wrong-key"}, "{}")
		})
	}
	wg.Wait()
	// Validation plus the open: one /users/me for alice (OpenUser reuses
	// the validation), two for the bad key, asked about once: refused as
	// an API key, then as an OAuth token.
	if n := e.op.RequestCount("/api/v3/users/me"); n != 3 {
		t.Errorf("/users/me requests = %d, want 3", n)
	}
}

func TestHTTPCredentialForms(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{serverKey: optest.BobKey})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const aliceID, bobID = 2, 3
	cases := []struct {
		name string
		path string
		hdr  map[string]string
		want int64
	}{
		{"bearer", "/mcp", map[string]string{"Authorization": "Bearer " + optest.AliceKey}, aliceID},
		{"header", "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, aliceID},
		{"query", "/mcp?apiKey=" + optest.AliceKey, nil, aliceID},
		{"server key", "/mcp", nil, bobID},
		// Bearer wins over the header.
		{"precedence", "/mcp", map[string]string{"Authorization": "Bearer " + optest.BobKey, "X-OpenProject-Api-Key": optest.AliceKey}, bobID},
		{"root path", "/", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, aliceID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs, err := e.connectStreamable(ctx, c.path, c.hdr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			var st statusOut
			if err := httpCall(ctx, cs, "openproject_sync_status", nil, &st); err != nil {
				t.Fatal(err)
			}
			if st.User == nil || st.User.ID != c.want {
				t.Fatalf("user = %+v, want %d", st.User, c.want)
			}
			// The REST bridge takes the same forms.
			path := "/api/tools/openproject_sync_status"
			if strings.Contains(c.path, "?") {
				path += c.path[strings.Index(c.path, "?"):]
			}
			code, out := e.rest(path, c.hdr, "")
			data, _ := out["data"].(map[string]any)
			u, _ := data["user"].(map[string]any)
			if code != 200 || u == nil || int64(u["id"].(float64)) != c.want {
				t.Fatalf("REST: %d %v", code, out)
			}
		})
	}
}

func TestHTTPReadOnly(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{readOnly: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(tool.Name, "create") || strings.Contains(tool.Name, "update") || strings.Contains(tool.Name, "add_comment") {
			t.Errorf("read-only server lists %s", tool.Name)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "openproject_add_comment", Arguments: map[string]any{"workPackageId": 1, "comment": "x"}})
	if err == nil && !res.IsError {
		t.Error("read-only server ran openproject_add_comment over MCP")
	}
	code, out := e.rest("/api/tools/openproject_add_comment", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, `{"workPackageId":1,"comment":"x"}`)
	if code != http.StatusForbidden || out["code"] != "SERVER_READ_ONLY" {
		t.Errorf("REST write on a read-only server: %d %v", code, out)
	}
	// Only a POST is the write: alice's background sync may GET the
	// same path's activities at any moment.
	if n := e.op.RequestCount("POST /api/v3/work_packages/1/activities"); n != 0 {
		t.Errorf("the write reached OpenProject")
	}
}

func TestHTTPRESTErrors(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	if code, out := e.rest("/api/tools/no_such_tool", key, "{}"); code != 404 || out["error"] == nil {
		t.Errorf("unknown tool: %d %v", code, out)
	}
	if code, _ := e.rest("/api/tools/openproject_search", key, "{not json"); code != 400 {
		t.Errorf("bad JSON: %d", code)
	}
	code, out := e.rest("/api/tools/openproject_search", key, `{"query": 5}`)
	if code != 400 || out["error"] != "Validation error" || out["details"] == nil {
		t.Errorf("schema violation: %d %v", code, out)
	}
	if code, _ := e.rest("/tools/openproject_sync_status", key, "{}"); code != 200 {
		t.Errorf("/tools alias: %d", code)
	}
	big := `{"query":"` + strings.Repeat("a", mcp.DefaultMaxBodyBytes) + `"}`
	if code, _ := e.rest("/api/tools/openproject_search", key, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", code)
	}
}

func TestHTTPOriginAndHost(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{origins: []string{"https://app.example.com"}})
	do := func(hdr map[string]string, host string) int {
		req, _ := http.NewRequest(http.MethodPost, e.ts.URL+"/api/tools/openproject_sync_status", strings.NewReader("{}"))
		req.Header.Set("X-OpenProject-Api-Key", optest.AliceKey)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if c := do(map[string]string{"Origin": "https://evil.example"}, ""); c != http.StatusForbidden {
		t.Errorf("foreign origin: %d, want 403", c)
	}
	if c := do(map[string]string{"Origin": "https://app.example.com"}, ""); c != 200 {
		t.Errorf("allowed origin: %d", c)
	}
	if c := do(map[string]string{"Origin": "http://localhost:6274"}, ""); c != 200 {
		t.Errorf("loopback origin: %d", c)
	}
	if c := do(nil, "evil.example:80"); c != http.StatusForbidden {
		t.Errorf("rebinding Host: %d, want 403", c)
	}
	// The MCP endpoint too.
	ctx := context.Background()
	if _, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey, "Origin": "https://evil.example"}); err == nil {
		t.Error("MCP connect with a foreign origin succeeded")
	}
	// /health needs no key and shows no user data.
	resp, err := http.Get(e.ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&h)
	_ = resp.Body.Close()
	if h["status"] != "ok" || h["mode"] != "http" {
		t.Errorf("health: %v", h)
	}
}

// TestHTTPHealthUpstream: /health says "degraded", with the reason,
// while OpenProject does not answer, and "ok" again once it does; no key
// needed, no user data shown.
func TestHTTPHealthUpstream(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{probeEvery: time.Nanosecond})
	health := func() map[string]any {
		t.Helper()
		resp, err := http.Get(e.ts.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health: HTTP %d", resp.StatusCode)
		}
		var h map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := health(); h["status"] != "ok" || h["upstream"].(map[string]any)["reachable"] != true {
		t.Errorf("OpenProject up: %v", h)
	}
	e.op.SetFaults(optest.Faults{FailNext: 1 << 30, FailStatus: 503})
	h := health()
	if reason, _ := h["reason"].(string); h["status"] != "degraded" || !strings.Contains(reason, "503") || h["upstream"].(map[string]any)["reachable"] != false {
		t.Errorf("OpenProject failing: %v", h)
	}
	e.op.SetFaults(optest.Faults{})
	if h := health(); h["status"] != "ok" {
		t.Errorf("OpenProject back: %v", h)
	}
}

func TestHTTPIdleStopAndReturn(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{idle: 150 * time.Millisecond})
	e.syncUsers(t.Context())
	deadline := time.Now().Add(10 * time.Second)
	for e.mgr.ActiveUsers() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle users were not stopped\n%s", e.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Back: the index on disk answers at once, before any new sync.
	e.op.SetFaults(optest.Faults{PathPrefix: "/api/v3/projects", HangNext: 100})
	code, out := e.rest("/api/tools/openproject_search", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, `{"query":"Nightingale"}`)
	data, _ := out["data"].(map[string]any)
	res, _ := data["results"].([]any)
	if code != 200 || len(res) == 0 {
		t.Fatalf("search after idle stop: %d %v", code, out)
	}
	e.op.SetFaults(optest.Faults{})
}

func TestHTTPShutdownMidSync(t *testing.T) {
	dir := t.TempDir()
	gen := opgen.GenOptions{Seed: 9, Projects: 5, Users: 4, WorkPackages: 400, Comments: 400, WikiPages: 5, Meetings: 5}
	e := newHTTPEnv(t, httpEnvOpts{latency: 5 * time.Millisecond, gen: &gen, dataDir: dir})
	code, _ := e.rest("/api/tools/openproject_sync_status", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}, "{}")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	// Let the first sync get going, then shut down as serve does.
	deadline := time.Now().Add(10 * time.Second)
	for e.op.RequestCount("/api/v3/work_packages") < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	e.ts.Close()
	ctx := t.Context()
	start := time.Now()
	if err := e.mgr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped mid-sync in %v", time.Since(start))

	// Reopen: the store and index open, agree, and the next sync
	// converges to the full data.
	client, err := openproject.New(openproject.Config{BaseURL: e.base, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	u, err := sync.OpenUser(ctx, dir, client, sync.UserOptions{})
	if err != nil {
		t.Fatalf("reopen after shutdown: %v", err)
	}
	defer func() { _ = u.Close() }()
	if err := u.WaitRebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if reason, err := sync.IndexMismatch(ctx, u.Store, u.Index); err != nil || reason != "" {
		t.Fatalf("index and store disagree after shutdown: %q %v", reason, err)
	}
	if _, err := u.Worker.Sync(ctx); err != nil {
		t.Fatalf("sync after shutdown: %v", err)
	}
	if reason, err := sync.IndexMismatch(ctx, u.Store, u.Index); err != nil || reason != "" {
		t.Fatalf("index and store disagree after the next sync: %q %v", reason, err)
	}
}

// TestHTTPLogLines: a served request writes at most one line at INFO or
// above, and a routine failure (asking for what does not exist) is INFO,
// not ERROR. Detail (the SDK's per-request session lines, each request
// line) stays at DEBUG.
func TestHTTPLogLines(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newHTTPEnv(t, httpEnvOpts{})
	e.syncUsers(t.Context())
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	loud := func(from int) []string {
		var out []string
		for _, line := range strings.Split(e.logs.String()[from:], "\n") {
			if strings.Contains(line, "level=INFO") || strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				out = append(out, line)
			}
		}
		return out
	}
	start := len(e.logs.String())
	for range 5 {
		var out searchOut
		if err := httpCall(t.Context(), cs, "openproject_search", map[string]any{"query": "release"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	if lines := loud(start); len(lines) != 0 {
		t.Errorf("5 searches logged %d lines at INFO or above:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	start = len(e.logs.String())
	var wp map[string]any
	if err := httpCall(t.Context(), cs, "openproject_get_work_package", map[string]any{"workPackageId": 987654}, &wp); err == nil {
		t.Fatal("a work package that does not exist was found")
	}
	lines := loud(start)
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "tool call failed") {
		t.Errorf("a not-found logged %d lines at INFO or above, want one at INFO:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

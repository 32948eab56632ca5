package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// resourceFixture is one user's items of every kind in their private
// project, each with words no other item holds.
type resourceFixture struct {
	project, wp, wiki, meeting int64
	comment, wikiText, outcome string
	wpTitle                    string
}

// addResourceFixture gives u's private project a commented work package,
// a wiki page and a meeting with an outcome, before the first sync.
func addResourceFixture(t *testing.T, e *httpEnv, u user) resourceFixture {
	t.Helper()
	d := e.op.Dataset()
	var uid int64
	for _, du := range d.Users {
		if du.APIKey == u.key {
			uid = du.ID
		}
	}
	f := resourceFixture{project: u.project, comment: u.codename + " marmalade comment", wikiText: u.codename + " quince runbook",
		outcome: "Ship the " + u.codename + " tangerine release"}
	for _, wp := range d.WorkPackages {
		if wp.Project.ID == u.project {
			f.wp, f.wpTitle = wp.ID, wp.Subject
			break
		}
	}
	if uid == 0 || f.wp == 0 {
		t.Fatalf("%s: no user id or work package in the private project", u.name)
	}
	if _, err := e.op.AddComment(f.wp, uid, f.comment); err != nil {
		t.Fatal(err)
	}
	// An id the sync's probe reaches (it stops a thousand ids past the
	// highest page it found; the fake's next free id is beyond that).
	wikiID := int64(40)
	if u.name == "bob" {
		wikiID = 41
	}
	w, err := e.op.AddWikiPage(openproject.WikiPage{ID: wikiID, Title: u.codename + " runbook", Text: f.wikiText, HasText: true, Project: openproject.Ref{ID: u.project}})
	if err != nil {
		t.Fatal(err)
	}
	f.wiki = w.ID
	m, err := e.op.AddMeeting(openproject.Meeting{Title: u.codename + " release review", Project: openproject.Ref{ID: u.project}, Author: openproject.Ref{ID: uid},
		AgendaItems: []openproject.AgendaItem{{Title: "Decide the " + u.codename + " release", Notes: "Who signs off", Outcomes: []openproject.Outcome{{Notes: f.outcome}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.meeting = m.ID
	return f
}

// readResource reads uri and decodes its JSON contents.
func readResource(ctx context.Context, cs *sdk.ClientSession, uri string) (map[string]any, error) {
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "application/json" {
		return nil, fmt.Errorf("read %s: contents %+v", uri, res.Contents)
	}
	if res.CacheScope != "private" {
		return nil, fmt.Errorf("read %s: cache scope %q, want private: the item is the user's own", uri, res.CacheScope)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return out, nil
}

// notFound reports whether err is the protocol's resource-not-found
// answer (the SDK's ResourceNotFoundError: -32602, "Resource not found",
// as SEP-2164 has it).
func notFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && je.Message == "Resource not found"
}

// TestResources: over Streamable HTTP with the go-sdk client, with an
// index per user and through both deployments of a shared one, alice
// lists the resource templates and the search UI, reads an item of
// every kind of hers from the index (a work package with its comments, a
// meeting with its agenda and outcomes), reads what a search hit names
// by its uri, and reads live what was made after the sync; everything
// of bob's private project, what does not exist and a malformed URI
// answer resource-not-found alike, with nothing of bob's in the answer.
func TestResources(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	for _, team := range httpTeams() {
		name := team
		if name == "" {
			name = "per-user"
		}
		t.Run(name, func(t *testing.T) { testResources(t, team) })
	}
}

func testResources(t *testing.T, team string) {
	e := newHTTPEnv(t, httpEnvOpts{team: team})
	ctx := t.Context()
	fx := map[string]resourceFixture{}
	for _, u := range e.users() {
		fx[u.name] = addResourceFixture(t, e, u)
	}
	e.syncUsers(ctx)
	alice, bob := e.users()[0], e.users()[1]
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"Authorization": "Bearer " + alice.key})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()

	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, rt := range tl.ResourceTemplates {
		templates = append(templates, rt.URITemplate)
		if rt.MIMEType != "application/json" || rt.Description == "" || rt.Name == "" {
			t.Errorf("template %s: %+v", rt.URITemplate, rt)
		}
	}
	slices.Sort(templates)
	if want := []string{"openproject://meetings/{id}", "openproject://projects/{id}", "openproject://wiki_pages/{id}", "openproject://work_packages/{id}"}; !slices.Equal(templates, want) {
		t.Errorf("templates %v, want %v", templates, want)
	}
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 1 || rl.Resources[0].URI != mcp.UISearchURI || rl.Resources[0].MIMEType != "text/html;profile=mcp-app" {
		t.Errorf("resources: %+v, want the search UI alone", rl.Resources)
	}

	mine := fx["alice"]
	for _, c := range []struct {
		uri   string
		check func(map[string]any) error
	}{
		{fmt.Sprintf("openproject://projects/%d", mine.project), func(m map[string]any) error {
			if m["identifier"] != "alice-private" {
				return fmt.Errorf("identifier %v", m["identifier"])
			}
			return nil
		}},
		{fmt.Sprintf("openproject://work_packages/%d", mine.wp), func(m map[string]any) error {
			if m["subject"] != mine.wpTitle {
				return fmt.Errorf("subject %v, want %q", m["subject"], mine.wpTitle)
			}
			cs, _ := m["comments"].([]any)
			if !slices.ContainsFunc(cs, func(c any) bool { r, _ := c.(map[string]any); return r["comment"] == mine.comment }) {
				return fmt.Errorf("comments %v lack %q", cs, mine.comment)
			}
			if n, _ := m["commentsTotal"].(float64); int(n) != len(cs) {
				return fmt.Errorf("commentsTotal %v for %d comments", m["commentsTotal"], len(cs))
			}
			return nil
		}},
		{fmt.Sprintf("openproject://wiki_pages/%d", mine.wiki), func(m map[string]any) error {
			if m["text"] != mine.wikiText {
				return fmt.Errorf("text %v", m["text"])
			}
			return nil
		}},
		{fmt.Sprintf("openproject://meetings/%d", mine.meeting), func(m map[string]any) error {
			raw, _ := json.Marshal(m["agendaItems"])
			if !strings.Contains(string(raw), mine.outcome) || !strings.Contains(string(raw), "Who signs off") {
				return fmt.Errorf("agenda %s lacks the notes or the outcome", raw)
			}
			return nil
		}},
	} {
		m, err := readResource(ctx, cs, c.uri)
		if err != nil {
			t.Errorf("alice reads her %s: %v", c.uri, err)
			continue
		}
		if m["source"] != "index" {
			t.Errorf("%s: source %v, want index (it was synced)", c.uri, m["source"])
		}
		if err := c.check(m); err != nil {
			t.Errorf("%s: %v", c.uri, err)
		}
	}

	// A search hit names its item's resource, which reads as the item.
	var found struct {
		Results []struct {
			Kind string `json:"kind"`
			ID   int64  `json:"id"`
			URI  string `json:"uri"`
		} `json:"results"`
	}
	if err := httpCall(ctx, cs, "openproject_search", map[string]any{"query": "tangerine release"}, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Results) == 0 {
		t.Fatal("searching alice's outcome found nothing")
	}
	for _, r := range found.Results {
		want := fmt.Sprintf("openproject://%ss/%d", r.Kind, r.ID)
		if r.Kind == "attachment" {
			want = ""
		}
		if r.URI != want {
			t.Errorf("%s %d: uri %q, want %q", r.Kind, r.ID, r.URI, want)
		}
	}
	if r := found.Results[0]; r.URI != fmt.Sprintf("openproject://meetings/%d", mine.meeting) {
		t.Errorf("the best hit is %s, want alice's meeting", r.URI)
	} else if m, err := readResource(ctx, cs, r.URI); err != nil || m["title"] != "Nightingale release review" {
		t.Errorf("reading the hit's uri: %v, %v", m["title"], err)
	}

	// Made after the sync: read live, with alice's key.
	fresh, err := e.op.CreateWorkPackage(openproject.WorkPackage{Subject: "Nightingale after the sync", Project: openproject.Ref{ID: mine.project},
		Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := readResource(ctx, cs, fmt.Sprintf("openproject://work_packages/%d", fresh.ID)); err != nil || m["source"] != "live" || m["subject"] != fresh.Subject {
		t.Errorf("a work package made after the sync: %v %v, %v", m["subject"], m["source"], err)
	}
	theirs, err := e.op.CreateWorkPackage(openproject.WorkPackage{Subject: "Kestrel after the sync", Project: openproject.Ref{ID: bob.project},
		Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 1}})
	if err != nil {
		t.Fatal(err)
	}

	// Nothing of bob's, nothing that does not exist, nothing malformed.
	other := fx["bob"]
	for _, uri := range []string{
		fmt.Sprintf("openproject://projects/%d", other.project),
		fmt.Sprintf("openproject://work_packages/%d", other.wp),
		fmt.Sprintf("openproject://work_packages/%d", theirs.ID),
		fmt.Sprintf("openproject://wiki_pages/%d", other.wiki),
		fmt.Sprintf("openproject://meetings/%d", other.meeting),
		"openproject://work_packages/999999",
		"openproject://meetings/0",
		"openproject://projects/-3",
		fmt.Sprintf("openproject://work_packages/0%d", mine.wp),
		"openproject://work_packages/abc",
		"openproject://attachments/1",
	} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if !notFound(err) {
			raw, _ := json.Marshal(res)
			t.Errorf("alice reads %s: %v %.300s; want resource not found", uri, err, raw)
			continue
		}
		for _, secret := range []string{"Kestrel", other.comment, other.wikiText, other.outcome, other.wpTitle} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("LEAK: the error for %s holds %q", uri, secret)
			}
		}
	}
	// Every protocol revision the SDK speaks reads them alike.
	if team == "" {
		for _, v := range sdk.SupportedProtocolVersions() {
			vcs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
				&sdk.StreamableClientTransport{Endpoint: e.ts.URL + "/mcp", HTTPClient: httpClient(map[string]string{"X-OpenProject-Api-Key": alice.key})},
				&sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("connect at %s: %v", v, err)
			}
			if m, err := readResource(ctx, vcs, fmt.Sprintf("openproject://meetings/%d", mine.meeting)); err != nil || m["title"] != "Nightingale release review" {
				t.Errorf("%s: alice reads her meeting: %v, %v", v, m["title"], err)
			}
			if _, err := vcs.ReadResource(ctx, &sdk.ReadResourceParams{URI: fmt.Sprintf("openproject://meetings/%d", fx["bob"].meeting)}); !notFound(err) {
				t.Errorf("%s: alice reads bob's meeting: %v, want not found", v, err)
			}
			_ = vcs.Close()
		}
	}
	// The same over the legacy SSE transport.
	sse, err := e.connectSSE(ctx, "/sse", map[string]string{"X-OpenProject-Api-Key": alice.key})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sse.Close() }()
	if m, err := readResource(ctx, sse, fmt.Sprintf("openproject://wiki_pages/%d", mine.wiki)); err != nil || m["text"] != mine.wikiText {
		t.Errorf("alice reads her wiki page over SSE: %v, %v", m["text"], err)
	}
	if _, err := sse.ReadResource(ctx, &sdk.ReadResourceParams{URI: fmt.Sprintf("openproject://wiki_pages/%d", other.wiki)}); !notFound(err) {
		t.Errorf("alice reads bob's wiki page over SSE: %v, want not found", err)
	}
	// bob reads his own, alice's not.
	bcs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": bob.key})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bcs.Close() }()
	if m, err := readResource(ctx, bcs, fmt.Sprintf("openproject://meetings/%d", other.meeting)); err != nil || m["title"] != "Kestrel release review" {
		t.Errorf("bob reads his meeting: %v, %v", m["title"], err)
	}
	if _, err := bcs.ReadResource(ctx, &sdk.ReadResourceParams{URI: fmt.Sprintf("openproject://wiki_pages/%d", mine.wiki)}); !notFound(err) {
		t.Errorf("bob reads alice's wiki page: %v, want not found", err)
	}
}

// TestResourcesSharedEqualsPerUser: through a shared index (both
// deployments), each user of a data set with mixed permissions (roles,
// single shared work packages, internal comments) reads every item of
// a sample exactly as through their own index: the same items found and
// not found, and of each work package the same comments, internal ones
// only for those who read them.
func TestResourcesSharedEqualsPerUser(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls six users twice and reads every item of a sample as each")
	}
	// One of the package's long tests: they run beside each other (two
	// at once on two cores, go test's -parallel), not one after another.
	t.Parallel()
	gen := mixedGen
	gen.WorkPackages, gen.Comments, gen.WikiPages, gen.Meetings = 160, 320, 24, 12
	d := opgen.Generate(gen)
	_, base := optesting.Start(t, d, optest.Options{})
	// Every work package with an internal comment, and a sample of
	// everything else.
	internal := map[int64]bool{}
	for _, a := range d.Activities {
		if a.Internal && a.IsComment() {
			internal[a.WorkPackageID] = true
		}
	}
	var uris []string
	for i, wp := range d.WorkPackages {
		if internal[wp.ID] || i%5 == 0 {
			uris = append(uris, fmt.Sprintf("openproject://work_packages/%d", wp.ID))
		}
	}
	for _, w := range d.WikiPages {
		uris = append(uris, fmt.Sprintf("openproject://wiki_pages/%d", w.ID))
	}
	for _, m := range d.Meetings {
		uris = append(uris, fmt.Sprintf("openproject://meetings/%d", m.ID))
	}
	for _, p := range d.Projects {
		uris = append(uris, fmt.Sprintf("openproject://projects/%d", p.ID))
	}
	if len(internal) < 3 {
		t.Fatalf("the data set has %d work packages with internal comments", len(internal))
	}
	perUser := startModeServer(t, base, nil)
	own := map[string]*sdk.ClientSession{}
	for _, key := range mixedKeys {
		own[key] = perUser.connect(t, key)
		waitSynced(t.Context(), t, own[key])
	}
	// read is what a user's read of uri shows: not found, or the item's
	// title and its comments' ids (internal ones marked).
	read := func(cs *sdk.ClientSession, uri string) string {
		res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		if notFound(err) {
			return "not found"
		}
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		var m struct {
			ID       int64  `json:"id"`
			Title    string `json:"title"`
			Subject  string `json:"subject"`
			Name     string `json:"name"`
			Comments []struct {
				ID       int64 `json:"id"`
				Internal bool  `json:"internal"`
			} `json:"comments"`
		}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &m); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s%s%s %v", m.ID, m.Title, m.Subject, m.Name, m.Comments)
	}
	for _, mode := range teamModes() {
		t.Run(mode.name, func(t *testing.T) {
			crawl, shared := mode.serve(t, base, &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}, 0, false)
			sessions := map[string]*sdk.ClientSession{}
			for _, key := range mixedKeys {
				sessions[key], _ = syncThrough(t, crawl, shared, key)
			}
			shared.caughtUp(t)
			if err := shared.mgr.RefreshViews(t.Context()); err != nil {
				t.Fatal(err)
			}
			hidden, withInternal, without := 0, 0, 0
			for _, key := range mixedKeys {
				for _, uri := range uris {
					mine, ours := read(own[key], uri), read(sessions[key], uri)
					if mine != ours {
						t.Errorf("%s reads %s:\nshared   %s\nper-user %s", key, uri, ours, mine)
					}
					switch {
					case mine == "not found":
						hidden++
					case strings.Contains(mine, "true}"):
						withInternal++
					case strings.HasPrefix(uri, "openproject://work_packages/") && internal[idOf(uri)]:
						without++
					}
				}
			}
			t.Logf("%d reads: %d not found, %d with internal comments, %d of work packages with internal comments without them", len(mixedKeys)*len(uris), hidden, withInternal, without)
			if hidden == 0 || withInternal == 0 || without == 0 {
				t.Error("the sample does not tell hidden items, internal comments shown and internal comments withheld apart")
			}
		})
	}
}

// idOf is the id at the end of a resource URI.
func idOf(uri string) int64 {
	id, _ := strconv.ParseInt(uri[strings.LastIndexByte(uri, '/')+1:], 10, 64)
	return id
}

// TestStdio_Resources: the built binary serves the resources over stdio:
// the templates, alice's own work package from the index, and bob's
// private project not found.
func TestStdio_Resources(t *testing.T) {
	bin := buildOpsearch(t)
	data := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 60, WikiPages: 6, Meetings: 4})
	_, base := optesting.Start(t, data, optest.Options{})
	var mine, theirs int64
	for _, p := range data.Projects {
		switch p.Identifier {
		case "alice-private":
			mine = p.ID
		case "bob-private":
			theirs = p.ID
		}
	}
	var wp int64
	for _, w := range data.WorkPackages {
		if w.Project.ID == mine {
			wp = w.ID
		}
	}
	if mine == 0 || theirs == 0 || wp == 0 {
		t.Fatal("the generated data has no private projects")
	}
	p := startServe(t, bin, opsearchEnv(base, t.TempDir()), "serve")
	waitIndexed(t, p.cs, 2*time.Minute)
	tl, err := p.cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tl.ResourceTemplates) != 4 {
		t.Fatalf("templates over stdio: %v, %v", tl, err)
	}
	if m, err := readResource(t.Context(), p.cs, fmt.Sprintf("openproject://work_packages/%d", wp)); err != nil || m["source"] != "index" {
		t.Errorf("alice's work package over stdio: %v, %v", m, err)
	}
	if _, err := p.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: fmt.Sprintf("openproject://projects/%d", theirs)}); !notFound(err) {
		t.Errorf("bob's private project over stdio: %v, want not found", err)
	}
	if code := p.closeStdin(t); code != 0 {
		t.Errorf("exit code after stdin EOF: %d", code)
	}
	p.checkStdout(t)
}

// TestResourceTemplates_Contract: what a client learns of the resources
// at connection stays small beside tools/list (whose 24 KB budget
// TestToolsList_Contract keeps): the sizes are logged.
func TestResourceTemplates_Contract(t *testing.T) {
	srv := mcp.NewServer(nil, mcp.NewUserIndex(mcp.UserIndexOptions{}), mcp.Options{})
	cs := connectInMemory(t, srv)
	size := func(v any, err error) int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return len(raw)
	}
	tools := size(cs.ListTools(t.Context(), nil))
	templates := size(cs.ListResourceTemplates(t.Context(), nil))
	resources := size(cs.ListResources(t.Context(), nil))
	t.Logf("tools/list %d bytes, resources/templates/list %d bytes, resources/list %d bytes", tools, templates, resources)
	if tools > 24*1024 || templates > 2*1024 || resources > 1024 {
		t.Errorf("over budget: tools/list %d (24 KB), resources/templates/list %d (2 KB), resources/list %d (1 KB)", tools, templates, resources)
	}
}

// TestAudit_Resources: every resources/read is in the user's audit log
// like a tool call: named by the resource's kind, its URI digested, the
// outcome and category (not_found for what the user may not see,
// unavailable for a live read during an outage), and the request id the
// failed read's answer names.
func TestAudit_Resources(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	dataDir := t.TempDir()
	e := newHTTPEnv(t, httpEnvOpts{dataDir: dataDir, audit: &audit.Options{}})
	alice := e.users()[0]
	cs, err := e.connectStreamable(t.Context(), "/mcp", map[string]string{"Authorization": "Bearer " + alice.key})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	waitSynced(t.Context(), t, cs)
	var mine, theirs int64
	for _, w := range e.data.WorkPackages {
		switch {
		case w.Project.ID == e.alice && mine == 0:
			mine = w.ID
		case w.Project.ID == e.bob && theirs == 0:
			theirs = w.ID
		}
	}
	fresh, err := e.op.CreateWorkPackage(openproject.WorkPackage{Subject: "Made during the outage", Project: openproject.Ref{ID: e.alice},
		Type: openproject.Ref{ID: 1}, Status: openproject.Ref{ID: 1}, Priority: openproject.Ref{ID: 1}, Author: openproject.Ref{ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ uri, tool, outcome, category string }
	wants := []want{
		{fmt.Sprintf("openproject://work_packages/%d", mine), "resources/read:work_package", "ok", ""},
		{fmt.Sprintf("openproject://work_packages/%d", theirs), "resources/read:work_package", "error", "not_found"},
		{mcp.UISearchURI, "resources/read:search_ui", "ok", ""},
		{"openproject://attachments/1", "resources/read:(unknown)", "error", "not_found"},
		{fmt.Sprintf("openproject://work_packages/%d", fresh.ID), "resources/read:work_package", "error", "unavailable"},
	}
	var failed error
	for i, w := range wants {
		if i == len(wants)-1 {
			e.op.SetFaults(optest.Faults{FailNext: 100, FailStatus: 503})
		}
		_, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: w.uri})
		if (err == nil) != (w.outcome == "ok") {
			t.Fatalf("read %s: %v", w.uri, err)
		}
		failed = err
	}
	e.op.SetFaults(optest.Faults{})
	var je *jsonrpc.Error
	m := regexp.MustCompile(`request id ([0-9a-f]+)`).FindStringSubmatch(fmt.Sprint(failed))
	if !errors.As(failed, &je) || je.Code != jsonrpc.CodeInternalError || m == nil || !strings.Contains(failed.Error(), "unavailable") {
		t.Fatalf("a live read during an outage answered %v", failed)
	}

	found, err := audit.Find(dataDir)
	if err != nil || len(found) != 1 {
		t.Fatalf("audit logs %v, %v", found, err)
	}
	if rep, err := audit.Verify(found[0].Dir); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
	lines, err := audit.Tail(found[0].Dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var reads []audit.Line
	for _, l := range lines {
		if strings.HasPrefix(l.Tool, "resources/read") {
			reads = append(reads, l)
		}
	}
	if len(reads) != len(wants) {
		t.Fatalf("%d reads in the audit log, want %d", len(reads), len(wants))
	}
	for i, w := range wants {
		l := reads[i]
		args, _ := json.Marshal(map[string]string{"uri": w.uri})
		if l.Tool != w.tool || l.Outcome != w.outcome || l.Error != w.category || l.ArgsSHA256 != audit.ArgsDigest(args) || l.User == nil || l.User.Login != "alice" {
			t.Errorf("read %s recorded as %s", w.uri, l.Raw)
		}
	}
	if reads[len(reads)-1].RequestID != m[1] {
		t.Errorf("the failed read's request id: answer %s, audit %s", m[1], reads[len(reads)-1].RequestID)
	}
}

// TestResourcesVerifyResults: bob is removed from his private project in
// OpenProject right after his sync. A server that checks results with
// OpenProject (--verify-results) stops showing him its items at once,
// with an index per user and with a shared one, though its index still
// holds them; a shared server that does not check still shows them from
// the index until its next refresh, which is what the check is for.
func TestResourcesVerifyResults(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	gen := mixedGen
	gen.WorkPackages, gen.Comments, gen.WikiPages, gen.Meetings = 120, 200, 12, 6
	d := opgen.Generate(gen)
	op, base := optesting.Start(t, d, optest.Options{})
	private, subject := bobPrivate(t, d)
	var wp int64
	for _, w := range d.WorkPackages {
		if w.Subject == subject && w.Project.ID == private {
			wp = w.ID
		}
	}
	uri := fmt.Sprintf("openproject://work_packages/%d", wp)
	hour := &sync.SharedOptions{BaseURL: base, RefreshEvery: time.Hour}
	perUser := startModeServer(t, base, nil, true)
	verified := startModeServer(t, base, hour, true)
	unchecked := startModeServer(t, base, hour, false)
	sessions := map[string]*sdk.ClientSession{}
	var bob int64
	for name, s := range map[string]*modeServer{"per-user": perUser, "shared, verified": verified, "shared, unchecked": unchecked} {
		sessions[name], bob = syncThrough(t, s, s, optest.BobKey)
		if m, err := readResource(t.Context(), sessions[name], uri); err != nil || m["source"] != "index" {
			t.Fatalf("%s: bob reads his work package: %v, %v", name, m, err)
		}
	}
	if err := op.SetMembership(private, bob, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"per-user", "shared, verified"} {
		if _, err := sessions[name].ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri}); !notFound(err) {
			t.Errorf("%s: bob still reads the work package of the project he was removed from: %v", name, err)
		}
	}
	if m, err := readResource(t.Context(), sessions["shared, unchecked"], uri); err != nil || m["source"] != "index" {
		t.Errorf("the unchecked shared server no longer shows the work package before its refresh (%v, %v): the test shows nothing about checking", m, err)
	}
}

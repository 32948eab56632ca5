package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// testIndex stands in for the user's local index: the search tools are not
// under test here, and writes must call RefreshWorkPackage with the id.
type testIndex struct {
	mu        gosync.Mutex
	refreshed []int64
	err       error
}

func (x *testIndex) Searcher() (Searcher, error) { return nil, ErrIndexNotReady }

func (x *testIndex) RefreshWorkPackage(_ context.Context, id int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.refreshed = append(x.refreshed, id)
	return x.err
}

func (x *testIndex) calls() []int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.refreshed)
}

// The tools this file and write_test.go own.
var (
	liveTools = []string{
		"openproject_list_projects", "openproject_get_project", "openproject_list_work_packages",
		"openproject_get_work_package", "openproject_list_work_package_activities", "openproject_list_queries",
		"openproject_get_query", "openproject_list_types", "openproject_list_statuses", "openproject_list_priorities",
		"openproject_list_users", "openproject_get_openapi_spec", "openproject_list_meetings", "openproject_get_meeting",
		"openproject_get_wiki_page", "openproject_list_wiki_page_links", "openproject_list_time_entries",
		"openproject_get_wiki_page", "openproject_list_wiki_page_links", "openproject_list_relations",
		toolWorkPackageContext, toolMyWork,
	}
	ownTools = append(slices.Clone(liveTools), writeToolNames...)
)

// harness is a fake OpenProject, a real client for one key, the MCP server
// and an in-memory MCP client session.
type harness struct {
	t    *testing.T
	op   *optest.Server
	base string // the fake's URL, with its random port
	data *optest.Dataset
	idx  *testIndex
	srv  *server
	cs   *sdk.ClientSession
	logs *syncBuffer
	// seen collects every text the agent received, to check that no
	// credential ever leaks.
	seen *syncBuffer
}

type syncBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type harnessOpts struct {
	key      string
	readOnly bool
	// confirmWrites is Options.ConfirmWrites.
	confirmWrites bool
	profile       optest.Profile
	// maxRetryAfter is the client's MaxRetryAfter (0: default).
	maxRetryAfter time.Duration
}

var (
	datasetOnce gosync.Once
	dataset     *optest.Dataset
)

// testDataset is a small generated instance, shared (the fake copies it).
func testDataset() *optest.Dataset {
	datasetOnce.Do(func() {
		dataset = opgen.Generate(opgen.GenOptions{Seed: 7, Projects: 4, Users: 4, WorkPackages: 80, Comments: 240, WikiPages: 6, Meetings: 8})
	})
	return dataset
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	if o.key == "" {
		o.key = optest.AdminKey
	}
	op, base := optesting.Start(t, testDataset(), optest.Options{Profile: o.profile})
	return attachHarness(t, op, base, o)
}

// newHarnessOn is a harness for another key on the fake of h.
func newHarnessOn(t *testing.T, h *harness, key string) *harness {
	t.Helper()
	return attachHarness(t, h.op, h.base, harnessOpts{key: key})
}

// attachHarness connects a client for o.key and an MCP session to a
// running fake.
func attachHarness(t *testing.T, op *optest.Server, base string, o harnessOpts) *harness {
	t.Helper()
	if o.key == "" {
		o.key = optest.AdminKey
	}
	client, err := openproject.New(openproject.Config{
		BaseURL: base, APIKey: o.key, MaxRetryAfter: o.maxRetryAfter,
		// Retries happen, but without waiting.
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, op: op, base: base, data: op.Dataset(), idx: &testIndex{}, logs: &syncBuffer{}, seen: &syncBuffer{}}
	logger := slog.New(slog.NewTextHandler(h.logs, nil))
	srv := NewServer(client, h.idx, Options{ReadOnly: o.readOnly, ConfirmWrites: o.confirmWrites, Logger: logger})
	h.srv = &server{api: client, idx: h.idx, opts: Options{ReadOnly: o.readOnly, ConfirmWrites: o.confirmWrites, Logger: logger}, log: logger}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
		h.checkNoSecrets(o.key)
	})
	return h
}

// checkNoSecrets fails if the API key, in plain or Basic form, reached the
// agent or the log.
func (h *harness) checkNoSecrets(key string) {
	basic := base64.StdEncoding.EncodeToString([]byte("apikey:" + key))
	for name, text := range map[string]string{"tool output": h.seen.String(), "log": h.logs.String()} {
		if strings.Contains(text, key) || strings.Contains(text, basic) {
			h.t.Errorf("the API key appears in the %s", name)
		}
	}
}

// call calls a tool and returns the result and its text.
func (h *harness) call(name string, args map[string]any) (*sdk.CallToolResult, string) {
	h.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := h.cs.CallTool(h.t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: protocol error: %v", name, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	text := strings.Join(texts, "\n")
	fmt.Fprintln(h.seen, text)
	return res, text
}

// ok calls a tool that must succeed and decodes its structured answer.
func (h *harness) ok(name string, args map[string]any, out any) string {
	h.t.Helper()
	res, text := h.call(name, args)
	if res.IsError {
		h.t.Fatalf("%s(%v): unexpected tool error: %s", name, args, text)
	}
	if res.StructuredContent == nil {
		h.t.Fatalf("%s: no structured content", name)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		h.t.Fatal(err)
	}
	if !jsonSame(b, []byte(text)) {
		h.t.Errorf("%s: text content differs from structured content", name)
	}
	if strings.Contains(text, `"_links"`) || strings.Contains(text, `"_embedded"`) {
		h.t.Errorf("%s: answer contains raw HAL: %.300s", name, text)
	}
	if out != nil {
		// Fields omitted from this answer must not keep an earlier value.
		reflect.ValueOf(out).Elem().SetZero()
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s: decode answer: %v\n%s", name, err, b)
		}
	}
	return text
}

func jsonSame(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// fail calls a tool that must fail with a tool error containing every want.
func (h *harness) fail(name string, args map[string]any, want ...string) string {
	h.t.Helper()
	res, text := h.call(name, args)
	if !res.IsError {
		h.t.Fatalf("%s(%v): want a tool error, got %.300s", name, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			h.t.Errorf("%s(%v): error %q does not contain %q", name, args, text, w)
		}
	}
	if strings.Contains(text, "goroutine ") || strings.Contains(text, ".go:") {
		h.t.Errorf("%s: error looks like a stack trace: %s", name, text)
	}
	return text
}

// Fixtures picked from the generated data set.

func (h *harness) meetingWithAgenda() openproject.Meeting {
	for _, m := range h.data.Meetings {
		if len(m.AgendaItems) > 0 && len(m.Participants) > 0 {
			return m
		}
	}
	h.t.Fatal("no meeting with agenda items and participants in the data set")
	return openproject.Meeting{}
}

func (h *harness) commentedWP() (openproject.WorkPackage, []openproject.Activity) {
	byWP := map[int64][]openproject.Activity{}
	for _, a := range h.data.Activities {
		byWP[a.WorkPackageID] = append(byWP[a.WorkPackageID], a)
	}
	for _, wp := range h.data.WorkPackages {
		if acts := byWP[wp.ID]; len(acts) >= 3 {
			return wp, acts
		}
	}
	h.t.Fatal("no work package with 3 activities")
	return openproject.WorkPackage{}, nil
}

// validArgs are arguments every own tool accepts on the generated data.
func (h *harness) validArgs() map[string]map[string]any {
	wp, _ := h.commentedWP()
	rel := h.relation()
	return map[string]map[string]any{
		"openproject_list_projects":                {"pageSize": 2},
		"openproject_get_project":                  {"projectId": h.data.Projects[0].Identifier},
		"openproject_list_work_packages":           {"status": "all", "pageSize": 5},
		"openproject_get_work_package":             {"workPackageId": wp.ID},
		"openproject_list_work_package_activities": {"workPackageId": wp.ID},
		"openproject_list_queries":                 {},
		"openproject_get_query":                    {"queryId": 1, "pageSize": 3},
		"openproject_list_types":                   {},
		"openproject_list_statuses":                {},
		"openproject_list_priorities":              {},
		"openproject_list_users":                   {"pageSize": 3},
		"openproject_get_openapi_spec":             {},
		"openproject_list_meetings":                {"time": "past"},
		"openproject_get_meeting":                  {"id": h.meetingWithAgenda().ID},
		"openproject_get_wiki_page":                {"id": h.data.WikiPages[0].ID},
		"openproject_list_wiki_page_links":         {},
		"openproject_create_work_package":          {"projectId": h.data.Projects[0].ID, "subject": "Fault probe"},
		"openproject_update_work_package":          {"workPackageId": wp.ID, "lockVersion": wp.LockVersion, "subject": "Fault probe"},
		"openproject_add_comment":                  {"workPackageId": wp.ID, "comment": "Fault probe"},
		"openproject_list_time_entries":            {"workPackageId": wp.ID},
		"openproject_log_time":                     {"workPackageId": wp.ID, "hours": 0.5, "spentOn": "2025-06-02"},
		"openproject_list_relations":               {"workPackageId": rel.From.ID},
		"openproject_create_relation":              {"workPackageId": wp.ID, "toId": h.unrelatedTo(wp.ID), "type": "relates"},
		toolWorkPackageContext:                     {"workPackageId": wp.ID},
		toolMyWork:                                 {},
		toolBulkUpdate:                             {"rows": []any{map[string]any{"id": wp.ID, "lockVersion": wp.LockVersion, "statusId": 1}}},
	}
}

// --- tools/list ---

func TestToolsListAnnotationsAndSize(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	tools := map[string]*sdk.Tool{}
	for tool, err := range h.cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	size := 0
	for _, name := range ownTools {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("tool %s is not listed", name)
			continue
		}
		b, _ := json.Marshal(tool)
		size += len(b)
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not set explicitly: %+v", name, a)
			continue
		}
		write := slices.Contains(writeToolNames, name)
		if a.ReadOnlyHint == write || a.IdempotentHint == write || !*a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", name, *a)
		}
		if *a.DestructiveHint != (name == "openproject_update_work_package" || name == toolBulkUpdate) {
			t.Errorf("%s: destructiveHint = %v", name, *a.DestructiveHint)
		}
		// Every parameter has a description and a plain (non-null) type.
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
				Type        any    `json:"type"`
			} `json:"properties"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for p, s := range schema.Properties {
			if s.Description == "" {
				t.Errorf("%s.%s has no description", name, p)
			}
			if strings.Contains(fmt.Sprint(s.Type), "null") {
				t.Errorf("%s.%s has a nullable type %v", name, p, s.Type)
			}
		}
	}
	t.Logf("tools/list size of the %d live and write tools: %d bytes (all %d tools: %d bytes)", len(ownTools), size, len(tools), listSize(tools))
	// The live and write tools' share of the whole list, which must stay
	// within 24 KB (TestToolsList_Contract): 14 KB held until the time
	// entry, relation and version tools of OpenProject's own server came
	// (issue 16), 17.3 KB with them.
	if size > 18<<10 {
		t.Errorf("live and write tools take %d bytes of tools/list, want at most 18 KB", size)
	}
}

func listSize(tools map[string]*sdk.Tool) int {
	all := make([]*sdk.Tool, 0, len(tools))
	for _, t := range tools {
		all = append(all, t)
	}
	b, _ := json.Marshal(map[string]any{"tools": all})
	return len(b)
}

// --- every live tool with valid input ---

type list[T any] struct {
	Total, Count, PageSize, Offset int
	Elements                       []T
	Truncated                      bool
}

func TestProjects(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var l list[projectRow]
	h.ok("openproject_list_projects", map[string]any{"pageSize": 2, "offset": 2, "sortBy": "name:asc"}, &l)
	if l.Total != len(h.data.Projects) || l.Count != 2 || l.PageSize != 2 || l.Offset != 2 || len(l.Elements) != 2 {
		t.Errorf("page = %+v", l)
	}
	names := []string{}
	for _, p := range h.data.Projects {
		names = append(names, p.Name)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	if l.Elements[0].Name != names[2] {
		t.Errorf("sorted page 2 starts with %q, want %q", l.Elements[0].Name, names[2])
	}
	h.ok("openproject_list_projects", map[string]any{"filters": `[{"id":{"operator":"=","values":["` + fmt.Sprint(h.data.Projects[1].ID) + `"]}}]`}, &l)
	if l.Total != 1 || l.Elements[0].ID != h.data.Projects[1].ID {
		t.Errorf("filtered = %+v", l)
	}

	p := h.data.Projects[0]
	var d projectDetail
	h.ok("openproject_get_project", map[string]any{"projectId": p.Identifier}, &d)
	if d.ID != p.ID || d.Name != p.Name || !strings.HasSuffix(d.URL, "/projects/"+p.Identifier) {
		t.Errorf("by identifier = %+v", d)
	}
	// A number works as well as a string.
	h.ok("openproject_get_project", map[string]any{"projectId": p.ID}, &d)
	if d.Identifier != p.Identifier {
		t.Errorf("by id = %+v", d)
	}
}

func TestWorkPackages(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var l list[wpRow]
	h.ok("openproject_list_work_packages", map[string]any{"status": "all", "pageSize": 100}, &l)
	if l.Total != len(h.data.WorkPackages) || l.Count != min(100, len(h.data.WorkPackages)) {
		t.Errorf("all: total %d count %d, want %d", l.Total, l.Count, len(h.data.WorkPackages))
	}
	for i := 1; i < len(l.Elements); i++ {
		if l.Elements[i].UpdatedAt.After(l.Elements[i-1].UpdatedAt) {
			t.Fatalf("default sort is not updatedAt desc at %d", i)
		}
	}
	row := l.Elements[0]
	if row.Subject == "" || row.Status == "" || row.Type == "" || row.Project == nil || row.Project.Name == "" {
		t.Errorf("thin row lacks names: %+v", row)
	}

	open, closed := 0, 0
	for _, wp := range h.data.WorkPackages {
		if isClosed(h.data, wp.Status.ID) {
			closed++
		} else {
			open++
		}
	}
	h.ok("openproject_list_work_packages", map[string]any{}, &l)
	if l.Total != open {
		t.Errorf("default (open) total = %d, want %d", l.Total, open)
	}
	h.ok("openproject_list_work_packages", map[string]any{"status": "closed"}, &l)
	if l.Total != closed || (len(l.Elements) > 0 && !l.Elements[0].Closed) {
		t.Errorf("closed total = %d, want %d", l.Total, closed)
	}

	// Project, type, assignee and subject filters combine.
	wp := h.data.WorkPackages[0]
	proj := projectByID(h.data, wp.Project.ID)
	word := strings.Fields(wp.Subject)[0]
	args := map[string]any{"projectId": proj.Identifier, "status": "all", "type": wp.Type.ID, "subject": word}
	if wp.Assignee != nil {
		args["assigneeId"] = wp.Assignee.ID
	}
	h.ok("openproject_list_work_packages", args, &l)
	if !slices.ContainsFunc(l.Elements, func(r wpRow) bool { return r.ID == wp.ID }) {
		t.Errorf("filters %v miss work package %d: %+v", args, wp.ID, l)
	}
	for _, r := range l.Elements {
		if r.Project.ID != proj.ID || !strings.Contains(strings.ToLower(r.Subject), strings.ToLower(word)) {
			t.Errorf("row %+v does not match the filters", r)
		}
	}
	// Raw filters replace the argument of the same name.
	h.ok("openproject_list_work_packages", map[string]any{"status": "closed", "filters": fmt.Sprintf(`[{"id":{"operator":"=","values":["%d"]}},{"status":{"operator":"*","values":[]}}]`, wp.ID)}, &l)
	if l.Total != 1 || l.Elements[0].ID != wp.ID {
		t.Errorf("raw filters = %+v", l)
	}

	var d wpDetail
	h.ok("openproject_get_work_package", map[string]any{"workPackageId": wp.ID}, &d)
	if d.ID != wp.ID || d.Subject != wp.Subject || d.LockVersion != wp.LockVersion || d.Status == nil || d.Status.Name == "" ||
		d.Type == nil || d.Priority == nil || d.Author == nil || d.Project == nil || d.Project.ID != wp.Project.ID ||
		!strings.HasSuffix(d.URL, fmt.Sprintf("/work_packages/%d", wp.ID)) {
		t.Errorf("detail = %+v", d)
	}
	// Long descriptions are capped and flagged.
	long := strings.Repeat("lorem ipsum ", capDetail)
	if err := h.op.UpdateWorkPackage(wp.ID, func(w *openproject.WorkPackage) { w.Description = long }); err != nil {
		t.Fatal(err)
	}
	h.ok("openproject_get_work_package", map[string]any{"workPackageId": wp.ID}, &d)
	if !d.Truncated || len([]rune(d.Description)) > capDetail+1 {
		t.Errorf("long description: truncated=%v len=%d", d.Truncated, len(d.Description))
	}
}

func isClosed(d *optest.Dataset, status int64) bool {
	for _, s := range d.Statuses {
		if s.ID == status {
			return s.IsClosed
		}
	}
	return false
}

func projectByID(d *optest.Dataset, id int64) optest.Project {
	for _, p := range d.Projects {
		if p.ID == id {
			return p
		}
	}
	return optest.Project{}
}

type activities struct {
	WorkPackageID int64
	Total, Count  int
	Elements      []activityRow
	Truncated     bool
}

func TestActivities(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp, acts := h.commentedWP()
	var a activities
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID}, &a)
	if a.Total != len(acts) || a.Count != len(acts) || a.WorkPackageID != wp.ID {
		t.Fatalf("activities total %d count %d, want %d", a.Total, a.Count, len(acts))
	}
	comments := 0
	for _, x := range acts {
		if x.IsComment() {
			comments++
		}
	}
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "onlyComments": true}, &a)
	if a.Total != comments {
		t.Errorf("onlyComments total = %d, want %d", a.Total, comments)
	}
	for _, e := range a.Elements {
		if !e.IsComment || e.Comment == "" {
			t.Errorf("onlyComments returned %+v", e)
		}
	}

	// A query filters and ranks: a distinctive word from one comment finds
	// that comment first, even with a typo.
	if _, err := h.op.AddComment(wp.ID, 1, "The flux capacitor calibration is finished"); err != nil {
		t.Fatal(err)
	}
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "query": "capacitr calibration"}, &a)
	if a.Count == 0 || !strings.Contains(a.Elements[0].Comment, "flux capacitor") || a.Total >= len(acts)+1 {
		t.Errorf("fuzzy query: %+v", a)
	}
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "query": "capacitr", "matchMode": "exact"}, &a)
	if a.Count != 0 {
		t.Errorf("exact query with a typo matched %d entries", a.Count)
	}
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "query": "flux capacitor", "matchMode": "exact"}, &a)
	if a.Count != 1 {
		t.Errorf("exact query matched %d entries, want 1", a.Count)
	}
}

func TestQueries(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var l list[queryRow]
	h.ok("openproject_list_queries", map[string]any{"pageSize": 3}, &l)
	if l.Total != len(h.data.Queries) || l.Count != 3 || l.Elements[0].Name == "" {
		t.Errorf("queries = %+v", l)
	}
	var scoped openproject.Query
	for _, q := range h.data.Queries {
		if q.Project != nil {
			scoped = q
			break
		}
	}
	proj := projectByID(h.data, scoped.Project.ID)
	h.ok("openproject_list_queries", map[string]any{"projectId": proj.Identifier}, &l)
	if l.Total == 0 {
		t.Errorf("no queries for project %s", proj.Identifier)
	}
	for _, r := range l.Elements {
		if r.Project == nil || r.Project.ID != proj.ID {
			t.Errorf("query %+v is not in project %d", r, proj.ID)
		}
	}

	var q struct {
		Query   queryDetail
		Results list[wpRow]
	}
	h.ok("openproject_get_query", map[string]any{"queryId": scoped.ID, "pageSize": 2, "offset": 2}, &q)
	if q.Query.ID != scoped.ID || q.Query.Name != scoped.Name || q.Query.Project == nil || q.Query.Project.ID != proj.ID {
		t.Errorf("query = %+v", q.Query)
	}
	if q.Results.PageSize != 2 || q.Results.Offset != 2 || q.Results.Total == 0 || q.Results.Count > 2 {
		t.Errorf("results = %+v", q.Results)
	}
	for _, r := range q.Results.Elements {
		if r.Project == nil || r.Project.ID != proj.ID || r.Status == "" {
			t.Errorf("result row %+v", r)
		}
	}
}

func TestMetadataAndUsers(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var types list[typeRow]
	h.ok("openproject_list_types", nil, &types)
	if types.Total != len(h.data.Types) || types.Elements[0].Name == "" {
		t.Errorf("types = %+v", types)
	}
	h.ok("openproject_list_types", map[string]any{"projectId": h.data.Projects[0].Identifier}, &types)
	if types.Total == 0 {
		t.Errorf("project types = %+v", types)
	}
	var sts list[statusRow]
	h.ok("openproject_list_statuses", nil, &sts)
	if sts.Total != len(h.data.Statuses) || !slices.ContainsFunc(sts.Elements, func(s statusRow) bool { return s.IsClosed }) {
		t.Errorf("statuses = %+v", sts)
	}
	var prios list[priorityRow]
	h.ok("openproject_list_priorities", nil, &prios)
	if prios.Total != len(h.data.Priorities) {
		t.Errorf("priorities = %+v", prios)
	}
	var users list[userRow]
	h.ok("openproject_list_users", map[string]any{"pageSize": 2, "status": "active"}, &users)
	if users.Total < 3 || users.Count != 2 || users.Elements[0].Name == "" {
		t.Errorf("users = %+v", users)
	}
	// Listing users needs admin rights: alice is told, not given an empty list.
	alice := newHarness(t, harnessOpts{key: optest.AliceKey})
	alice.fail("openproject_list_users", nil, "no permission", "request id")
}

func TestOpenAPISpec(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var s specOut
	h.ok("openproject_get_openapi_spec", nil, &s)
	if s.Title == "" || s.PathCount != 5 || s.SchemaCount != 3 || len(s.Paths) != 5 || s.Document != "" || len(s.Schemas) != 0 {
		t.Errorf("summary = %+v", s)
	}
	for _, p := range s.Paths {
		if len(p.Methods) == 0 || p.Operations != nil {
			t.Errorf("summary path %+v", p)
		}
	}
	h.ok("openproject_get_openapi_spec", map[string]any{"path": "/work_packages/{id}"}, &s)
	if len(s.Paths) != 1 || !slices.Equal(s.Paths[0].Methods, []string{"patch", "get"}) && !slices.Equal(s.Paths[0].Methods, []string{"get", "patch"}) || s.Paths[0].Operations["patch"] == nil {
		t.Errorf("path filter = %+v", s.Paths)
	}
	h.ok("openproject_get_openapi_spec", map[string]any{"tag": "work packages"}, &s)
	if len(s.Paths) != 2 {
		t.Errorf("tag filter = %+v", s.Paths)
	}
	h.ok("openproject_get_openapi_spec", map[string]any{"schema": "WorkPackage"}, &s)
	if len(s.Schemas) != 2 || len(s.Paths) != 0 {
		t.Errorf("schema filter = %v", s.Schemas)
	}
	h.ok("openproject_get_openapi_spec", map[string]any{"full": true}, &s)
	if !strings.Contains(s.Document, `"openapi":"3.0.3"`) || s.Truncated {
		t.Errorf("full = %.200s", s.Document)
	}
}

func TestMeetings(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var l list[meetingRow]
	h.ok("openproject_list_meetings", map[string]any{"pageSize": 100}, &l)
	if l.Total != len(h.data.Meetings) {
		t.Errorf("meetings total = %d, want %d", l.Total, len(h.data.Meetings))
	}
	var past, upcoming list[meetingRow]
	h.ok("openproject_list_meetings", map[string]any{"time": "past"}, &past)
	h.ok("openproject_list_meetings", map[string]any{"time": "upcoming"}, &upcoming)
	if past.Total+upcoming.Total != l.Total {
		t.Errorf("past %d + upcoming %d != %d", past.Total, upcoming.Total, l.Total)
	}
	m := h.meetingWithAgenda()
	proj := projectByID(h.data, m.Project.ID)
	h.ok("openproject_list_meetings", map[string]any{"projectId": proj.Identifier}, &l)
	if !slices.ContainsFunc(l.Elements, func(r meetingRow) bool { return r.ID == m.ID }) {
		t.Errorf("project filter misses meeting %d", m.ID)
	}
	for _, r := range l.Elements {
		if r.Project == nil || r.Project.ID != proj.ID {
			t.Errorf("meeting %+v is not in project %d", r, proj.ID)
		}
	}

	var d meetingOut
	h.ok("openproject_get_meeting", map[string]any{"id": m.ID}, &d)
	if d.Title != m.Title || len(d.AgendaItems) != len(m.AgendaItems) || len(d.Participants) != len(m.Participants) || d.Note != "" {
		t.Errorf("meeting = %+v", d)
	}
	if d.AgendaItems[0].Title == "" || d.Participants[0].Name == "" {
		t.Errorf("agenda/participants lack names: %+v", d)
	}
	h.ok("openproject_get_meeting", map[string]any{"id": m.ID, "includeAgendaItems": false}, &d)
	if len(d.AgendaItems) != 0 {
		t.Errorf("includeAgendaItems=false returned %d items", len(d.AgendaItems))
	}

	// Legacy servers have no meetings list and no agenda items API.
	legacy := newHarness(t, harnessOpts{profile: optest.ProfileLegacy})
	legacy.fail("openproject_list_meetings", nil, "not supported by this OpenProject server", "no meetings list", "request id")
	legacy.ok("openproject_get_meeting", map[string]any{"id": m.ID}, &d)
	if d.Title != m.Title || d.Note == "" || len(d.AgendaItems) != 0 {
		t.Errorf("legacy meeting = %+v", d)
	}
}

func TestWiki(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	p := h.data.WikiPages[0]
	var w wikiOut
	h.ok("openproject_get_wiki_page", map[string]any{"id": p.ID}, &w)
	if w.Title != p.Title || !w.HasText || w.Text == "" || w.Note != "" || w.Project == nil || w.Project.ID != p.Project.ID {
		t.Errorf("wiki = %+v", w)
	}
	if len(w.Attachments) != len(p.Attachments) {
		t.Errorf("attachments = %d, want %d", len(w.Attachments), len(p.Attachments))
	}
	h.fail("openproject_list_wiki_page_links", map[string]any{"workPackageId": 1}, "not supported by this OpenProject server", "wiki page links", "request id")

	legacy := newHarness(t, harnessOpts{profile: optest.ProfileLegacy})
	legacy.ok("openproject_get_wiki_page", map[string]any{"id": p.ID}, &w)
	if w.HasText || w.Text != "" || !strings.Contains(w.Note, "does not provide wiki page text") {
		t.Errorf("legacy wiki = %+v", w)
	}
}

// --- bad arguments ---

func TestBadArguments(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	cases := []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"openproject_list_projects", map[string]any{"pageSize": 0}, "pageSize"},
		{"openproject_list_projects", map[string]any{"pageSize": 101}, "pageSize"},
		{"openproject_list_projects", map[string]any{"offset": 0}, "offset"},
		{"openproject_list_projects", map[string]any{"filters": `{"id":1}`}, "filters"},
		{"openproject_list_projects", map[string]any{"sortBy": "name:sideways"}, "sortBy"},
		{"openproject_get_project", map[string]any{"projectId": ""}, "projectId"},
		{"openproject_get_project", map[string]any{"projectId": "a/b"}, "projectId"},
		{"openproject_get_project", map[string]any{}, "projectId"},
		{"openproject_list_work_packages", map[string]any{"status": "sleeping"}, "status"},
		{"openproject_list_work_packages", map[string]any{"type": -1}, "type"},
		{"openproject_list_work_packages", map[string]any{"assigneeId": 0}, "assigneeId"},
		{"openproject_list_work_packages", map[string]any{"filters": "[{]"}, "filters"},
		{"openproject_list_work_packages", map[string]any{"pageSize": 500}, "pageSize"},
		{"openproject_get_work_package", map[string]any{"workPackageId": 0}, "workPackageId"},
		{"openproject_get_work_package", map[string]any{"workPackageId": "abc"}, "workPackageId"},
		{"openproject_list_work_package_activities", map[string]any{"workPackageId": 1, "matchMode": "regex"}, "matchMode"},
		{"openproject_list_work_package_activities", map[string]any{}, "workPackageId"},
		{"openproject_list_queries", map[string]any{"offset": -3}, "offset"},
		{"openproject_get_query", map[string]any{"queryId": -1}, "queryId"},
		{"openproject_get_query", map[string]any{"queryId": 1, "pageSize": 1000}, "pageSize"},
		{"openproject_list_types", map[string]any{"projectId": "x?y"}, "projectId"},
		{"openproject_list_statuses", map[string]any{"extra": 1}, "extra"},
		{"openproject_list_priorities", map[string]any{"extra": 1}, "extra"},
		{"openproject_list_users", map[string]any{"status": "asleep"}, "status"},
		{"openproject_get_openapi_spec", map[string]any{"full": "yes"}, "full"},
		{"openproject_list_meetings", map[string]any{"time": "tomorrow"}, "time"},
		{"openproject_get_meeting", map[string]any{"id": 0}, "id"},
		{"openproject_get_wiki_page", map[string]any{"id": -5}, "id"},
		{"openproject_list_wiki_page_links", map[string]any{"pageSize": 0}, "pageSize"},
		{"openproject_list_wiki_page_links", map[string]any{"workPackageId": -1}, "workPackageId"},
		{"openproject_list_time_entries", map[string]any{"from": "2025-13-01"}, "from"},
		{"openproject_list_time_entries", map[string]any{"to": "yesterday"}, "to"},
		{"openproject_list_time_entries", map[string]any{"from": "2025-06-02", "to": "2025-06-01"}, "to"},
		{"openproject_list_time_entries", map[string]any{"workPackageId": -1}, "workPackageId"},
		{"openproject_list_time_entries", map[string]any{"userId": -2}, "userId"},
		{"openproject_list_time_entries", map[string]any{"projectId": "a/b"}, "projectId"},
		{"openproject_list_time_entries", map[string]any{"pageSize": 0}, "pageSize"},
		{"openproject_list_relations", map[string]any{"workPackageId": 0}, "workPackageId"},
		{"openproject_list_relations", map[string]any{"workPackageId": 1, "type": "parent"}, "type"},
		{toolWorkPackageContext, map[string]any{"workPackageId": 0}, "workPackageId"},
		{toolWorkPackageContext, map[string]any{}, "workPackageId"},
		{toolMyWork, map[string]any{"updatedSince": "yesterday"}, "updatedSince"},
		{toolMyWork, map[string]any{"updatedSince": "2025-06-01"}, "updatedSince"},
	}
	tested := map[string]bool{}
	for _, c := range cases {
		tested[c.tool] = true
		before := h.op.TotalRequests()
		text := h.fail(c.tool, c.args, c.param)
		if strings.HasPrefix(text, "invalid argument") && h.op.TotalRequests() != before {
			t.Errorf("%s(%v): a bad argument reached OpenProject", c.tool, c.args)
		}
	}
	for _, name := range liveTools {
		if !tested[name] {
			t.Errorf("no bad-argument case for %s", name)
		}
	}
	// Not found is said as such, with a request id that is in the log.
	text := h.fail("openproject_get_work_package", map[string]any{"workPackageId": 999999}, "not found")
	id := text[strings.LastIndex(text, "request id ")+len("request id ") : len(text)-1]
	if !strings.Contains(h.logs.String(), "request_id="+id) {
		t.Errorf("request id %s not in the log:\n%s", id, h.logs.String())
	}
}

// --- upstream failures ---

func TestUpstreamFailures(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	args := h.validArgs()
	for _, name := range ownTools {
		h.op.SetFaults(optest.Faults{FailNext: 100, FailStatus: 503})
		h.fail(name, args[name], "OpenProject is unavailable", "request id")
	}
	h.op.SetFaults(optest.Faults{})
	if !strings.Contains(h.logs.String(), "HTTP 503") {
		t.Errorf("the log lacks the structured cause:\n%.500s", h.logs.String())
	}

	// A rejected key is reported as such, never as "no results".
	bad := newHarness(t, harnessOpts{key: "not-a-valid-key-123"})
	for _, name := range ownTools {
		bad.fail(name, args[name], "rejected the API key")
	}

	// A long Retry-After is passed on to the agent.
	limited := newHarness(t, harnessOpts{maxRetryAfter: time.Second})
	for _, name := range ownTools {
		limited.op.SetFaults(optest.Faults{RateLimitNext: 100, RetryAfter: 30 * time.Second})
		limited.fail(name, args[name], "retry after 30 s")
	}
}

package mcp_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// The bulk update (issue 19), over Streamable HTTP with the go-sdk
// client, against the fake OpenProject.

// aliceSession opens alice's session over Streamable HTTP and waits for
// her first sync.
func aliceSession(ctx context.Context, t *testing.T, e *httpEnv) *sdk.ClientSession {
	t.Helper()
	cs, err := e.connectStreamable(ctx, "/mcp", map[string]string{"X-OpenProject-Api-Key": optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	waitSynced(ctx, t, cs)
	return cs
}

// aliceID is alice's user id in e's data.
func (e *httpEnv) aliceID(t *testing.T) int64 {
	t.Helper()
	for _, u := range e.data.Users {
		if u.Login == "alice" {
			return u.ID
		}
	}
	t.Fatal("no alice in the data")
	return 0
}

// callFails calls a tool that must fail and returns its message, which
// must hold every one of want.
func callFails(ctx context.Context, t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, want ...string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := contentText(res)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded: %.300s", name, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s(%v) = %q, want it to say %q", name, args, text, w)
		}
	}
	return text
}

type bulkOut struct {
	Updated []struct {
		Index       int
		ID          int64
		LockVersion int
	}
	Failed []struct {
		Index int
		ID    int64
		Error string
	}
	Complete       bool
	IndexRefreshed bool
	Note           string
	Preview        []struct {
		Index   int
		ID      int64
		Action  string
		Changes map[string]any
		Warning string
		Error   string
	}
}

// bulkEnv is alice's session on e with three new work packages of hers,
// an open status and an open version of alice-private.
type bulkEnv struct {
	cs      *sdk.ClientSession
	wps     []openproject.WorkPackage
	status  openproject.Status
	version openproject.Version
}

func newBulkEnv(ctx context.Context, t *testing.T, e *httpEnv) bulkEnv {
	t.Helper()
	client, err := openproject.New(openproject.Config{BaseURL: e.base, APIKey: optest.AliceKey})
	if err != nil {
		t.Fatal(err)
	}
	var b bulkEnv
	for i := range 3 {
		wp, err := client.CreateWorkPackage(ctx, openproject.NewWorkPackage{Project: "alice-private", Subject: fmt.Sprintf("Bulk target %c", 'A'+i)})
		if err != nil {
			t.Fatal(err)
		}
		b.wps = append(b.wps, wp)
	}
	for _, st := range e.data.Statuses {
		if !st.IsClosed && st.ID != b.wps[0].Status.ID {
			b.status = st
			break
		}
	}
	vs, err := client.ListVersions(ctx, "alice-private", openproject.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(vs.Items, func(v openproject.Version) bool { return v.Status == "open" })
	if b.status.ID == 0 || i < 0 {
		t.Fatalf("no other open status (%+v) or no open version of alice-private", b.status)
	}
	b.version = vs.Items[i]
	b.cs = aliceSession(ctx, t, e)
	return b
}

// storedWP is a work package as the fake holds it now.
func (e *httpEnv) storedWP(t *testing.T, id int64) openproject.WorkPackage {
	t.Helper()
	for _, wp := range e.op.Dataset().WorkPackages {
		if wp.ID == id {
			return wp
		}
	}
	t.Fatalf("no work package %d", id)
	return openproject.WorkPackage{}
}

// TestBulkUpdate: three rows, the middle one with a stale lockVersion:
// the first and the last are applied (in OpenProject and in the index),
// the middle one is reported with the conflict, and the answer is not
// complete. A row OpenProject cannot find fails alone; when OpenProject
// becomes unavailable mid-way, the rows left are not tried. Bad rows fail
// the whole call before anything is sent.
func TestBulkUpdate(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alice := e.aliceID(t)
	b := newBulkEnv(ctx, t, e)
	a, stale, c := b.wps[0], b.wps[1], b.wps[2]

	var out bulkOut
	err := httpCall(ctx, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": []any{
		map[string]any{"id": a.ID, "lockVersion": a.LockVersion, "statusId": b.status.ID, "versionId": nil},
		map[string]any{"id": stale.ID, "lockVersion": stale.LockVersion + 3, "statusId": b.status.ID},
		map[string]any{"id": c.ID, "lockVersion": c.LockVersion, "assigneeId": alice, "versionId": b.version.ID},
	}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Updated) != 2 || out.Updated[0].Index != 0 || out.Updated[0].ID != a.ID || out.Updated[0].LockVersion != a.LockVersion+1 ||
		out.Updated[1].Index != 2 || out.Updated[1].ID != c.ID || out.Complete || !out.IndexRefreshed {
		t.Errorf("answer = %+v", out)
	}
	if len(out.Failed) != 1 || out.Failed[0].Index != 1 || out.Failed[0].ID != stale.ID ||
		!strings.Contains(out.Failed[0].Error, "conflict") || !strings.Contains(out.Failed[0].Error, fmt.Sprintf("Current lockVersion is %d", stale.LockVersion)) {
		t.Errorf("failed = %+v", out.Failed)
	}
	if got := e.storedWP(t, a.ID); got.Status.ID != b.status.ID {
		t.Errorf("row 0 not applied: status %d, want %d", got.Status.ID, b.status.ID)
	}
	if got := e.storedWP(t, stale.ID); got.Status.ID != stale.Status.ID || got.LockVersion != stale.LockVersion {
		t.Errorf("the stale row changed its work package: %+v", got)
	}
	if got := e.storedWP(t, c.ID); got.Assignee == nil || got.Assignee.ID != alice || got.Version == nil || got.Version.ID != b.version.ID {
		t.Errorf("row 2 not applied: assignee %v, version %v", got.Assignee, got.Version)
	}
	// The index saw the writes: the first row's new status is searchable.
	var found searchOut
	if err := httpCall(ctx, b.cs, "openproject_search_work_packages", map[string]any{"query": a.Subject, "status": b.status.Name}, &found); err != nil {
		t.Fatal(err)
	}
	if found.Total != 1 || found.Results[0].Title != a.Subject {
		t.Errorf("search after the bulk update = %+v", found)
	}

	// A work package OpenProject does not show fails alone.
	out = bulkOut{}
	err = httpCall(ctx, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": []any{
		map[string]any{"id": 999999, "lockVersion": 1, "statusId": b.status.ID},
		map[string]any{"id": stale.ID, "lockVersion": stale.LockVersion, "statusId": b.status.ID},
	}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Updated) != 1 || out.Updated[0].ID != stale.ID || len(out.Failed) != 1 || out.Failed[0].Index != 0 ||
		!strings.Contains(out.Failed[0].Error, "not found") || out.Complete {
		t.Errorf("with a missing work package = %+v", out)
	}

	// OpenProject unavailable at the second row: the first stays
	// applied, the third is not tried.
	cur := e.storedWP(t, c.ID)
	e.op.SetFaults(optest.Faults{PathPrefix: fmt.Sprintf("/api/v3/work_packages/%d", stale.ID), FailNext: 1, FailStatus: 503})
	out = bulkOut{}
	err = httpCall(ctx, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": []any{
		map[string]any{"id": a.ID, "lockVersion": a.LockVersion + 1, "assigneeId": alice},
		map[string]any{"id": stale.ID, "lockVersion": stale.LockVersion + 1, "assigneeId": alice},
		map[string]any{"id": c.ID, "lockVersion": cur.LockVersion, "assigneeId": 0},
	}}, &out)
	e.op.SetFaults(optest.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Updated) != 1 || out.Updated[0].ID != a.ID || len(out.Failed) != 2 || !strings.Contains(out.Failed[0].Error, "unavailable") ||
		out.Failed[1].Index != 2 || !strings.HasPrefix(out.Failed[1].Error, "not tried") {
		t.Errorf("with OpenProject failing mid-way = %+v", out)
	}
	if got := e.storedWP(t, c.ID); got.LockVersion != cur.LockVersion {
		t.Errorf("a row after the failure was applied: %+v", got)
	}

	// Bad rows: nothing reaches OpenProject.
	row := func(id int64) map[string]any {
		return map[string]any{"id": id, "lockVersion": 1, "statusId": b.status.ID}
	}
	many := make([]any, 26)
	for i := range many {
		many[i] = row(int64(1000 + i))
	}
	before := e.op.RequestCount("PATCH /api/v3/")
	for _, bad := range []struct {
		rows any
		want []string
	}{
		{[]any{}, []string{"rows", "at least one row"}},
		{many, []string{"rows", "26 rows", "at most 25"}},
		{"all of them", []string{"rows", "a list"}},
		{[]any{row(a.ID), map[string]any{"id": c.ID, "statusId": b.status.ID}}, []string{"rows[1].lockVersion", "is required"}},
		{[]any{map[string]any{"id": a.ID, "lockVersion": 2}}, []string{"rows[0].id", "nothing to change"}},
		{[]any{row(a.ID), row(a.ID)}, []string{"rows[1].id", "already in rows[0]"}},
		{[]any{map[string]any{"id": a.ID, "lockVersion": 2, "subject": "x"}}, []string{"rows[0].subject", "not a field"}},
		{[]any{map[string]any{"id": a.ID, "lockVersion": 2, "statusId": 0}}, []string{"rows[0].statusId", "positive id"}},
		{[]any{map[string]any{"id": a.ID, "lockVersion": "2", "statusId": 1}}, []string{"rows[0].lockVersion", "whole number"}},
	} {
		callFails(ctx, t, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": bad.rows}, bad.want...)
	}
	if n := e.op.RequestCount("PATCH /api/v3/") - before; n != 0 {
		t.Errorf("bad rows sent %d updates to OpenProject", n)
	}
}

// TestBulkUpdate_ConfirmWrites: with --confirm-writes the first call
// previews every row (what it would change, a stale lockVersion warned
// of, a missing work package named) and changes nothing; confirm: true
// applies.
func TestBulkUpdate_ConfirmWrites(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newHTTPEnv(t, httpEnvOpts{confirmWrites: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := newBulkEnv(ctx, t, e)
	a, stale := b.wps[0], b.wps[1]
	rows := []any{
		map[string]any{"id": a.ID, "lockVersion": a.LockVersion, "statusId": b.status.ID},
		map[string]any{"id": stale.ID, "lockVersion": stale.LockVersion + 1, "versionId": b.version.ID},
		map[string]any{"id": 999999, "lockVersion": 0, "statusId": b.status.ID},
	}
	before := e.op.RequestCount("PATCH /api/v3/")
	var out bulkOut
	if err := httpCall(ctx, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": rows}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Note, "PREVIEW ONLY") || len(out.Preview) != 3 || len(out.Updated) != 0 || out.Complete {
		t.Fatalf("preview = %+v", out)
	}
	p0, p1, p2 := out.Preview[0], out.Preview[1], out.Preview[2]
	if ch, _ := p0.Changes["statusId"].(map[string]any); p0.ID != a.ID || !strings.Contains(p0.Action, a.Subject) || p0.Warning != "" ||
		ch["to"] != fmt.Sprint(b.status.ID) {
		t.Errorf("row 0 preview = %+v", p0)
	}
	if p1.Index != 1 || !strings.Contains(p1.Warning, "stale") || p1.Changes["versionId"] == nil {
		t.Errorf("row 1 preview = %+v", p1)
	}
	if p2.Index != 2 || !strings.Contains(p2.Error, "not found") {
		t.Errorf("row 2 preview = %+v", p2)
	}
	if n := e.op.RequestCount("PATCH /api/v3/") - before; n != 0 {
		t.Errorf("the preview sent %d updates", n)
	}

	out = bulkOut{}
	if err := httpCall(ctx, b.cs, "openproject_bulk_update_work_packages", map[string]any{"rows": rows[:1], "confirm": true}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Updated) != 1 || !out.Complete || out.Preview != nil || e.storedWP(t, a.ID).Status.ID != b.status.ID {
		t.Errorf("confirmed = %+v", out)
	}
}

// TestBulkUpdate_ReadOnly: a read-only server lists the bundles but not
// the bulk update, and refuses it, over MCP and REST.
func TestBulkUpdate_ReadOnly(t *testing.T) {
	e := newHTTPEnv(t, httpEnvOpts{readOnly: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := map[string]string{"X-OpenProject-Api-Key": optest.AliceKey}
	cs, err := e.connectStreamable(ctx, "/mcp", key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	listed := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = true
	}
	if listed["openproject_bulk_update_work_packages"] || !listed["openproject_prepare_work_package_context"] || !listed["openproject_my_work"] {
		t.Errorf("read-only server lists %v", slices.Sorted(func(yield func(string) bool) {
			for n := range listed {
				if !yield(n) {
					return
				}
			}
		}))
	}
	rows := []any{map[string]any{"id": 1, "lockVersion": 0, "statusId": 1}}
	callFails(ctx, t, cs, "openproject_bulk_update_work_packages", map[string]any{"rows": rows}, "read-only")
	if code, out := e.rest("/api/tools/openproject_bulk_update_work_packages", key, `{"rows":[{"id":1,"lockVersion":0,"statusId":1}]}`); code != 403 || out["code"] != "SERVER_READ_ONLY" {
		t.Errorf("REST bulk update on a read-only server: %d %v", code, out)
	}
	if n := e.op.RequestCount("PATCH /api/v3/"); n != 0 {
		t.Errorf("a refused write reached OpenProject %d times", n)
	}
}

package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

type writeAnswer struct {
	WorkPackage    wpDetail
	Comment        *activityRow
	IndexRefreshed bool
	Note           string
}

func TestCreateWorkPackage(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	p := h.data.Projects[0]
	parent := h.data.WorkPackages[0]
	var w writeAnswer
	h.ok("openproject_create_work_package", map[string]any{
		"projectId": p.Identifier, "subject": "Migrate the build to Go 1.26", "description": "Because **speed**.",
		"typeId": 2, "priorityId": 3, "assigneeId": 2, "parentId": parent.ID, "startDate": "2025-03-01", "dueDate": "2025-03-15",
	}, &w)
	wp := w.WorkPackage
	if wp.ID == 0 || wp.Subject != "Migrate the build to Go 1.26" || wp.Description != "Because **speed**." ||
		wp.Project == nil || wp.Project.ID != p.ID || wp.Type.ID != 2 || wp.Priority.ID != 3 ||
		wp.Assignee == nil || wp.Assignee.ID != 2 || wp.Parent == nil || wp.Parent.ID != parent.ID ||
		wp.StartDate != "2025-03-01" || wp.DueDate != "2025-03-15" {
		t.Errorf("created = %+v", wp)
	}
	if !w.IndexRefreshed || w.Note != "" || w.Comment != nil {
		t.Errorf("answer = %+v", w)
	}
	if got := h.idx.calls(); !slices.Equal(got, []int64{wp.ID}) {
		t.Errorf("RefreshWorkPackage calls = %v, want [%d]", got, wp.ID)
	}
	// It is really there.
	var d wpDetail
	h.ok("openproject_get_work_package", map[string]any{"workPackageId": wp.ID}, &d)
	if d.Subject != wp.Subject {
		t.Errorf("re-read = %+v", d)
	}

	for _, c := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"projectId": p.ID, "subject": "  "}, "subject"},
		{map[string]any{"subject": "x"}, "projectId"}, // required by the schema
		{map[string]any{"projectId": p.ID, "subject": "x", "dueDate": "15.03.2025"}, "dueDate"},
		{map[string]any{"projectId": p.ID, "subject": "x", "startDate": "2025-02-30"}, "startDate"},
		{map[string]any{"projectId": p.ID, "subject": "x", "startDate": "2025-03-02", "dueDate": "2025-03-01"}, "dueDate"},
		{map[string]any{"projectId": p.ID, "subject": "x", "typeId": -2}, "typeId"},
	} {
		h.fail("openproject_create_work_package", c.args, c.param)
	}
	// The server's own validation comes back as a short message.
	h.fail("openproject_create_work_package", map[string]any{"projectId": p.ID, "subject": "x", "typeId": 999}, "OpenProject rejected the change")
	h.fail("openproject_create_work_package", map[string]any{"projectId": "no-such-project", "subject": "x"}, "not found")
	if n := len(h.idx.calls()); n != 1 {
		t.Errorf("failed creates refreshed the index (%d calls)", n)
	}
}

func TestUpdateWorkPackage(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	orig := h.data.WorkPackages[1]
	var w writeAnswer
	h.ok("openproject_update_work_package", map[string]any{
		"workPackageId": orig.ID, "lockVersion": orig.LockVersion, "subject": "Renamed by the agent", "statusId": 2, "dueDate": "2025-12-24",
	}, &w)
	if w.WorkPackage.Subject != "Renamed by the agent" || w.WorkPackage.Status.ID != 2 || w.WorkPackage.DueDate != "2025-12-24" ||
		w.WorkPackage.LockVersion != orig.LockVersion+1 || !w.IndexRefreshed {
		t.Errorf("updated = %+v", w)
	}
	if got := h.idx.calls(); !slices.Equal(got, []int64{orig.ID}) {
		t.Errorf("RefreshWorkPackage calls = %v", got)
	}
	// Removing the assignee and clearing a date.
	h.ok("openproject_update_work_package", map[string]any{
		"workPackageId": orig.ID, "lockVersion": w.WorkPackage.LockVersion, "assigneeId": 0, "dueDate": "",
	}, &w)
	if w.WorkPackage.Assignee != nil || w.WorkPackage.DueDate != "" {
		t.Errorf("cleared = %+v", w.WorkPackage)
	}
	// Planned for a version of its project, then taken out again.
	var v openproject.Version
	var planned openproject.WorkPackage
	for _, wp := range h.data.WorkPackages {
		if i := slices.IndexFunc(h.data.Versions, func(v openproject.Version) bool { return v.Project.ID == wp.Project.ID && v.Status == "open" }); i >= 0 {
			v, planned = h.data.Versions[i], wp
			break
		}
	}
	if v.ID == 0 {
		t.Fatal("no project has an open version")
	}
	var p writeAnswer
	h.ok("openproject_update_work_package", map[string]any{"workPackageId": planned.ID, "lockVersion": planned.LockVersion, "versionId": v.ID}, &p)
	if p.WorkPackage.Version == nil || p.WorkPackage.Version.ID != v.ID || p.WorkPackage.Version.Name != v.Name {
		t.Errorf("planned = %+v", p.WorkPackage.Version)
	}
	h.ok("openproject_update_work_package", map[string]any{"workPackageId": planned.ID, "lockVersion": p.WorkPackage.LockVersion, "versionId": 0}, &p)
	if p.WorkPackage.Version != nil {
		t.Errorf("unplanned = %+v", p.WorkPackage.Version)
	}

	// A stale lockVersion: nothing is saved, and the error carries the
	// current lockVersion and the current values of the fields to change.
	current := w.WorkPackage
	text := h.fail("openproject_update_work_package", map[string]any{
		"workPackageId": orig.ID, "lockVersion": orig.LockVersion, "subject": "Stale edit", "statusId": 1,
	}, "conflict", fmt.Sprintf("Current lockVersion is %d", current.LockVersion), `subject="Renamed by the agent"`,
		"statusId=2 (", "request id")
	if strings.Contains(text, "Stale edit") {
		t.Errorf("conflict message echoes the rejected value: %s", text)
	}
	var d wpDetail
	h.ok("openproject_get_work_package", map[string]any{"workPackageId": orig.ID}, &d)
	if d.Subject != "Renamed by the agent" || d.LockVersion != current.LockVersion {
		t.Errorf("after conflict = %+v", d)
	}
	// Retrying with the lockVersion from the message works.
	h.ok("openproject_update_work_package", map[string]any{
		"workPackageId": orig.ID, "lockVersion": current.LockVersion, "subject": "Stale edit, retried",
	}, &w)
	if w.WorkPackage.Subject != "Stale edit, retried" {
		t.Errorf("retry = %+v", w.WorkPackage)
	}

	for _, c := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 0}, "workPackageId"}, // nothing to change
		{map[string]any{"workPackageId": orig.ID, "lockVersion": -1, "subject": "x"}, "lockVersion"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "subject": ""}, "subject"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "statusId": 0}, "statusId"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "assigneeId": -4}, "assigneeId"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "versionId": -2}, "versionId"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "startDate": "soon"}, "startDate"},
		{map[string]any{"workPackageId": orig.ID, "lockVersion": 1, "percentageDone": 101}, "percentageDone"},
		{map[string]any{"workPackageId": 0, "lockVersion": 1, "subject": "x"}, "workPackageId"},
		{map[string]any{"workPackageId": orig.ID, "subject": "x"}, "lockVersion"}, // required
	} {
		h.fail("openproject_update_work_package", c.args, c.param)
	}
}

func TestAddComment(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp := h.data.WorkPackages[2]
	var w writeAnswer
	h.ok("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": "Looked into it: the **cache** is stale."}, &w)
	if w.Comment == nil || w.Comment.Comment != "Looked into it: the **cache** is stale." || !w.Comment.IsComment ||
		w.WorkPackage.ID != wp.ID || w.WorkPackage.LockVersion != wp.LockVersion || !w.IndexRefreshed {
		t.Errorf("comment answer = %+v", w)
	}
	if got := h.idx.calls(); !slices.Equal(got, []int64{wp.ID}) {
		t.Errorf("RefreshWorkPackage calls = %v", got)
	}
	var a activities
	h.ok("openproject_list_work_package_activities", map[string]any{"workPackageId": wp.ID, "onlyComments": true}, &a)
	if a.Count == 0 || a.Elements[a.Count-1].Comment != w.Comment.Comment {
		t.Errorf("the comment is not the last activity: %+v", a)
	}
	h.fail("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": " \n"}, "invalid argument comment")
	h.fail("openproject_add_comment", map[string]any{"workPackageId": -1, "comment": "x"}, "invalid argument workPackageId")
	h.fail("openproject_add_comment", map[string]any{"workPackageId": 99999, "comment": "x"}, "not found")
}

// A failed index refresh does not turn a saved write into an error.
func TestWriteSucceedsWhenIndexRefreshFails(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.idx.err = errors.New("bolt: database is locked")
	wp := h.data.WorkPackages[3]
	var w writeAnswer
	h.ok("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": "Saved anyway"}, &w)
	if w.IndexRefreshed || !strings.Contains(w.Note, "saved in OpenProject") || !strings.Contains(w.Note, "request id") {
		t.Errorf("answer = %+v", w)
	}
	if strings.Contains(w.Note, "bolt") {
		t.Errorf("the note leaks the internal cause: %s", w.Note)
	}
	if !strings.Contains(h.logs.String(), "database is locked") {
		t.Errorf("the cause is not logged")
	}
}

func TestReadOnly(t *testing.T) {
	h := newHarness(t, harnessOpts{readOnly: true})
	listed := map[string]bool{}
	for tool, err := range h.cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = true
	}
	for _, name := range liveTools {
		if !listed[name] {
			t.Errorf("read-only server does not list %s", name)
		}
	}
	args := h.validArgs()
	before := h.op.TotalRequests()
	for _, name := range writeToolNames {
		if listed[name] {
			t.Errorf("read-only server lists %s", name)
		}
		// Called anyway (an agent that remembers the tool): a clear error.
		h.fail(name, args[name], "read-only", "writes are disabled")
	}
	// The handlers refuse on their own too, whatever transport reaches them.
	ctx := t.Context()
	_, err1 := h.srv.createWorkPackage(ctx, createWPIn{ProjectID: "1", Subject: "x"})
	_, err2 := h.srv.updateWorkPackage(ctx, updateWPIn{WorkPackageID: 1, LockVersion: 0, Subject: new("x")})
	_, err3 := h.srv.addComment(ctx, commentIn{WorkPackageID: 1, Comment: "x"})
	_, err4 := h.srv.logTime(ctx, logTimeIn{WorkPackageID: 1, Hours: 1, SpentOn: "2025-06-02"})
	_, err5 := h.srv.createRelation(ctx, createRelationIn{WorkPackageID: 1, ToID: 2, Type: "relates"})
	_, err6 := h.srv.bulkUpdate(ctx, bulkUpdateIn{Rows: []bulkRow{{ID: 1, LockVersion: new(0), StatusID: new(int64(1))}}})
	for i, err := range []error{err1, err2, err3, err4, err5, err6} {
		if !errors.Is(err, errReadOnly) {
			t.Errorf("handler %d: err = %v, want the read-only error", i, err)
		}
	}
	if n := h.op.TotalRequests() - before; n != 0 {
		t.Errorf("refused writes sent %d requests to OpenProject", n)
	}
	if len(h.idx.calls()) != 0 {
		t.Errorf("refused writes refreshed the index")
	}
	// Reads still work.
	h.ok("openproject_list_statuses", nil, nil)
}

// Writes as a user without access to the project are refused upstream and
// reported as not found (OpenProject hides what a user may not see).
func TestWriteVisibility(t *testing.T) {
	h := newHarness(t, harnessOpts{key: optest.BobKey})
	var alicePrivate optest.Project
	for _, p := range h.data.Projects {
		if p.Identifier == "alice-private" {
			alicePrivate = p
		}
	}
	if alicePrivate.ID == 0 {
		t.Skip("no alice-private project in the data set")
	}
	h.fail("openproject_create_work_package", map[string]any{"projectId": alicePrivate.Identifier, "subject": "Peek"}, "not found")
	var wpID int64
	for _, wp := range h.data.WorkPackages {
		if wp.Project.ID == alicePrivate.ID {
			wpID = wp.ID
			break
		}
	}
	if wpID != 0 {
		h.fail("openproject_add_comment", map[string]any{"workPackageId": wpID, "comment": "Peek"}, "not found")
	}
}

// TestConfirmWrites: with --confirm-writes every write first answers with
// a preview of what it would change, changing nothing, and applies only
// when called again with confirm: true. Without the option, confirm is
// not needed.
func TestConfirmWrites(t *testing.T) {
	h := newHarness(t, harnessOpts{confirmWrites: true})
	type answer struct {
		WorkPackage wpDetail
		Note        string
		Preview     *preview
	}
	writes := func() int {
		return h.op.RequestCount("POST /api/v3/") + h.op.RequestCount("PATCH /api/v3/")
	}
	p := h.data.Projects[0]
	wp := h.data.WorkPackages[2]

	before := writes()
	var a answer
	h.ok("openproject_create_work_package", map[string]any{"projectId": p.Identifier, "subject": "Previewed first", "dueDate": "2026-01-31"}, &a)
	if a.Preview == nil || !strings.Contains(a.Preview.Action, p.Name) || a.Preview.Changes["subject"] != "Previewed first" ||
		a.Preview.Changes["dueDate"] != "2026-01-31" || !strings.HasPrefix(a.Note, "PREVIEW ONLY") || a.WorkPackage.ID != 0 {
		t.Errorf("create preview = %+v", a)
	}
	h.ok("openproject_update_work_package", map[string]any{"workPackageId": wp.ID, "lockVersion": wp.LockVersion, "subject": "Renamed after a look"}, &a)
	if a.Preview == nil || a.Preview.Warning != "" || a.WorkPackage.Subject != wp.Subject {
		t.Errorf("update preview = %+v", a)
	}
	if ch, _ := a.Preview.Changes["subject"].(map[string]any); ch["from"] != fmt.Sprintf("%q", wp.Subject) || ch["to"] != `"Renamed after a look"` {
		t.Errorf("update preview changes = %v", a.Preview.Changes)
	}
	h.ok("openproject_update_work_package", map[string]any{"workPackageId": wp.ID, "lockVersion": wp.LockVersion + 7, "subject": "x"}, &a)
	if a.Preview == nil || !strings.Contains(a.Preview.Warning, "stale") {
		t.Errorf("a preview with a stale lockVersion does not warn: %+v", a.Preview)
	}
	h.ok("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": "Looked at it first"}, &a)
	if a.Preview == nil || a.Preview.Changes["comment"] != "Looked at it first" || a.WorkPackage.ID != wp.ID {
		t.Errorf("comment preview = %+v", a)
	}
	var lt struct {
		Note    string
		Preview *preview
	}
	h.ok("openproject_log_time", map[string]any{"workPackageId": wp.ID, "hours": 1.5, "spentOn": "2026-01-05"}, &lt)
	if lt.Preview == nil || lt.Preview.Changes["hours"] != 1.5 || !strings.Contains(lt.Preview.Action, wp.Subject) {
		t.Errorf("log time preview = %+v", lt)
	}
	var rel struct {
		Note    string
		Preview *preview
	}
	other := h.unrelatedTo(wp.ID)
	h.ok("openproject_create_relation", map[string]any{"workPackageId": wp.ID, "toId": other, "type": "blocks"}, &rel)
	if rel.Preview == nil || !strings.Contains(rel.Preview.Action, "blocks work package") || rel.Preview.Changes["type"] != "blocks" {
		t.Errorf("relation preview = %+v", rel)
	}
	if n := writes() - before; n != 0 {
		t.Errorf("previews sent %d writes to OpenProject", n)
	}
	if n := len(h.idx.calls()); n != 0 {
		t.Errorf("previews refreshed the index %d times", n)
	}
	// Bad arguments fail before any preview, as they would before a write.
	h.fail("openproject_create_work_package", map[string]any{"projectId": p.ID, "subject": "x", "dueDate": "31.01.2026"}, "dueDate")
	h.fail("openproject_update_work_package", map[string]any{"workPackageId": 999999, "lockVersion": 1, "subject": "x"}, "not found")

	// Confirmed, the writes apply.
	var w writeAnswer
	h.ok("openproject_create_work_package", map[string]any{"projectId": p.Identifier, "subject": "Previewed first", "confirm": true}, &w)
	if w.WorkPackage.ID == 0 || w.WorkPackage.Subject != "Previewed first" {
		t.Errorf("confirmed create = %+v", w)
	}
	h.ok("openproject_update_work_package", map[string]any{"workPackageId": wp.ID, "lockVersion": wp.LockVersion, "subject": "Renamed after a look", "confirm": true}, &w)
	if w.WorkPackage.Subject != "Renamed after a look" {
		t.Errorf("confirmed update = %+v", w)
	}
	h.ok("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": "Looked at it first", "confirm": true}, &w)
	if w.Comment == nil {
		t.Errorf("confirmed comment = %+v", w)
	}
	var logged struct{ TimeEntry struct{ ID int64 } }
	h.ok("openproject_log_time", map[string]any{"workPackageId": wp.ID, "hours": 1.5, "spentOn": "2026-01-05", "confirm": true}, &logged)
	if logged.TimeEntry.ID == 0 {
		t.Errorf("confirmed time entry = %+v", logged)
	}

	// Without the option a write applies at once; confirm changes nothing.
	plain := newHarness(t, harnessOpts{})
	plain.ok("openproject_add_comment", map[string]any{"workPackageId": wp.ID, "comment": "No questions asked"}, &w)
	if w.Comment == nil {
		t.Errorf("without --confirm-writes the comment was not added: %+v", w)
	}
}

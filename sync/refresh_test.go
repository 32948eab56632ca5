package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// TestRefreshWorkPackage covers the three outcomes of a refresh: a changed
// work package (subject and a new comment) lands in store and index, a
// deleted one leaves both, and an unknown id is a no-op; none of them
// touches anything else or the sync state.
func TestRefreshWorkPackage(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	e.sync(t)
	ctx := t.Context()
	wps := visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage]
	changed, deleted := wps[0], wps[len(wps)-1]
	if err := e.srv.UpdateWorkPackage(changed, func(wp *openproject.WorkPackage) { wp.Subject = "Narwhal rollout" }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.AddComment(changed, 2, "the narwhal has landed"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.DeleteWorkPackage(deleted); err != nil {
		t.Fatal(err)
	}
	before, _ := e.st.SyncState(kind.WorkPackage)

	e.srv.ResetRequests()
	if err := e.w.RefreshWorkPackage(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.TotalRequests(); n != 2 {
		t.Errorf("refresh made %d requests, want 2 (work package, activities)", n)
	}
	wp, _, _ := e.st.WorkPackage(changed)
	if wp.Subject != "Narwhal rollout" {
		t.Errorf("stored subject %q", wp.Subject)
	}
	doc := e.idx.docs[docWP(changed)]
	if doc.Title != "Narwhal rollout" || !slices.ContainsFunc(doc.Comments, func(c string) bool { return strings.Contains(c, "narwhal has landed") }) {
		t.Errorf("indexed document not refreshed: %+v", doc)
	}

	if err := e.w.RefreshWorkPackage(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := e.st.WorkPackage(deleted); found {
		t.Error("deleted work package still stored")
	}
	if _, ok := e.idx.docs[docWP(deleted)]; ok {
		t.Error("deleted work package still indexed")
	}
	if err := e.w.RefreshWorkPackage(ctx, 99999999); err != nil {
		t.Errorf("refresh of an unknown id: %v", err)
	}
	if err := e.w.RefreshWorkPackage(ctx, 0); err == nil {
		t.Error("refresh of id 0 succeeded")
	}
	after, _ := e.st.SyncState(kind.WorkPackage)
	if !after.Cursor.Equal(before.Cursor) || !after.LastSuccess.Equal(before.LastSuccess) {
		t.Errorf("refresh moved the sync state: %+v -> %+v", before, after)
	}
	if raw, _, _ := e.st.Meta(pendingKey); len(raw) != 0 {
		t.Errorf("pending marker left: %s", raw)
	}
	// The next sync agrees with what the refreshes wrote.
	e.sync(t)
	checkVisible(t, e)
}

// TestRefreshWorkPackage_UpstreamFault leaves store and index as they were
// when the API fails, and reports the failure.
func TestRefreshWorkPackage_UpstreamFault(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	e.sync(t)
	id := visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage][0]
	snap := e.idx.snapshot()
	e.srv.SetFaults(optest.Faults{FailNext: 100, FailStatus: 500})
	if err := e.w.RefreshWorkPackage(t.Context(), id); err == nil || !strings.Contains(err.Error(), "refresh work package") {
		t.Errorf("refresh during an outage: %v", err)
	}
	if d := diffMaps(snap, e.idx.snapshot()); len(d) > 0 {
		t.Errorf("index changed: %v", d)
	}
}

// TestSyncKeepsNewerRefresh: a sync that listed a work package before a
// refresh stored a newer copy must not put the older listing back.
func TestSyncKeepsNewerRefresh(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	e.sync(t)
	id := visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage][0]
	if err := e.srv.UpdateWorkPackage(id, func(wp *openproject.WorkPackage) { wp.Subject = "Old listing" }); err != nil {
		t.Fatal(err)
	}
	stale, err := e.w.api.ListWorkPackages(t.Context(), openproject.ListOptions{Filters: openproject.Filters{openproject.StatusAll(), openproject.IDs(id)}})
	if err != nil || len(stale.Items) != 1 {
		t.Fatalf("list: %v %v", stale.Items, err)
	}
	if err := e.srv.UpdateWorkPackage(id, func(wp *openproject.WorkPackage) { wp.Subject = "Fresh write" }); err != nil {
		t.Fatal(err)
	}
	if err := e.w.RefreshWorkPackage(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	// Replay the sync's handling of the stale page.
	r := &run{api: e.w.api, report: &Report{}}
	st, _ := e.st.SyncState(kind.WorkPackage)
	page, err := e.w.fetchWorkPackagePage(context.Background(), r, stale.Items, st.Retry)
	if err != nil || page == nil {
		t.Fatalf("fetch the stale page: %v, %v", page, err)
	}
	if err := e.w.commitPage(context.Background(), page, &KindReport{}, &st); err != nil {
		t.Fatal(err)
	}
	if wp, _, _ := e.st.WorkPackage(id); wp.Subject != "Fresh write" {
		t.Errorf("stored subject %q, want the refreshed one", wp.Subject)
	}
	if doc := e.idx.docs[docWP(id)]; doc.Title != "Fresh write" {
		t.Errorf("indexed title %q, want the refreshed one", doc.Title)
	}
}

// TestRefreshTransientNotFound: a 404 on the activities of a work package
// the id-filtered listing just showed is not a deletion: the refresh
// fails and the stored work package stays.
func TestRefreshTransientNotFound(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	e.sync(t)
	id := visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage][0]
	e.srv.SetFaults(optest.Faults{PathPrefix: fmt.Sprintf("/api/v3/work_packages/%d/activities", id), NotFoundNext: 1})
	if err := e.w.RefreshWorkPackage(t.Context(), id); err == nil {
		t.Error("refresh with a transient 404 on the activities succeeded")
	}
	if _, stored, err := e.st.WorkPackage(id); err != nil || !stored {
		t.Errorf("work package %d deleted by a transient 404 (stored %v, %v)", id, stored, err)
	}
}

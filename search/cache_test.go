package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestCachedEntitiesFollowTheStore: results are built from entities the
// engine keeps between searches; a sync that changes one must show in
// the next search, title, comment and all.
func TestCachedEntitiesFollowTheStore(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 9, WorkPackages: 60, Comments: 60})
	target := d.WorkPackages[17]
	e := newEnv(t, d, optest.AdminKey)
	q := search.Query{Text: target.Subject}
	first := func(resp search.Response) search.Result {
		t.Helper()
		for _, r := range resp.Results {
			if r.ID == target.ID {
				return r
			}
		}
		t.Fatalf("work package %d not in %v", target.ID, ids(resp))
		return search.Result{}
	}
	before := first(e.search(t, q))
	if before.Title != target.Subject {
		t.Fatalf("title %q, want %q", before.Title, target.Subject)
	}
	// The same search again comes from the cache, unchanged.
	if again := first(e.search(t, q)); again.Title != before.Title || again.Status != before.Status {
		t.Fatalf("second search: %+v, first %+v", again, before)
	}

	newSubject := target.Subject + " zanzibarite"
	if err := e.srv.UpdateWorkPackage(target.ID, func(wp *openproject.WorkPackage) { wp.Subject = newSubject }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.AddComment(target.ID, 1, "The quokkafilter was the culprit."); err != nil {
		t.Fatal(err)
	}
	if _, err := e.worker.Sync(context.Background()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if after := first(e.search(t, q)); after.Title != newSubject {
		t.Errorf("after the sync the title is %q, want %q", after.Title, newSubject)
	}
	after := first(e.search(t, search.Query{Text: "quokkafilter culprit"}))
	if after.MatchedComment == nil || !strings.Contains(after.MatchedComment.Snippet, "quokkafilter") {
		t.Errorf("new comment not matched: %+v", after.MatchedComment)
	}
}

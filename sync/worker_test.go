package sync

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

var smallGen = opgen.GenOptions{Seed: 7, WorkPackages: 150, WikiPages: 40, Meetings: 20}

func checkVisible(t *testing.T, e *env) {
	t.Helper()
	want := visible(e.srv.Dataset(), optest.AliceKey)
	for _, k := range []kind.Kind{kind.Project, kind.WorkPackage, kind.WikiPage, kind.Meeting} {
		if got := storedIDs(t, e.st, k); !slices.Equal(got, want[k]) {
			t.Errorf("%s: stored %d ids, alice sees %d (first stored %v, first visible %v)", k, len(got), len(want[k]), head(got), head(want[k]))
		}
	}
	// Every stored work package has its activity list.
	if n, _ := e.st.Count(kind.Activity); n != len(want[kind.WorkPackage]) {
		t.Errorf("activity lists: %d, want %d", n, len(want[kind.WorkPackage]))
	}
	checkIndexMatchesStore(t, e.st, e.idx)
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 5)] }

func TestFullSyncThenUnchanged(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	rep := e.sync(t)
	checkVisible(t, e)
	// Alice never gets bob's private project.
	for _, id := range storedIDs(t, e.st, kind.Project) {
		p, _, _ := e.st.Project(id)
		if p.Identifier == "bob-private" {
			t.Fatal("alice's store holds bob-private")
		}
	}
	if got := storedIDs(t, e.st, kind.WikiPage); len(got) == 0 || got[len(got)-1] < 1000 {
		t.Errorf("wiki probing did not reach the pages above id 1000: %v", got[max(0, len(got)-3):])
	}
	states, _ := e.st.AllSyncStates()
	for _, k := range kind.All() {
		if !states[k].Complete || states[k].LastError != "" || states[k].LastSuccess.IsZero() {
			t.Errorf("%s state after full sync: %+v", k, states[k])
		}
	}
	t.Logf("first sync: %d requests", rep.Requests)
	// The index decides after each sync whether its writes call for a
	// merge (indexer.TestSettle), so the worker must ask every time.
	if e.idx.settles != 1 {
		t.Errorf("the first sync asked the index to settle %d times, want 1", e.idx.settles)
	}

	before := dump(t, e.st)
	e.srv.ResetRequests()
	rep = e.sync(t)
	got, limit := e.srv.TotalRequests(), e.opts.UnchangedSyncRequests()
	t.Logf("unchanged sync: %d requests (bound %d): %v", got, limit, e.srv.Requests())
	if got > limit || rep.Requests != got {
		t.Errorf("unchanged sync made %d requests (worker counted %d), bound %d", got, rep.Requests, limit)
	}
	for k, kr := range rep.Kinds {
		if kr.Updated != 0 || kr.Deleted != 0 {
			t.Errorf("unchanged sync changed %s: %+v", k, kr)
		}
	}
	if d := diffMaps(before, dump(t, e.st)); len(d) > 0 {
		t.Errorf("unchanged sync changed the store at %v", d)
	}
}

// applyChanges makes the acceptance changes through the fake and returns
// the number of extra requests they justify besides the id listing.
func applyChanges(t *testing.T, e *env) (subjectWP, commentWP, deletedWP, newWiki, deletedWiki, meeting int64) {
	t.Helper()
	d := e.srv.Dataset()
	vis := visible(d, optest.AliceKey)
	wps := vis[kind.WorkPackage]
	parents := map[int64]bool{}
	for _, wp := range d.WorkPackages {
		if wp.Parent != nil {
			parents[wp.Parent.ID] = true
		}
	}
	subjectWP, commentWP = wps[0], wps[1]
	for _, id := range wps[2:] {
		if !parents[id] {
			deletedWP = id
			break
		}
	}
	if err := e.srv.UpdateWorkPackage(subjectWP, func(wp *openproject.WorkPackage) { wp.Subject = "Quokka migration plan" }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.AddComment(commentWP, 2, "the wombat cache is warm"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.DeleteWorkPackage(deletedWP); err != nil {
		t.Fatal(err)
	}

	wst, _ := e.st.SyncState(kind.WikiPage)
	taken := map[int64]bool{}
	for _, p := range d.WikiPages {
		taken[p.ID] = true
	}
	newWiki = wst.HighestID + 3
	for taken[newWiki] {
		newWiki++
	}
	var proj int64
	for _, p := range d.Projects {
		if p.Identifier == "website-relaunch" {
			proj = p.ID
		}
	}
	if _, err := e.srv.AddWikiPage(openproject.WikiPage{ID: newWiki, Title: "Platypus runbook", Text: "restart the platypus", HasText: true, Project: openproject.Ref{ID: proj}}); err != nil {
		t.Fatal(err)
	}
	known := storedIDs(t, e.st, kind.WikiPage)
	i, _ := slices.BinarySearch(known, wst.RecheckNext)
	deletedWiki = known[i%len(known)]
	if err := e.srv.DeleteWikiPage(deletedWiki); err != nil {
		t.Fatal(err)
	}

	meeting = vis[kind.Meeting][0]
	if err := e.srv.UpdateMeeting(meeting, func(m *openproject.Meeting) {
		m.AgendaItems = append(m.AgendaItems, openproject.AgendaItem{Title: "Echidna budget", Notes: "approved", ItemType: "simple"})
	}); err != nil {
		t.Fatal(err)
	}
	return
}

func TestChangesReflected(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{PageSize: 50})
	e.sync(t)
	e.sync(t) // the recheck position moves off zero
	subjectWP, commentWP, deletedWP, newWiki, deletedWiki, meeting := applyChanges(t, e)

	e.srv.ResetRequests()
	rep := e.sync(t)
	got := e.srv.TotalRequests()
	// One 404 only marks a wiki page missing; the next sync confirms it.
	checkWikiDeletionPending(t, e.st, deletedWiki)
	e.sync(t)
	checkVisible(t, e)

	wp, _, _ := e.st.WorkPackage(subjectWP)
	if wp.Subject != "Quokka migration plan" {
		t.Errorf("subject not updated: %q", wp.Subject)
	}
	acts, _, _ := e.st.Activities(commentWP)
	if !slices.ContainsFunc(acts, func(a openproject.Activity) bool { return strings.Contains(a.Comment, "wombat") }) {
		t.Error("new comment not stored")
	}
	if !slices.ContainsFunc(e.idx.docs[docWP(commentWP)].Comments, func(c string) bool { return strings.Contains(c, "wombat") }) {
		t.Error("new comment not indexed")
	}
	if _, found, _ := e.st.WorkPackage(deletedWP); found {
		t.Error("deleted work package still stored")
	}
	if _, found, _ := e.st.WikiPage(newWiki); !found {
		t.Error("new wiki page not found")
	}
	if _, found, _ := e.st.WikiPage(deletedWiki); found {
		t.Error("deleted wiki page still stored")
	}
	m, _, _ := e.st.Meeting(meeting)
	if !slices.ContainsFunc(m.AgendaItems, func(a openproject.AgendaItem) bool { return a.Title == "Echidna budget" }) {
		t.Error("agenda change not stored")
	}

	// Proportional to the changes: 2 activity fetches, 1 agenda fetch, 3
	// extra probes past the new wiki page, the id listing (3 pages of 50
	// plus the count that triggered it), 1 deletion check and the
	// attachment lists of the 4 changed containers (2 work packages, the
	// meeting, the new page).
	wpPages := (len(visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage]) + 1 + 49) / 50
	limit := e.opts.UnchangedSyncRequests() + 2 + 1 + 3 + wpPages + 1 + 4
	t.Logf("change sync: %d requests (bound %d): %v", got, limit, e.srv.Requests())
	if got > limit {
		t.Errorf("change sync made %d requests, bound %d", got, limit)
	}
	_ = rep
}

// checkWikiDeletionPending asserts that a wiki page deleted on the server
// and seen missing by one sync is still stored, marked missing.
func checkWikiDeletionPending(t testing.TB, st *store.Store, id int64) {
	t.Helper()
	if _, found, _ := st.WikiPage(id); !found {
		t.Errorf("wiki page %d deleted after a single 404", id)
	}
	ws, _ := st.SyncState(kind.WikiPage)
	if !slices.Contains(ws.Missing, id) {
		t.Errorf("wiki page %d not marked missing: %v", id, ws.Missing)
	}
}

func docWP(id int64) string { return "work_package:" + itoa(id) }

func TestLegacyProfile(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{Profile: optest.ProfileLegacy}, Options{})
	rep, err := e.w.Sync(t.Context())
	if err != nil {
		t.Fatalf("legacy sync: %v", err)
	}
	if !rep.Kinds[kind.Meeting].Unsupported {
		t.Error("meetings not reported unsupported")
	}
	ms, _ := e.st.SyncState(kind.Meeting)
	if !ms.Unsupported || ms.Note == "" || !ms.Complete || ms.LastError != "" {
		t.Errorf("meeting state: %+v", ms)
	}
	ws, _ := e.st.SyncState(kind.WikiPage)
	if ws.Note != noWikiText || !ws.Complete {
		t.Errorf("wiki state: %+v", ws)
	}
	if n, _ := e.st.Count(kind.Meeting); n != 0 {
		t.Errorf("legacy store has %d meetings", n)
	}
	want := visible(e.srv.Dataset(), optest.AliceKey)
	if got := storedIDs(t, e.st, kind.WikiPage); !slices.Equal(got, want[kind.WikiPage]) {
		t.Errorf("wiki pages: %d stored, %d visible", len(got), len(want[kind.WikiPage]))
	}
	if got := storedIDs(t, e.st, kind.WorkPackage); !slices.Equal(got, want[kind.WorkPackage]) {
		t.Errorf("work packages: %d stored, %d visible", len(got), len(want[kind.WorkPackage]))
	}
	for _, id := range storedIDs(t, e.st, kind.WikiPage) {
		if p, _, _ := e.st.WikiPage(id); p.Text != "" || p.HasText {
			t.Fatalf("legacy wiki page %d has text", id)
		}
	}
}

func TestWikiProbingAcrossGaps(t *testing.T) {
	// Sparse ids by hand: gaps of 20 < WikiMissRun between pages up to
	// 1460, and a page hidden from alice in between.
	d := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 5, WikiPages: 1, Meetings: 1})
	var shared, bobs int64
	for _, p := range d.Projects {
		switch p.Identifier {
		case "website-relaunch":
			shared = p.ID
		case "bob-private":
			bobs = p.ID
		}
	}
	d.WikiPages = nil
	var want []int64
	for id := int64(1); id <= 1460; id += 20 {
		d.WikiPages = append(d.WikiPages, openproject.WikiPage{ID: id, Title: "Page " + itoa(id), Project: openproject.Ref{ID: shared}, HasText: true, Text: "t"})
		want = append(want, id)
	}
	d.WikiPages = append(d.WikiPages, openproject.WikiPage{ID: 1450, Title: "Bob's", Project: openproject.Ref{ID: bobs}})
	srv, base := optesting.Start(t, d, optest.Options{})
	st, idx := openStore(t), newMemIndex()
	w := NewWorker(newClient(t, base, optest.AliceKey, nil), st, idx, Options{WikiMissRun: 25, WikiDeepMissRun: 25})
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := storedIDs(t, st, kind.WikiPage); !slices.Equal(got, want) {
		t.Fatalf("probing found %v..., want %d pages up to 1441", head(got), len(want))
	}
	// A page created later past bob's hidden one is found incrementally.
	if _, err := srv.AddWikiPage(openproject.WikiPage{ID: 1462, Title: "New", Project: openproject.Ref{ID: shared}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := st.WikiPage(1462); !found {
		t.Fatal("new page above a hidden one not found")
	}
}

func TestCancellationConverges(t *testing.T) {
	gen := opgen.GenOptions{Seed: 11, WorkPackages: 150, WikiPages: 20, Meetings: 10}
	opts := Options{PageSize: 40, WikiDeepMissRun: 60}
	srv, base := optesting.Start(t, opgen.Generate(gen), optest.Options{})

	ref, refIdx := openStore(t), newMemIndex()
	srv.ResetRequests()
	if _, err := NewWorker(newClient(t, base, optest.AliceKey, nil), ref, refIdx, opts).Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	total := srv.TotalRequests()
	want, wantIdx := dump(t, ref), refIdx.snapshot()

	points := 0
	// Every cancellation point costs a sync; short mode (the race run)
	// samples fewer of them.
	samples := int64(45)
	if testing.Short() {
		samples = 4
	}
	for k := int64(0); k < int64(total)+5; k += max(1, int64(total)/samples) {
		st, idx := openStore(t), newMemIndex()
		ctx, cancel := context.WithCancel(t.Context())
		ca := &cancelAfter{k: k, cancel: cancel}
		c := newClient(t, base, optest.AliceKey, func(rt http.RoundTripper) http.RoundTripper { ca.base = rt; return ca })
		_, err := NewWorker(c, st, idx, opts).Sync(ctx)
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: cancelled sync: %v", k, err)
		}
		if _, err := NewWorker(newClient(t, base, optest.AliceKey, nil), st, idx, opts).Sync(t.Context()); err != nil {
			t.Fatalf("k=%d: clean sync: %v", k, err)
		}
		if d := diffMaps(want, dump(t, st)); len(d) > 0 {
			t.Fatalf("k=%d: store differs from uninterrupted sync at %v", k, d)
		}
		if d := diffMaps(wantIdx, idx.snapshot()); len(d) > 0 {
			t.Fatalf("k=%d: index differs from uninterrupted sync at %v", k, d)
		}
		points++
	}
	t.Logf("%d cancellation points over %d requests", points, total)
}

// failIndex fails Index calls after n successes, to interrupt a commit
// between the store write and the index write.
type failIndex struct {
	*memIndex
	n int
}

func (f *failIndex) Index(ctx context.Context, docs ...indexer.Document) error {
	if f.n <= 0 {
		return errors.New("disk full")
	}
	f.n--
	return f.memIndex.Index(ctx, docs...)
}

func TestIndexFailureRecovered(t *testing.T) {
	srv, base := optesting.Start(t, opgen.Generate(smallGen), optest.Options{})
	_ = srv
	st, mem := openStore(t), newMemIndex()
	opts := Options{PageSize: 50}
	if _, err := NewWorker(newClient(t, base, optest.AliceKey, nil), st, &failIndex{memIndex: mem, n: 2}, opts).Sync(t.Context()); err == nil {
		t.Fatal("sync with a failing index succeeded")
	}
	if _, err := NewWorker(newClient(t, base, optest.AliceKey, nil), st, mem, opts).Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkIndexMatchesStore(t, st, mem)
}

func TestFaultsRetried(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{PageSize: 50})
	e.srv.SetFaults(optest.Faults{RateLimitEvery: 7, FailNext: 3, FailStatus: 503})
	e.sync(t)
	e.srv.SetFaults(optest.Faults{})
	checkVisible(t, e)
}

func TestUnauthenticatedKeepsData(t *testing.T) {
	e := newEnv(t, smallGen, optest.Options{}, Options{})
	e.sync(t)
	before := dump(t, e.st)
	e.srv.SetFaults(optest.Faults{PathPrefix: "/api/v3/work_packages", FailNext: 1 << 20, FailStatus: 401})
	rep, err := e.w.Sync(t.Context())
	if err == nil || !errors.Is(rep.Kinds[kind.WorkPackage].Err, openproject.ErrUnauthenticated) {
		t.Fatalf("sync error %v, work package error %v", err, rep.Kinds[kind.WorkPackage].Err)
	}
	st, _ := e.st.SyncState(kind.WorkPackage)
	// The data stays complete as of LastSuccess; LastError says the
	// latest run failed (issue 11, item 5).
	if st.LastError == "" || !st.Complete || st.LastSuccess.IsZero() || st.Cursor.IsZero() {
		t.Errorf("work package state after 401: %+v", st)
	}
	if rep.Kinds[kind.WikiPage].Err != nil || rep.Kinds[kind.Meeting].Err != nil {
		t.Errorf("other kinds failed too: %v", rep.Err())
	}
	if d := diffMaps(before, dump(t, e.st)); len(d) > 0 {
		t.Errorf("failed sync changed the store at %v", d)
	}
}

func TestLargeAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("large data set")
	}
	gen := opgen.GenOptions{Seed: 42, WorkPackages: 10000, Comments: 30000, WikiPages: 300, Meetings: 200}
	e := newEnv(t, gen, optest.Options{}, Options{})
	rep := e.sync(t)
	t.Logf("first sync: %d requests in %v", rep.Requests, rep.Duration)
	checkVisible(t, e)

	e.srv.ResetRequests()
	rep = e.sync(t)
	if got, limit := e.srv.TotalRequests(), e.opts.UnchangedSyncRequests(); got > limit {
		t.Errorf("unchanged sync: %d requests, bound %d", got, limit)
	} else {
		t.Logf("unchanged sync: %d requests (bound %d) in %v", got, limit, rep.Duration)
	}

	applyChanges(t, e)
	e.srv.ResetRequests()
	rep = e.sync(t)
	got := e.srv.TotalRequests()
	e.sync(t) // confirms the wiki page deletion
	checkVisible(t, e)
	wpPages := (len(visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage]) + 1 + 999) / 1000
	limit := e.opts.UnchangedSyncRequests() + 2 + 1 + 3 + wpPages + 1 + 4 // see TestChangesReflected
	if got > limit {
		t.Errorf("change sync: %d requests, bound %d", got, limit)
	} else {
		t.Logf("change sync: %d requests (bound %d) in %v", got, limit, rep.Duration)
	}
}

// alwaysBusy is a Busy whose searches never stop waiting.
type alwaysBusy struct{}

func (alwaysBusy) Busy() bool { return true }

// TestSyncGivesWayWhileBusy: while searches wait for the cores, a sync
// still completes, with the same data, but runs one per-item request at a
// time (TestLimiter_GivesWayWhileBusy) and indexes a page in slices of
// busyBatch.
func TestSyncGivesWayWhileBusy(t *testing.T) {
	gen := opgen.GenOptions{Seed: 7, WorkPackages: 150, WikiPages: 3, Meetings: 2}
	// A short wiki probe: a thousand misses, each paused, would be most
	// of the test's time and tell nothing more.
	quiet := newEnv(t, gen, optest.Options{}, Options{WikiDeepMissRun: 20})
	quiet.sync(t)
	busy := newEnv(t, gen, optest.Options{}, Options{WikiDeepMissRun: 20, Busy: alwaysBusy{}})
	busy.sync(t)
	if d := diffMaps(quiet.idx.snapshot(), busy.idx.snapshot()); len(d) > 0 {
		t.Errorf("the busy sync indexed otherwise than the quiet one at %v", d)
	}
	if quiet.idx.largest <= busyBatch {
		t.Fatalf("the quiet sync's largest batch is %d documents; the test needs more than %d", quiet.idx.largest, busyBatch)
	}
	if busy.idx.largest > busyBatch {
		t.Errorf("while busy the sync indexed %d documents at once, want at most %d", busy.idx.largest, busyBatch)
	}
}

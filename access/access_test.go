package access_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// mixed is a data set whose users see different things: projects by
// membership and publicity, kinds by role, single shared work packages,
// internal comments.
var mixed = opgen.GenOptions{Seed: 11, WorkPackages: 400, Comments: 600, WikiPages: 60, Meetings: 30, MixedPermissions: true}

// keys are every user of the mixed set who is not an administrator.
var keys = []string{optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.DaveKey, opgen.ErinKey, "opsearch-user-7"}

func client(t testing.TB, base, key string) *openproject.Client {
	t.Helper()
	c, err := openproject.New(openproject.Config{
		BaseURL: base, APIKey: key, HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// synced opens key's own store and index (per-user mode, the reference)
// and syncs them.
func synced(t testing.TB, base, key string) *sync.User {
	t.Helper()
	u, err := sync.OpenUser(t.Context(), t.TempDir(), client(t, base, key), sync.UserOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	t.Cleanup(func() { _ = u.Close() })
	if _, err := u.Worker.Sync(t.Context()); err != nil {
		t.Fatalf("sync %s: %v", key, err)
	}
	return u
}

// sharedSynced opens the instance's shared store and index and crawls
// them with each key in turn, as the team server's users would.
func sharedSynced(t testing.TB, base string, keys ...string) *sync.User {
	t.Helper()
	u := openShared(t, base)
	for _, key := range keys {
		c := client(t, base, key)
		me, err := c.Me(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w, err := u.SharedWorker(c, sync.Shared{Owner: me.ID}, sync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Sync(t.Context()); err != nil {
			t.Fatalf("shared sync of %s: %v", key, err)
		}
	}
	return u
}

// allDocs lists every document a search of idx restricted by vis finds.
func allDocs(t testing.TB, idx *indexer.Bleve, vis *indexer.Visibility) []string {
	t.Helper()
	res, err := idx.Search(t.Context(), indexer.SearchOptions{Size: 1000, Visible: vis})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total >= 1000 {
		t.Fatalf("%d documents: the test needs a smaller set", res.Total)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

// readsInternal lists the projects in which u's own store holds an
// internal comment.
func readsInternal(t testing.TB, u *sync.User) []int64 {
	t.Helper()
	projectOf := map[int64]int64{}
	err := u.Store.ScanWorkPackages(t.Context(), 500, func(wps []openproject.WorkPackage) error {
		for _, wp := range wps {
			projectOf[wp.ID] = wp.Project.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ps []int64
	err = u.Store.ScanActivities(t.Context(), 500, func(ls []store.WorkPackageActivities) error {
		for _, l := range ls {
			if slices.ContainsFunc(l.Activities, func(a openproject.Activity) bool { return a.Internal }) {
				ps = append(ps, projectOf[l.WorkPackageID])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ps)
	return slices.Compact(ps)
}

// TestViewEqualsOwnIndex checks, for every user of the mixed set, that
// the shared index restricted to the user's view holds exactly the
// documents the user's own sync indexed, and that the view reads
// internal comments where the user's own sync found them.
func TestViewEqualsOwnIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs seven users")
	}
	srv, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := sharedSynced(t, base, keys...)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Internal) == 0 {
		t.Fatal("test data: no internal comments held")
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			own := synced(t, base, key)
			c := client(t, base, key)
			before := srv.TotalRequests()
			v, err := access.Compute(t.Context(), c, held, nil, access.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.TotalRequests() - before; got != v.Requests {
				t.Errorf("Requests = %d, the fake counted %d", v.Requests, got)
			}
			if err := v.Err(); err != nil {
				t.Fatalf("the shared store lacks what %s sees: %v", key, err)
			}
			want := allDocs(t, own.Index, nil)
			got := allDocs(t, shared.Index, v.Visibility)
			if !slices.Equal(got, want) {
				t.Errorf("%d documents visible, own index has %d\nonly visible: %v\nonly own: %v",
					len(got), len(want), minus(got, want), minus(want, got))
			}
			// Internal comments: the view may name projects whose
			// internal comments sit on work packages the user cannot
			// see; compare where the user sees one.
			var probed []int64
			for p, wps := range held.Internal {
				for _, id := range wps {
					if slices.Contains(want, indexer.DocID(kind.WorkPackage, id)) {
						probed = append(probed, p)
						break
					}
				}
			}
			var internal []int64
			for _, p := range v.Internal {
				if slices.Contains(probed, p) {
					internal = append(internal, p)
				}
			}
			if w := readsInternal(t, own); !slices.Equal(internal, w) {
				t.Errorf("reads internal comments in %v, own store has them in %v", internal, w)
			}

			// Another replica, reading the answers back from the
			// shared store, derives the same view.
			b, err := json.Marshal(v.Answers())
			if err != nil {
				t.Fatal(err)
			}
			var back access.Answers
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if d := access.Derive(&back, held); !reflect.DeepEqual(d.Visibility, v.Visibility) || !slices.Equal(d.Internal, v.Internal) || !slices.Equal(d.Missing, v.Missing) {
				t.Errorf("the view derived from the stored answers differs:\nderived  %+v\ncomputed %+v", d.Visibility, v.Visibility)
			}

			// A refresh where nothing changed: projects, counts,
			// meetings and at most two probes.
			before = srv.TotalRequests()
			v2, err := access.Compute(t.Context(), c, held, v, access.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n := srv.TotalRequests() - before; n > 5 || n != v2.Requests {
				t.Errorf("unchanged refresh: %d requests (View says %d), want at most 5", n, v2.Requests)
			}
			if got2 := allDocs(t, shared.Index, v2.Visibility); !slices.Equal(got2, got) {
				t.Errorf("refresh changed the visible documents: %d, then %d", len(got), len(got2))
			}
		})
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

// TestRevocation removes bob from a project: the next view shows none of
// it, in the same number of requests.
func TestRevocation(t *testing.T) {
	d := opgen.Generate(mixed)
	srv, base := optesting.Start(t, d, optest.Options{})
	shared := synced(t, base, optest.AdminKey)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, base, optest.BobKey)
	v, err := access.Compute(t.Context(), c, held, nil, access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const bobPrivate = 3
	inProject := func(vis *indexer.Visibility) int {
		n := 0
		for _, id := range allDocs(t, shared.Index, vis) {
			k, eid, _ := indexer.ParseDocID(id)
			if k == kind.Project && eid == bobPrivate || k == kind.WorkPackage && slices.Contains(held.WorkPackages[bobPrivate], eid) {
				n++
			}
		}
		return n
	}
	if inProject(v.Visibility) == 0 {
		t.Fatal("test data: bob sees nothing of his private project")
	}
	var bob int64
	for _, u := range d.Users {
		if u.APIKey == optest.BobKey {
			bob = u.ID
		}
	}
	if err := srv.SetMembership(bobPrivate, bob, nil); err != nil {
		t.Fatal(err)
	}
	v2, err := access.Compute(t.Context(), c, held, v, access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := inProject(v2.Visibility); n != 0 {
		t.Errorf("after the removal bob still sees %d documents of project %d", n, bobPrivate)
	}
}

// visibleForms lists every document a search of idx restricted by vis
// finds, naming a public twin by its own id (PublicDocID).
func visibleForms(t testing.TB, idx *indexer.Bleve, vis *indexer.Visibility) []string {
	t.Helper()
	res, err := idx.Search(t.Context(), indexer.SearchOptions{Size: 1000, Visible: vis})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		if h.Public {
			ids = append(ids, indexer.PublicDocID(h.EntityID))
		} else {
			ids = append(ids, h.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestApply checks View.Apply on a shared index of the mixed set, from
// alice's view: what another user's crawl brings into a project she sees
// wholesale stays hidden until the next computation, what her own crawl
// fetched shows at once, and a work package shows in the form its
// internal comments call for.
func TestApply(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs six users into a shared store")
	}
	_, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := sharedSynced(t, base, keys...)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	v, err := access.Compute(t.Context(), client(t, base, optest.AliceKey), held, nil, access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := visibleForms(t, shared.Index, v.Visibility)
	sees := func(docs []string, id string) bool { _, ok := slices.BinarySearch(docs, id); return ok }
	wp := func(id int64) string { return indexer.DocID(kind.WorkPackage, id) }
	// Projects whose work packages alice sees all of, and one she sees
	// none of.
	var whole []int64
	var hidden int64
	for _, p := range slices.Sorted(maps.Keys(held.WorkPackages)) {
		n := 0
		for _, id := range held.WorkPackages[p] {
			if sees(before, wp(id)) || sees(before, indexer.PublicDocID(id)) {
				n++
			}
		}
		switch n {
		case len(held.WorkPackages[p]):
			whole = append(whole, p)
		case 0:
			hidden = p
		}
	}
	if len(whole) < 2 || hidden == 0 {
		t.Fatalf("test data: alice sees %v wholesale, none of %d", whole, hidden)
	}

	// A change that moves nothing leaves the view as it is.
	p, q := whole[0], whole[1]
	mine := held.WorkPackages[p][0]
	if w := v.Apply([]access.Change{{Kind: kind.WorkPackage, ID: mine, Project: p}}, false); w != v {
		t.Error("an update of a work package alice sees made a new view")
	}

	// Another user's crawl moves one of p's work packages into q: it
	// entered q, and stays hidden until the next computation.
	if !sees(before, wp(mine)) {
		t.Fatalf("test data: alice does not see %s whole", wp(mine))
	}
	w := v.Apply([]access.Change{{Kind: kind.WorkPackage, ID: mine, Project: q}}, false)
	if after := visibleForms(t, shared.Index, w.Visibility); sees(after, wp(mine)) || len(after) != len(before)-1 {
		t.Errorf("a work package that entered project %d: %d documents (before %d), visible %v", q, len(after), len(before), sees(after, wp(mine)))
	}
	if got := visibleForms(t, shared.Index, v.Visibility); !slices.Equal(got, before) {
		t.Error("Apply changed the view it was called on")
	}

	// Her own crawl fetched a work package of a project she does not
	// see (shared with her since): it shows at once.
	theirs := held.WorkPackages[hidden][0]
	if sees(before, wp(theirs)) {
		t.Fatal("test data: alice sees a work package of a project she sees none of")
	}
	w = v.Apply([]access.Change{{Kind: kind.WorkPackage, ID: theirs, Project: hidden}}, true)
	if after := visibleForms(t, shared.Index, w.Visibility); !sees(after, wp(theirs)) || len(after) != len(before)+1 {
		t.Errorf("a work package alice fetched: %d documents (before %d), visible %v", len(after), len(before), sees(after, wp(theirs)))
	}
	// Fetched by another user, the same stays hidden.
	if w := v.Apply([]access.Change{{Kind: kind.WorkPackage, ID: theirs, Project: hidden}}, false); w != v {
		t.Error("another user's work package in a project alice does not see made a new view")
	}

	// A work package of p gaining internal comments: alice, who does not
	// read them there, sees its public twin from now on.
	p, mine = 0, 0
	for _, pp := range whole {
		if reads, _ := v.ReadsInternal(pp); !reads && p == 0 {
			p, mine = pp, held.WorkPackages[pp][0]
		}
	}
	if p == 0 {
		t.Fatalf("test data: alice reads internal comments in every project she sees wholesale")
	}
	w = v.Apply([]access.Change{{Kind: kind.WorkPackage, ID: mine, Project: p, Twin: true}}, false)
	if slices.Contains(w.Visibility.Except, wp(mine)) == false || slices.Contains(w.Visibility.Except, indexer.PublicDocID(mine)) {
		t.Errorf("after internal comments: except %v, want %s hidden and its twin not", w.Visibility.Except, wp(mine))
	}
	// And one losing its internal comments shows whole again.
	// Someone who sees a work package's public twin only.
	var twin int64
	var tv *access.View
	var tdocs []string
	for _, key := range keys {
		kv, err := access.Compute(t.Context(), client(t, base, key), held, nil, access.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kdocs := visibleForms(t, shared.Index, kv.Visibility)
		for pp, ids := range held.Internal {
			for _, id := range ids {
				if sees(kdocs, indexer.PublicDocID(id)) && !sees(kdocs, wp(id)) {
					p, twin, tv, tdocs = pp, id, kv, kdocs
				}
			}
		}
		if twin != 0 {
			break
		}
	}
	if twin == 0 {
		t.Fatal("test data: nobody sees a public twin")
	}
	w = tv.Apply([]access.Change{{Kind: kind.WorkPackage, ID: twin, Project: p}}, false)
	if after := visibleForms(t, shared.Index, w.Visibility); !sees(after, wp(twin)) || len(after) != len(tdocs)+1 {
		t.Errorf("%s lost its internal comments but stays hidden", wp(twin))
	}

	// A meeting another user's crawl brought into p: hidden if alice
	// sees p's meetings wholesale.
	if ms := held.Meetings[hidden]; len(ms) > 0 {
		m := indexer.DocID(kind.Meeting, ms[0])
		w = v.Apply([]access.Change{{Kind: kind.Meeting, ID: ms[0], Project: hidden}}, true)
		if after := visibleForms(t, shared.Index, w.Visibility); !sees(after, m) {
			t.Errorf("a meeting alice fetched is not visible")
		}
	}
}

// TestTrackerReplaysBatchesDuringRefresh: a batch indexed while a
// refresh computes is applied to the new view too, so a refresh that
// read holdings before the batch cannot show what the batch hid.
func TestTrackerReplaysBatchesDuringRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("syncs a shared store")
	}
	_, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := sharedSynced(t, base, optest.AliceKey)
	cache := access.NewHoldingsCache(shared.Store)
	held, err := cache.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := cache.Get(t.Context()); again != held {
		t.Error("holdings read again without a commit in between")
	}
	p, q := twoProjects(t, held)
	moved := held.WorkPackages[p][0]
	api := &hookAPI{API: client(t, base, optest.AliceKey)}
	tr := access.NewTracker(api, cache, 0, access.Options{})
	if tr.View() != nil || tr.Visibility() != nil {
		t.Fatal("a tracker has a view before its first refresh")
	}
	if _, err := tr.Refresh(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	first := tr.View()
	if !slices.Contains(allDocs(t, shared.Index, first.Visibility), indexer.DocID(kind.WorkPackage, moved)) {
		t.Fatalf("test data: alice does not see %d", moved)
	}
	// While the next refresh lists projects, another crawl moves the
	// work package into q.
	api.onProjects = func() {
		tr.Indexing([]access.Change{{Kind: kind.WorkPackage, ID: moved, Project: q}}, false)
	}
	v, err := tr.Refresh(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	if v != tr.View() {
		t.Error("Refresh returned another view than it published")
	}
	if !slices.Contains(v.Visibility.Except, indexer.DocID(kind.WorkPackage, moved)) {
		t.Errorf("the batch indexed during the refresh was not applied to its view: except %v", v.Visibility.Except)
	}
	// A failed refresh keeps the view and says why.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tr.Refresh(ctx, false); err == nil {
		t.Error("a refresh with a cancelled context succeeded")
	}
	if tr.View() != v {
		t.Error("a failed refresh replaced the view")
	}
}

// hookAPI calls onProjects before listing projects.
type hookAPI struct {
	access.API
	onProjects func()
}

func (h *hookAPI) ListProjects(ctx context.Context, o openproject.ListOptions) (openproject.Page[openproject.Project], error) {
	if h.onProjects != nil {
		h.onProjects()
	}
	return h.API.ListProjects(ctx, o)
}

// TestComputeFailsWhole: an upstream failure fails the computation, and
// the error names what was asked.
func TestComputeFailsWhole(t *testing.T) {
	srv, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	held := &access.Holdings{}
	srv.SetFaults(optest.Faults{ErrorRate: 1, ErrorStatuses: []int{http.StatusServiceUnavailable}})
	_, err := access.Compute(t.Context(), client(t, base, optest.AliceKey), held, nil, access.Options{})
	if err == nil || !errors.Is(err, openproject.ErrServer) {
		t.Fatalf("err = %v, want a server error", err)
	}
}

// TestMissingAndRotation: a store behind the user makes the view name
// what it lacks; refreshes re-ask the oldest answers first, so every
// answer is asked again within a bounded number of refreshes.
func TestMissingAndRotation(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	_, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := synced(t, base, optest.AdminKey)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, base, optest.AliceKey)

	behind := *held
	behind.WorkPackages = maps.Clone(held.WorkPackages)
	const p = 1
	lost := behind.WorkPackages[p][0]
	behind.WorkPackages[p] = behind.WorkPackages[p][1:]
	v, err := access.Compute(t.Context(), c, &behind, nil, access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := indexer.DocID(kind.WorkPackage, lost); !slices.Equal(v.Missing, []string{want}) || !errors.Is(v.Err(), access.ErrIncompleteHoldings) {
		t.Errorf("Missing = %v, Err = %v; want [%s] and ErrIncompleteHoldings", v.Missing, v.Err(), want)
	}

	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	first, err := access.Compute(t.Context(), c, held, nil, access.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !first.CheckedAt.Equal(first.At) {
		t.Errorf("a first view took over answers: CheckedAt %v, At %v", first.CheckedAt, first.At)
	}
	full, err := access.Compute(t.Context(), c, held, first, access.Options{Now: now, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.Requests != first.Requests {
		t.Errorf("a full refresh asked %d requests, the first view %d", full.Requests, first.Requests)
	}
	checks := first.Requests - 3 // projects, counts and meetings aside
	if checks <= 2 {
		t.Fatalf("test data: %d checks fit one refresh's budget", checks)
	}
	v = first
	refreshes := 0
	for v.CheckedAt.Equal(first.At) {
		clock = clock.Add(time.Minute)
		refreshes++
		if v, err = access.Compute(t.Context(), c, held, v, access.Options{Now: now}); err != nil {
			t.Fatal(err)
		}
		if v.Requests > 5 {
			t.Fatalf("refresh %d: %d requests", refreshes, v.Requests)
		}
		if refreshes > checks {
			t.Fatalf("after %d refreshes an answer of the first view is still taken over", refreshes)
		}
	}
}

// TestSharedWikiProbeCoverage: a full wiki probe of the shared store is
// recorded with the wikis its user reads, and a later user's first crawl
// whose wikis recent probes read between them (every wiki, after an
// administrator's) asks only the ids above those probes' pages that no
// user found, while a user reading a wiki no probe read probes in full.
// Either way each user ends up seeing exactly the wiki pages their own
// store would hold.
func TestSharedWikiProbeCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls shared stores and one store per user")
	}
	d := opgen.Generate(mixed)
	srv, base := optesting.Start(t, d, optest.Options{})
	wikiProbes := func() int { return srv.RequestCount("GET /api/v3/wiki_pages/") }
	type crawled struct {
		probes int
		may    []int64 // projects whose wiki the user may read, as the crawl knew
		reads  []int64 // projects whose wiki the user is known to read after it
	}
	crawl := func(shared *sync.User, key string) crawled {
		t.Helper()
		c := client(t, base, key)
		me, err := c.Me(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held := access.NewHoldingsCache(shared.Store)
		tr := access.NewTracker(c, held, me.ID, access.Options{})
		if _, err := tr.Refresh(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		w, err := shared.SharedWorker(c, sync.Shared{
			Owner: me.ID, ReadsInternal: tr.ReadsInternal, ReadsWiki: tr.ReadsWiki, Admin: me.Admin,
			Indexing: func(docs []indexer.Document, deleted []string) { held.Apply(access.ChangesOf(docs, deleted)) },
		}, sync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := wikiProbes()
		if _, err := w.Sync(t.Context()); err != nil {
			t.Fatalf("shared sync of %s: %v", key, err)
		}
		out := crawled{probes: wikiProbes() - before}
		projects, err := shared.Store.IDs(kind.Project)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range projects {
			if reads, known := tr.ReadsWiki(p); reads || !known {
				out.may = append(out.may, p)
			}
		}
		// Once the store holds the pages the user found, the view knows
		// the wikis they read.
		if _, err := tr.Refresh(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		for _, p := range projects {
			if reads, _ := tr.ReadsWiki(p); reads {
				out.reads = append(out.reads, p)
			}
		}
		return out
	}
	wikiOf := func(ids []string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !strings.HasPrefix(id, string(kind.WikiPage)+":") })
	}
	// sameWiki checks that key sees in shared what their own store holds,
	// and also the pages named.
	sameWiki := func(shared *sync.User, key string, also ...string) {
		t.Helper()
		held, err := access.HoldingsOf(t.Context(), shared.Store)
		if err != nil {
			t.Fatal(err)
		}
		v, err := access.Compute(t.Context(), client(t, base, key), held, nil, access.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := wikiOf(allDocs(t, synced(t, base, key).Index, nil))
		for _, id := range also {
			if !slices.Contains(want, id) {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		if got := wikiOf(allDocs(t, shared.Index, v.Visibility)); !slices.Equal(got, want) {
			t.Errorf("%s sees %d wiki pages of the shared store, their own store holds %d", key, len(got), len(want))
		}
	}
	// A covered first crawl asks at most the miss run past the highest
	// page and the few ids below it no user found.
	const covered = 2 * sync.DefaultWikiMissRun

	// Without other probes, alice probes as her own store would.
	alone := crawl(openShared(t, base), optest.AliceKey)
	if alone.probes < sync.DefaultWikiDeepMissRun-mixed.WikiPages {
		t.Fatalf("alice's first crawl alone probed %d wiki ids, fewer than the deep miss run", alone.probes)
	}

	t.Run("after an administrator", func(t *testing.T) {
		shared := openShared(t, base)
		crawl(shared, optest.AdminKey)
		for _, key := range []string{optest.AliceKey, optest.BobKey, opgen.DaveKey} {
			if got := crawl(shared, key); got.probes > covered {
				t.Errorf("after an administrator's crawl %s probed %d wiki ids (alone alice %d); want at most %d", key, got.probes, alone.probes, covered)
			}
			sameWiki(shared, key)
		}
	})

	t.Run("after other users", func(t *testing.T) {
		shared := openShared(t, base)
		read := map[int64]bool{} // wikis the finished probes read
		sawCovered, sawUncovered := false, false
		// Dave reads the wiki with the highest pages: the probes after his
		// vouch for every id up to them.
		for _, key := range []string{opgen.DaveKey, optest.AliceKey, optest.BobKey, opgen.CarolKey, opgen.ErinKey} {
			var made []string
			if key == opgen.CarolKey {
				// A page made after the probes carol relies on is found
				// past the highest known page. (Her own store misses it:
				// it is more than the deep miss run past her last page.)
				p, err := srv.AddWikiPage(openproject.WikiPage{Title: "Made after the probes", Project: openproject.Ref{ID: 2}})
				if err != nil {
					t.Fatal(err)
				}
				made = append(made, fmt.Sprintf("%s:%d", kind.WikiPage, p.ID))
			}
			before := maps.Clone(read)
			got := crawl(shared, key)
			isCovered := len(before) > 0 && !slices.ContainsFunc(got.may, func(p int64) bool { return !before[p] })
			switch {
			case isCovered && got.probes > covered:
				t.Errorf("%s may read the wikis of %v, all read by earlier probes (%v), yet probed %d wiki ids; want at most %d", key, got.may, slices.Sorted(maps.Keys(before)), got.probes, covered)
			case !isCovered && got.probes < sync.DefaultWikiDeepMissRun-mixed.WikiPages: // known pages are not asked
				t.Errorf("%s may read a wiki of %v no earlier probe read (%v), yet probed only %d wiki ids", key, got.may, slices.Sorted(maps.Keys(before)), got.probes)
			}
			if isCovered {
				sawCovered = true
			} else {
				sawUncovered = true
				for _, p := range got.reads {
					read[p] = true
				}
			}
			sameWiki(shared, key, made...)
			t.Logf("%s: %d wiki probes, may read wikis %v, covered %v", key, got.probes, got.may, isCovered)
		}
		if !sawCovered || len(read) == 0 || !sawUncovered {
			t.Fatalf("the data set tests one side only: covered %v, uncovered %v", sawCovered, sawUncovered)
		}
	})
}

// TestHoldingsCacheFollowsCrawls: holdings kept current by the batches
// the crawls index equal a fresh read of the store, and a work package
// moving project or gaining internal comments moves in them.
func TestHoldingsCacheFollowsCrawls(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a shared store")
	}
	_, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := openShared(t, base)
	cache := access.NewHoldingsCache(shared.Store)
	empty, err := cache.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{optest.AliceKey, optest.BobKey, opgen.CarolKey} {
		c := client(t, base, key)
		me, err := c.Me(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w, err := shared.SharedWorker(c, sync.Shared{Owner: me.ID, Indexing: func(docs []indexer.Document, deleted []string) { cache.Apply(access.ChangesOf(docs, deleted)) }}, sync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cache.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(h *access.Holdings) string {
		var b strings.Builder
		for name, m := range map[string]map[int64][]int64{"wp": h.WorkPackages, "wiki": h.WikiPages, "meeting": h.Meetings, "internal": h.Internal} {
			for _, p := range slices.Sorted(maps.Keys(m)) {
				if len(m[p]) > 0 {
					fmt.Fprintf(&b, "%s %d %v\n", name, p, m[p])
				}
			}
		}
		lines := strings.Split(b.String(), "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	if norm(got) != norm(want) {
		t.Errorf("kept holdings differ from the store's:\nkept  %.400s\nstore %.400s", norm(got), norm(want))
	}
	if len(want.WorkPackages) == 0 || len(want.Internal) == 0 {
		t.Fatal("test data: nothing held")
	}
	if len(empty.WorkPackages) != 0 {
		t.Error("the first read was changed by later batches")
	}

	// A work package moves to another project, with internal comments.
	from, to := twoProjects(t, want)
	id := want.WorkPackages[from][0]
	cache.Apply([]access.Change{{Kind: kind.WorkPackage, ID: id, Project: to, Twin: true}})
	moved, _ := cache.Get(t.Context())
	if slices.Contains(moved.WorkPackages[from], id) || !slices.Contains(moved.WorkPackages[to], id) || !slices.Contains(moved.Internal[to], id) {
		t.Errorf("after the move: in %d %v, in %d %v, internal in %d %v", from, slices.Contains(moved.WorkPackages[from], id), to, slices.Contains(moved.WorkPackages[to], id), to, slices.Contains(moved.Internal[to], id))
	}
	if !slices.Contains(got.WorkPackages[from], id) {
		t.Error("Apply changed holdings handed out before")
	}
}

// TestSharedDeletionsByAdministrator: what an administrator's crawl no
// longer lists is gone, so it leaves the shared store, the index (with
// its public twin) and the kept holdings; a user who is not one deletes
// nothing, since what they do not list may be another's.
func TestSharedDeletionsByAdministrator(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls a shared store")
	}
	srv, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	shared := openShared(t, base)
	cache := access.NewHoldingsCache(shared.Store)
	if _, err := cache.Get(t.Context()); err != nil {
		t.Fatal(err)
	}
	worker := func(key string) *sync.Worker {
		c := client(t, base, key)
		me, err := c.Me(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w, err := shared.SharedWorker(c, sync.Shared{Owner: me.ID, Admin: me.Admin,
			Indexing: func(docs []indexer.Document, deleted []string) { cache.Apply(access.ChangesOf(docs, deleted)) }}, sync.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	admin, alice := worker(optest.AdminKey), worker(optest.AliceKey)
	for _, w := range []*sync.Worker{admin, alice} {
		if _, err := w.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	held, _ := cache.Get(t.Context())
	var gone, p int64
	for pp, ids := range held.Internal {
		gone, p = ids[0], pp // one with a public twin
		break
	}
	if gone == 0 {
		t.Fatal("test data: no work package with internal comments")
	}
	if err := srv.DeleteWorkPackage(gone); err != nil {
		t.Fatal(err)
	}
	stored := func() bool {
		_, found, err := shared.Store.WorkPackage(gone)
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if _, err := alice.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !stored() {
		t.Fatal("a crawl by a user who is not an administrator deleted a work package")
	}
	if _, err := admin.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if stored() {
		t.Fatal("the administrator's crawl kept a work package deleted upstream")
	}
	docs := visibleForms(t, shared.Index, &indexer.Visibility{Projects: []int64{p}})
	for _, id := range []string{indexer.DocID(kind.WorkPackage, gone), indexer.PublicDocID(gone)} {
		if slices.Contains(docs, id) {
			t.Errorf("%s is still indexed", id)
		}
	}
	if held, _ := cache.Get(t.Context()); slices.Contains(held.WorkPackages[p], gone) || slices.Contains(held.Internal[p], gone) {
		t.Error("the kept holdings still hold the deleted work package")
	}
}

// twoProjects returns the first two projects, by id, with work packages
// held in h.
func twoProjects(t *testing.T, h *access.Holdings) (int64, int64) {
	t.Helper()
	ps := slices.Sorted(maps.Keys(h.WorkPackages))
	if len(ps) < 2 {
		t.Fatalf("test data: work packages in %d projects", len(ps))
	}
	return ps[0], ps[1]
}

// openShared opens an empty shared store of the instance at base.
func openShared(t testing.TB, base string) *sync.User {
	t.Helper()
	u, err := sync.OpenShared(t.Context(), t.TempDir(), base, sync.UserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	return u
}

// TestDeriveShowsNoMoreThanAnswersAllow: answers derived against what a
// store holds later (another replica's holdings, or newer ones) show
// nothing they did not grant. A work package entering a project shown
// wholesale breaks the count the grant rested on, so the project's work
// packages stay hidden until the answers are asked again; one the
// listing names shows once the store holds it.
func TestDeriveShowsNoMoreThanAnswersAllow(t *testing.T) {
	a := &access.Answers{
		Projects: []int64{1, 2},
		Counts:   map[int64]int{1: 2, 2: 1},
		Listing:  access.Listing{Counts: map[int64]int{2: 1}, IDs: []int64{21}},
		Probes:   map[int64]access.Probe{},
	}
	held := &access.Holdings{WorkPackages: map[int64][]int64{1: {11, 12}, 2: {21, 22}}}
	v := access.Derive(a, held)
	if !slices.Equal(v.Visibility.Docs, []string{indexer.DocID(kind.WorkPackage, 21)}) {
		t.Errorf("listed documents: %v, want work package 21 alone", v.Visibility.Docs)
	}
	if !slices.ContainsFunc(v.Visibility.Partial, func(pk indexer.ProjectKinds) bool {
		return pk.Project == 1 && slices.Contains(pk.Kinds, kind.WorkPackage)
	}) {
		t.Errorf("project 1's work packages are not shown wholesale: %+v", v.Visibility.Partial)
	}

	later := &access.Holdings{WorkPackages: map[int64][]int64{1: {11, 12, 13}, 2: {21, 22}}}
	w := access.Derive(a, later)
	for _, pk := range w.Visibility.Partial {
		if pk.Project == 1 && slices.Contains(pk.Kinds, kind.WorkPackage) {
			t.Errorf("after work package 13 entered project 1 the answers still show its work packages wholesale: %+v", pk)
		}
	}
	for _, p := range w.Visibility.Projects {
		if p == 1 {
			t.Error("project 1 is shown whole")
		}
	}

	lacking := &access.Holdings{WorkPackages: map[int64][]int64{1: {11, 12}, 2: {22}}}
	if m := access.Derive(a, lacking); !slices.Equal(m.Missing, []string{indexer.DocID(kind.WorkPackage, 21)}) || len(m.Visibility.Docs) != 0 {
		t.Errorf("with work package 21 not held: missing %v, shown %v; want it missing and nothing shown", m.Missing, m.Visibility.Docs)
	}
}

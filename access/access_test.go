package access_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
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
	u, err := sync.OpenShared(t.Context(), t.TempDir(), base, sync.UserOptions{})
	if err != nil {
		t.Fatalf("open shared store: %v", err)
	}
	t.Cleanup(func() { _ = u.Close() })
	for _, key := range keys {
		c := client(t, base, key)
		me, err := c.Me(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w, err := u.SharedWorker(c, me.ID, nil, sync.Options{})
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

// TestEnteredHidesNewDocuments: a work package that entered a project
// the view shows wholesale stays hidden until the next computation.
func TestEnteredHidesNewDocuments(t *testing.T) {
	srv, base := optesting.Start(t, opgen.Generate(mixed), optest.Options{})
	_ = srv
	shared := synced(t, base, optest.AdminKey)
	held, err := access.HoldingsOf(t.Context(), shared.Store)
	if err != nil {
		t.Fatal(err)
	}
	v, err := access.Compute(t.Context(), client(t, base, optest.AliceKey), held, nil, access.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const p = 1
	wps := held.WorkPackages[p]
	if len(wps) == 0 {
		t.Fatal("test data: project 1 has no work packages")
	}
	before := allDocs(t, shared.Index, v.Visibility)
	doc := indexer.DocID(kind.WorkPackage, wps[0])
	if !slices.Contains(before, doc) {
		t.Fatalf("test data: alice does not see %s", doc)
	}
	w := v.Entered(p, kind.WorkPackage, wps[0])
	if w == v {
		t.Fatal("Entered returned the same view for a project shown wholesale")
	}
	after := allDocs(t, shared.Index, w.Visibility)
	if slices.Contains(after, doc) || len(after) != len(before)-1 {
		t.Errorf("after Entered: %d documents (before %d), %s visible: %v", len(after), len(before), doc, slices.Contains(after, doc))
	}
	if got := allDocs(t, shared.Index, v.Visibility); !slices.Equal(got, before) {
		t.Error("Entered changed the view it was called on")
	}
	// A project the view does not show wholesale: nothing to hide.
	if v.Entered(9999, kind.WorkPackage, 1) != v {
		t.Error("Entered made a new view for a project the user does not see")
	}
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

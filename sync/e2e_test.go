package sync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// End-to-end tests: fake OpenProject → real client → OpenUser (real
// bbolt store, real bleve index on disk) → Worker.Sync, asserting on the
// store and on what the index finds.

// e2e is a fake server and a data directory for alice.
type e2e struct {
	srv  *optest.Server
	base string
	data string
	opts UserOptions
}

func newE2E(t testing.TB, d *optest.Dataset, sopts optest.Options, wopts Options) *e2e {
	t.Helper()
	srv, base := optesting.Start(t, d, sopts)
	return &e2e{srv: srv, base: base, data: t.TempDir(),
		opts: UserOptions{LockTimeout: 200 * time.Millisecond, WorkerOptions: wopts}}
}

// open opens alice's data through a real client (rt wraps its transport
// if set) and closes it when the test ends.
func (e *e2e) open(t testing.TB, rt func(http.RoundTripper) http.RoundTripper) *User {
	t.Helper()
	u, err := OpenUser(t.Context(), e.data, newClient(t, e.base, optest.AliceKey, rt), e.opts)
	if err != nil {
		t.Fatalf("open user: %v", err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

func syncUser(t testing.TB, u *User) Report {
	t.Helper()
	rep, err := u.Worker.Sync(t.Context())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return rep
}

// indexIDs lists every document in the index by kind, through the
// search API with an empty query (match all), page by page.
func indexIDs(t testing.TB, idx indexer.Index) map[kind.Kind][]int64 {
	t.Helper()
	out := map[kind.Kind][]int64{}
	const size = 1000
	for from := 0; ; from += size {
		res, err := idx.Search(context.Background(), indexer.SearchOptions{From: from, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out[h.Kind] = append(out[h.Kind], h.EntityID)
		}
		if len(res.Hits) < size {
			break
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// find returns the document ids an exact search for q finds.
func find(t testing.TB, idx indexer.Index, q string) []string {
	t.Helper()
	res, err := idx.Search(context.Background(), indexer.SearchOptions{Query: q, Mode: indexer.MatchExact, Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// checkIndexEqualsStore asserts that the index holds exactly one document
// per stored entity of every kind, and that its counts agree.
func checkIndexEqualsStore(t testing.TB, u *User) map[kind.Kind][]int64 {
	t.Helper()
	got := indexIDs(t, u.Index)
	counts, err := u.Index.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range indexer.Kinds() {
		want := storedIDs(t, u.Store, k)
		if !slices.Equal(got[k], want) {
			t.Errorf("%s: index has %d documents, store %d (index head %v, store head %v)", k, len(got[k]), len(want), head(got[k]), head(want))
		}
		if counts[k] != uint64(len(want)) {
			t.Errorf("%s: index counts %d, store %d", k, counts[k], len(want))
		}
	}
	if reason, err := IndexMismatch(context.Background(), u.Store, u.Index); err != nil || reason != "" {
		t.Errorf("IndexMismatch = %q, %v", reason, err)
	}
	return got
}

// checkVisibleE2E asserts store and index hold what alice can see.
func checkVisibleE2E(t testing.TB, e *e2e, u *User) {
	t.Helper()
	want := visible(e.srv.Dataset(), optest.AliceKey)
	for _, k := range indexer.Kinds() {
		if got := storedIDs(t, u.Store, k); !slices.Equal(got, want[k]) {
			t.Errorf("%s: stored %d ids, alice sees %d", k, len(got), len(want[k]))
		}
	}
	checkIndexEqualsStore(t, u)
}

func TestE2EFullAndUnchangedSync(t *testing.T) {
	e := newE2E(t, opgen.Generate(smallGen), optest.Options{}, Options{})
	u := e.open(t, nil)
	if u.Identity.UserID == 0 || u.Identity.BaseURL != e.base {
		t.Errorf("identity %+v", u.Identity)
	}
	rep := syncUser(t, u)
	t.Logf("first sync: %d requests", rep.Requests)
	checkVisibleE2E(t, e, u)

	// The generator writes bob's codename "Kestrel" into his private
	// project's texts and alice's "Nightingale" into hers.
	if ids := find(t, u.Index, "Kestrel"); len(ids) != 0 {
		t.Errorf("alice's index finds bob's private codename in %v", ids)
	}
	if ids := find(t, u.Index, "Nightingale"); len(ids) == 0 {
		t.Error("alice's index does not find her own codename")
	}

	before := indexIDs(t, u.Index)
	beforeStore := dump(t, u.Store)
	e.srv.ResetRequests()
	rep = syncUser(t, u)
	got, limit := e.srv.TotalRequests(), e.opts.WorkerOptions.UnchangedSyncRequests()
	t.Logf("unchanged sync: %d requests (bound %d): %v", got, limit, e.srv.Requests())
	if got > limit || rep.Requests != got {
		t.Errorf("unchanged sync made %d requests (worker counted %d), bound %d", got, rep.Requests, limit)
	}
	for k, kr := range rep.Kinds {
		if kr.Updated != 0 || kr.Deleted != 0 {
			t.Errorf("unchanged sync changed %s: %+v", k, kr)
		}
	}
	after := checkIndexEqualsStore(t, u)
	for _, k := range indexer.Kinds() {
		if !slices.Equal(before[k], after[k]) {
			t.Errorf("unchanged sync changed the %s documents", k)
		}
	}
	if d := diffMaps(beforeStore, dump(t, u.Store)); len(d) > 0 {
		t.Errorf("unchanged sync changed the store at %v", d)
	}
}

// editAgendaNotes appends word to the notes of the first agenda item of
// a visible meeting other than skip, and returns the meeting.
func editAgendaNotes(t testing.TB, srv *optest.Server, skip int64, word string) int64 {
	t.Helper()
	d := srv.Dataset()
	vis := visible(d, optest.AliceKey)[kind.Meeting]
	for _, m := range d.Meetings {
		if m.ID == skip || len(m.AgendaItems) == 0 || !slices.Contains(vis, m.ID) {
			continue
		}
		if err := srv.UpdateMeeting(m.ID, func(m *openproject.Meeting) {
			m.AgendaItems[0].Notes += " " + word + " follow-up"
		}); err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	t.Fatal("no visible meeting with agenda items")
	return 0
}

// changeScenario applies the acceptance changes, syncs and checks that the
// index follows them; it returns the requests the sync made and their
// bound.
func changeScenario(t testing.TB, e *e2e, u *User) (got, limit int) {
	t.Helper()
	ev := &env{srv: e.srv, base: e.base, st: u.Store, w: u.Worker, opts: e.opts.WorkerOptions}
	subjectWP, commentWP, deletedWP, newWiki, deletedWiki, meeting := applyChanges(t.(*testing.T), ev)
	notesMeeting := editAgendaNotes(t, e.srv, meeting, "Axolotl")

	e.srv.ResetRequests()
	syncUser(t, u)
	got = e.srv.TotalRequests()
	// One 404 only marks a wiki page missing; the next sync confirms it.
	checkWikiDeletionPending(t, u.Store, deletedWiki)
	syncUser(t, u)
	checkVisibleE2E(t, e, u)

	wantFound := map[string]string{
		"Quokka":   indexer.DocID(kind.WorkPackage, subjectWP),
		"wombat":   indexer.DocID(kind.WorkPackage, commentWP),
		"Platypus": indexer.DocID(kind.WikiPage, newWiki),
		"Echidna":  indexer.DocID(kind.Meeting, meeting),
		"Axolotl":  indexer.DocID(kind.Meeting, notesMeeting),
	}
	for q, id := range wantFound {
		if ids := find(t, u.Index, q); !slices.Equal(ids, []string{id}) {
			t.Errorf("search %q found %v, want [%s]", q, ids, id)
		}
	}
	ids := indexIDs(t, u.Index)
	if slices.Contains(ids[kind.WorkPackage], deletedWP) {
		t.Errorf("deleted work package %d still indexed", deletedWP)
	}
	if slices.Contains(ids[kind.WikiPage], deletedWiki) {
		t.Errorf("deleted wiki page %d still indexed", deletedWiki)
	}

	// Proportional to the changes: 2 activity fetches, 2 agenda fetches,
	// 3 extra probes past the new wiki page, the id listing (plus the
	// count that triggered it), 1 deletion check, and the attachment
	// lists of the 5 changed containers (2 work packages, 2 meetings, the
	// new page); no file is downloaded again.
	pageSize := e.opts.WorkerOptions.withDefaults().PageSize
	wpPages := (len(visible(e.srv.Dataset(), optest.AliceKey)[kind.WorkPackage]) + 1 + pageSize - 1) / pageSize
	limit = e.opts.WorkerOptions.UnchangedSyncRequests() + 2 + 2 + 3 + wpPages + 1 + 5
	if got > limit {
		t.Errorf("change sync made %d requests, bound %d: %v", got, limit, e.srv.Requests())
	}
	return got, limit
}

func TestE2EChangesSearchable(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(smallGen), optest.Options{}, Options{PageSize: 50})
	u := e.open(t, nil)
	syncUser(t, u)
	syncUser(t, u) // the recheck position moves off zero
	got, limit := changeScenario(t, e, u)
	t.Logf("change sync: %d requests (bound %d)", got, limit)
}

func TestE2ECancellationConverges(t *testing.T) {
	gen := opgen.GenOptions{Seed: 11, WorkPackages: 150, WikiPages: 20, Meetings: 10}
	wopts := Options{PageSize: 40, WikiDeepMissRun: 60}
	ref := newE2E(t, opgen.Generate(gen), optest.Options{}, wopts)
	ru := ref.open(t, nil)
	ref.srv.ResetRequests()
	syncUser(t, ru)
	total := ref.srv.TotalRequests()
	want, wantIDs := dump(t, ru.Store), checkIndexEqualsStore(t, ru)
	wantCounts, _ := ru.Index.Count(t.Context())

	points := 0
	// Every cancellation point costs a sync; short mode (the race run)
	// samples fewer of them.
	samples := int64(20)
	if testing.Short() {
		samples = 2
	}
	for k := int64(0); k < int64(total)+5; k += max(1, int64(total)/samples) {
		e := &e2e{srv: ref.srv, base: ref.base, data: t.TempDir(), opts: ref.opts}
		ctx, cancel := context.WithCancel(t.Context())
		// k+1: the first request is OpenUser's /users/me.
		ca := &cancelAfter{k: k + 1, cancel: cancel}
		u := e.open(t, func(rt http.RoundTripper) http.RoundTripper { ca.base = rt; return ca })
		_, err := u.Worker.Sync(ctx)
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: cancelled sync: %v", k, err)
		}
		if err := u.Close(); err != nil {
			t.Fatalf("k=%d: close: %v", k, err)
		}
		// Reopen as a new process would, and finish with a clean sync.
		u = e.open(t, nil)
		if err := u.WaitRebuild(t.Context()); err != nil {
			t.Fatalf("k=%d: rebuild: %v", k, err)
		}
		syncUser(t, u)
		if d := diffMaps(want, dump(t, u.Store)); len(d) > 0 {
			t.Fatalf("k=%d: store differs from uninterrupted sync at %v", k, d)
		}
		got := checkIndexEqualsStore(t, u)
		for _, dk := range indexer.Kinds() {
			if !slices.Equal(got[dk], wantIDs[dk]) {
				t.Fatalf("k=%d: %s documents differ from uninterrupted sync", k, dk)
			}
		}
		if counts, _ := u.Index.Count(t.Context()); !mapsEqual(counts, wantCounts) {
			t.Fatalf("k=%d: counts %v, uninterrupted %v", k, counts, wantCounts)
		}
		for _, q := range []string{"Nightingale", "Kestrel"} {
			if a, b := find(t, u.Index, q), find(t, ru.Index, q); !slices.Equal(a, b) {
				t.Fatalf("k=%d: %q finds %d documents, uninterrupted %d", k, q, len(a), len(b))
			}
		}
		u.Close()
		points++
	}
	t.Logf("%d cancellation points over %d requests", points, total)
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestE2ERebuildFromStore(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(smallGen), optest.Options{}, Options{})
	u := e.open(t, nil)
	syncUser(t, u)
	want := checkIndexEqualsStore(t, u)
	dir := u.Dir
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}

	reopen := func(name string) {
		t.Helper()
		var calls atomic.Int64
		e.opts.RebuildProgress = func(done, total int) { calls.Add(1) }
		e.srv.ResetRequests()
		u := e.open(t, nil)
		if err := u.WaitRebuild(t.Context()); err != nil {
			t.Fatalf("%s: rebuild: %v", name, err)
		}
		if calls.Load() == 0 {
			t.Fatalf("%s: no rebuild ran", name)
		}
		if busy, reason := u.Rebuilding(); busy || reason != "" {
			t.Errorf("%s: after rebuild: %v %q", name, busy, reason)
		}
		// OpenUser asks /users/me once; the rebuild itself asks nothing.
		if n, me := e.srv.TotalRequests(), e.srv.RequestCount("/api/v3/users/me"); n != me || me != 1 {
			t.Errorf("%s: %d requests, %d of them /users/me: %v", name, n, me, e.srv.Requests())
		}
		got := checkIndexEqualsStore(t, u)
		for _, k := range indexer.Kinds() {
			if !slices.Equal(got[k], want[k]) {
				t.Errorf("%s: rebuilt %s documents differ", name, k)
			}
		}
		if ids := find(t, u.Index, "Nightingale"); len(ids) == 0 {
			t.Errorf("%s: rebuilt index does not find alice's codename", name)
		}
		// The worker syncs again once the rebuild is done.
		syncUser(t, u)
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// 1. The index directory is gone.
	if err := os.RemoveAll(filepath.Join(dir, IndexDirName)); err != nil {
		t.Fatal(err)
	}
	reopen("deleted index")

	// 2. The index was built with another mapping version.
	meta := filepath.Join(dir, IndexDirName, "opsearch_meta.json")
	if err := os.WriteFile(meta, []byte(`{"mappingVersion":-1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reopen("mapping version")

	// 3. A document went missing (counts disagree).
	idx, err := indexer.Open(filepath.Join(dir, IndexDirName), indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Delete(t.Context(), indexer.DocID(kind.WorkPackage, want[kind.WorkPackage][0])); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	reopen("count mismatch")

	// 4. Offline: OpenLocal never calls the API and rebuilds before it
	// returns, so a search right after a mapping change answers.
	if err := os.WriteFile(meta, []byte(`{"mappingVersion":-1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetRequests()
	var progress atomic.Int64
	lu, err := OpenLocal(t.Context(), e.data, "", 0, UserOptions{RebuildProgress: func(done, total int) { progress.Store(int64(done)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer lu.Close()
	if n := e.srv.TotalRequests(); n != 0 {
		t.Errorf("OpenLocal made %d requests", n)
	}
	if lu.Worker != nil {
		t.Error("OpenLocal returned a worker")
	}
	if busy, _ := lu.Rebuilding(); busy || progress.Load() == 0 {
		t.Errorf("OpenLocal: rebuilding %v, progress %d", busy, progress.Load())
	}
	if needs, why := lu.Index.NeedsRebuild(); needs {
		t.Errorf("OpenLocal left the index needing a rebuild: %s", why)
	}
	if lu.Identity != u.Identity {
		t.Errorf("OpenLocal identity %+v, want %+v", lu.Identity, u.Identity)
	}
	checkIndexEqualsStore(t, lu)
}

func TestE2EOpenErrors(t *testing.T) {
	e := newE2E(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 10, WikiPages: 2, Meetings: 2}), optest.Options{}, Options{})
	u := e.open(t, nil)

	// A second opener fails fast and says why, and which process holds
	// the files.
	_, err := OpenUser(t.Context(), e.data, newClient(t, e.base, optest.AliceKey, nil), e.opts)
	var le *LockedError
	holder := fmt.Sprintf("another opsearch process (pid %d, opsearch, since ", os.Getpid())
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || !errors.Is(err, store.ErrLocked) ||
		!strings.HasPrefix(err.Error(), holder) || !strings.HasSuffix(err.Error(), ") is using "+u.Dir) {
		t.Fatalf("second OpenUser: %v", err)
	}
	if _, err := OpenLocal(t.Context(), e.data, "", 0, e.opts); !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenLocal while open: %v", err)
	}
	u.Close()

	// Bob gets his own directory; then the choice must be explicit.
	bu, err := OpenUser(t.Context(), e.data, newClient(t, e.base, optest.BobKey, nil), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if bu.Dir == u.Dir {
		t.Fatal("alice and bob share a directory")
	}
	bobID := bu.Identity.UserID
	bu.Close()

	_, err = OpenLocal(t.Context(), e.data, "", 0, e.opts)
	var ce *ChooseUserError
	if !errors.As(err, &ce) || !errors.Is(err, ErrNoLocalUser) || len(ce.Candidates) != 2 || !strings.Contains(err.Error(), "--user") {
		t.Fatalf("ambiguous OpenLocal: %v; want both users and the --user flag named", err)
	}
	t.Logf("ambiguous: %v", err)
	lu, err := OpenLocal(t.Context(), e.data, e.base, bobID, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if lu.Identity.UserID != bobID {
		t.Errorf("OpenLocal picked %+v", lu.Identity)
	}
	lu.Close()
	if lu, err = OpenLocal(t.Context(), e.data, "", u.Identity.UserID, e.opts); err != nil || lu.Dir != u.Dir {
		t.Fatalf("OpenLocal by user id: %v", err)
	}
	lu.Close()
	if _, err := OpenLocal(t.Context(), e.data, "https://other.example.com", 0, e.opts); !errors.As(err, &ce) || len(ce.Candidates) != 2 {
		t.Fatalf("OpenLocal for an unknown instance: %v", err)
	}
	if _, err := OpenLocal(t.Context(), t.TempDir(), "", 0, e.opts); !errors.As(err, &ce) || len(ce.Candidates) != 0 {
		t.Fatalf("OpenLocal on an empty data dir: %v", err)
	}

	// A store moved into another user's directory is refused.
	bobDir, _ := store.UserDir(e.data, e.base, bobID)
	if err := os.RemoveAll(u.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bobDir, u.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenUser(t.Context(), e.data, newClient(t, e.base, optest.AliceKey, nil), e.opts); !errors.Is(err, ErrIdentityMismatch) {
		t.Fatalf("OpenUser on bob's store: %v", err)
	}
}

func TestE2ELegacyProfile(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(smallGen), optest.Options{Profile: optest.ProfileLegacy}, Options{})
	u := e.open(t, nil)
	rep := syncUser(t, u)
	if !rep.Kinds[kind.Meeting].Unsupported {
		t.Error("meetings not reported unsupported")
	}
	ms, _ := u.Store.SyncState(kind.Meeting)
	if !ms.Unsupported || ms.Note == "" || !ms.Complete || ms.LastError != "" {
		t.Errorf("meeting state: %+v", ms)
	}
	ws, _ := u.Store.SyncState(kind.WikiPage)
	if ws.Note != noWikiText || !ws.Complete {
		t.Errorf("wiki state: %+v", ws)
	}
	// Alice sees meetings the legacy server cannot list; everything else
	// must be there.
	want := visible(e.srv.Dataset(), optest.AliceKey)
	for _, k := range []kind.Kind{kind.Project, kind.WorkPackage, kind.WikiPage} {
		if got := storedIDs(t, u.Store, k); !slices.Equal(got, want[k]) {
			t.Errorf("%s: stored %d ids, alice sees %d", k, len(got), len(want[k]))
		}
	}
	checkIndexEqualsStore(t, u)
	if n := indexIDs(t, u.Index)[kind.Meeting]; len(n) != 0 {
		t.Errorf("legacy index has %d meetings", len(n))
	}
	if n := indexIDs(t, u.Index)[kind.WikiPage]; len(n) == 0 {
		t.Error("legacy wiki pages not indexed by title")
	}
}

func TestE2ELarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large data set")
	}
	gen := opgen.GenOptions{Seed: 42, WorkPackages: 10000, Comments: 30000, WikiPages: 300, Meetings: 200}
	e := newE2E(t, opgen.Generate(gen), optest.Options{}, Options{})
	u := e.open(t, nil)
	start := time.Now()
	rep := syncUser(t, u)
	t.Logf("first sync: %d requests in %v (worker %v)", rep.Requests, time.Since(start).Round(time.Millisecond), rep.Duration.Round(time.Millisecond))
	checkVisibleE2E(t, e, u)
	counts, _ := u.Index.Count(t.Context())
	t.Logf("index: %v", counts)

	e.srv.ResetRequests()
	rep = syncUser(t, u)
	got, limit := e.srv.TotalRequests(), e.opts.WorkerOptions.UnchangedSyncRequests()
	t.Logf("unchanged sync: %d requests (bound %d) in %v", got, limit, rep.Duration.Round(time.Millisecond))
	if got > limit {
		t.Errorf("unchanged sync: %d requests, bound %d", got, limit)
	}

	start = time.Now()
	got, limit = changeScenario(t, e, u)
	t.Logf("change sync: %d requests (bound %d) in %v", got, limit, time.Since(start).Round(time.Millisecond))

	// A rebuild from the store of the whole corpus, for scale.
	dir := u.Dir
	u.Close()
	if err := os.RemoveAll(filepath.Join(dir, IndexDirName)); err != nil {
		t.Fatal(err)
	}
	e.srv.ResetRequests()
	start = time.Now()
	u = e.open(t, nil)
	if err := u.WaitRebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("rebuild from store: %v, %d requests (the /users/me of OpenUser)", time.Since(start).Round(time.Millisecond), e.srv.TotalRequests())
	checkIndexEqualsStore(t, u)
}

// TestE2EDamagedStore: a damaged store.db makes an offline open fail
// with what is wrong and what will fix it; OpenUser sets it aside, starts
// an empty store, and the next sync crawls everything again.
func TestE2EDamagedStore(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	e := newE2E(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 400, Comments: 200, WikiPages: 4, Meetings: 3}), optest.Options{}, Options{})
	u, err := OpenUser(t.Context(), e.data, newClient(t, e.base, optest.AliceKey, nil), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	syncUser(t, u)
	want := storedIDs(t, u.Store, kind.WorkPackage)
	dir := u.Dir
	u.Close()

	path := filepath.Join(dir, store.FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, fi.Size()/2), fi.Size()/4); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if _, err := OpenLocal(t.Context(), e.data, "", 0, e.opts); !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), "sets it aside and crawls again") {
		t.Fatalf("OpenLocal on a damaged store: %v", err)
	}
	u = e.open(t, nil)
	if n, _ := u.Store.Count(kind.WorkPackage); n != 0 {
		t.Fatalf("the store opened after setting the damaged one aside holds %d work packages", n)
	}
	aside, _ := filepath.Glob(path + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("set-aside files %v, want one", aside)
	}
	if err := u.WaitRebuild(t.Context()); err != nil {
		t.Fatal(err)
	}
	syncUser(t, u)
	if got := storedIDs(t, u.Store, kind.WorkPackage); !slices.Equal(got, want) {
		t.Errorf("after the re-crawl %d work packages, want %d", len(got), len(want))
	}
}

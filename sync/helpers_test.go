package sync

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	gosync "sync"
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

// memIndex is a fast stand-in for the bleve index: it records the
// documents by id, so tests can compare them field by field. The
// acceptance cases also run against the real index in e2e_test.go.
type memIndex struct {
	mu      gosync.Mutex
	docs    map[string]indexer.Document
	settles int // Settle calls
	// largest is the most documents one Index call brought.
	largest int
}

func newMemIndex() *memIndex { return &memIndex{docs: map[string]indexer.Document{}} }

func (m *memIndex) Index(ctx context.Context, docs ...indexer.Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.largest = max(m.largest, len(docs))
	for _, d := range docs {
		m.docs[d.ID] = d
	}
	return nil
}

func (m *memIndex) Delete(ctx context.Context, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		delete(m.docs, id)
	}
	return nil
}

// Settle has nothing to reorganise in a map; it counts the calls.
func (m *memIndex) Settle(context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settles++
	return false, nil
}

func (m *memIndex) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for id, d := range m.docs {
		b, _ := json.Marshal(d)
		out[id] = string(b)
	}
	return out
}

// newClient returns a real client for key; rt, if set, wraps the default
// transport. Backoff sleeps are skipped.
func newClient(t testing.TB, base, key string, rt func(http.RoundTripper) http.RoundTripper) *openproject.Client {
	t.Helper()
	var tr http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if rt != nil {
		tr = rt(tr)
	}
	c, err := openproject.New(openproject.Config{
		BaseURL: base, APIKey: key, HTTPClient: &http.Client{Transport: tr},
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// env is a fake server with a worker syncing alice's view into a fresh
// store and index.
type env struct {
	srv  *optest.Server
	base string
	st   *store.Store
	idx  *memIndex
	w    *Worker
	opts Options
}

func newEnv(t testing.TB, gen opgen.GenOptions, sopts optest.Options, opts Options) *env {
	t.Helper()
	srv, base := optesting.Start(t, opgen.Generate(gen), sopts)
	e := &env{srv: srv, base: base, st: openStore(t), idx: newMemIndex(), opts: opts}
	e.w = NewWorker(newClient(t, base, optest.AliceKey, nil), e.st, e.idx, opts)
	return e
}

func (e *env) sync(t testing.TB) Report {
	t.Helper()
	rep, err := e.w.Sync(t.Context())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return rep
}

// visible is what alice can see in the fake's current data, per kind.
func visible(d *optest.Dataset, key string) map[kind.Kind][]int64 {
	var u optest.User
	for _, x := range d.Users {
		if x.APIKey == key {
			u = x
		}
	}
	sees := map[int64]bool{}
	for _, p := range d.Projects {
		if u.Admin || p.Public || slices.Contains(p.Members, u.ID) {
			sees[p.ID] = true
		}
	}
	out := map[kind.Kind][]int64{}
	for id := range sees {
		out[kind.Project] = append(out[kind.Project], id)
	}
	for _, wp := range d.WorkPackages {
		if sees[wp.Project.ID] {
			out[kind.WorkPackage] = append(out[kind.WorkPackage], wp.ID)
		}
	}
	for _, p := range d.WikiPages {
		if sees[p.Project.ID] {
			out[kind.WikiPage] = append(out[kind.WikiPage], p.ID)
		}
	}
	for _, m := range d.Meetings {
		if sees[m.Project.ID] {
			out[kind.Meeting] = append(out[kind.Meeting], m.ID)
		}
	}
	// A file is visible where its container is.
	shows := map[kind.Kind]map[int64]bool{}
	for _, k := range []kind.Kind{kind.WorkPackage, kind.WikiPage, kind.Meeting} {
		shows[k] = map[int64]bool{}
		for _, id := range out[k] {
			shows[k][id] = true
		}
	}
	for _, a := range d.Attachments {
		if shows[a.ContainerKind()][a.Container.ID] {
			out[kind.Attachment] = append(out[kind.Attachment], a.ID)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func storedIDs(t testing.TB, st *store.Store, k kind.Kind) []int64 {
	t.Helper()
	ids, err := st.IDs(k)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// dump returns every stored entity as JSON, keyed by kind and id.
func dump(t testing.TB, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	put := func(k kind.Kind, id int64, v any) {
		b, _ := json.Marshal(v)
		out[string(k)+":"+itoa(id)] = string(b)
	}
	ctx := context.Background()
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(st.ScanProjects(ctx, 500, func(ps []openproject.Project) error {
		for _, p := range ps {
			put(kind.Project, p.ID, p)
		}
		return nil
	}))
	check(st.ScanWorkPackages(ctx, 500, func(ws []openproject.WorkPackage) error {
		for _, w := range ws {
			put(kind.WorkPackage, w.ID, w)
		}
		return nil
	}))
	check(st.ScanActivities(ctx, 500, func(as []store.WorkPackageActivities) error {
		for _, a := range as {
			put(kind.Activity, a.WorkPackageID, a.Activities)
		}
		return nil
	}))
	check(st.ScanWikiPages(ctx, 500, func(ps []openproject.WikiPage) error {
		for _, p := range ps {
			put(kind.WikiPage, p.ID, p)
		}
		return nil
	}))
	check(st.ScanMeetings(ctx, 500, func(ms []openproject.Meeting) error {
		for _, m := range ms {
			put(kind.Meeting, m.ID, m)
		}
		return nil
	}))
	check(st.ScanAttachments(ctx, 500, func(as []openproject.Attachment) error {
		for _, a := range as {
			put(kind.Attachment, a.ID, a)
		}
		return nil
	}))
	return out
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// diffMaps reports up to a few differing keys.
func diffMaps(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if b[k] != a[k] {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+" (extra)")
		}
	}
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}

// cancelAfter cancels a context once more than k requests started.
type cancelAfter struct {
	base   http.RoundTripper
	n      atomic.Int64
	k      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.n.Add(1) > c.k {
		c.cancel()
	}
	return c.base.RoundTrip(r)
}

// checkIndexMatchesStore asserts that the index holds exactly one document
// per stored project, work package, wiki page and meeting, built from the
// stored copy.
func checkIndexMatchesStore(t testing.TB, st *store.Store, idx *memIndex) {
	t.Helper()
	want := map[string]string{}
	err := st.View(context.Background(), func(tx *store.ReadTx) error {
		for _, k := range indexer.Kinds() {
			for _, id := range tx.IDs(k) {
				doc, found, err := docFromStore(tx, indexer.DocID(k, id))
				if err != nil || !found {
					return err
				}
				b, _ := json.Marshal(doc)
				want[doc.ID] = string(b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffMaps(want, idx.snapshot()); len(d) > 0 {
		t.Fatalf("index differs from store at %v", d)
	}
}

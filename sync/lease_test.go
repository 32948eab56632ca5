package sync

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// gate holds a client's requests after the first few until opened.
type gate struct {
	rt       http.RoundTripper
	passed   atomic.Int32
	free     int32
	held     chan struct{} // closed when a request first waits
	heldOnce atomic.Bool
	open     chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if g.passed.Add(1) > g.free {
		if g.heldOnce.CompareAndSwap(false, true) {
			close(g.held)
		}
		select {
		case <-g.open:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return g.rt.RoundTrip(r)
}

func newGate(free int32) *gate {
	return &gate{free: free, held: make(chan struct{}), open: make(chan struct{})}
}

func pgStore(t testing.TB, dsn, name string) *store.Store {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), dsn, name, store.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Two replicas with one store: while one syncs, the other's sync stops at
// once with ErrLeaseHeld; afterwards the other syncs from the first's
// cursor, so it fetches only what changed (nothing), not the whole
// instance again.
func TestSyncLeaseOneCrawlAtATime(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 120}), optest.Options{})
	g := newGate(3)
	a := NewWorker(newClient(t, base, optest.AliceKey, func(rt http.RoundTripper) http.RoundTripper { g.rt = rt; return g }),
		pgStore(t, dsn, name), newMemIndex(), Options{Lease: &SyncLease{Name: "sync", Holder: "replica-a"}})
	b := NewWorker(newClient(t, base, optest.AliceKey, nil),
		pgStore(t, dsn, name), newMemIndex(), Options{Lease: &SyncLease{Name: "sync", Holder: "replica-b"}})

	type result struct {
		rep Report
		err error
	}
	aDone := make(chan result, 1)
	go func() {
		rep, err := a.Sync(t.Context())
		aDone <- result{rep, err}
	}()
	<-g.held // a holds the lease and is mid-crawl
	if _, err := b.Sync(t.Context()); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("b's sync during a's = %v, want ErrLeaseHeld", err)
	}
	close(g.open)
	ra := <-aDone
	if ra.err != nil {
		t.Fatalf("a's sync: %v", ra.err)
	}
	if l, found, _ := b.st.LeaseHolder(t.Context(), "sync"); found {
		t.Errorf("the lease is still there after a's sync: %+v", l)
	}
	rb, err := b.Sync(t.Context())
	if err != nil {
		t.Fatalf("b's sync after a's: %v", err)
	}
	if rb.Requests*4 > ra.rep.Requests {
		t.Errorf("b made %d requests after a's %d: it did not continue from a's cursor", rb.Requests, ra.rep.Requests)
	}
}

// A replica whose lease was taken over (it stalled past its lease) stops
// its sync with ErrLeaseLost.
func TestSyncLeaseLostStopsTheSync(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 120}), optest.Options{})
	g := newGate(3)
	st := pgStore(t, dsn, name)
	a := NewWorker(newClient(t, base, optest.AliceKey, func(rt http.RoundTripper) http.RoundTripper { g.rt = rt; return g }),
		st, newMemIndex(), Options{Lease: &SyncLease{Name: "sync", Holder: "replica-a", TTL: 600 * time.Millisecond}})
	done := make(chan error, 1)
	go func() {
		_, err := a.Sync(t.Context())
		done <- err
	}()
	<-g.held
	// Another replica decides a's lease is gone (as if it had expired
	// while a stalled) and takes it.
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `UPDATE opsearch_leases SET holder = 'replica-b', expires_at = now() + interval '1 minute' WHERE store = $1`, name); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("a's sync = %v, want ErrLeaseLost", err)
		}
	case <-time.After(30 * time.Second):
		close(g.open)
		t.Fatal("a's sync went on after losing its lease")
	}
	close(g.open)
	if l, _, _ := st.LeaseHolder(t.Context(), "sync"); l.Holder != "replica-b" || !l.Held {
		t.Errorf("lease = %+v after a stopped, want replica-b's lease untouched", l)
	}
}

// A replica whose sync found the lease held takes over as soon as the
// lease expires unreleased (its holder died), not at its next tick an
// hour later; the skipped attempt is not reported as a failed sync.
func TestSchedulerTakesOverAnExpiredLease(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	_, base := optesting.Start(t, opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 60}), optest.Options{})
	st := pgStore(t, dsn, name)
	const ttl = 600 * time.Millisecond
	if ok, err := st.AcquireLease(t.Context(), "sync", "replica-that-died", ttl); err != nil || !ok {
		t.Fatal(ok, err)
	}
	w := NewWorker(newClient(t, base, optest.AliceKey, nil), st, newMemIndex(),
		Options{Lease: &SyncLease{Name: "sync", Holder: "replica-b", TTL: ttl}})
	synced := make(chan error, 10)
	s, err := NewScheduler(w, SchedulerOptions{Spec: "@every 1h", NoJitter: true,
		OnSync: func(_ Report, err error) { synced <- err }})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	defer s.Stop()
	select {
	case err := <-synced:
		if err != nil {
			t.Fatalf("first reported sync: %v (a skip for a held lease is no failure)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the replica never took the expired lease over")
	}
	if n, _ := st.Count("work_package"); n == 0 {
		t.Error("the sync that took over stored nothing")
	}
}

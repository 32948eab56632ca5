package sync

import (
	"context"
	"errors"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/store"
)

// Two replicas of one instance share its store in PostgreSQL, each with
// its own index: what one crawls, the other's index holds once it has
// followed the store, document for document; and a replica that starts
// later builds its index from the store without a crawl of its own.
func TestReplicasShareTheStore(t *testing.T) {
	dsn := pgtest.Schema(t) // the store is named by the instance
	ds := opgen.Generate(opgen.GenOptions{Seed: 11, WorkPackages: 150})
	_, base := optesting.Start(t, ds, optest.Options{})
	ctx := t.Context()
	opts := UserOptions{StoreURL: dsn}
	open := func() *User {
		t.Helper()
		u, err := OpenShared(ctx, filepath.Join(t.TempDir(), "data"), base, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = u.Close() })
		if u.Follower == nil {
			t.Fatal("a store in PostgreSQL opened without a Follower")
		}
		return u
	}
	a, b := open(), open()

	admin := newClient(t, base, optest.AdminKey, nil)
	me, err := admin.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := a.SharedWorker(admin, Shared{Owner: me.ID, Admin: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.opts.Lease == nil {
		t.Fatal("a replica's worker syncs without a lease")
	}
	if _, err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	gen, err := a.Store.Generation()
	if err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	bCtx, stopB := context.WithCancel(runCtx)
	bDone := make(chan struct{})
	go func() { _ = a.Follower.Run(runCtx) }()
	go func() { defer close(bDone); _ = b.Follower.Run(bCtx) }()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, u := range []*User{a, b} {
		if err := u.Follower.WaitApplied(wctx, gen); err != nil {
			t.Fatal(err)
		}
	}
	c := open() // started after the crawl: builds from the store

	want, err := a.Index.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range indexer.Kinds() {
		n, _ := a.Store.Count(k)
		if want[k] != uint64(n) {
			t.Errorf("replica a's index holds %d %s documents, the store %d", want[k], k, n)
		}
	}
	if want["work_package"] == 0 {
		t.Fatal("the crawl stored no work packages")
	}
	for name, u := range map[string]*User{"b": b, "c": c} {
		got, err := u.Index.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range indexer.Kinds() {
			if got[k] != want[k] {
				t.Errorf("replica %s holds %d %s documents, a %d", name, got[k], k, want[k])
			}
		}
	}
	wp := ds.WorkPackages[17]
	for name, u := range map[string]*User{"a": a, "b": b, "c": c} {
		res, err := u.Index.Search(ctx, indexer.SearchOptions{Query: wp.Subject, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range res.Hits {
			found = found || h.ID == indexer.DocID("work_package", wp.ID)
		}
		if !found {
			t.Errorf("replica %s does not find work package %d by its subject %q", name, wp.ID, wp.Subject)
		}
	}
	// Read-your-writes across replicas: a comment added through a (its
	// refresh commits to the store) shows in the user's next search on
	// b, which waits until b's follower, woken by the commit, applied it.
	// b's follower is stopped first: the wait must then time out, which
	// shows it waits for the write rather than for nothing.
	stopB()
	<-bDone
	if _, err := admin.AddComment(ctx, wp.ID, "the narwhal rollback plan lives in the runbook"); err != nil {
		t.Fatal(err)
	}
	if err := w.RefreshWorkPackage(ctx, wp.ID); err != nil {
		t.Fatal(err)
	}
	// The user as b's manager makes them: the instance's store, index and
	// follower, and their own identity.
	bUser := &User{Store: b.Store, Index: b.Index, Follower: b.Follower, Identity: store.Identity{UserID: me.ID, Shared: true}}
	short, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = bUser.AwaitOwnWrites(short)
	scancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AwaitOwnWrites with b's follower stopped = %v, want it to time out waiting", err)
	}
	go func() { _ = b.Follower.Run(runCtx) }()
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	if err := bUser.AwaitOwnWrites(rctx); err != nil {
		t.Fatal(err)
	}
	res, err := b.Index.Search(ctx, indexer.SearchOptions{Query: "narwhal rollback", Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].EntityID != wp.ID {
		t.Errorf("b's search right after a's write = %+v, want work package %d first", res.Hits, wp.ID)
	}
	// Another user's wait does not wait for it.
	other := &User{Store: b.Store, Index: b.Index, Follower: b.Follower, Identity: store.Identity{UserID: me.ID + 1000, Shared: true}}
	if err := other.AwaitOwnWrites(ctx); err != nil {
		t.Errorf("a user who wrote nothing waited: %v", err)
	}

	// While a holds the user's sync lease, b's sync of the same user
	// stops at once.
	if ok, err := a.Store.AcquireLease(ctx, w.opts.Lease.Name, w.opts.Lease.Holder, time.Minute); err != nil || !ok {
		t.Fatal(ok, err)
	}
	wb, err := b.SharedWorker(admin, Shared{Owner: me.ID, Admin: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Sync(ctx); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("b's sync while a holds the lease = %v, want ErrLeaseHeld", err)
	}
}

// A replica listens while it builds its index from the shared store, but
// serves no user until the index holds the store, and says how far the
// build has come.
func TestReplicaServesOnceBuilt(t *testing.T) {
	dsn := pgtest.Schema(t)
	ds := opgen.Generate(opgen.GenOptions{Seed: 3, Projects: 4, Users: 6, WorkPackages: 60, Comments: 60, WikiPages: 3, Meetings: 3})
	_, base := optesting.Start(t, ds, optest.Options{})
	ctx := t.Context()
	// Another replica crawled the instance before this one started.
	first, err := OpenShared(ctx, t.TempDir(), base, UserOptions{StoreURL: dsn})
	if err != nil {
		t.Fatal(err)
	}
	admin := newClient(t, base, optest.AdminKey, nil)
	me, err := admin.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := first.SharedWorker(admin, Shared{Owner: me.ID, Admin: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	_ = first.Close()

	// The new replica's build stops at its first progress report until
	// the test has looked.
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	var once gosync.Once
	uo := UserOptions{StoreURL: dsn, RebuildProgress: func(done, total int) {
		once.Do(func() { entered <- struct{}{}; <-gate })
	}}
	m, err := NewManager(ManagerOptions[*testAttachment]{
		DataDir: t.TempDir(), Schedule: "@every 1h", UserOptions: uo, Shared: &SharedOptions{BaseURL: base},
		NewClient: func(key string) (UserAPI, error) {
			return openproject.New(openproject.Config{BaseURL: base, APIKey: key, MaxAttempts: 1})
		},
		Attach: func(u *User) *testAttachment { return &testAttachment{u: u} },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Close(cctx); err != nil {
			t.Error(err)
		}
	}()
	<-entered
	st, ok := m.Follow()
	if !ok || !st.Building || st.Total == 0 {
		t.Errorf("Follow during the build = %+v, %v; want building with a total", st, ok)
	}
	if _, err := m.Acquire(ctx, optest.AliceKey); !errors.Is(err, ErrIndexBuilding) {
		t.Errorf("Acquire during the build = %v, want ErrIndexBuilding", err)
	}
	close(gate)
	deadline := time.After(30 * time.Second)
	for {
		if st, _ := m.Follow(); !st.Building {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the replica never finished building")
		case <-time.After(20 * time.Millisecond):
		}
	}
	l, err := m.Acquire(ctx, optest.AliceKey)
	if err != nil {
		t.Fatalf("Acquire once built: %v", err)
	}
	l.Release()
	n, _ := l.Attachment.u.Index.Count(ctx)
	if n["work_package"] == 0 {
		t.Error("the built index holds no work packages")
	}
}

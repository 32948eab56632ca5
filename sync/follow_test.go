package sync

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

func followWP(id int64, subject string) openproject.WorkPackage {
	return openproject.WorkPackage{
		ID: id, Subject: subject, LockVersion: 1,
		Project:   openproject.Ref{ID: 1, Href: "/api/v3/projects/1", Title: "Ops"},
		Status:    openproject.Ref{ID: 1, Title: "New"},
		Type:      openproject.Ref{ID: 1, Title: "Task"},
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// replica is one process's view of a shared PostgreSQL store: its own
// connection pool and its own local index.
type replica struct {
	st  *store.Store
	idx *indexer.Bleve
	dir string
}

func openReplicaView(t testing.TB, dsn, name string) replica {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), dsn, name, store.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	dir := t.TempDir()
	idx, err := indexer.Open(filepath.Join(dir, IndexDirName), indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return replica{st: st, idx: idx, dir: dir}
}

func hitIDs(t *testing.T, idx *indexer.Bleve, q string) map[string]bool {
	t.Helper()
	res, err := idx.Search(context.Background(), indexer.SearchOptions{Query: q, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, h := range res.Hits {
		if h.Public {
			ids[indexer.PublicDocID(h.EntityID)] = true // hitsOf names a twin by its work package
			continue
		}
		ids[h.ID] = true
	}
	return ids
}

// A replica builds its index from the store, then follows what another
// process writes: new and changed entities, comments (with a public twin
// for internal ones), deletions; it waits for a write's generation when
// asked, and a restart resumes from the recorded generation.
func TestFollowerAppliesAnotherProcesssWrites(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	writer := pgStore(t, dsn, name)
	if err := writer.SetIdentity(store.Identity{BaseURL: "http://op.example", Shared: true}); err != nil {
		t.Fatal(err)
	}
	write := func(fn func(*store.WriteTx) error) uint64 {
		t.Helper()
		if err := writer.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
		gen, err := writer.Generation()
		if err != nil {
			t.Fatal(err)
		}
		return gen
	}
	write(func(tx *store.WriteTx) error {
		return errors.Join(
			tx.PutProject(openproject.Project{ID: 1, Identifier: "ops", Name: "Ops"}),
			tx.PutWorkPackage(followWP(1, "Rotate the kestrel certificates")),
			tx.PutWorkPackage(followWP(2, "Retire the heron cluster")),
			tx.PutActivities(1, nil), tx.PutActivities(2, nil))
	})

	r := openReplicaView(t, dsn, name)
	f, known, err := OpenFollower(r.st, r.idx, r.dir, FollowerOptions{Poll: time.Hour})
	if err != nil || known {
		t.Fatalf("OpenFollower on a new replica: known=%v %v", known, err)
	}
	start, err := f.Start()
	if err != nil {
		t.Fatal(err)
	}
	if err := RebuildIndex(ctx, r.st, r.idx, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Built(start); err != nil {
		t.Fatal(err)
	}
	if !hitIDs(t, r.idx, "kestrel")["work_package:1"] {
		t.Fatal("the built index lacks work package 1")
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	}()

	gen := write(func(tx *store.WriteTx) error {
		wp := followWP(1, "Rotate the kestrel certificates before the audit")
		return errors.Join(
			tx.PutWorkPackage(wp),
			tx.PutActivities(1, []openproject.Activity{{ID: 7, Kind: "Activity::Comment", Comment: "the osprey vault holds the keys",
				Internal: true, WorkPackageID: 1}}),
			tx.PutWorkPackage(followWP(3, "Migrate the zebra queue")), tx.PutActivities(3, nil),
			tx.Delete(kind.WorkPackage, 2),
			tx.PutMeeting(openproject.Meeting{ID: 4, Title: "Pelican review", Project: openproject.Ref{ID: 1}}))
	})
	// The notification wakes Run (its poll is an hour); the wait is
	// bounded only so that a broken feed fails instead of hanging.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.WaitApplied(wctx, gen); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"zebra": "work_package:3", "audit": "work_package:1", "osprey": "work_package:1", "pelican": "meeting:4",
	} {
		if !hitIDs(t, r.idx, q)[want] {
			t.Errorf("search %q lacks %s after the follower applied generation %d", q, want, gen)
		}
	}
	if hitIDs(t, r.idx, "heron")["work_package:2"] {
		t.Error("deleted work package 2 is still found")
	}
	if !hitIDs(t, r.idx, "audit")[indexer.PublicDocID(1)] {
		t.Error("work package 1, which has an internal comment now, has no public twin")
	}
	if hitIDs(t, r.idx, "osprey")[indexer.PublicDocID(1)] {
		t.Error("the public twin holds the internal comment")
	}
	counts, err := r.idx.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range indexer.Kinds() {
		n, _ := r.st.Count(k)
		if counts[k] != uint64(n) {
			t.Errorf("index holds %d %s documents, store %d", counts[k], k, n)
		}
	}
	if lag, err := f.Lag(); err != nil || lag != 0 {
		t.Errorf("Lag = %d, %v; want 0", lag, err)
	}

	// A restarted replica resumes: it knows its generation and catches
	// up on what was written while it was down.
	stop()
	<-done
	done <- context.Canceled
	gen = write(func(tx *store.WriteTx) error {
		return errors.Join(tx.PutWorkPackage(followWP(5, "Feed the walrus")), tx.PutActivities(5, nil))
	})
	f2, known, err := OpenFollower(r.st, r.idx, r.dir, FollowerOptions{})
	if err != nil || !known || f2.Applied() < start {
		t.Fatalf("reopened follower: known=%v applied=%d %v", known, f2.Applied(), err)
	}
	n, err := f2.CatchUp(ctx)
	if err != nil || n == 0 || f2.Applied() < gen {
		t.Fatalf("CatchUp after restart: %d changes, applied %d of %d, %v", n, f2.Applied(), gen, err)
	}
	if !hitIDs(t, r.idx, "walrus")["work_package:5"] {
		t.Error("the write made while the replica was down is missing")
	}
}

// A follow file written for another store is not trusted: the index is
// built again.
func TestFollowerDistrustsAnotherStoresFile(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := openReplicaView(t, dsn, pgtest.StoreName(t))
	f, _, err := OpenFollower(a.st, a.idx, a.dir, FollowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Built(3); err != nil {
		t.Fatal(err)
	}
	b, err := store.OpenPostgres(context.Background(), dsn, pgtest.StoreName(t), store.PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, known, err := OpenFollower(b, a.idx, a.dir, FollowerOptions{}); err != nil || known {
		t.Errorf("OpenFollower of another store over the same index: known=%v %v; want unknown", known, err)
	}
}

// A replica whose index has not applied deletions that have since left
// the feed builds its index again: following would keep them.
func TestFollowerRebuildsPastPurgedDeletions(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	writer := pgStore(t, dsn, name)
	if err := writer.Update(ctx, func(tx *store.WriteTx) error {
		return errors.Join(tx.PutWorkPackage(followWP(1, "Retire the gannet relay")), tx.PutActivities(1, nil))
	}); err != nil {
		t.Fatal(err)
	}
	r := openReplicaView(t, dsn, name)
	f, _, err := OpenFollower(r.st, r.idx, r.dir, FollowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := &User{Store: r.st, Index: r.idx, Follower: f, log: slog.New(slog.DiscardHandler)}
	if err := u.catchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !hitIDs(t, r.idx, "gannet")["work_package:1"] {
		t.Fatal("the built index lacks work package 1")
	}
	// While this replica is away, the work package is deleted and every
	// other replica applies the deletion, so its tombstone goes.
	if err := writer.Update(ctx, func(tx *store.WriteTx) error { return tx.Delete(kind.WorkPackage, 1) }); err != nil {
		t.Fatal(err)
	}
	gen, _ := writer.Generation()
	if err := writer.ReportApplied(ctx, "the-other-replica", gen); err != nil {
		t.Fatal(err)
	}
	if n, _, err := writer.PurgeTombstones(ctx, time.Hour); err != nil || n == 0 {
		t.Fatalf("PurgeTombstones = %d, %v", n, err)
	}
	if err := u.catchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if hitIDs(t, r.idx, "gannet")["work_package:1"] {
		t.Error("a work package deleted while the replica was away is still found")
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/opsearch/opsearch/kind"
)

// Replicas that start at once migrate the database once, and all open.
func TestPostgresConcurrentFirstOpen(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			s, err := OpenPostgres(ctx, dsn, fmt.Sprintf("store-%d", i%2), PostgresOptions{MaxConns: 2})
			if err == nil {
				err = s.Update(ctx, func(tx *WriteTx) error { return tx.PutProject(sampleProject(int64(i + 1))) })
				_ = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var versions int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM opsearch_schema`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != len(pgMigrations) {
		t.Errorf("opsearch_schema has %d rows, want %d", versions, len(pgMigrations))
	}
	s, err := OpenPostgres(ctx, dsn, "store-0", PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Count(kind.Project); err != nil || n != 3 {
		t.Errorf("store-0 holds %d projects (%v), want the 3 its openers wrote", n, err)
	}
}

// A database migrated by a newer opsearch is refused, untouched.
func TestPostgresSchemaTooNew(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	s, err := OpenPostgres(ctx, dsn, "a", PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO opsearch_schema (version) VALUES ($1)`, len(pgMigrations)+5); err != nil {
		t.Fatal(err)
	}
	_, err = OpenPostgres(ctx, dsn, "a", PostgresOptions{})
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("OpenPostgres on a newer schema = %v, want ErrSchemaTooNew", err)
	}
}

// Two processes writing one store at once: every write lands, the counts
// stay exact, and each commit has its own generation.
func TestPostgresConcurrentWriters(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	gen0, err := a.Generation()
	if err != nil {
		t.Fatal(err)
	}
	const txs, per = 20, 10
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w, s := range []*Store{a, b} {
		wg.Go(func() {
			for i := range txs {
				err := s.Update(ctx, func(tx *WriteTx) error {
					for j := range per {
						id := int64(w*txs*per + i*per + j + 1)
						if err := tx.PutWorkPackage(sampleWorkPackage(id)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{a, b} {
		if n, err := s.Count(kind.WorkPackage); err != nil || n != 2*txs*per {
			t.Errorf("Count = %d (%v), want %d", n, err, 2*txs*per)
		}
		if ids, _ := s.IDs(kind.WorkPackage); len(ids) != 2*txs*per || ids[0] != 1 || ids[len(ids)-1] != 2*txs*per {
			t.Errorf("IDs: %d ids", len(ids))
		}
	}
	if gen, _ := b.Generation(); gen < gen0+2*txs {
		t.Errorf("generation went from %d to %d over %d commits", gen0, gen, 2*txs)
	}
}

// A dictionary one process trains is used by another that opened the
// store before it existed, and the other never trains its own.
func TestPostgresDictionaryAcrossProcesses(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	// b samples values too, so it would train its own.
	putVaried(t, b, 1, dictMinSamples+1)
	putVaried(t, a, dictMinSamples+1, 2*dictMinSamples+2)
	putVaried(t, a, 2*dictMinSamples+2, 2*dictMinSamples+100)
	d := func(s *Store) []byte {
		raw, _, _ := single(s, func(tx *ReadTx) ([]byte, bool, error) {
			key, _ := encDict(kind.WorkPackage)
			return tx.tx.bucket(bucketMeta).get(key), true, nil
		})
		return raw
	}
	before := string(d(a))
	// b writes before it has read anything that would load a's.
	putVaried(t, b, 3*dictMinSamples, 4*dictMinSamples+10)
	if after := string(d(a)); before == "" || after != before {
		t.Fatal("b replaced the dictionary a trained")
	}
	want := variedWorkPackage(2*dictMinSamples + 50)
	got, found, err := b.WorkPackage(want.ID)
	if err != nil || !found || got.Subject != want.Subject {
		t.Fatalf("b reads a's dictionary-compressed value: %v found=%v", err, found)
	}
	for _, id := range []int64{5, dictMinSamples + 5, 3*dictMinSamples + 5} {
		for _, s := range []*Store{a, b} {
			if _, found, err := s.WorkPackage(id); err != nil || !found {
				t.Errorf("WorkPackage(%d): found=%v %v", id, found, err)
			}
		}
	}
}

// A bad connection string is named without its password.
func TestPostgresErrorsHideThePassword(t *testing.T) {
	const secret = "pa55-w0rd-xyz"
	for _, dsn := range []string{
		"postgres://opsearch:" + secret + "@127.0.0.1:1/opsearch?connect_timeout=1",
		"postgres://opsearch:" + secret + "@127.0.0.1:1/opsearch?sslmode=bogus",
		"host=127.0.0.1 port=1 password=" + secret + " connect_timeout=1",
	} {
		_, err := OpenPostgres(context.Background(), dsn, "x", PostgresOptions{})
		if err == nil {
			t.Errorf("OpenPostgres(%q) succeeded", dsn)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if _, err := OpenPostgres(context.Background(), pgtest.Default, " ", PostgresOptions{}); err == nil {
		t.Error("an empty store name was accepted")
	}
}

// The change feed reports each entity a commit touched, deletions
// included, never cuts a commit, and moves past commits that touched no
// entity.
func TestPostgresChanges(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	start, err := b.Generation()
	if err != nil {
		t.Fatal(err)
	}
	update(t, a, func(tx *WriteTx) error {
		tx.SetAuthor(7)
		return errors.Join(tx.PutWorkPackage(sampleWorkPackage(1)), tx.PutWorkPackage(sampleWorkPackage(2)),
			tx.PutWorkPackage(sampleWorkPackage(3)), tx.PutActivities(1, sampleActivities(1)), tx.PutMeeting(sampleMeeting(9)))
	})
	update(t, a, func(tx *WriteTx) error { return tx.Delete(kind.WorkPackage, 2) })
	update(t, a, func(tx *WriteTx) error { return tx.SetMeta("x", []byte("y")) })
	end, _ := a.Generation()

	got, through, err := b.Changes(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if through != end {
		t.Errorf("through = %d, want the store's generation %d", through, end)
	}
	type key struct {
		k       kind.Kind
		id      int64
		deleted bool
	}
	last := map[key]bool{}
	var prev uint64
	for _, c := range got {
		if wantAuthor := int64(7); c.Kind == kind.Meeting && c.Author != wantAuthor || c.Deleted && c.Author != 0 {
			t.Errorf("change %+v: the first commit's author is 7, the deletion's none", c)
		}
		if c.Generation < prev {
			t.Errorf("changes out of generation order: %+v after %d", c, prev)
		}
		prev = c.Generation
		last[key{c.Kind, c.ID, c.Deleted}] = true
	}
	for _, want := range []key{
		{kind.WorkPackage, 1, false}, {kind.WorkPackage, 3, false}, {kind.Activity, 1, false},
		{kind.Meeting, 9, false}, {kind.WorkPackage, 2, true},
	} {
		if !last[want] {
			t.Errorf("changes lack %+v: %+v", want, got)
		}
	}
	if last[key{kind.WorkPackage, 2, false}] {
		t.Errorf("work package 2 is reported both written and deleted: the feed keeps one row per entity, its last state")
	}
	if more, again, err := b.Changes(ctx, through, 0); err != nil || len(more) != 0 || again != through {
		t.Errorf("Changes after catching up = %v, %d, %v; want none, %d", more, again, err, through)
	}

	// Two commits of five: a limit of three returns the first whole.
	for c := range 2 {
		update(t, a, func(tx *WriteTx) error {
			for i := range 5 {
				if err := tx.PutProject(sampleProject(int64(100 + c*5 + i))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	first, t1, err := b.Changes(ctx, through, 3)
	if err != nil || len(first) != 5 {
		t.Fatalf("first batch: %d changes, %v; want one whole commit of 5", len(first), err)
	}
	second, t2, err := b.Changes(ctx, t1, 3)
	if err != nil || len(second) != 5 || t2 <= t1 || second[0].ID != 105 {
		t.Fatalf("second batch: %+v through %d, %v", second, t2, err)
	}
}

// A waiter wakes on another process's commit by notification.
func TestPostgresWaitChange(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	gen, _ := b.Generation()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	woke := make(chan error, 1)
	listening := make(chan struct{})
	go func() {
		close(listening)
		// A poll far longer than the test: only the notification wakes it.
		got, err := b.WaitChange(ctx, gen, time.Hour)
		if err == nil && got <= gen {
			err = fmt.Errorf("woke at generation %d, not past %d", got, gen)
		}
		woke <- err
	}()
	<-listening
	// Keep committing until the waiter, which may not listen yet, wakes.
	for i := int64(1); ; i++ {
		update(t, a, func(tx *WriteTx) error { return tx.PutProject(sampleProject(i)) })
		select {
		case err := <-woke:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-ctx.Done():
			t.Fatal("the waiter never woke")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestChangesNeedAFeed(t *testing.T) {
	s, _ := openTemp(t)
	if _, _, err := s.Changes(context.Background(), 0, 0); !errors.Is(err, ErrNoChangeFeed) {
		t.Errorf("Changes on a bbolt store = %v, want ErrNoChangeFeed", err)
	}
	if _, err := s.WaitChange(context.Background(), 0, 0); !errors.Is(err, ErrNoChangeFeed) {
		t.Errorf("WaitChange on a bbolt store = %v, want ErrNoChangeFeed", err)
	}
}

// Tombstones go once every replica heard from recently has applied them;
// a replica silent for longer is not waited for.
func TestPostgresPurgeTombstones(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	s := openPostgresTemp(t, dsn, name)
	update(t, s, func(tx *WriteTx) error {
		return errors.Join(tx.PutProject(sampleProject(1)), tx.PutProject(sampleProject(2)), tx.PutProject(sampleProject(3)))
	})
	update(t, s, func(tx *WriteTx) error { return tx.Delete(kind.Project, 1) })
	g2, _ := s.Generation()
	update(t, s, func(tx *WriteTx) error { return tx.Delete(kind.Project, 2) })
	g3, _ := s.Generation()
	if err := errors.Join(s.ReportApplied(ctx, "r1", g2), s.ReportApplied(ctx, "r2", g3)); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO opsearch_replicas (store, replica, applied, seen_at) VALUES ($1, 'gone', 0, now() - interval '30 days')`, name); err != nil {
		t.Fatal(err)
	}
	n, through, err := s.PurgeTombstones(ctx, 7*24*time.Hour)
	if err != nil || n != 1 || through != g2 {
		t.Fatalf("PurgeTombstones = %d, %d, %v; want 1 through %d", n, through, err, g2)
	}
	if p, err := s.PurgedThrough(ctx); err != nil || p != g2 {
		t.Errorf("PurgedThrough = %d, %v; want %d", p, err, g2)
	}
	changes, _, err := s.Changes(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []int64
	for _, c := range changes {
		if c.Deleted {
			deleted = append(deleted, c.ID)
		}
	}
	if len(deleted) != 1 || deleted[0] != 2 {
		t.Errorf("deletions left in the feed: %v, want only project 2's (r1 has not applied it)", deleted)
	}
	if n, _ := s.Count(kind.Project); n != 1 {
		t.Errorf("%d projects stored, want 1", n)
	}
}

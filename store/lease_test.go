package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/pgtest"
	"github.com/opsearch/opsearch/kind"
)

// One holder at a time: renewals by the holder, refusals for others, a
// release hands it on.
func TestLeaseOneHolder(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	acquire := func(s *Store, holder string, want bool) {
		t.Helper()
		got, err := s.AcquireLease(ctx, "sync", holder, time.Minute)
		if err != nil || got != want {
			t.Fatalf("AcquireLease(%s) = %v, %v; want %v", holder, got, err, want)
		}
	}
	acquire(a, "replica-a", true)
	acquire(b, "replica-b", false)
	acquire(a, "replica-a", true) // renewal
	if l, found, err := b.LeaseHolder(ctx, "sync"); err != nil || !found || !l.Held || l.Holder != "replica-a" || time.Until(l.Expires) < 30*time.Second {
		t.Errorf("LeaseHolder = %+v (found %v, %v)", l, found, err)
	}
	// Another lease name is independent.
	if got, err := b.AcquireLease(ctx, "sync/user-7", "replica-b", time.Minute); err != nil || !got {
		t.Errorf("another lease: %v, %v", got, err)
	}
	if err := b.ReleaseLease(ctx, "sync", "replica-b"); err != nil {
		t.Fatal(err) // not b's: nothing happens
	}
	acquire(b, "replica-b", false)
	if err := a.ReleaseLease(ctx, "sync", "replica-a"); err != nil {
		t.Fatal(err)
	}
	if l, found, err := b.LeaseHolder(ctx, "sync"); err != nil || found {
		t.Errorf("LeaseHolder after the release = %+v, %v, %v; want none", l, found, err)
	}
	acquire(b, "replica-b", true)
}

// A holder that stops renewing loses the lease once it expires; its
// writes that check the lease then fail and write nothing.
func TestLeaseExpiresAndFencesTheOldHolder(t *testing.T) {
	dsn := pgtest.DSN(t)
	name := pgtest.StoreName(t)
	ctx := context.Background()
	a, b := openPostgresTemp(t, dsn, name), openPostgresTemp(t, dsn, name)
	if ok, err := a.AcquireLease(ctx, "sync", "a", 300*time.Millisecond); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := a.Update(ctx, func(tx *WriteTx) error {
		return errors.Join(tx.CheckLease("sync", "a"), tx.PutProject(sampleProject(1)))
	}); err != nil {
		t.Fatalf("write under a held lease: %v", err)
	}
	// b takes over once a's lease has run out (a does not renew: it
	// "died"): until then the lease is a's, then it is known to have
	// expired unreleased; the deadline only bounds a broken expiry.
	deadline := time.After(30 * time.Second)
	for {
		ok, err := b.AcquireLease(ctx, "sync", "b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if l, found, err := b.LeaseHolder(ctx, "sync"); err != nil || !found || l.Holder != "a" {
			t.Fatalf("LeaseHolder while b waits = %+v, %v, %v", l, found, err)
		}
		select {
		case <-deadline:
			t.Fatal("the expired lease was never taken over")
		case <-time.After(50 * time.Millisecond):
		}
	}
	err := a.Update(ctx, func(tx *WriteTx) error {
		if err := tx.CheckLease("sync", "a"); err != nil {
			return err
		}
		return tx.PutProject(sampleProject(2))
	})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("write after losing the lease = %v, want ErrLeaseLost", err)
	}
	if ok, err := a.AcquireLease(ctx, "sync", "a", time.Minute); err != nil || ok {
		t.Errorf("the old holder took the lease back from b: %v, %v", ok, err)
	}
	if n, _ := b.Count(kind.Project); n != 1 {
		t.Errorf("%d projects stored, want only the one written under the lease", n)
	}
}

func TestLeaseOnBoltAndBadArguments(t *testing.T) {
	s, _ := openTemp(t)
	ctx := context.Background()
	for _, holder := range []string{"a", "b"} {
		if ok, err := s.AcquireLease(ctx, "sync", holder, time.Minute); err != nil || !ok {
			t.Errorf("a bbolt file's lease for %s: %v, %v; want always held", holder, ok, err)
		}
	}
	if err := s.Update(ctx, func(tx *WriteTx) error { return tx.CheckLease("sync", "anyone") }); err != nil {
		t.Errorf("CheckLease on bbolt = %v", err)
	}
	for _, c := range []struct {
		name, holder string
		ttl          time.Duration
	}{{"", "a", time.Second}, {"x", " ", time.Second}, {"x", "a", -time.Second}, {"x", "a", 0}} {
		if _, err := s.AcquireLease(ctx, c.name, c.holder, c.ttl); err == nil {
			t.Errorf("AcquireLease(%q, %q, %s) accepted", c.name, c.holder, c.ttl)
		}
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A lease is a named claim on work that processes sharing a store must
// not do twice at once (one crawl of an instance, say): held by one
// holder until it expires or is released, renewed by acquiring it again
// before then. A holder that dies stops renewing, and another takes the
// lease over once it expires.
//
// On a bbolt file every lease is always the caller's: the file's lock
// already makes its one process the only one.

// ErrLeaseLost is returned by WriteTx.CheckLease when the lease is no
// longer the holder's: it expired and may be another's.
var ErrLeaseLost = errors.New("lease lost")

// leaser is what an engine shared between processes adds for leases.
type leaser interface {
	acquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	releaseLease(ctx context.Context, name, holder string) error
	leaseHolder(ctx context.Context, name string) (LeaseInfo, bool, error)
}

// txLeaser is what a transaction of such an engine adds.
type txLeaser interface {
	checkLease(name, holder string) (bool, error)
}

func checkLeaseArgs(name, holder string, ttl time.Duration) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("empty lease name")
	case strings.TrimSpace(holder) == "":
		return errors.New("empty lease holder")
	case ttl < 0:
		return fmt.Errorf("negative lease time %s", ttl)
	}
	return nil
}

// AcquireLease takes the lease name for holder for ttl, or renews it if
// holder has it; it reports false, without error, when another holder
// has it unexpired.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := checkLeaseArgs(name, holder, ttl); err != nil {
		return false, fmt.Errorf("acquire lease: %w", err)
	}
	if ttl < time.Millisecond {
		return false, fmt.Errorf("acquire lease: lease time %s is under a millisecond", ttl)
	}
	if s.closed.Load() {
		return false, ErrClosed
	}
	l, ok := s.eng.(leaser)
	if !ok {
		return true, nil
	}
	held, err := l.acquireLease(ctx, name, holder, ttl)
	if err != nil {
		return false, fmt.Errorf("acquire lease %q: %w", name, err)
	}
	return held, nil
}

// ReleaseLease gives the lease up if holder has it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if err := checkLeaseArgs(name, holder, 0); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	l, ok := s.eng.(leaser)
	if !ok {
		return nil
	}
	if err := l.releaseLease(ctx, name, holder); err != nil {
		return fmt.Errorf("release lease %q: %w", name, err)
	}
	return nil
}

// LeaseInfo is what is known of a lease.
type LeaseInfo struct {
	// Holder held it last, until Expires.
	Holder  string
	Expires time.Time
	// Held says it has not expired (by the database's clock); a lease
	// that expired without being released was given up by a holder that
	// stopped (died, or stalled) mid-work.
	Held bool
}

// LeaseHolder returns what is known of the lease name; found is false
// when there is none: never taken, or released (on a bbolt file, where
// nobody needs one, always).
func (s *Store) LeaseHolder(ctx context.Context, name string) (info LeaseInfo, found bool, err error) {
	if s.closed.Load() {
		return LeaseInfo{}, false, ErrClosed
	}
	l, ok := s.eng.(leaser)
	if !ok {
		return LeaseInfo{}, false, nil
	}
	info, found, err = l.leaseHolder(ctx, name)
	if err != nil {
		return LeaseInfo{}, false, fmt.Errorf("read lease %q: %w", name, err)
	}
	return info, found, nil
}

// CheckLease fails with ErrLeaseLost unless holder holds the lease name,
// unexpired, and keeps another holder from taking it over until the
// transaction ends. A writer that must not write once its lease has
// passed to another (a crawl paused past its lease) calls it first in
// each write transaction.
func (w *WriteTx) CheckLease(name, holder string) error {
	l, ok := w.tx.(txLeaser)
	if !ok {
		return nil
	}
	held, err := l.checkLease(name, holder)
	if err != nil {
		return fmt.Errorf("check lease %q: %w", name, err)
	}
	if !held {
		return fmt.Errorf("write as %s: %w: lease %q", holder, ErrLeaseLost, name)
	}
	return nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsearch/opsearch/kind"
)

// Change is one entity a commit wrote or deleted, as the change feed of a
// store shared by several processes reports it (Changes).
type Change struct {
	Kind kind.Kind
	ID   int64
	// Deleted is set when the entity is gone; otherwise the store holds
	// what the commit wrote, or something newer.
	Deleted bool
	// Generation is the commit's (ReadTx.Generation).
	Generation uint64
	// Author is the user whose crawl or write made the commit
	// (WriteTx.SetAuthor), 0 if it named none.
	Author int64
}

// txAuthor is what a transaction of an engine with a change feed adds.
type txAuthor interface{ setAuthor(user int64) }

// SetAuthor names the user whose crawl or write this transaction
// commits, for the change feed (Change.Author): another process applying
// the change knows whose key fetched it, and so that this user may see
// it. A no-op on a store without a feed.
func (w *WriteTx) SetAuthor(user int64) {
	if a, ok := w.tx.(txAuthor); ok {
		a.setAuthor(user)
	}
}

// ErrNoChangeFeed is returned by Changes and WaitChange on a store whose
// engine keeps no change feed: a bbolt file, which one process owns, so
// that process saw every write itself.
var ErrNoChangeFeed = errors.New("store keeps no change feed")

// changeFeed is what an engine that several processes write at once
// (PostgreSQL) adds: which entities each commit touched, and a wake-up
// when there are new commits.
type changeFeed interface {
	changes(ctx context.Context, after uint64, limit int) ([]Change, uint64, error)
	waitChange(ctx context.Context, after uint64, poll time.Duration) (uint64, error)
}

// DefaultChangeLimit is the most changes Changes returns at once when
// given a limit of zero or less.
const DefaultChangeLimit = 2000

// Changes returns the entities committed after generation after, in
// generation order, and the generation through which the caller has then
// seen every change: apply the changes, then ask again from it. A batch
// never ends inside a commit, so one commit larger than limit comes
// whole. Activity lists are reported as kind.Activity under their work
// package's id, and so is a change of whether a work package's
// activities were fetched by an internal-comment reader.
//
// A caller that has applied everything through the returned generation
// and finds no changes is current as of that generation, which may be
// past the last change (commits that wrote only sync state or metadata).
func (s *Store) Changes(ctx context.Context, after uint64, limit int) ([]Change, uint64, error) {
	if s.closed.Load() {
		return nil, 0, ErrClosed
	}
	feed, ok := s.eng.(changeFeed)
	if !ok {
		return nil, 0, fmt.Errorf("read changes of %s: %w", s.path, ErrNoChangeFeed)
	}
	if limit <= 0 {
		limit = DefaultChangeLimit
	}
	changes, through, err := feed.changes(ctx, after, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("read changes of %s: %w", s.path, err)
	}
	return changes, through, nil
}

// WaitChange returns once the store's generation is past after, with
// that generation, or with ctx's error. It wakes on the engine's
// notification of a commit and, should one be lost (a dropped
// connection), checks at least every poll.
func (s *Store) WaitChange(ctx context.Context, after uint64, poll time.Duration) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	feed, ok := s.eng.(changeFeed)
	if !ok {
		return 0, fmt.Errorf("wait for changes of %s: %w", s.path, ErrNoChangeFeed)
	}
	if poll <= 0 {
		poll = 5 * time.Second
	}
	return feed.waitChange(ctx, after, poll)
}

// changeKinds maps the buckets the change feed reports to the kind of
// their changes.
func changeKinds() map[string]kind.Kind {
	m := map[string]kind.Kind{string(bucketReaders): kind.Activity}
	for _, k := range kind.All() {
		if b := bucketOf(k); b != nil {
			m[string(b)] = k
		}
	}
	return m
}

// purger is what an engine with a change feed adds to keep it small:
// deletions are kept as tombstones until every replica has applied them.
type purger interface {
	reportApplied(ctx context.Context, replica string, gen uint64) error
	purgedThrough(ctx context.Context) (uint64, error)
	purgeTombstones(ctx context.Context, keep time.Duration) (int64, uint64, error)
}

// ReportApplied records that replica's index has applied every change
// through generation gen (PurgeTombstones keeps what it has not). A
// no-op on a store without a feed.
func (s *Store) ReportApplied(ctx context.Context, replica string, gen uint64) error {
	p, ok := s.eng.(purger)
	if !ok {
		return nil
	}
	if err := p.reportApplied(ctx, replica, gen); err != nil {
		return fmt.Errorf("report applied generation: %w", err)
	}
	return nil
}

// PurgedThrough is the generation through which deletions may have left
// the feed (PurgeTombstones): an index that applied less must be built
// again from the store, as it cannot learn of those deletions. 0 on a
// store without a feed.
func (s *Store) PurgedThrough(ctx context.Context) (uint64, error) {
	p, ok := s.eng.(purger)
	if !ok {
		return 0, nil
	}
	gen, err := p.purgedThrough(ctx)
	if err != nil {
		return 0, fmt.Errorf("read purged generation: %w", err)
	}
	return gen, nil
}

// PurgeTombstones removes the deletions that every replica which
// reported within keep (ReportApplied) has applied, and returns how many
// it removed and through which generation. A replica silent for longer
// than keep is not waited for: it builds its index again when it comes
// back (PurgedThrough).
func (s *Store) PurgeTombstones(ctx context.Context, keep time.Duration) (removed int64, through uint64, err error) {
	p, ok := s.eng.(purger)
	if !ok {
		return 0, 0, nil
	}
	removed, through, err = p.purgeTombstones(ctx, keep)
	if err != nil {
		return 0, 0, fmt.Errorf("purge tombstones: %w", err)
	}
	return removed, through, nil
}

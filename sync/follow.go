package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// FollowFileName is the file, beside a replica's index, that records the
// store generation the index has applied every change through.
const FollowFileName = "follow.json"

// DefaultFollowPoll is how often a Follower checks the store for changes
// when no notification woke it.
const DefaultFollowPoll = 5 * time.Second

// followIndex is what a Follower needs of the index.
type followIndex interface {
	Index(ctx context.Context, docs ...indexer.Document) error
	Delete(ctx context.Context, ids ...string) error
}

var _ followIndex = (indexer.Index)(nil)

// Follower keeps a replica's local index current with a store that other
// processes write (a store in PostgreSQL): it applies the store's change
// feed (store.Changes) to the index, one batch at a time, and records in
// FollowFileName how far it got, so a restarted replica resumes where it
// stopped instead of rebuilding.
//
// One goroutine applies (Run); any number wait for a generation
// (WaitApplied), which is how a search on this replica sees a write made
// through another one.
type Follower struct {
	st   *store.Store
	idx  followIndex
	path string
	log  *slog.Logger
	poll time.Duration

	// mu guards applied and advanced; applying itself runs unlocked,
	// serialised by being Run's (or CatchUp's caller's) alone.
	mu      gosync.Mutex
	applied uint64
	// advanced is closed and replaced each time applied rises.
	advanced chan struct{}
	// failed is the last apply's error, nil once one succeeds.
	failed error
	// indexing is told each batch before the index holds it (SetIndexing).
	indexing func(author int64, docs []indexer.Document, deleted []string)
	// ready is set once the index was built (or its recorded generation
	// found) and caught up; done and total count the build's documents.
	ready       bool
	done, total int

	replica               string
	lastReport, lastPurge time.Time
}

// Tombstone housekeeping: a follower reports its generation to the store
// at most every reportEvery, and removes the deletions every replica
// heard from within tombstoneKeep has applied at most every purgeEvery.
const (
	reportEvery   = 10 * time.Second
	purgeEvery    = time.Hour
	tombstoneKeep = 7 * 24 * time.Hour
)

// FollowerOptions configures a Follower.
type FollowerOptions struct {
	// Replica names this process among the store's replicas, for the
	// store's record of how far each has applied (store.ReportApplied);
	// empty reports nothing.
	Replica string
	// Poll is how often Run checks for changes without a notification;
	// zero means DefaultFollowPoll.
	Poll   time.Duration
	Logger *slog.Logger
}

// followState is FollowFileName's content.
type followState struct {
	// Store names the store followed (store.Store.Path): a file that
	// followed another store is not trusted.
	Store      string `json:"store"`
	Generation uint64 `json:"generation"`
}

// OpenFollower returns a follower of st for the index in dir. known is
// false when dir records no generation for st (a new replica, or one
// whose index was made from another store): the index must then be built
// from the store first, from the generation Start gives.
func OpenFollower(st *store.Store, idx followIndex, dir string, opts FollowerOptions) (f *Follower, known bool, err error) {
	f = &Follower{
		st: st, idx: idx, path: filepath.Join(dir, FollowFileName),
		log: opts.Logger, poll: opts.Poll, advanced: make(chan struct{}), replica: opts.Replica,
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.poll <= 0 {
		f.poll = DefaultFollowPoll
	}
	raw, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read follow state: %w", err)
	}
	var fs followState
	if err := json.Unmarshal(raw, &fs); err != nil || fs.Store != st.Path() {
		// Unreadable, or another store's: build again rather than guess.
		return f, false, nil
	}
	f.applied = fs.Generation
	return f, true, nil
}

// Start is the generation to record once the index has been built from
// the store: take it before the build starts, so changes committed during
// the build are applied again after it (applying is idempotent).
func (f *Follower) Start() (uint64, error) {
	gen, err := f.st.Generation()
	if err != nil {
		return 0, fmt.Errorf("read store generation: %w", err)
	}
	return gen, nil
}

// Built records that the index holds the store as of generation gen
// (from Start).
func (f *Follower) Built(gen uint64) error {
	if err := f.save(gen); err != nil {
		return err
	}
	f.advance(gen, nil)
	return nil
}

// SetIndexing sets the function told each batch of documents before the
// index holds them, with the user whose crawl or write committed them
// (store.Change.Author, 0 if unknown): in a shared index, what keeps
// every user's view in step (access.View.Apply), as the sync worker's
// Shared.Indexing does for the batches it indexes itself.
func (f *Follower) SetIndexing(fn func(author int64, docs []indexer.Document, deleted []string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.indexing = fn
}

// Ready reports whether the index has been built from the store and
// caught up, so it may answer searches; until then done and total are
// the initial build's documents so far and in all.
func (f *Follower) Ready() (ready bool, done, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready, f.done, f.total
}

func (f *Follower) building(done, total int) {
	f.mu.Lock()
	f.done, f.total = done, total
	f.mu.Unlock()
}

func (f *Follower) setReady() {
	f.mu.Lock()
	f.ready = true
	f.mu.Unlock()
}

// Applied is the generation the index has applied every change through.
func (f *Follower) Applied() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// Lag is how many store generations the index is behind, and the last
// apply's error, if it failed.
func (f *Follower) Lag() (uint64, error) {
	gen, err := f.st.Generation()
	if err != nil {
		return 0, fmt.Errorf("read store generation: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen < f.applied {
		return 0, f.failed
	}
	return gen - f.applied, f.failed
}

// WaitApplied returns once the index has applied generation gen, or with
// ctx's error: a caller that wrote through another replica passes the
// write's generation and bounds the wait with ctx.
func (f *Follower) WaitApplied(ctx context.Context, gen uint64) error {
	for {
		f.mu.Lock()
		applied, advanced := f.applied, f.advanced
		f.mu.Unlock()
		if applied >= gen {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return fmt.Errorf("wait for generation %d (applied %d): %w", gen, applied, ctx.Err())
		}
	}
}

// Run applies changes until ctx ends: it catches up, then waits for the
// store's next commit (store.WaitChange: a notification, or Poll). A
// failed apply is logged and retried after Poll; the index keeps what it
// had.
func (f *Follower) Run(ctx context.Context) error {
	for {
		if _, err := f.CatchUp(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			f.log.Warn("applying store changes failed; retrying", "error", err, "retry_in", f.poll)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(f.poll):
			}
			continue
		}
		if _, err := f.st.WaitChange(ctx, f.Applied(), f.poll); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			f.log.Warn("waiting for store changes failed; retrying", "error", err, "retry_in", f.poll)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(f.poll):
			}
		}
	}
}

// CatchUp applies every change committed after Applied, batch by batch,
// and returns how many it applied. It must not run concurrently with
// itself (Run calls it; call it directly only without Run).
func (f *Follower) CatchUp(ctx context.Context) (int, error) {
	total := 0
	for {
		from := f.Applied()
		changes, through, err := f.st.Changes(ctx, from, 0)
		if err == nil && len(changes) > 0 {
			err = f.apply(ctx, changes)
		}
		if err == nil && through > from {
			err = f.save(through)
		}
		if err != nil {
			f.mu.Lock()
			f.failed = err
			f.mu.Unlock()
			return total, err
		}
		total += len(changes)
		if through <= from {
			f.advance(from, nil)
			f.settle(ctx, total)
			f.housekeep(ctx)
			return total, nil
		}
		f.advance(through, nil)
		if len(changes) == 0 {
			f.settle(ctx, total)
			f.housekeep(ctx)
			return total, nil
		}
	}
}

// housekeep reports how far this replica has applied and, now and then,
// removes the tombstones every replica has applied. Failures only cost
// room in the database, so they are logged, not returned.
func (f *Follower) housekeep(ctx context.Context) {
	if f.replica == "" {
		return
	}
	now := time.Now()
	if now.Sub(f.lastReport) >= reportEvery {
		if err := f.st.ReportApplied(ctx, f.replica, f.Applied()); err != nil {
			f.log.Debug("reporting the applied generation failed", "error", err)
		} else {
			f.lastReport = now
		}
	}
	if now.Sub(f.lastPurge) >= purgeEvery {
		f.lastPurge = now
		if n, through, err := f.st.PurgeTombstones(ctx, tombstoneKeep); err != nil {
			f.log.Warn("removing applied deletions from the store failed", "error", err)
		} else if n > 0 {
			f.log.Info("removed deletions every replica has applied", "tombstones", n, "through_generation", through)
		}
	}
}

// settle lets the index reorganise after a catch-up that applied
// changes (indexer.Bleve.Settle merges only after large writes).
func (f *Follower) settle(ctx context.Context, applied int) {
	s, ok := f.idx.(interface {
		Settle(context.Context) (bool, error)
	})
	if !ok || applied == 0 {
		return
	}
	if _, err := s.Settle(ctx); err != nil && ctx.Err() == nil {
		f.log.Warn("settling the index after a catch-up failed", "error", err)
	}
}

// advance records gen as applied and wakes the waiters.
func (f *Follower) advance(gen uint64, failed error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = failed
	if gen <= f.applied {
		return
	}
	f.applied = gen
	close(f.advanced)
	f.advanced = make(chan struct{})
}

// apply brings the index documents of the changed entities in line with
// the store's copies, read in one transaction: an entity the store holds
// is indexed as stored (whatever the change said), one it does not is
// deleted.
func (f *Follower) apply(ctx context.Context, changes []store.Change) error {
	type entity struct {
		k  kind.Kind
		id int64
	}
	// author is each entity's last change's: whose key fetched the copy
	// the store holds.
	author := map[entity]int64{}
	var wpIDs []int64
	var others []entity
	for _, c := range changes {
		e := entity{c.Kind, c.ID}
		if c.Kind == kind.Activity {
			e.k = kind.WorkPackage // a work package's document holds its comments
		}
		if _, seen := author[e]; !seen {
			if e.k == kind.WorkPackage {
				wpIDs = append(wpIDs, e.id)
			} else {
				others = append(others, e)
			}
		}
		author[e] = c.Author
	}
	var docs []indexer.Document
	var dels []string
	err := f.st.View(ctx, func(tx *store.ReadTx) error {
		var wps []openproject.WorkPackage
		for _, id := range wpIDs {
			wp, found, err := tx.WorkPackage(id)
			if err != nil {
				return err
			}
			if !found {
				dels = append(dels, indexer.DocID(kind.WorkPackage, id), indexer.PublicDocID(id))
				continue
			}
			wps = append(wps, wp)
		}
		d, stale, err := storedWorkPackageDocs(tx, wps)
		if err != nil {
			return err
		}
		docs, dels = append(docs, d...), append(dels, stale...)
		var ids []string
		for _, e := range others {
			if slices.Contains(indexer.Kinds(), e.k) {
				ids = append(ids, indexer.DocID(e.k, e.id))
			}
		}
		od, odels, err := docsFromStore(tx, ids)
		docs, dels = append(docs, od...), append(dels, odels...)
		return err
	})
	if err != nil {
		return fmt.Errorf("read changed entities: %w", err)
	}
	f.mu.Lock()
	hook := f.indexing
	f.mu.Unlock()
	if hook != nil && (len(docs) > 0 || len(dels) > 0) {
		// One call per author, each with the documents their key fetched.
		by := map[int64]*struct {
			docs []indexer.Document
			dels []string
		}{}
		group := func(k kind.Kind, id int64) *struct {
			docs []indexer.Document
			dels []string
		} {
			a := author[entity{k, id}]
			g := by[a]
			if g == nil {
				g = &struct {
					docs []indexer.Document
					dels []string
				}{}
				by[a] = g
			}
			return g
		}
		for _, d := range docs {
			g := group(d.Kind, d.EntityID)
			g.docs = append(g.docs, d)
		}
		for _, id := range dels {
			k, eid, _ := indexer.ParseDocID(id)
			g := group(k, eid)
			g.dels = append(g.dels, id)
		}
		for a, g := range by {
			hook(a, g.docs, g.dels)
		}
	}
	if len(docs) > 0 {
		if err := f.idx.Index(ctx, docs...); err != nil {
			return fmt.Errorf("index changed documents: %w", err)
		}
	}
	if len(dels) > 0 {
		if err := f.idx.Delete(ctx, dels...); err != nil {
			return fmt.Errorf("delete documents: %w", err)
		}
	}
	return nil
}

// save records gen in the follow file, atomically.
func (f *Follower) save(gen uint64) error {
	raw, err := json.Marshal(followState{Store: f.st.Path(), Generation: gen})
	if err != nil {
		return fmt.Errorf("encode follow state: %w", err)
	}
	tmp := f.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("write follow state: %w", err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		return fmt.Errorf("write follow state: %w", err)
	}
	return nil
}

package access

import (
	"context"
	"fmt"
	"strconv"
	gosync "sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/store"
)

// HoldingsCache reads a store's Holdings once per store generation for
// every user whose view is computed from it: HoldingsOf scans every
// stored entity, and between two commits the answer cannot change.
type HoldingsCache struct {
	st     *store.Store
	flight singleflight.Group

	mu  gosync.Mutex
	gen uint64
	h   *Holdings
}

// NewHoldingsCache returns a cache of st's holdings.
func NewHoldingsCache(st *store.Store) *HoldingsCache { return &HoldingsCache{st: st} }

// Get returns what the store holds, read at its current generation or
// later. The returned value is shared: callers must not change it.
func (c *HoldingsCache) Get(ctx context.Context) (*Holdings, error) {
	gen, err := c.st.Generation()
	if err != nil {
		return nil, fmt.Errorf("read holdings: %w", err)
	}
	c.mu.Lock()
	if c.h != nil && c.gen >= gen {
		h := c.h
		c.mu.Unlock()
		return h, nil
	}
	c.mu.Unlock()
	v, err, _ := c.flight.Do(strconv.FormatUint(gen, 10), func() (any, error) {
		h, err := HoldingsOf(ctx, c.st)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		// The scan began at gen or later, so it holds at least gen's
		// state; a newer read may have landed meanwhile.
		if c.h == nil || gen > c.gen {
			c.h, c.gen = h, gen
		}
		c.mu.Unlock()
		return h, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Holdings), nil
}

// Tracker keeps one user's view of a shared store current: Refresh
// computes it from OpenProject with the user's key, and Indexing applies
// every batch any user's crawl is about to index (View.Apply), so no
// search sees a document its view would not show. It is safe for
// concurrent use.
type Tracker struct {
	api   API
	held  *HoldingsCache
	opts  Options
	owner int64
	// sem lets one Refresh run at a time; it is a channel so a waiting
	// caller can give up with its context.
	sem chan struct{}

	mu   gosync.Mutex
	view *View
	err  error
	// replay collects the batches applied while a refresh runs: the
	// view it computes read holdings from before some of them, so they
	// are applied to it again before it is published.
	replaying bool
	replay    []applied
}

type applied struct {
	batch   []Change
	fetched bool
}

// NewTracker returns a tracker of user owner's view, computed through
// api (authenticated with that user's key) from held. opts are passed to
// Compute (Full is set per Refresh).
func NewTracker(api API, held *HoldingsCache, owner int64, opts Options) *Tracker {
	return &Tracker{api: api, held: held, opts: opts, owner: owner, sem: make(chan struct{}, 1)}
}

// Owner is the user whose view t keeps.
func (t *Tracker) Owner() int64 { return t.owner }

// Refresh computes the view again (full: every answer asked again, as
// for a key's validation) and publishes it. On failure the previous
// view stays, and Err reports the failure until a refresh succeeds.
func (t *Tracker) Refresh(ctx context.Context, full bool) (*View, error) {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("refresh view: %w", context.Cause(ctx))
	}
	defer func() { <-t.sem }()
	t.mu.Lock()
	prev := t.view
	t.replaying, t.replay = true, nil
	t.mu.Unlock()

	v, err := t.compute(ctx, prev, full)

	t.mu.Lock()
	defer t.mu.Unlock()
	replay := t.replay
	t.replaying, t.replay = false, nil
	if err != nil {
		t.err = err
		return nil, err
	}
	for _, a := range replay {
		v = v.Apply(a.batch, a.fetched)
	}
	t.view, t.err = v, nil
	return v, nil
}

func (t *Tracker) compute(ctx context.Context, prev *View, full bool) (*View, error) {
	held, err := t.held.Get(ctx)
	if err != nil {
		return nil, err
	}
	opts := t.opts
	opts.Full = full
	v, err := Compute(ctx, t.api, held, prev, opts)
	if err != nil {
		return nil, fmt.Errorf("compute the user's view: %w", err)
	}
	return v, nil
}

// Indexing applies a batch of documents about to be indexed to the view
// (View.Apply); byOwner says whether the tracker's own user fetched
// them. Call it before the index holds them.
func (t *Tracker) Indexing(batch []Change, byOwner bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.view != nil {
		t.view = t.view.Apply(batch, byOwner)
	}
	if t.replaying {
		t.replay = append(t.replay, applied{batch: batch, fetched: byOwner})
	}
}

// View returns the current view, nil before the first successful
// Refresh.
func (t *Tracker) View() *View {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view
}

// Visibility returns the current view's index restriction, nil before
// the first successful Refresh.
func (t *Tracker) Visibility() *indexer.Visibility {
	if v := t.View(); v != nil {
		return v.Visibility
	}
	return nil
}

// Err is the failure of the last Refresh, nil after a success.
func (t *Tracker) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// ReadsInternal reports whether the user reads project p's internal
// comments, as the current view knows, and whether it knows; it is the
// shared crawl's sync.Shared.ReadsInternal.
func (t *Tracker) ReadsInternal(p int64) (reads, known bool) {
	v := t.View()
	if v == nil {
		return false, false
	}
	return v.ReadsInternal(p)
}

// ReadsInternal reports whether the view's user reads project p's
// internal comments, and whether the view asked.
func (v *View) ReadsInternal(p int64) (reads, known bool) {
	pr, ok := v.probes[p]
	if !ok || pr.internalAt.IsZero() {
		return false, false
	}
	return pr.internal, true
}

// Age is how old the oldest answer of the current view is (zero before
// the first): what an answer says about how fresh the user's
// permissions are.
func (t *Tracker) Age(now time.Time) time.Duration {
	v := t.View()
	if v == nil {
		return 0
	}
	return now.Sub(v.CheckedAt)
}

// ReadsWiki reports whether the user reads project p's wiki, as the
// current view knows (false before the first view, and for a project
// with no stored page, whose wiki no probe asked about); it is the
// shared crawl's sync.Shared.ReadsWiki.
func (t *Tracker) ReadsWiki(p int64) bool {
	v := t.View()
	return v != nil && v.projects[p].wiki
}

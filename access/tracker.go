package access

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/store"
)

// HoldingsCache keeps what a shared store holds for every user whose
// view is computed from it: read from the store once (HoldingsOf scans
// every stored entity, seconds at a hundred thousand work packages),
// then kept current by Apply, which the store's writers call with every
// batch they index (sync.Shared.Indexing), so a view refresh costs no
// scan.
type HoldingsCache struct {
	st     *store.Store
	flight singleflight.Group

	mu sync.Mutex
	h  *Holdings
	// where is each held entity's project, by kind, for moves.
	where map[kind.Kind]map[int64]int64
	// early are the batches applied while the first read ran, applied
	// again to its result.
	reading bool
	early   []Change
}

// NewHoldingsCache returns a cache of st's holdings.
func NewHoldingsCache(st *store.Store) *HoldingsCache { return &HoldingsCache{st: st} }

// Get returns what the store holds. The returned value is shared and
// never changed: Apply makes a new one.
func (c *HoldingsCache) Get(ctx context.Context) (*Holdings, error) {
	c.mu.Lock()
	if c.h != nil {
		h := c.h
		c.mu.Unlock()
		return h, nil
	}
	c.mu.Unlock()
	v, err, _ := c.flight.Do("read", func() (any, error) {
		c.mu.Lock()
		c.reading, c.early = true, nil
		c.mu.Unlock()
		h, err := HoldingsOf(ctx, c.st)
		c.mu.Lock()
		defer c.mu.Unlock()
		early := c.early
		c.reading, c.early = false, nil
		if err != nil {
			return nil, err
		}
		c.where = h.where()
		for _, ch := range early {
			h = h.with([]Change{ch}, c.where)
		}
		c.h = h
		return h, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Holdings), nil
}

// Apply records a batch of documents about to be indexed (ChangesOf) in
// the holdings. Call it for every batch written to the store, before the
// index holds it; a batch whose commit then fails stays recorded, which
// shows nobody anything (it is not in the index).
func (c *HoldingsCache) Apply(batch []Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.h != nil:
		c.h = c.h.with(batch, c.where)
	case c.reading:
		c.early = append(c.early, batch...)
	}
}

// where returns each held entity's project, by kind.
func (h *Holdings) where() map[kind.Kind]map[int64]int64 {
	w := map[kind.Kind]map[int64]int64{kind.WorkPackage: {}, kind.WikiPage: {}, kind.Meeting: {}}
	for k, m := range map[kind.Kind]map[int64][]int64{kind.WorkPackage: h.WorkPackages, kind.WikiPage: h.WikiPages, kind.Meeting: h.Meetings} {
		for p, ids := range m {
			for _, id := range ids {
				w[k][id] = p
			}
		}
	}
	return w
}

// with returns h with batch recorded (where is updated in place): an
// entity is held in its new project, no longer in an old one, and a work
// package is among the internal ones exactly when it has a public twin.
// Only the lists that change are copied.
func (h *Holdings) with(batch []Change, where map[kind.Kind]map[int64]int64) *Holdings {
	n := *h
	copied := map[*map[int64][]int64]bool{}
	edit := func(m *map[int64][]int64, p, id int64, add bool) {
		ids := (*m)[p]
		i, found := slices.BinarySearch(ids, id)
		if found == add {
			return
		}
		if !copied[m] {
			if *m = maps.Clone(*m); *m == nil {
				*m = map[int64][]int64{}
			}
			copied[m] = true
		}
		if add {
			(*m)[p] = slices.Insert(slices.Clone(ids), i, id)
		} else {
			(*m)[p] = slices.Delete(slices.Clone(ids), i, i+1)
		}
	}
	for _, ch := range batch {
		var m *map[int64][]int64
		switch ch.Kind {
		case kind.WorkPackage:
			m = &n.WorkPackages
		case kind.WikiPage:
			m = &n.WikiPages
		case kind.Meeting:
			m = &n.Meetings
		default:
			continue
		}
		if old, ok := where[ch.Kind][ch.ID]; ok && (ch.Deleted || old != ch.Project) {
			edit(m, old, ch.ID, false)
			if ch.Kind == kind.WorkPackage {
				edit(&n.Internal, old, ch.ID, false)
			}
		}
		if ch.Deleted {
			delete(where[ch.Kind], ch.ID)
			continue
		}
		where[ch.Kind][ch.ID] = ch.Project
		edit(m, ch.Project, ch.ID, true)
		if ch.Kind == kind.WorkPackage {
			edit(&n.Internal, ch.Project, ch.ID, ch.Twin)
		}
	}
	return &n
}

// Tracker keeps one user's view of a shared store current: Refresh
// computes it from OpenProject with the user's key, and Indexing applies
// every batch any user's crawl is about to index (View.Apply), so no
// search sees a document its view would not show. It is safe for
// concurrent use.
type Tracker struct {
	held  *HoldingsCache
	opts  Options
	owner int64
	// sem lets one Refresh run at a time; it is a channel so a waiting
	// caller can give up with its context.
	sem chan struct{}

	mu sync.Mutex
	// api asks OpenProject with the user's key; nil while the user is
	// away (SetAPI), so no key outlives its user's session.
	api  API
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

// SetAPI replaces the client refreshes ask OpenProject with: the key of
// the user's new session, or nil when they leave, so a tracker kept for
// their return (its view still following every batch) holds no key.
func (t *Tracker) SetAPI(api API) {
	t.mu.Lock()
	t.api = api
	t.mu.Unlock()
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
	prev, api := t.view, t.api
	t.replaying, t.replay = true, nil
	t.mu.Unlock()

	v, err := t.compute(ctx, api, prev, full)

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

func (t *Tracker) compute(ctx context.Context, api API, prev *View, full bool) (*View, error) {
	if api == nil {
		return nil, errors.New("compute the user's view: no key to ask OpenProject with (the user is away)")
	}
	held, err := t.held.Get(ctx)
	if err != nil {
		return nil, err
	}
	opts := t.opts
	opts.Full = full
	v, err := Compute(ctx, api, held, prev, opts)
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
	pr, ok := v.answers.Probes[p]
	if !ok || pr.InternalAt.IsZero() {
		return false, false
	}
	return pr.Internal, true
}

// ReadsWiki reports whether the user reads project p's wiki, and whether
// the current view knows: it knows for the projects the user does not
// see (no), and for those with a stored page, which a probe asked for;
// not before the first view, nor for a project with no stored page. It
// is the shared crawl's sync.Shared.ReadsWiki.
func (t *Tracker) ReadsWiki(p int64) (reads, known bool) {
	v := t.View()
	if v == nil {
		return false, false
	}
	if _, ok := v.projects[p]; !ok {
		return false, true // not a project the user sees
	}
	if v.answers.Probes[p].WikiAt.IsZero() {
		return false, false
	}
	return v.projects[p].wiki, true
}

// SeesProject reports whether the view shows project p (its project
// document at least).
func (v *View) SeesProject(p int64) bool {
	_, ok := v.projects[p]
	return ok
}

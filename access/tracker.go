package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

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
// search sees a document its view would not show. Among replicas sharing
// a store (Share), one asks OpenProject for a user at a time and the
// others derive the view from its answers. It is safe for concurrent use.
type Tracker struct {
	held  *HoldingsCache
	opts  Options
	owner int64
	// sem lets one Refresh run at a time; it is a channel so a waiting
	// caller can give up with its context.
	sem chan struct{}
	// share, if set, coordinates with the other replicas (Share).
	share *sharing

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

// Exchange shares users' answers among the replicas serving one shared
// store (Tracker.Share): the latest answers per user, and a claim that
// lets one replica at a time ask OpenProject for a user.
type Exchange interface {
	// Answers returns user's latest published answers; found is false
	// when there are none.
	Answers(ctx context.Context, user int64) (a *Answers, found bool, err error)
	// Publish makes a the answers for user.
	Publish(ctx context.Context, user int64, a *Answers) error
	// Claim takes the right to ask OpenProject for user for a while;
	// held is false while another replica has it. release gives it back.
	Claim(ctx context.Context, user int64) (release func(), held bool, err error)
}

// sharing is a Tracker's coordination with the other replicas.
type sharing struct {
	x      Exchange
	maxAge time.Duration
	log    *slog.Logger
	// wait bounds how long Renew waits for the answers of a replica
	// that holds the claim, polling every poll.
	wait, poll time.Duration
}

// NewTracker returns a tracker of user owner's view, computed through
// api (authenticated with that user's key) from held. opts are passed to
// Compute (Full is set per Refresh).
func NewTracker(api API, held *HoldingsCache, owner int64, opts Options) *Tracker {
	return &Tracker{api: api, held: held, opts: opts, owner: owner, sem: make(chan struct{}, 1)}
}

// Share makes the tracker one of several replicas' trackers of the same
// user: every view it asks OpenProject for is published through x, and
// Renew derives the view from answers another replica published within
// maxAge, or asks only while it holds the user's claim, so the user's
// view is asked for once per period however many replicas serve them.
// Call it before the tracker is used.
func (t *Tracker) Share(x Exchange, maxAge time.Duration, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t.share = &sharing{x: x, maxAge: maxAge, log: log.With("user_id", t.owner), wait: 15 * time.Second, poll: 50 * time.Millisecond}
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
	return t.update(ctx, func(ctx context.Context, api API, prev *View, held *Holdings) (*View, error) {
		return t.ask(ctx, api, prev, held, full)
	})
}

// Renew is the periodic refresh: Refresh(ctx, false), but among replicas
// (Share) the view is derived from answers another replica published
// within the shared period, or, while another replica holds the user's
// claim, from the answers it publishes next; only the claim's holder
// asks OpenProject.
func (t *Tracker) Renew(ctx context.Context) (*View, error) {
	sh := t.share
	if sh == nil {
		return t.Refresh(ctx, false)
	}
	return t.update(ctx, func(ctx context.Context, api API, prev *View, held *Holdings) (*View, error) {
		start := t.now()
		if a := t.published(ctx, prev, start.Add(-sh.maxAge)); a != nil {
			return t.derive(a, held), nil
		}
		release, mine, err := sh.x.Claim(ctx, t.owner)
		switch {
		case err != nil:
			sh.log.Warn("cannot claim the user's view from the other replicas; asking OpenProject", "error", err)
			return t.ask(ctx, api, prev, held, false)
		case mine:
			defer release()
			return t.ask(ctx, api, prev, held, false)
		}
		// Another replica asks now; its answers follow within a few
		// requests' time.
		deadline := time.NewTimer(sh.wait)
		defer deadline.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("wait for the user's view from another replica: %w", context.Cause(ctx))
			case <-deadline.C:
				sh.log.Warn("the replica computing the user's view did not share it in time; asking OpenProject", "waited", sh.wait)
				return t.ask(ctx, api, prev, held, false)
			case <-time.After(sh.poll):
			}
			if a := t.published(ctx, prev, start); a != nil {
				return t.derive(a, held), nil
			}
		}
	})
}

// published returns the answers another replica published at or after
// since and after prev's, nil when there are none.
func (t *Tracker) published(ctx context.Context, prev *View, since time.Time) *Answers {
	a, found, err := t.share.x.Answers(ctx, t.owner)
	if err != nil {
		t.share.log.Warn("cannot read the user's view the other replicas shared", "error", err)
		return nil
	}
	if !found || a.At.Before(since) || prev != nil && !a.At.After(prev.At) {
		return nil
	}
	return a
}

// derive is the view of another replica's answers: it took no request
// here.
func (t *Tracker) derive(a *Answers, held *Holdings) *View {
	v := Derive(a, held)
	v.Requests = 0
	return v
}

func (t *Tracker) now() time.Time {
	if t.opts.Now != nil {
		return t.opts.Now()
	}
	return time.Now()
}

// update makes a new view with build and publishes it, one at a time,
// with the batches indexed meanwhile applied to it. On failure the
// previous view stays, and Err reports the failure until one succeeds.
func (t *Tracker) update(ctx context.Context, build func(ctx context.Context, api API, prev *View, held *Holdings) (*View, error)) (*View, error) {
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

	v, err := func() (*View, error) {
		held, err := t.held.Get(ctx)
		if err != nil {
			return nil, err
		}
		return build(ctx, api, prev, held)
	}()

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

// ask computes the view from OpenProject's answers and, among replicas,
// publishes them for the others.
func (t *Tracker) ask(ctx context.Context, api API, prev *View, held *Holdings, full bool) (*View, error) {
	if api == nil {
		return nil, errors.New("compute the user's view: no key to ask OpenProject with (the user is away)")
	}
	opts := t.opts
	opts.Full = full
	v, err := Compute(ctx, api, held, prev, opts)
	if err != nil {
		return nil, fmt.Errorf("compute the user's view: %w", err)
	}
	if sh := t.share; sh != nil {
		if err := sh.x.Publish(ctx, t.owner, v.Answers()); err != nil {
			// This replica's view stands; the others ask themselves.
			sh.log.Warn("cannot share the user's view with the other replicas", "error", err)
		}
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

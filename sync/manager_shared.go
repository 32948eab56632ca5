package sync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/access"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// DefaultViewRefresh is how often a shared Manager computes every active
// user's view again (SharedOptions.RefreshEvery).
const DefaultViewRefresh = 2 * time.Minute

// SharedOptions make a Manager serve every user of one instance from a
// single store and index (OpenShared), each through their own view of it
// (package access), instead of a store and index per user.
type SharedOptions struct {
	// BaseURL is the instance's; the shared store is opened (and its
	// index rebuilt if needed) when the Manager is made.
	BaseURL string
	// RefreshEvery is how often every active user's view is computed
	// again from OpenProject (default DefaultViewRefresh); a tick skips
	// a view computed within the last half period. A view is also
	// computed when the user is opened, after each of their syncs, and
	// when their key is validated again: a removed membership stops
	// showing at the next of these.
	RefreshEvery time.Duration
	// Access tunes the view computations (Full is set per refresh).
	Access access.Options
	// CrawlKey, if set, is the key of an account that crawls the shared
	// store on the schedule whether or not anyone uses the server, and
	// never answers a request. An administrator's key fetches every
	// document once for all users and vouches for every wiki id, so a
	// user's first crawl then costs a few dozen requests; what each user
	// may see is still asked with their own key.
	CrawlKey string
}

// sharedInstance is the store every user of the instance shares, and the
// trackers of the active users' views.
type sharedInstance struct {
	user *User
	held *access.HoldingsCache
	// refreshEvery is SharedOptions.RefreshEvery.
	refreshEvery time.Duration

	// crawled is the outcome of the crawl account's last sync here;
	// crawler is the account's user id, once known.
	crawlMu  gosync.Mutex
	crawled  *Report
	crawlErr error
	crawler  int64

	mu       gosync.Mutex
	trackers map[*access.Tracker]struct{}
	// views are the trackers by user, kept (following every batch, with
	// no key) after their user leaves: a user who returns while
	// OpenProject cannot be asked is served through the view they had,
	// as one who stayed would be. At most maxKeptViews are kept.
	views map[int64]*access.Tracker
	away  []int64 // users whose tracker is kept without a session, oldest first
}

// maxKeptViews bounds the views kept for users who left.
const maxKeptViews = 1000

// openSharedInstance opens the shared store of opts.
func openSharedInstance(ctx context.Context, dataDir string, opts *SharedOptions, uo UserOptions) (*sharedInstance, error) {
	// A replica listens while it builds its index (progress on /health)
	// and serves once it is built: the manager's follow does the build.
	u, err := openShared(ctx, dataDir, opts.BaseURL, uo, uo.StoreURL == "")
	if err != nil {
		return nil, err
	}
	s := &sharedInstance{user: u, held: access.NewHoldingsCache(u.Store), refreshEvery: opts.RefreshEvery, trackers: map[*access.Tracker]struct{}{},
		views: map[int64]*access.Tracker{}}
	if u.Follower != nil {
		// Batches another replica committed reach every view before this
		// replica's index holds them, as their author's crawl: the author
		// sees what their key fetched; for others it stays hidden where a
		// view shows a project wholesale, until the view is computed
		// again.
		u.Follower.SetIndexing(func(author int64, docs []indexer.Document, deleted []string) {
			s.indexing(author)(docs, deleted)
		})
	}
	return s, nil
}

// tracker returns user's tracker, asking with api from now on: the one
// kept from their last session, or a new one, registered so that every
// batch reaches it.
func (s *sharedInstance) tracker(user int64, api access.API, opts access.Options) *access.Tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.away = slices.DeleteFunc(s.away, func(u int64) bool { return u == user })
	t, ok := s.views[user]
	if !ok {
		t = access.NewTracker(api, s.held, user, opts)
		if s.user.Follower != nil {
			// A replica: the user's view is asked for once per half
			// period, by whichever replica first finds it due.
			t.Share(viewExchange{st: s.user.Store, holder: s.user.replica}, s.refreshEvery/2, s.user.log)
		}
		s.views[user] = t
		s.trackers[t] = struct{}{}
	}
	t.SetAPI(api)
	return t
}

// leave drops the key of t's user, whose session ended, and keeps their
// view for their return; the oldest kept beyond maxKeptViews go.
func (s *sharedInstance) leave(t *access.Tracker) {
	t.SetAPI(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.away = append(s.away, t.Owner())
	for len(s.away) > maxKeptViews {
		s.forgetLocked(s.away[0])
	}
}

// forget drops user's view: it may not serve them again without being
// computed.
func (s *sharedInstance) forget(user int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(user)
}

func (s *sharedInstance) forgetLocked(user int64) {
	if t, ok := s.views[user]; ok {
		delete(s.trackers, t)
		delete(s.views, user)
	}
	s.away = slices.DeleteFunc(s.away, func(u int64) bool { return u == user })
}

// indexing is the Shared.Indexing hook of owner's worker: every active
// user's view learns of the batch before the index holds it.
func (s *sharedInstance) indexing(owner int64) func([]indexer.Document, []string) {
	return func(docs []indexer.Document, deleted []string) {
		batch := access.ChangesOf(docs, deleted)
		s.held.Apply(batch)
		s.mu.Lock()
		defer s.mu.Unlock()
		for t := range s.trackers {
			t.Indexing(batch, t.Owner() == owner)
		}
	}
}

// openShared opens id's user of the shared store: a tracker of their
// view, computed at once with every answer asked, and a worker that
// crawls into the shared store with their key.
func (m *Manager[A]) openShared(ctx context.Context, client UserAPI, id Identity) (*User, error) {
	inst := m.shared
	api, ok := client.(access.API)
	if !ok {
		return nil, errors.New("open shared user: the API client cannot ask what the user may see")
	}
	if id.Instance != inst.user.Identity.Instance {
		return nil, fmt.Errorf("open shared user: the key belongs to %s, the shared store to %s", id.Instance, inst.user.Identity.Instance)
	}
	// Registered first, so a batch indexed while the view is computed
	// is applied to it (Tracker.Refresh replays it).
	t := inst.tracker(id.UserID, api, m.opts.Shared.Access)
	if _, err := t.Refresh(ctx, true); err != nil {
		denied := errors.Is(err, openproject.ErrUnauthenticated) || errors.Is(err, openproject.ErrPermission)
		if denied || t.View() == nil {
			inst.forget(id.UserID)
			return nil, fmt.Errorf("find out what the user may see: %w", err)
		}
		// OpenProject cannot be asked now: the view the user left with,
		// kept current since, answers, and says the refresh failed.
		m.log.Warn("cannot compute the returning user's view; the one they left with answers", "user_id", id.UserID, "error", err)
	}
	w, err := inst.user.SharedWorker(client, Shared{
		Owner: id.UserID, ReadsInternal: t.ReadsInternal, ReadsWiki: t.ReadsWiki, Admin: id.Admin,
		Indexing: inst.indexing(id.UserID),
	}, m.opts.UserOptions.WorkerOptions)
	if err != nil {
		inst.leave(t)
		return nil, err
	}
	su := inst.user
	done := make(chan struct{})
	close(done)
	return &User{
		Store: su.Store, Index: su.Index, Worker: w, View: t, Follower: su.Follower,
		Identity: store.Identity{BaseURL: su.Identity.BaseURL, Instance: su.Identity.Instance, UserID: id.UserID, Login: id.Login, Name: id.Name, Shared: true},
		Dir:      su.Dir,
		OwnDir:   filepath.Join(filepath.Dir(su.Dir), strconv.FormatInt(id.UserID, 10)),
		log:      su.log.With("user_id", id.UserID),
		cancel:   func() {},
		done:     done,
		release:  func() { inst.leave(t) },
	}, nil
}

// refreshView computes e's view again (access.Tracker.Renew), if e is a
// user of the shared store; a rejected key stops the user, as a rejected
// sync does.
func (m *Manager[A]) refreshView(ctx context.Context, e *entry[A], key string) {
	t := e.user.View
	if t == nil {
		return
	}
	_, err := t.Renew(ctx)
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, openproject.ErrUnauthenticated):
		m.log.Warn("the API key was rejected while computing the user's view; stopping the user", "user_id", e.key.id)
		if key != "" {
			m.forgetKey(key)
		}
		m.shared.forget(e.key.id) // no view of theirs serves again unasked
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.closed { // Close stops every user itself
			m.stops.Go(func() { m.stop(e) })
		}
	default:
		// The previous view keeps answering, and says how old it is.
		m.log.Warn("cannot compute the user's view again; the previous one answers", "user_id", e.key.id, "error", err)
	}
}

// refreshViews computes every active user's view again every
// SharedOptions.RefreshEvery.
func (m *Manager[A]) refreshViews() {
	defer m.bg.Done()
	t := time.NewTicker(m.opts.Shared.RefreshEvery)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		for _, e := range m.readyEntries() {
			// A view computed since the last tick (after a sync or a
			// key check) is fresh enough: no view is older than one
			// and a half periods, at a third fewer requests.
			if v := e.user.View.View(); v != nil && m.opts.Now().Sub(v.At) < m.opts.Shared.RefreshEvery/2 {
				continue
			}
			m.refreshView(m.ctx, e, "")
		}
	}
}

// readyEntries lists the users open and not stopping.
func (m *Manager[A]) readyEntries() []*entry[A] {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*entry[A]
	for _, e := range m.entries {
		if !e.stopping && isClosed(e.ready) && e.err == nil {
			out = append(out, e)
		}
	}
	return out
}

// validated computes the view of the user a key was just confirmed for
// again, in the background, if that user is open.
func (m *Manager[A]) validated(id Identity, key string) {
	if m.shared == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[userKey{instance: id.Instance, id: id.UserID}]
	if m.closed || !ok || e.stopping || !isClosed(e.ready) || e.err != nil {
		return
	}
	// Added under mu while not closed: Close waits for it.
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		m.refreshView(m.ctx, e, key)
	}()
}

// RefreshViews computes every active user's view of the shared store
// again now, as the periodic refresh does (access.Tracker.Renew: among
// replicas, from the answers another replica shared within half the
// refresh period, if any); it does nothing for a Manager without a
// shared store. It returns the first failure (each user's previous view
// keeps answering).
func (m *Manager[A]) RefreshViews(ctx context.Context) error {
	if m.shared == nil {
		return nil
	}
	var first error
	for _, e := range m.readyEntries() {
		if _, err := e.user.View.Renew(ctx); err != nil && first == nil {
			first = fmt.Errorf("refresh the view of user %d: %w", e.key.id, err)
		}
	}
	return first
}

// crawl runs the crawl account's syncs (SharedOptions.CrawlKey) until
// the Manager closes. OpenProject is asked who the key belongs to first,
// again and again with a growing pause while it cannot answer; a key it
// rejects ends the crawl, with the reason logged.
func (m *Manager[A]) crawl() {
	defer m.bg.Done()
	log := m.log.With("crawler", true)
	for delay := time.Duration(0); ; delay = min(max(2*delay, 10*time.Second), 5*time.Minute) {
		select {
		case <-m.ctx.Done():
			return
		case <-time.After(delay):
		}
		w, err := m.crawler()
		switch {
		case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrPermission):
			log.Error("OpenProject rejected the crawl key; the shared store is crawled only by its users", "error", err)
			return
		case err != nil:
			log.Warn("cannot start the crawl account's syncs; trying again", "error", err, "in", min(max(2*delay, 10*time.Second), 5*time.Minute))
			continue
		}
		sch, err := NewScheduler(w, SchedulerOptions{
			Spec: m.opts.Schedule, Logger: m.opts.Logger,
			OnSync: func(rep Report, err error) {
				m.up.observe(err, m.opts.Now())
				m.shared.crawlMu.Lock()
				m.shared.crawled, m.shared.crawlErr = &rep, err
				m.shared.crawlMu.Unlock()
			},
			Acquire: m.acquireSync,
		})
		if err != nil { // the spec was validated in NewManager
			log.Error("cannot schedule the crawl account's syncs", "error", err)
			return
		}
		log.Info("the crawl account syncs the shared store", "schedule", m.opts.Schedule)
		sch.Start(m.ctx)
		<-m.ctx.Done()
		sch.Stop()
		return
	}
}

// crawler returns the crawl account's worker.
func (m *Manager[A]) crawler() (*Worker, error) {
	client, err := m.opts.NewClient(m.opts.Shared.CrawlKey)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
	defer cancel()
	me, err := client.Me(ctx)
	if err != nil {
		return nil, fmt.Errorf("ask who the crawl key belongs to: %w", err)
	}
	m.shared.crawlMu.Lock()
	m.shared.crawler = me.ID
	m.shared.crawlMu.Unlock()
	var reads func(int64) (bool, bool)
	if me.Admin {
		// An administrator holds every permission.
		reads = func(int64) (bool, bool) { return true, true }
	}
	return m.shared.user.SharedWorker(client, Shared{
		Owner: me.ID, Admin: me.Admin, ReadsInternal: reads, Indexing: m.shared.indexing(me.ID),
	}, m.opts.UserOptions.WorkerOptions)
}

// SharedIndex reports whether the Manager serves every user from one
// shared store (ManagerOptions.Shared).
func (m *Manager[A]) SharedIndex() bool { return m.shared != nil }

// CrawlReport is the outcome of the crawl account's last sync
// (SharedOptions.CrawlKey): its report and error; ok is false before the
// first ended. Among replicas the sync runs wherever the lease is, so a
// replica that did not run the latest one reads its outcome from the
// sync states it left in the store.
func (m *Manager[A]) CrawlReport() (last CrawlOutcome, ok bool) {
	if m.shared == nil {
		return CrawlOutcome{}, false
	}
	m.shared.crawlMu.Lock()
	crawled, crawlErr, owner := m.shared.crawled, m.shared.crawlErr, m.shared.crawler
	m.shared.crawlMu.Unlock()
	if crawled != nil {
		last, ok = CrawlOutcome{Report: *crawled, Err: crawlErr}, true
	}
	if m.shared.user.Follower == nil || owner == 0 {
		return last, ok
	}
	stored, found := storedOutcome(m.shared.user.Store, owner)
	if found && (!ok || stored.Report.Started.After(last.Report.Started)) {
		return stored, true
	}
	return last, ok
}

// storedOutcome is owner's last sync as its sync states in st tell it:
// each kind's last finished run, from the earliest start to the latest
// end, failed if any of them failed. found is false until every kind
// Sync runs has finished once, which happens when the first sync ends.
func storedOutcome(st *store.Store, owner int64) (out CrawlOutcome, found bool) {
	var end time.Time
	for _, k := range syncedKinds() {
		s, err := st.SyncStateOf(owner, k)
		if err != nil || s.LastFinished.IsZero() {
			return CrawlOutcome{}, false
		}
		if start := s.LastStarted; !start.After(s.LastFinished) && (out.Report.Started.IsZero() || start.Before(out.Report.Started)) {
			out.Report.Started = start
		}
		if s.LastFinished.After(end) {
			end = s.LastFinished
		}
		if s.LastError != "" && out.Err == nil {
			out.Err = fmt.Errorf("sync %s: %s", k, s.LastError)
		}
	}
	if out.Report.Started.IsZero() {
		out.Report.Started = end
	}
	out.Report.Duration = end.Sub(out.Report.Started)
	return out, true
}

// CrawlOutcome is one sync of the crawl account.
type CrawlOutcome struct {
	Report Report
	Err    error
}

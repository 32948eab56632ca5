package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/audit"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/spread"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// UserIndex is the production Index: one user's store and bleve index
// (a *sync.User) behind a search engine. The server is built with a
// UserIndex that is not ready yet, so tools/list is answered before any
// file or network access; the caller opens the user in the background and
// hands it over with SetUser. Until then Searcher returns ErrIndexNotReady,
// or the reason opening failed (SetOpenError), so a search never answers a
// bare "no results" for an auth or network failure.
//
// It is safe for concurrent use. An operation on the user's files takes a
// lease on the current user under the lock and works without it, so a
// slow search, a rebuild wait or a retried refresh never holds the lock
// (a waiting SetUser would otherwise stall every search behind it);
// SetUser swaps the user at once and returns the old one only when its
// last lease ended, so a user is never closed under a running operation.
type UserIndex struct {
	schedule string
	opts     UserIndexOptions

	mu      gosync.RWMutex
	user    *sync.User
	eng     *search.Engine
	openErr error
	// opened is closed, and replaced, whenever the index becomes ready or
	// fails to open (WaitOpen).
	opened chan struct{}
	// leases counts the operations using each user (see lease); leaseMu
	// guards the map, which lease fills under the read lock.
	leaseMu gosync.Mutex
	leases  map[*sync.User]*gosync.WaitGroup
	// projects caches identifier -> id of the stored projects; it is
	// dropped when it misses, since projects are few and rarely change.
	projects map[string]int64
	qlog     *search.QueryLog
	// For a user of a shared store, eng sees nothing: searches use
	// viewEng, eng over the index restricted to viewVis, the user's
	// current view (made again when the view changes).
	viewMu  gosync.Mutex
	viewVis *indexer.Visibility
	viewEng *search.Engine

	syncMu   gosync.Mutex
	lastSync *SyncRun
	syncs    int

	// calls is the audit log of the user's tool calls; nil without
	// UserIndexOptions.Audit.
	calls *callLog
}

// UserIndexOptions configure a UserIndex.
type UserIndexOptions struct {
	// Schedule is the sync schedule shown by openproject_sync_status.
	Schedule string
	// LogQueries records every search and its results in the user's own
	// data directory (search.QueryLogFile), to build labelled sets from
	// real use. Off by default.
	LogQueries bool
	// Logger reports a query log that cannot be opened; nil discards.
	Logger *slog.Logger
	// Upstream, if set, says whether OpenProject is reachable (the
	// sync.Manager or sync.Runner); while it is not, every search answer
	// says so and since when, so an agent knows the answer comes from the
	// index alone.
	Upstream sync.UpstreamWatch
	// Audit, if set, records every tool call served from the index in
	// the tamper-evident audit log (package audit) in the user's own
	// directory: <sync.User.OwnDir>/audit, which for a user of a shared
	// index is their own <data dir>/<instance>/<user id>, and on a
	// replica the one in that replica's data dir (each replica records
	// the calls it served). nil: no audit log.
	Audit *audit.Options
	// Crew, if set, runs the spread work of every search the index
	// holder serves (spread.Crew); the HTTP server gives every user's
	// index the same one, so at most one helper spins. nil: each engine
	// makes its own.
	Crew *spread.Crew
}

// NewUserIndex returns a UserIndex that is not ready.
func NewUserIndex(opts UserIndexOptions) *UserIndex {
	x := &UserIndex{schedule: opts.Schedule, opts: opts, opened: make(chan struct{})}
	if opts.Audit != nil {
		x.calls = newCallLog(*opts.Audit, opts.Logger)
	}
	return x
}

// WaitOpen waits until the index is ready or has failed to open, or ctx
// ends: a search arriving in a process's first moments, while the index
// on disk is still being opened, answers from it instead of saying it is
// not ready (Options.OpenWait bounds the wait).
func (x *UserIndex) WaitOpen(ctx context.Context) {
	for {
		x.mu.RLock()
		done, ch := x.eng != nil || x.openErr != nil, x.opened
		x.mu.RUnlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// signalOpened wakes WaitOpen's callers; x.mu is held.
func (x *UserIndex) signalOpened() {
	close(x.opened)
	x.opened = make(chan struct{})
}

var _ Index = (*UserIndex)(nil)

// SetUser makes u the index searched from now on and returns the user it
// replaces (nil if none), which the caller closes. A nil u makes the index
// not ready again.
func (x *UserIndex) SetUser(u *sync.User) *sync.User {
	old, wait := x.setUser(u)
	if wait != nil {
		wait.Wait() // the old user's running operations, outside the lock
	}
	if x.calls != nil {
		x.calls.use(u) // outside the lock: it opens and reads files
	}
	return old
}

// setUser swaps the user under the lock; it returns the user replaced
// and what to wait for before it may be closed.
func (x *UserIndex) setUser(u *sync.User) (*sync.User, *gosync.WaitGroup) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.user
	x.user, x.projects = u, nil
	if u == nil {
		x.eng = nil
		_ = x.qlog.Close()
		x.qlog = nil
	} else if old != u || x.eng == nil {
		so := search.Options{BaseURL: u.Identity.BaseURL, Rebuilding: u.Rebuilding, Crew: x.opts.Crew}
		_ = x.qlog.Close() // the previous user's log, if any
		x.qlog = nil
		if x.opts.LogQueries {
			ql, err := search.OpenQueryLog(u.OwnDir)
			if err != nil && x.opts.Logger != nil {
				x.opts.Logger.Warn("query logging disabled", "error", err)
			}
			x.qlog, so.QueryLog = ql, ql
		}
		var idx search.Index = u.Index
		if u.View != nil {
			// A store every user shares: never searched unrestricted.
			so.Shared = &search.Owner{UserID: u.Identity.UserID, Login: u.Identity.Login, Name: u.Identity.Name}
			idx = u.Index.Restrict(&indexer.Visibility{})
		}
		x.eng = search.New(u.Store, idx, so)
		x.openErr = nil
		x.signalOpened()
		x.viewMu.Lock()
		x.viewVis, x.viewEng = nil, nil
		x.viewMu.Unlock()
	}
	if old == u {
		return nil, nil
	}
	x.leaseMu.Lock()
	wait := x.leases[old]
	delete(x.leases, old)
	x.leaseMu.Unlock()
	return old, wait
}

// lease returns the current user and engine for one operation, and the
// function that ends it; the user is not closed before that.
func (x *UserIndex) lease() (*sync.User, *search.Engine, func(), error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.user == nil {
		if x.openErr != nil {
			return nil, nil, nil, fmt.Errorf("open the local index: %w", x.openErr)
		}
		return nil, nil, nil, ErrIndexNotReady
	}
	eng := x.eng
	if v := x.user.View; v != nil {
		vis := v.Visibility()
		if vis == nil {
			return nil, nil, nil, ErrViewNotReady
		}
		eng = x.viewEngine(vis)
	}
	wg := x.leaseGroup(x.user)
	wg.Add(1) // under the read lock: setUser cannot swap in between
	return x.user, eng, wg.Done, nil
}

// ErrViewNotReady is a search's answer while what a user of a shared
// index may see has not been found out yet.
// It matches ErrIndexNotReady.
var ErrViewNotReady = fmt.Errorf("%w: what you may see is still being asked of OpenProject", ErrIndexNotReady)

// viewEngine returns the engine restricted to vis, x.mu read-held.
func (x *UserIndex) viewEngine(vis *indexer.Visibility) *search.Engine {
	x.viewMu.Lock()
	defer x.viewMu.Unlock()
	if x.viewVis != vis || x.viewEng == nil {
		x.viewVis, x.viewEng = vis, x.eng.WithIndex(x.user.Index.Restrict(vis))
	}
	return x.viewEng
}

// leaseGroup returns u's lease counter, creating it; the map is written
// under the read lock, so it has a lock of its own.
func (x *UserIndex) leaseGroup(u *sync.User) *gosync.WaitGroup {
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	if x.leases == nil {
		x.leases = map[*sync.User]*gosync.WaitGroup{}
	}
	wg := x.leases[u]
	if wg == nil {
		wg = &gosync.WaitGroup{}
		x.leases[u] = wg
	}
	return wg
}

// SetWorker attaches the sync worker to the current user: a user opened
// without the network (sync.OpenLocal) has none until the API confirmed
// whose key this is. The field is written under the lock the tools read
// it with.
func (x *UserIndex) SetWorker(w *sync.Worker) {
	x.mu.Lock()
	if x.user != nil {
		x.user.Worker = w
	}
	x.mu.Unlock()
}

// SetOpenError records why the user's index cannot be opened (nil clears
// it); searches report it while no user is set.
func (x *UserIndex) SetOpenError(err error) {
	x.mu.Lock()
	x.openErr = err
	x.signalOpened()
	x.mu.Unlock()
}

// Close closes the current user, waiting for running searches, and makes
// the index not ready. Stop the sync scheduler first.
func (x *UserIndex) Close() error {
	u := x.SetUser(nil)
	if x.calls != nil {
		x.calls.close()
	}
	if u != nil {
		return u.Close()
	}
	return nil
}

// audits implements callRecorder.
func (x *UserIndex) audits() bool { return x.calls != nil }

// recordCall implements callRecorder: the call goes to the current
// user's audit log.
func (x *UserIndex) recordCall(ctx context.Context, e audit.Entry) {
	if x.calls != nil {
		x.calls.record(ctx, e)
	}
}

// RecordSync remembers the outcome of a sync for openproject_sync_status;
// pass it as sync.SchedulerOptions.OnSync.
func (x *UserIndex) RecordSync(rep sync.Report, err error) {
	run := &SyncRun{StartedAt: rep.Started, DurationMS: rep.Duration.Milliseconds(), Requests: rep.Requests, OK: err == nil}
	if err != nil {
		// The per-kind errors are in the sync states; this is the summary
		// in the words the tools use for the same failures.
		run.Error = userMessage(err)
		if run.Error == "internal error" {
			run.Error = "the sync failed: see the server log"
		}
	}
	x.syncMu.Lock()
	x.lastSync = run
	x.syncs++
	x.syncMu.Unlock()
}

// Searcher implements Index.
func (x *UserIndex) Searcher() (Searcher, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.eng != nil {
		return userSearcher{x}, nil
	}
	if x.openErr != nil {
		return nil, fmt.Errorf("open the local index: %w", x.openErr)
	}
	return nil, ErrIndexNotReady
}

// RefreshWorkPackage implements Index through the user's worker. A
// rebuild of the index from the store must not race a commit, so it waits
// for one (bounded by ctx, which the tool call owns).
func (x *UserIndex) RefreshWorkPackage(ctx context.Context, id int64) error {
	u, _, done, err := x.lease()
	if err != nil {
		return err
	}
	defer done()
	x.mu.RLock()
	w := u.Worker // set by SetWorker under the lock
	x.mu.RUnlock()
	if w == nil {
		return errors.New("refresh work package: the sync worker has not started (OpenProject not reached yet)")
	}
	if on, _ := u.Rebuilding(); on {
		if err := u.WaitRebuild(ctx); err != nil {
			return err
		}
	}
	return w.RefreshWorkPackage(ctx, id)
}

// userSearcher searches the UserIndex's current user under a lease.
type userSearcher struct{ x *UserIndex }

func (s userSearcher) Search(ctx context.Context, q search.Query) (search.Response, error) {
	u, eng, done, err := s.x.lease()
	if err != nil {
		return search.Response{}, err
	}
	defer done()
	// On a replica, the user's own last write (through any replica)
	// shows in this answer: wait, briefly, for the index to hold it.
	wctx, cancel := context.WithTimeout(ctx, sync.DefaultOwnWritesWait)
	waitErr := u.AwaitOwnWrites(wctx)
	cancel()
	resp, err := eng.Search(ctx, q)
	if err == nil {
		s.x.noteUpstream(&resp.Index)
		notePermissions(u, &resp.Index)
		if waitErr != nil && ctx.Err() == nil {
			resp.Index.Note = strings.TrimSpace(resp.Index.Note + " This replica's index has not caught up with your last change yet; it will show within seconds.")
		}
	}
	return resp, err
}

func (s userSearcher) Freshness(ctx context.Context) (search.Freshness, error) {
	u, eng, done, err := s.x.lease()
	if err != nil {
		return search.Freshness{}, err
	}
	defer done()
	f, err := eng.Freshness(ctx)
	if err == nil {
		s.x.noteUpstream(&f)
		notePermissions(u, &f)
	}
	return f, err
}

// RefreshView implements viewRefresher: for a user of a shared index it
// computes their view again now; for a user's own index it does nothing.
func (s userSearcher) RefreshView(ctx context.Context) error {
	u, _, done, err := s.x.lease()
	if err != nil {
		return err
	}
	defer done()
	if u.View == nil {
		return nil
	}
	_, err = u.View.Refresh(ctx, false)
	return err
}

var _ viewRefresher = userSearcher{}

// notePermissions says, for a user of a shared index, how current the
// view the answer came through is; documents the user may see that the
// index lacks make it incomplete.
func notePermissions(u *sync.User, f *search.Freshness) {
	if u.View == nil {
		return
	}
	v := u.View.View()
	if v == nil {
		return
	}
	p := &search.Permissions{CheckedAt: v.CheckedAt, Missing: len(v.Missing)}
	if err := u.View.Err(); err != nil {
		p.LastError = userMessage(err)
	}
	f.Permissions = p
	if p.Missing > 0 && f.Complete {
		f.Complete = false
		note := fmt.Sprintf("%d items you may see are not indexed yet (your first sync of the shared index fetches them)", p.Missing)
		f.Note = strings.TrimSpace(f.Note + " " + note)
	}
}

// noteUpstream records an outage in f: the index still answers, but
// nothing newer than its last sync can be in it.
func (x *UserIndex) noteUpstream(f *search.Freshness) {
	if x.opts.Upstream == nil {
		return
	}
	if up := x.opts.Upstream.Upstream(); up.Down {
		f.Unreachable = &search.Unreachable{Since: up.Since, LastError: up.LastError}
	}
}

// ResolveProject implements projectResolver from the stored projects, so
// search tools accept an identifier ("website-relaunch") without an API
// request.
func (s userSearcher) ResolveProject(ctx context.Context, identifier string) (int64, bool, error) {
	key := strings.ToLower(identifier)
	u, _, done, err := s.x.lease()
	if err != nil {
		return 0, false, err
	}
	defer done()
	// A store every user shares holds projects this user may not see:
	// they resolve as unknown, as in the user's own index.
	sees := func(id int64) bool {
		if u.View == nil {
			return true
		}
		v := u.View.View()
		return v != nil && v.SeesProject(id)
	}
	s.x.mu.RLock()
	id, ok := s.x.projects[key]
	s.x.mu.RUnlock()
	if ok {
		if !sees(id) {
			return 0, false, nil
		}
		return id, true, nil
	}
	m := map[string]int64{}
	err = u.Store.ScanProjects(ctx, store.DefaultScanBatch, func(ps []openproject.Project) error {
		for _, p := range ps {
			m[strings.ToLower(p.Identifier)] = p.ID
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("read projects: %w", err)
	}
	s.x.mu.Lock()
	if s.x.user == u {
		s.x.projects = m
	}
	s.x.mu.Unlock()
	id, ok = m[key]
	if !ok || !sees(id) {
		return 0, false, nil
	}
	return id, true, nil
}

// syncInfo describes the user, the schedule and the last sync. It holds
// no secret: the API key is never part of it.
func (x *UserIndex) syncInfo() SyncInfo {
	x.mu.RLock()
	info := SyncInfo{Schedule: x.schedule}
	if u := x.user; u != nil {
		info.User = &SyncUser{ID: u.Identity.UserID, Login: u.Identity.Login, Name: u.Identity.Name}
		info.Instance = u.Identity.BaseURL
		info.DataDir = u.Dir
		info.SyncWorker = u.Worker != nil
		if u.Worker == nil {
			info.Note = "searching the local index; OpenProject has not been reached yet, so no sync is running"
		}
	}
	x.mu.RUnlock()
	x.syncMu.Lock()
	info.LastSync = x.lastSync
	info.SyncsSinceStart = x.syncs
	x.syncMu.Unlock()
	return info
}

// SyncInfo is what openproject_sync_status adds to the index freshness.
type SyncInfo struct {
	User     *SyncUser `json:"user,omitempty"`
	Instance string    `json:"instance,omitempty"`
	DataDir  string    `json:"dataDir,omitempty"`
	Schedule string    `json:"schedule,omitempty"`
	// SyncWorker is true once the background sync worker has started.
	SyncWorker      bool     `json:"syncWorker"`
	SyncsSinceStart int      `json:"syncsSinceStart"`
	LastSync        *SyncRun `json:"lastSync,omitempty"`
	// Note is merged into the answer's note.
	Note string `json:"-"`
}

// SyncUser identifies whose data is indexed.
type SyncUser struct {
	ID    int64  `json:"id"`
	Login string `json:"login,omitempty"`
	Name  string `json:"name,omitempty"`
}

// SyncRun is the outcome of one sync.
type SyncRun struct {
	StartedAt  time.Time `json:"startedAt"`
	DurationMS int64     `json:"durationMs"`
	Requests   int       `json:"requests"`
	OK         bool      `json:"ok"`
	Error      string    `json:"error,omitempty"`
}

// StoredAttachment implements attachmentStore: the attachment as the
// user's store holds it, text included.
func (s userSearcher) StoredAttachment(ctx context.Context, id int64) (openproject.Attachment, bool, error) {
	_, eng, done, err := s.x.lease()
	if err != nil {
		return openproject.Attachment{}, false, err
	}
	defer done()
	return eng.StoredAttachment(ctx, id)
}

// itemReader is a Searcher that reads one item by kind and id as the
// user may see it, from the store (userSearcher); found is false when
// the store lacks it or the user may not see it there.
type itemReader interface {
	Item(ctx context.Context, k kind.Kind, id int64) (search.Item, bool, error)
}

var _ itemReader = userSearcher{}

// Item implements itemReader through the engine the user searches with
// (search.Engine.Item says who sees what). For a user of a shared index
// a work package's internal comments are kept only where the user's
// current view says they read them: the store may already hold a
// comment made internal that the index, and so the view, has not taken
// in yet.
func (s userSearcher) Item(ctx context.Context, k kind.Kind, id int64) (search.Item, bool, error) {
	u, eng, done, err := s.x.lease()
	if err != nil {
		return search.Item{}, false, err
	}
	defer done()
	// As for a search: the user's own last write shows, on a replica too.
	wctx, cancel := context.WithTimeout(ctx, sync.DefaultOwnWritesWait)
	_ = u.AwaitOwnWrites(wctx)
	cancel()
	it, found, err := eng.Item(ctx, k, id)
	if err != nil || !found {
		return search.Item{}, false, err
	}
	if wp := it.WorkPackage; wp != nil && u.View != nil {
		reads := false
		if v := u.View.View(); v != nil {
			r, known := v.ReadsInternal(wp.Project.ID)
			reads = r && known
		}
		if !reads {
			it.Activities = slices.DeleteFunc(it.Activities, func(a openproject.Activity) bool { return a.Internal })
		}
	}
	return it, true, nil
}

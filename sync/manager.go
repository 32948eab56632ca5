package sync

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	gosync "sync"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// Manager defaults.
const (
	DefaultIdleTimeout        = 15 * time.Minute
	DefaultMaxUsers           = 50
	DefaultMaxConcurrentSyncs = 4
	DefaultKeyCacheTTL        = time.Minute
	DefaultInvalidKeyTTL      = 10 * time.Second
	DefaultKeyGrace           = 30 * time.Minute
	// maxKeyCache bounds the validation cache, which strangers can grow
	// by sending random keys.
	maxKeyCache = 10000
)

// ErrTooManyUsers is returned by Manager.Acquire when MaxUsers users are
// active and a new one arrives.
var ErrTooManyUsers = errors.New("too many active users")

// ErrManagerClosed is returned by Manager.Acquire after Close.
var ErrManagerClosed = errors.New("the server is shutting down")

// Attachment is what the Manager's caller keeps beside one user's data
// (the mcp package's index and servers). The Manager owns its lifetime:
// it is created when the user's data is opened and closed when the user
// is stopped; Close must close the *User it was made for.
type Attachment interface {
	// RecordSync is called after each of the user's syncs.
	RecordSync(Report, error)
	// Close closes the user's data (and anything else the attachment
	// holds) once no request uses it.
	Close() error
}

// ManagerOptions configure a Manager.
type ManagerOptions[A Attachment] struct {
	// DataDir holds every user's directory.
	DataDir string
	// NewClient returns an API client for one key of the instance the
	// Manager serves. The Manager keeps the client of the key that
	// started a user's worker while the worker runs, and no other copy
	// of any key.
	NewClient func(key string) (UserAPI, error)
	// Attach builds the caller's state for a freshly opened user.
	Attach func(u *User) A
	// Schedule is the sync schedule of every worker (default DefaultSpec).
	Schedule string
	// IdleTimeout stops a user's worker and closes their files after this
	// long without a request (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxUsers caps the users open at once (default DefaultMaxUsers).
	MaxUsers int
	// MaxConcurrentSyncs caps syncs running at once across users
	// (default DefaultMaxConcurrentSyncs).
	MaxConcurrentSyncs int
	// KeyCacheTTL is how long a validated key is trusted without asking
	// /users/me again; InvalidKeyTTL the same for a rejected key.
	KeyCacheTTL, InvalidKeyTTL time.Duration
	// KeyGrace is how long after OpenProject last confirmed a key the
	// key keeps being served while OpenProject cannot confirm it again:
	// an expired validation is renewed in the background, and the
	// request goes on with the identity it had, unless OpenProject
	// rejects the key. This keeps the index answering through an outage
	// instead of failing every request once KeyCacheTTL passed. Default
	// DefaultKeyGrace; negative disables it.
	KeyGrace time.Duration
	// UserOptions are passed to OpenUser.
	UserOptions UserOptions
	// Upstream, if set, receives what the Manager learns about reaching
	// OpenProject (shared with the tools); nil: a tracker of its own.
	Upstream *UpstreamTracker
	// OnOpen, if set, is called with every user opened (see OnOpenFunc);
	// what it returns is called when the user is stopped, before the
	// attachment is closed.
	OnOpen OnOpenFunc
	// Shared, if set, serves every user from the instance's one shared
	// store and index, each through their own view of it, instead of a
	// store and index per user. OnOpen is not called for such users:
	// the files are the instance's, not one user's.
	Shared *SharedOptions
	// Logger receives the manager's messages; nil discards.
	Logger *slog.Logger
	// Now is the clock of the caches and idle stops; nil means time.Now.
	Now func() time.Time
}

// Manager opens users on demand for a multi-user server: a key is
// validated once against /api/v3/users/me (cached for a short time, bad
// keys too), and maps to that user's store, index and sync worker, opened
// on first use and stopped after an idle period. The data stays on disk
// and is served again when the user returns.
//
// Isolation: users are keyed by (instance, user id) as /users/me reports
// it, never by key; a worker syncs with the key of the request that
// started it, which belongs to that user. Keys are kept only inside API
// clients; the validation cache is keyed by the key's SHA-256.
type Manager[A Attachment] struct {
	opts  ManagerOptions[A]
	log   *slog.Logger
	syncs *semaphore.Weighted

	ctx    context.Context
	cancel context.CancelFunc
	bg     gosync.WaitGroup

	keyFlight singleflight.Group
	keyMu     gosync.Mutex
	keys      map[[sha256.Size]byte]keyEntry

	up *UpstreamTracker

	// shared is the instance's shared store (ManagerOptions.Shared), nil
	// when every user has their own.
	shared *sharedInstance

	mu      gosync.Mutex
	closed  bool
	entries map[userKey]*entry[A]
	// released is signalled (under mu) whenever a lease ends, for stop
	// waiting until no lease holds an entry.
	released *gosync.Cond
	// stops tracks the stops started from a sync's callback (a revoked
	// key), which cannot wait for their own sync; Close waits for them.
	stops gosync.WaitGroup
}

type userKey struct {
	instance string
	id       int64
}

// keyEntry is a cached validation: the user, or the rejection.
type keyEntry struct {
	me       openproject.User
	instance string
	err      error
	expires  time.Time
	// verified is when OpenProject confirmed the key (a success only).
	verified time.Time
}

// entry is one open (or opening) user.
type entry[A Attachment] struct {
	key   userKey
	ready chan struct{} // closed when opening ended
	err   error         // why opening failed, valid after ready

	user   *User
	att    A
	sch    *Scheduler
	closed func() // undoes ManagerOptions.OnOpen
	cancel context.CancelFunc
	done   chan struct{} // closed when the start goroutine ended

	refs     int           // under Manager.mu
	lastUsed time.Time     // under Manager.mu
	stopping bool          // under Manager.mu
	gone     chan struct{} // closed when the entry is unregistered
}

// NewManager returns a Manager and starts its idle sweep; Close it.
func NewManager[A Attachment](opts ManagerOptions[A]) (*Manager[A], error) {
	if opts.NewClient == nil || opts.Attach == nil {
		return nil, errors.New("new manager: NewClient and Attach are required")
	}
	if opts.DataDir == "" {
		return nil, errors.New("new manager: DataDir is required")
	}
	opts.Schedule = cmp.Or(opts.Schedule, DefaultSpec)
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxUsers <= 0 {
		opts.MaxUsers = DefaultMaxUsers
	}
	if opts.MaxConcurrentSyncs <= 0 {
		opts.MaxConcurrentSyncs = DefaultMaxConcurrentSyncs
	}
	if opts.KeyCacheTTL <= 0 {
		opts.KeyCacheTTL = DefaultKeyCacheTTL
	}
	if opts.InvalidKeyTTL <= 0 {
		opts.InvalidKeyTTL = DefaultInvalidKeyTTL
	}
	opts.KeyGrace = cmp.Or(opts.KeyGrace, DefaultKeyGrace)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Validate the schedule now rather than at the first user.
	if _, err := NewScheduler(nil, SchedulerOptions{Spec: opts.Schedule}); err != nil {
		return nil, fmt.Errorf("new manager: %w", err)
	}
	var shared *sharedInstance
	if opts.Shared != nil {
		so := *opts.Shared
		if so.RefreshEvery <= 0 {
			so.RefreshEvery = DefaultViewRefresh
		}
		opts.Shared = &so
		var err error
		if shared, err = openSharedInstance(context.Background(), opts.DataDir, opts.Shared, opts.UserOptions); err != nil {
			return nil, fmt.Errorf("new manager: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager[A]{
		opts: opts, log: opts.Logger.With("subsystem", "sync-manager"),
		syncs: semaphore.NewWeighted(int64(opts.MaxConcurrentSyncs)),
		ctx:   ctx, cancel: cancel,
		keys:    map[[sha256.Size]byte]keyEntry{},
		entries: map[userKey]*entry[A]{},
		shared:  shared,
	}
	m.released = gosync.NewCond(&m.mu)
	if m.up = opts.Upstream; m.up == nil {
		m.up = &UpstreamTracker{}
	}
	m.bg.Add(1)
	go m.sweep()
	if shared != nil {
		m.bg.Add(1)
		go m.refreshViews()
		if opts.Shared.CrawlKey != "" {
			m.bg.Add(1)
			go m.crawl()
		}
		if shared.user.Follower != nil {
			m.bg.Add(1)
			go m.follow()
		}
	}
	return m, nil
}

// follow keeps this replica's index current with the shared store in
// PostgreSQL until the manager closes.
func (m *Manager[A]) follow() {
	defer m.bg.Done()
	u := m.shared.user
	for {
		err := u.catchUp(m.ctx, m.opts.UserOptions.RebuildProgress)
		if err == nil {
			break
		}
		if m.ctx.Err() != nil {
			return
		}
		m.log.Error("building this replica's index from the shared store failed; retrying", "error", err, "in", DefaultFollowPoll)
		select {
		case <-m.ctx.Done():
			return
		case <-time.After(DefaultFollowPoll):
		}
	}
	if err := u.Follower.Run(m.ctx); err != nil && m.ctx.Err() == nil {
		m.log.Error("following the shared store stopped", "error", err)
	}
}

// FollowStatus is how a replica's index stands against the shared store
// in PostgreSQL.
type FollowStatus struct {
	// Store names the store (without credentials).
	Store string
	// Applied is the store generation the index holds every change of;
	// Behind is how many commits it lacks.
	Applied, Behind uint64
	// Err is the last failure to apply or to read the store's
	// generation, nil when all is well.
	Err error
	// Building is set until the replica's index has been built from the
	// store and caught up; Done and Total count the build's documents.
	Building    bool
	Done, Total int
}

// Follow reports the replica's index against the shared store; ok is
// false when the store is not shared with other replicas.
func (m *Manager[A]) Follow() (st FollowStatus, ok bool) {
	if m.shared == nil || m.shared.user.Follower == nil {
		return FollowStatus{}, false
	}
	f := m.shared.user.Follower
	behind, err := f.Lag()
	ready, done, total := f.Ready()
	return FollowStatus{Store: m.shared.user.Store.Path(), Applied: f.Applied(), Behind: behind, Err: err,
		Building: !ready, Done: done, Total: total}, true
}

// Identity is who a key belongs to.
type Identity struct {
	// Instance is store.InstanceName of the base URL.
	Instance string
	UserID   int64
	Login    string
	Name     string
	// Admin says OpenProject reports the user as an administrator.
	Admin bool
}

// Validate returns the user key belongs to, asking /users/me at most
// once per key and cache period however many requests arrive at once. A
// rejected key fails with an error matching openproject.ErrUnauthenticated
// (or ErrPermission).
func (m *Manager[A]) Validate(ctx context.Context, key string) (Identity, error) {
	if key == "" {
		return Identity{}, fmt.Errorf("no API key: %w", openproject.ErrUnauthenticated)
	}
	h := sha256.Sum256([]byte(key))
	now := m.opts.Now()
	m.keyMu.Lock()
	ke, ok := m.keys[h]
	m.keyMu.Unlock()
	if !ok || !now.Before(ke.expires) {
		ch := m.keyFlight.DoChan(string(h[:]), func() (v any, err error) {
			defer func() {
				// DoChan re-raises a panic where nothing can recover it.
				if p := recover(); p != nil {
					err = fmt.Errorf("validate key: panic: %v", p)
				}
			}()
			// A caller that missed the cache just before another
			// flight for this key finished would start a second
			// check; the cache, read again here, has its answer.
			m.keyMu.Lock()
			cur, fresh := m.keys[h]
			m.keyMu.Unlock()
			if fresh && now.Before(cur.expires) {
				return cur, nil
			}
			return m.validate(key, h), nil
		})
		// Within the grace period the request goes on with the identity
		// OpenProject confirmed before; the check runs on in the
		// background and caches its answer (a rejection included) for
		// the requests after this one.
		if ok && m.keepKey(ke, now) {
			return identityOf(ke), nil
		}
		select {
		case r := <-ch:
			if r.Err != nil {
				return Identity{}, r.Err
			}
			ke = r.Val.(keyEntry)
		case <-ctx.Done():
			return Identity{}, context.Cause(ctx)
		}
	}
	if ke.err != nil {
		return Identity{}, ke.err
	}
	return identityOf(ke), nil
}

func identityOf(ke keyEntry) Identity {
	return Identity{Instance: ke.instance, UserID: ke.me.ID, Login: ke.me.Login, Name: ke.me.Name, Admin: ke.me.Admin}
}

// Upstream is what the Manager last learned about reaching OpenProject,
// from key checks and syncs.
func (m *Manager[A]) Upstream() Upstream { return m.up.Upstream() }

// ObserveUpstream implements UpstreamWatch.
func (m *Manager[A]) ObserveUpstream(err error) { m.up.observe(err, m.opts.Now()) }

// validate asks /users/me, detached from any one caller's context (the
// singleflight shares the answer), and caches definite answers.
func (m *Manager[A]) validate(key string, h [sha256.Size]byte) keyEntry {
	client, err := m.opts.NewClient(key)
	if err != nil {
		return keyEntry{err: fmt.Errorf("validate key: %w", err)}
	}
	inst, err := store.InstanceName(client.BaseURL())
	if err != nil {
		return keyEntry{err: fmt.Errorf("validate key: %w", err)}
	}
	ctx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
	defer cancel()
	me, err := client.Me(ctx)
	if err != nil && ctx.Err() != nil && m.ctx.Err() == nil {
		err = fmt.Errorf("validate key: %w: %w", errCheckTimeout, err)
	}
	m.up.observe(err, m.opts.Now())
	ke := keyEntry{me: me, instance: inst, err: err}
	switch {
	case err == nil:
		ke.verified = m.opts.Now()
		ke.expires = ke.verified.Add(m.opts.KeyCacheTTL)
	case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrPermission):
		ke.expires = m.opts.Now().Add(m.opts.InvalidKeyTTL)
	default:
		// A network or server failure says nothing about the key.
		return ke
	}
	m.keyMu.Lock()
	if len(m.keys) >= maxKeyCache {
		m.pruneKeysLocked(m.opts.Now())
		if len(m.keys) >= maxKeyCache {
			clear(m.keys)
		}
	}
	m.keys[h] = ke
	m.keyMu.Unlock()
	if err == nil {
		m.validated(identityOf(ke), key)
	}
	return ke
}

func (m *Manager[A]) pruneKeysLocked(now time.Time) {
	for h, ke := range m.keys {
		if !m.keepKey(ke, now) {
			delete(m.keys, h)
		}
	}
}

// keepKey reports whether a cached validation still serves: before it
// expires, and after that, for a confirmed key, until its grace period
// ends (Validate answers from it while OpenProject cannot be asked).
// Dropping an expired entry within its grace made every request fail
// with the outage's error once the sweep ran, a minute or two into it.
func (m *Manager[A]) keepKey(ke keyEntry, now time.Time) bool {
	if now.Before(ke.expires) {
		return true
	}
	return ke.err == nil && m.opts.KeyGrace > 0 && now.Before(ke.verified.Add(m.opts.KeyGrace))
}

// Lease is one request's hold on a user: the user stays open until
// Release. It carries no key.
type Lease[A Attachment] struct {
	Identity   Identity
	Attachment A
	m          *Manager[A]
	e          *entry[A]
	once       gosync.Once
}

// Release ends the lease; the idle period starts when the last lease of
// a user ends.
func (l *Lease[A]) Release() {
	l.once.Do(func() {
		l.m.mu.Lock()
		l.e.refs--
		l.e.lastUsed = l.m.opts.Now()
		l.m.mu.Unlock()
	})
}

// Acquire validates key and returns a lease on its user, opening the
// user's data and starting their worker (with this key's client) if they
// are not active. It fails with ErrTooManyUsers when MaxUsers others are
// active, and with an ErrUnauthenticated error for a rejected key.
func (m *Manager[A]) Acquire(ctx context.Context, key string) (*Lease[A], error) {
	if m.shared != nil && m.shared.user.Follower != nil {
		if ready, done, total := m.shared.user.Follower.Ready(); !ready {
			return nil, fmt.Errorf("%w (%d of %d documents); try again shortly, or another replica", ErrIndexBuilding, done, total)
		}
	}
	id, err := m.Validate(ctx, key)
	if err != nil {
		return nil, err
	}
	uk := userKey{instance: id.Instance, id: id.UserID}
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrManagerClosed
		}
		e, ok := m.entries[uk]
		if !ok {
			if len(m.entries) >= m.opts.MaxUsers {
				m.mu.Unlock()
				return nil, fmt.Errorf("%w: %d users are active (the limit); try again later", ErrTooManyUsers, m.opts.MaxUsers)
			}
			e = &entry[A]{key: uk, ready: make(chan struct{}), done: make(chan struct{}), gone: make(chan struct{})}
			m.entries[uk] = e
			e.refs++
			m.mu.Unlock()
			m.open(e, key, id)
		} else {
			if e.stopping {
				m.mu.Unlock()
				// Wait for the stop to finish, then open again.
				select {
				case <-e.done:
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
				m.waitGone(ctx, e)
				continue
			}
			e.refs++
			m.mu.Unlock()
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			m.release(e)
			return nil, context.Cause(ctx)
		}
		if e.err != nil {
			m.release(e)
			return nil, e.err
		}
		return &Lease[A]{Identity: id, Attachment: e.att, m: m, e: e}, nil
	}
}

func (m *Manager[A]) release(e *entry[A]) {
	m.mu.Lock()
	e.refs--
	e.lastUsed = m.opts.Now()
	m.released.Broadcast()
	m.mu.Unlock()
}

// unregisterLocked removes e from the entries (if it is still there) and
// tells waitGone; m.mu is held.
func (m *Manager[A]) unregisterLocked(e *entry[A]) {
	if m.entries[e.key] == e {
		delete(m.entries, e.key)
	}
	select {
	case <-e.gone:
	default:
		close(e.gone)
	}
}

// waitGone waits until e is no longer registered, or ctx ends.
func (m *Manager[A]) waitGone(ctx context.Context, e *entry[A]) {
	select {
	case <-e.gone:
	case <-ctx.Done():
	}
}

// meUser answers Me from the validation, so opening a user costs no
// second /users/me request.
type meUser struct {
	UserAPI
	me openproject.User
}

func (u meUser) Me(context.Context) (openproject.User, error) { return u.me, nil }

// open opens e's user with key's client and starts its scheduler in the
// background. It closes e.ready; on failure it unregisters e.
func (m *Manager[A]) open(e *entry[A], key string, id Identity) {
	fail := func(err error) {
		e.err = err
		m.mu.Lock()
		m.unregisterLocked(e)
		m.mu.Unlock()
		close(e.done)
		close(e.ready)
	}
	client, err := m.opts.NewClient(key)
	if err != nil {
		fail(fmt.Errorf("open user: %w", err))
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	var u *User
	if m.shared != nil {
		u, err = m.openShared(ctx, client, id)
	} else {
		u, err = OpenUser(ctx, m.opts.DataDir, meUser{UserAPI: client, me: openproject.User{ID: id.UserID, Login: id.Login, Name: id.Name}}, m.opts.UserOptions)
	}
	if err != nil {
		cancel()
		m.log.Error("cannot open user", "user_id", id.UserID, "error", err)
		fail(fmt.Errorf("open the user's index: %w", err))
		return
	}
	e.user, e.cancel = u, cancel
	e.att = m.opts.Attach(u)
	sch, err := NewScheduler(u.Worker, SchedulerOptions{
		Spec: m.opts.Schedule, Logger: m.opts.Logger,
		OnSync: func(rep Report, err error) {
			m.up.observe(err, m.opts.Now())
			if err == nil || !errors.Is(err, openproject.ErrUnauthenticated) {
				// What the sync brought may change what the user sees.
				m.refreshView(ctx, e, key)
			}
			e.att.RecordSync(rep, err)
			if errors.Is(err, openproject.ErrUnauthenticated) {
				// The worker's key was revoked: it must not keep syncing
				// (or serving) with it. The next request revalidates.
				m.log.Warn("the sync worker's API key was rejected; stopping the user", "user_id", id.UserID)
				m.forgetKey(key)
				if m.shared != nil {
					m.shared.forget(id.UserID) // no view of theirs serves again unasked
				}
				// Not here: stopping waits for this very sync.
				m.stops.Go(func() { m.stop(e) })
			}
		},
		Acquire: m.acquireSync,
	})
	if err != nil { // the spec was validated in NewManager
		cancel()
		_ = e.att.Close()
		fail(err)
		return
	}
	e.sch = sch
	e.closed = func() {}
	if m.opts.OnOpen != nil && m.shared == nil {
		if c := m.opts.OnOpen(u, syncNowOf(sch)); c != nil {
			e.closed = c
		}
	}
	m.log.Info("user started", "user_id", id.UserID, "dir", u.Dir)
	close(e.ready)
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		defer close(e.done)
		// A sync is skipped while the index is rebuilt; start after it.
		if err := u.WaitRebuild(ctx); err != nil && ctx.Err() == nil {
			m.log.Error("index rebuild failed; syncing anyway", "user_id", id.UserID, "error", err)
		}
		if ctx.Err() == nil {
			sch.Start(ctx)
		}
	}()
}

// syncNowOf is the sync-now function of a user's scheduler, which says
// why it cannot sync before the scheduler started (a rebuild runs).
func syncNowOf(sch *Scheduler) func(context.Context) (Report, error) {
	return func(ctx context.Context) (Report, error) {
		rep, err := sch.SyncNow(ctx)
		if errors.Is(err, ErrNotStarted) {
			return rep, fmt.Errorf("%w: the index is being rebuilt from the store, or the user is stopping", ErrNotSyncing)
		}
		return rep, err
	}
}

// acquireSync waits for one of the MaxConcurrentSyncs sync slots, shared
// by every scheduler of the Manager, and returns its release.
func (m *Manager[A]) acquireSync(ctx context.Context) (func(), error) {
	if err := m.syncs.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { m.syncs.Release(1) }, nil
}

// Reject forgets that key was valid, after OpenProject refused it
// outside a sync (a tool call with a revoked key or OAuth token): the
// next request with it is asked about again, and refused.
func (m *Manager[A]) Reject(key string) { m.forgetKey(key) }

func (m *Manager[A]) forgetKey(key string) {
	h := sha256.Sum256([]byte(key))
	m.keyMu.Lock()
	delete(m.keys, h)
	m.keyMu.Unlock()
	m.keyFlight.Forget(string(h[:]))
}

// stop stops e's scheduler at a safe point and closes its data, once no
// lease holds it (a running request finishes first).
func (m *Manager[A]) stop(e *entry[A]) {
	m.mu.Lock()
	if e.stopping {
		m.mu.Unlock()
		<-e.gone // another stop is closing it: done when that one is
		return
	}
	e.stopping = true
	m.mu.Unlock()
	<-e.ready
	if e.err == nil {
		e.cancel()
		<-e.done
		e.sch.Stop()
		m.mu.Lock()
		for e.refs > 0 {
			m.released.Wait() // a running request finishes first
		}
		m.mu.Unlock()
		e.closed()
		if err := e.att.Close(); err != nil {
			m.log.Error("close user", "user_id", e.key.id, "error", err)
		}
		m.log.Info("user stopped", "user_id", e.key.id)
	}
	m.mu.Lock()
	m.unregisterLocked(e)
	m.mu.Unlock()
}

// sweep stops idle users and drops expired key validations.
func (m *Manager[A]) sweep() {
	defer m.bg.Done()
	tick := min(max(m.opts.IdleTimeout/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		now := m.opts.Now()
		m.keyMu.Lock()
		m.pruneKeysLocked(now)
		m.keyMu.Unlock()
		var idle []*entry[A]
		m.mu.Lock()
		for _, e := range m.entries {
			if !e.stopping && e.refs == 0 && isClosed(e.ready) && now.Sub(e.lastUsed) >= m.opts.IdleTimeout {
				idle = append(idle, e)
			}
		}
		m.mu.Unlock()
		for _, e := range idle {
			m.log.Info("stopping idle user", "user_id", e.key.id)
			m.stop(e)
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// ActiveUsers is the number of users open (or opening).
func (m *Manager[A]) ActiveUsers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

// NewClient returns an API client for key (for live tools); it is the
// ManagerOptions.NewClient the Manager was built with.
func (m *Manager[A]) NewClient(key string) (UserAPI, error) { return m.opts.NewClient(key) }

// Close stops every worker at a safe point (a running sync is cancelled
// between requests and commits) and closes every user's data. Requests
// still holding a lease are waited for; call it after the HTTP server
// drained. ctx bounds the wait.
func (m *Manager[A]) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	all := make([]*entry[A], 0, len(m.entries))
	for _, e := range m.entries {
		all = append(all, e)
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg gosync.WaitGroup
		for _, e := range all {
			wg.Go(func() { m.stop(e) })
		}
		wg.Wait()
		// A stop begun by a revoked key's sync may still be closing
		// files: the entry was stopping, so the loop above skipped it.
		m.stops.Wait()
		m.cancel()
		m.bg.Wait()
		if m.shared != nil {
			if err := m.shared.user.Close(); err != nil {
				m.log.Error("close the shared store", "error", err)
			}
		}
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		m.cancel()
		return fmt.Errorf("close manager: %w", context.Cause(ctx))
	}
}

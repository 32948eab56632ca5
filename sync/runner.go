package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Publisher receives the user a Runner opens and the outcome of its
// syncs: the mcp package's UserIndex, which answers the search tools.
type Publisher interface {
	// SetUser makes u the user searched (nil: none) and returns the one
	// it replaced once no operation uses it any more.
	SetUser(u *User) *User
	// SetWorker attaches the worker that refreshes single items.
	SetWorker(w *Worker)
	// SetOpenError records why no user is searchable yet.
	SetOpenError(err error)
	// RecordSync is called after every sync.
	RecordSync(rep Report, err error)
}

// OnOpenFunc is called with every user a Runner or Manager opens, before
// anything else uses it, and with the function that runs a sync of that
// user now (Scheduler.SyncNow once the scheduler runs). The function it
// returns is called before the user is closed. The control package uses
// it to serve CLI commands from the process that holds the files.
type OnOpenFunc func(u *User, syncNow func(context.Context) (Report, error)) (closed func())

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// DataDir holds the user directories.
	DataDir string
	// Client is the API client of the one key this process serves.
	Client UserAPI
	// Key is Client's API key. Once OpenProject confirmed it, the store
	// keeps a slow salted verifier of it (never the key), so the next
	// start answers for this key from the local index before OpenProject
	// is reachable.
	Key string
	// UserOptions open the user's data.
	UserOptions UserOptions
	// Schedule is the sync schedule (default DefaultSpec).
	Schedule string
	// Publish receives the user; required.
	Publish Publisher
	// OnOpen, if set, is called with every user opened (see OnOpenFunc).
	OnOpen OnOpenFunc
	// Upstream, if set, receives what the runner learns about reaching
	// OpenProject (shared with the tools); nil: a tracker of its own.
	Upstream *UpstreamTracker
	// Logger receives the runner's messages; nil discards.
	Logger *slog.Logger
}

// Runner opens the data of one API key's user and syncs it on schedule:
// the background of a single-user (stdio) server. The open policy:
//
//   - The local index opens first, without the network, so the search
//     tools answer at once; it is published before OpenProject confirms
//     the key only if the store remembers this very key for its user
//     (store.Store.KeyVerified). Otherwise it waits for /users/me, and a
//     key of another user opens that user's data instead.
//   - Failures that may pass (Retryable) are retried with a growing
//     pause (RetryPause); a rejected key is final, and makes the store
//     forget the keys it remembered.
type Runner struct {
	opts RunnerOptions
	log  *slog.Logger

	up *UpstreamTracker

	mu      gosync.Mutex
	sch     *Scheduler
	waiting error // why no scheduler runs yet, for SyncNow
}

// Upstream is what the Runner last learned about reaching OpenProject,
// from its key checks and syncs.
func (r *Runner) Upstream() Upstream { return r.up.Upstream() }

// ObserveUpstream implements UpstreamWatch.
func (r *Runner) ObserveUpstream(err error) { r.up.observe(err, time.Now()) }

// recordSync passes a sync's outcome on, noting what it says about
// reaching OpenProject.
func (r *Runner) recordSync(rep Report, err error) {
	r.up.observe(err, time.Now())
	r.opts.Publish.RecordSync(rep, err)
}

// NewRunner returns a Runner; Run starts it.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if opts.Client == nil || opts.Publish == nil {
		return nil, errors.New("new runner: Client and Publish are required")
	}
	opts.Schedule = cmp.Or(opts.Schedule, DefaultSpec)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	up := opts.Upstream
	if up == nil {
		up = &UpstreamTracker{}
	}
	return &Runner{opts: opts, up: up, log: log.With("subsystem", "runner"), waiting: errors.New("the index is being opened")}, nil
}

// Retry pauses of opening a user: a network or server failure is retried
// with a pause growing from RetryMin to RetryMax, files held by another
// process every LockedRetry.
const (
	RetryMin    = 2 * time.Second
	RetryMax    = time.Minute
	LockedRetry = 30 * time.Second
)

// Retryable tells failures to open a user that may pass (network,
// server, rate limit, another process holding the files) from those that
// will not while the process runs with the same configuration (a
// rejected key, a store that belongs to someone else).
func Retryable(err error) bool {
	switch {
	case errors.Is(err, openproject.ErrUnauthenticated), errors.Is(err, openproject.ErrPermission),
		errors.Is(err, ErrIdentityMismatch):
		return false
	case errors.Is(err, ErrLocked), errors.Is(err, openproject.ErrNetwork), errors.Is(err, openproject.ErrServer),
		errors.Is(err, openproject.ErrRateLimited), errors.Is(err, openproject.ErrMalformed), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return false
}

// RetryPause is the pause before attempt number attempt (from 0) after
// err.
func RetryPause(err error, attempt int) time.Duration {
	if errors.Is(err, ErrLocked) {
		return LockedRetry
	}
	return min(RetryMin<<min(attempt, 10), RetryMax)
}

// ErrNotSyncing is returned by a Runner's sync-now function while it has
// no scheduler: the key is not yet confirmed, or the index is opening.
var ErrNotSyncing = errors.New("this opsearch process is not syncing yet")

// Run opens the user, waits for a rebuild of the index if one runs, and
// syncs on schedule until ctx ends. Before it returns, the scheduler is
// stopped (a running sync cancelled at a safe point), the user withdrawn
// from the Publisher and closed.
func (r *Runner) Run(ctx context.Context) error {
	o := r.open(ctx)
	if o == nil {
		return nil
	}
	defer func() {
		if err := r.close(o); err != nil {
			r.log.Error("close the local index", "error", err)
		}
	}()
	u := o.u
	// A sync would be skipped while the index is rebuilt from the store;
	// start the schedule after, so the first sync runs at once.
	r.setWaiting(errors.New("the index is being rebuilt from the store"))
	if err := u.WaitRebuild(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		r.log.Error("index rebuild failed; syncing anyway", "error", err)
	}
	sch, err := NewScheduler(o.w, SchedulerOptions{Spec: r.opts.Schedule, Logger: r.opts.Logger, OnSync: r.recordSync})
	if err != nil {
		return fmt.Errorf("start the sync scheduler: %w", err)
	}
	r.mu.Lock()
	r.sch = sch
	r.mu.Unlock()
	sch.Start(ctx) // runs one sync right away
	r.log.Info("sync scheduler started", "user_id", u.Identity.UserID, "dir", u.Dir)
	<-ctx.Done()
	sch.Stop()
	r.log.Info("sync stopped")
	return nil
}

// opened is a user the Runner opened, with the worker that syncs it;
// closed undoes the OnOpen hook.
type opened struct {
	u         *User
	w         *Worker
	published bool
	closed    func()
}

func (r *Runner) setWaiting(err error) {
	r.mu.Lock()
	r.waiting = err
	r.mu.Unlock()
}

// syncNow is the sync-now function given to OnOpen.
func (r *Runner) syncNow(ctx context.Context) (Report, error) {
	r.mu.Lock()
	sch, why := r.sch, r.waiting
	r.mu.Unlock()
	if sch == nil {
		return Report{}, fmt.Errorf("%w: %w", ErrNotSyncing, why)
	}
	return sch.SyncNow(ctx)
}

// attach runs the OnOpen hook for a freshly opened user.
func (r *Runner) attach(u *User) *opened {
	o := &opened{u: u, closed: func() {}}
	if r.opts.OnOpen != nil {
		if c := r.opts.OnOpen(u, r.syncNow); c != nil {
			o.closed = c
		}
	}
	return o
}

// publish hands o's user to the Publisher.
func (r *Runner) publish(o *opened, how string, verified bool) {
	r.opts.Publish.SetUser(o.u)
	o.published = true
	r.log.Info(how, "user_id", o.u.Identity.UserID, "login", o.u.Identity.Login, "dir", o.u.Dir, "key_verified_offline", verified)
}

// close withdraws o's user from the Publisher (waiting for the searches
// using it), undoes the hook and closes the files.
func (r *Runner) close(o *opened) error {
	if o.published {
		r.opts.Publish.SetUser(nil)
	}
	o.closed()
	return o.u.Close()
}

// open returns the user's data with a Worker, or nil when ctx ended or
// opening cannot succeed (a rejected API key). The existing local index
// is searchable as soon as it is open, before /users/me confirms whose
// key this is, if the store remembers the key.
func (r *Runner) open(ctx context.Context) *opened {
	if o := r.openLocal(ctx); o != nil || ctx.Err() != nil {
		return o
	}
	for attempt := 0; ; attempt++ {
		u, err := OpenUser(ctx, r.opts.DataDir, r.opts.Client, r.opts.UserOptions)
		r.up.observe(err, time.Now())
		if err == nil {
			if err := u.Store.RememberKey(r.opts.Key); err != nil {
				r.log.Warn("cannot remember the key for offline use", "error", err)
			}
			o := r.attach(u)
			o.w = u.Worker
			r.publish(o, "index open", false)
			return o
		}
		if ctx.Err() != nil {
			return nil
		}
		r.opts.Publish.SetOpenError(err)
		r.setWaiting(err)
		if !Retryable(err) {
			r.log.Error("cannot open the index; search tools will report this", "error", err)
			return nil
		}
		d := RetryPause(err, attempt)
		r.log.Warn("cannot open the index yet; retrying", "error", err, "retry_in", d)
		if !sleepCtx(ctx, d) {
			return nil
		}
	}
}

// openLocal opens the one local user of this instance without the
// network, then checks with /users/me that the API key belongs to that
// user. It returns the user with a Worker attached, or nil when there is
// no single local user or it belongs to someone else (the caller then
// opens the key's user), or when ctx ended.
func (r *Runner) openLocal(ctx context.Context) *opened {
	var u *User
	var keyUser int64
	base := r.opts.Client.BaseURL()
	for attempt := 0; u == nil; attempt++ {
		// The user whose store remembers this key, if any; otherwise
		// the one local user, which waits for OpenProject.
		var err error
		keyUser, err = LocalUserForKey(r.opts.DataDir, base, r.opts.Key, r.opts.UserOptions)
		if err == nil {
			u, err = OpenLocal(ctx, r.opts.DataDir, base, keyUser, r.opts.UserOptions)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrNoLocalUser) || ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrLocked):
			r.opts.Publish.SetOpenError(err)
			r.setWaiting(err)
			r.log.Warn("the local index is in use by another opsearch process; retrying", "error", err, "retry_in", LockedRetry)
			if !sleepCtx(ctx, LockedRetry) {
				return nil
			}
		default:
			// A damaged or foreign directory: OpenUser decides with the
			// identity from the API, and reports its own error.
			r.log.Warn("cannot open the local index without the network", "error", err)
			return nil
		}
	}
	o := r.attach(u)
	// The index answers before OpenProject confirms the key only if
	// OpenProject confirmed this very key for this user before (the
	// store keeps a slow salted verifier, never the key): another key on
	// the same data directory waits for /users/me.
	verified := keyUser != 0
	if verified {
		r.publish(o, "local index open", true)
	} else {
		r.opts.Publish.SetOpenError(ErrKeyNotVerified)
	}
	r.setWaiting(errors.New("waiting for OpenProject to confirm the API key"))
	drop := func() {
		if err := r.close(o); err != nil {
			r.log.Error("close the local index", "error", err)
		}
	}
	for attempt := 0; ; attempt++ {
		me, err := r.opts.Client.Me(ctx)
		r.up.observe(err, time.Now())
		switch {
		case err == nil && me.ID == u.Identity.UserID:
			if err := u.Store.RememberKey(r.opts.Key); err != nil {
				r.log.Warn("cannot remember the key for offline use", "error", err)
			}
			if !o.published {
				r.publish(o, "local index open", false)
			}
			// Through the Publisher, which writes the field under the
			// lock its tools read it with.
			o.w = NewWorker(r.opts.Client, u.Store, u.Index, r.workerOptions(u))
			r.opts.Publish.SetWorker(o.w)
			return o
		case err == nil:
			r.log.Info("the API key belongs to another user than the local index; opening theirs", "local_user", u.Identity.UserID, "key_user", me.ID)
			drop()
			return nil
		case ctx.Err() != nil:
			drop()
			return nil
		case !Retryable(err):
			// A rejected key must not keep serving the data it was
			// trusted with, and no remembered key is trusted offline
			// until OpenProject confirms one again.
			if err := u.Store.ForgetKeys(); err != nil {
				r.log.Error("forget the remembered keys", "error", err)
			}
			drop()
			r.opts.Publish.SetOpenError(err)
			r.setWaiting(err)
			r.log.Error("OpenProject rejected the API key; search tools will report this", "error", err)
			return nil
		}
		d := RetryPause(err, attempt)
		if o.published {
			r.log.Warn("cannot reach OpenProject; searching the local index meanwhile", "error", err, "retry_in", d)
		} else {
			r.log.Warn("cannot reach OpenProject; the local index waits until it confirms the key", "error", err, "retry_in", d)
		}
		if !sleepCtx(ctx, d) {
			drop()
			return nil
		}
	}
}

// workerOptions are the worker's options for u, logging where u logs
// unless the caller chose a logger.
func (r *Runner) workerOptions(u *User) Options {
	wo := r.opts.UserOptions.WorkerOptions
	if wo.Logger == nil {
		wo.Logger = u.log
	}
	return wo
}

// sleepCtx sleeps for d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	gosync "sync"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultSpec is the default sync schedule.
const DefaultSpec = "@every 2m"

// SchedulerOptions configure a Scheduler.
type SchedulerOptions struct {
	// Spec is a standard 5-field cron spec or a descriptor such as
	// "@every 2m" (default DefaultSpec).
	Spec string
	// NoJitter disables the random shift of each run by up to half the
	// interval either way, which keeps many users' workers from hitting
	// OpenProject in lock-step.
	NoJitter bool
	// BackoffMax caps the pause after consecutive failed syncs (default
	// 30 minutes); the pause grows by one interval per failure.
	BackoffMax time.Duration
	// Logger receives cron's and the scheduler's messages; nil discards.
	// Nothing is ever written to stdout, which the MCP stdio transport
	// owns.
	Logger *slog.Logger
	// Now is the clock for backoff decisions; nil means time.Now.
	Now func() time.Time
	// OnSync, if set, is called after each sync with its outcome.
	OnSync func(Report, error)
	// Acquire, if set, is called before each sync and must return once
	// the sync may run (or fail when ctx ends); release is called after
	// it. The Manager uses it to cap concurrent syncs across users.
	Acquire func(ctx context.Context) (release func(), err error)
}

// Scheduler runs a Worker's syncs on a cron schedule and on demand.
// Scheduled and triggered syncs never overlap: cron's SkipIfStillRunning
// skips a tick while the job runs, and Worker.Sync itself refuses a second
// concurrent sync (ErrSyncRunning), which covers Trigger too.
type Scheduler struct {
	w    *Worker
	opts SchedulerOptions
	log  *slog.Logger
	cron *cron.Cron
	sch  cron.Schedule

	trigger chan struct{}
	// turn is held by the one sync of this scheduler that runs: a
	// scheduled tick skips while it is taken, a trigger or SyncNow waits
	// for it, so syncs never overlap and SyncNow can wait its turn
	// instead of failing with ErrSyncRunning.
	turn    chan struct{}
	mu      gosync.Mutex
	cancel  context.CancelFunc
	stopped bool
	wg      gosync.WaitGroup
	ctx     context.Context
	back    backoff
	// watching is set while watchLease runs.
	watching bool
}

// ParseSpec parses a sync schedule: a 5-field cron spec or a descriptor
// such as "@every 2m", optionally after CRON_TZ=<zone>. It is
// cron.ParseStandard, except that a time zone with nothing after it
// ("TZ=UTC") is an error: cron slices past the missing space and panics.
func ParseSpec(spec string) (cron.Schedule, error) {
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.Contains(spec, " ") {
		return nil, fmt.Errorf("time zone %s is not followed by a schedule", spec)
	}
	return cron.ParseStandard(spec)
}

// NewScheduler parses the spec and returns a stopped Scheduler.
func NewScheduler(w *Worker, opts SchedulerOptions) (*Scheduler, error) {
	opts.Spec = cmp.Or(opts.Spec, DefaultSpec)
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sch, err := ParseSpec(opts.Spec)
	if err != nil {
		return nil, fmt.Errorf("parse schedule %q: %w", opts.Spec, err)
	}
	if !opts.NoJitter {
		sch = jitterSchedule{inner: sch}
	}
	log := opts.Logger.With("subsystem", "sync-scheduler")
	cl := cronLogger{log}
	c := cron.New(
		cron.WithLogger(cl),
		// SkipIfStillRunning must wrap Recover: the other way round a
		// panic loses the skip token and the job never runs again
		// (robfig/cron #366).
		cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl)),
	)
	return &Scheduler{w: w, opts: opts, log: log, cron: c, sch: sch, trigger: make(chan struct{}, 1), turn: make(chan struct{}, 1)}, nil
}

// Start schedules syncs and runs one right away. Syncs run with a context
// derived from ctx that Stop cancels.
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil || s.stopped {
		return
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.cron.Schedule(s.sch, cron.FuncJob(func() { s.runOnce(s.ctx, true) }))
	s.cron.Start()
	s.wg.Add(1)
	go s.loop(s.ctx)
	s.Trigger()
}

// Stop cancels a running sync and waits for it and the schedule to end.
// cron's own Stop does not cancel jobs, hence the context.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	cancel := s.cancel
	s.stopped = true
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-s.cron.Stop().Done()
	s.wg.Wait()
}

// Trigger asks for a sync now (after a write, at start-up). It never
// blocks; triggers arriving while one is pending collapse into it.
func (s *Scheduler) Trigger() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

func (s *Scheduler) loop(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.trigger:
			s.runOnce(ctx, false)
		}
	}
}

// SyncNow runs a sync now for someone who asked for it (`opsearch sync`
// beside a running server) and returns its outcome. A sync already
// running is waited for, and then another one runs, so the sync reported
// started after the call; the failure backoff does not apply. It fails
// with ErrNotStarted before Start or after Stop, and with ctx's error
// when ctx ends first.
func (s *Scheduler) SyncNow(ctx context.Context) (Report, error) {
	s.mu.Lock()
	if s.cancel == nil || s.stopped {
		s.mu.Unlock()
		return Report{}, ErrNotStarted
	}
	// Added under mu, which Stop takes before it waits: the WaitGroup
	// never grows while Stop waits on it.
	s.wg.Add(1)
	sctx := s.ctx
	s.mu.Unlock()
	defer s.wg.Done()
	// The sync runs under the scheduler's context, so Stop cancels it,
	// and ends too when the caller leaves.
	rctx, cancel := mergeCancel(sctx, ctx)
	defer cancel()
	rep, ran, err := s.runOnce(rctx, false)
	switch {
	case ctx.Err() != nil:
		return rep, context.Cause(ctx)
	case !ran && err == nil:
		return rep, ErrNotStarted
	}
	return rep, err
}

// watchLease checks the worker's lease every third of its time while
// another process holds it: if it expires unreleased (its holder died or
// stalled mid-sync), this scheduler syncs at once instead of at its next
// tick, minutes later; if it is released (the sync finished), the watch
// ends, and the next tick comes as scheduled.
func (s *Scheduler) watchLease() {
	l := s.w.opts.Lease
	s.mu.Lock()
	defer s.mu.Unlock()
	if l == nil || s.watching || s.stopped || s.ctx == nil {
		return
	}
	s.watching = true
	ctx := s.ctx
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			s.watching = false
			s.mu.Unlock()
		}()
		tick := time.NewTicker(l.ttl() / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			info, found, err := s.w.st.LeaseHolder(ctx, l.Name)
			switch {
			case err != nil:
				s.log.Debug("reading the sync lease failed", "error", err)
			case !found:
				return
			case !info.Held:
				s.log.Info("taking over the sync: its lease expired unreleased", "lease", l.Name, "last_holder", info.Holder)
				s.Trigger()
				return
			}
		}
	}()
}

// ErrNotStarted is returned by SyncNow when the scheduler is not running.
var ErrNotStarted = errors.New("the sync scheduler is not running")

// mergeCancel returns a context of a that also ends when b ends, and
// the function that releases it.
func mergeCancel(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(a)
	stop := context.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// runOnce runs one sync, recovering a panic so that neither the trigger
// loop nor cron dies with it, and reports whether it ran. Scheduled runs
// respect the failure backoff and skip while another sync runs;
// triggered ones wait their turn and ignore the backoff, since a user
// asked for them.
func (s *Scheduler) runOnce(ctx context.Context, scheduled bool) (rep Report, ran bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("sync panicked", "panic", v)
			s.back.fail(s.opts.Now(), s.interval(), s.opts.BackoffMax)
			ran, err = true, fmt.Errorf("sync panicked: %v", v)
		}
	}()
	if ctx.Err() != nil {
		return Report{}, false, nil
	}
	if scheduled && !s.back.allow(s.opts.Now()) {
		s.log.Debug("sync skipped: backing off after failures")
		return Report{}, false, nil
	}
	if scheduled {
		select {
		case s.turn <- struct{}{}:
		default:
			s.log.Debug("sync skipped: already running")
			return Report{}, false, nil
		}
	} else {
		select {
		case s.turn <- struct{}{}:
		case <-ctx.Done():
			return Report{}, false, nil
		}
	}
	defer func() { <-s.turn }()
	if s.opts.Acquire != nil {
		release, err := s.opts.Acquire(ctx)
		if err != nil {
			// Only a cancelled wait fails: Stop is under way.
			return Report{}, false, nil
		}
		defer release()
	}
	rep, err = s.w.Sync(ctx)
	switch {
	case errors.Is(err, ErrSyncRunning):
		// A rebuild of the index holds the worker.
		s.log.Debug("sync skipped: already running")
		return rep, false, err
	case errors.Is(err, ErrLeaseHeld):
		// Another replica syncs this now; this one's index follows its
		// commits. Should that replica stop without finishing, this one
		// takes over as soon as its lease runs out.
		s.log.Debug("sync skipped: another replica holds the lease")
		s.watchLease()
		return rep, false, err
	case err != nil && ctx.Err() != nil:
		// Cancelled by Stop: not a failure worth logging.
	case err != nil:
		s.log.Warn("sync failed", "error", err, "duration", rep.Duration)
		s.back.fail(s.opts.Now(), s.interval(), s.opts.BackoffMax)
	default:
		if s.back.reset() {
			s.log.Info("sync recovered")
		}
		s.log.Debug("sync done", "duration", rep.Duration, "requests", rep.Requests)
	}
	if s.opts.OnSync != nil {
		s.opts.OnSync(rep, err)
	}
	return rep, true, err
}

// interval estimates the schedule's interval from two consecutive runs.
func (s *Scheduler) interval() time.Duration {
	t := s.opts.Now()
	a := s.sch.Next(t)
	return max(s.sch.Next(a).Sub(a), time.Second)
}

// backoff pauses scheduled syncs after consecutive failures: linear in
// the number of failures, capped. The clock is passed in, so tests need
// no sleeping.
type backoff struct {
	mu       gosync.Mutex
	failures int
	until    time.Time
}

func (b *backoff) fail(now time.Time, step, limit time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	b.until = now.Add(min(time.Duration(b.failures)*step, limit))
}

func (b *backoff) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !now.Before(b.until)
}

// reset clears the failures and reports whether there were any.
func (b *backoff) reset() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	had := b.failures > 0
	b.failures, b.until = 0, time.Time{}
	return had
}

// jitterSchedule shifts each run of inner by a random amount in
// [-interval/2, interval/2), so the gaps between runs are uniform in
// (interval/2, 3*interval/2) on average and workers drift apart.
type jitterSchedule struct {
	inner cron.Schedule
}

// Next implements cron.Schedule.
func (j jitterSchedule) Next(t time.Time) time.Time {
	next := j.inner.Next(t)
	if next.IsZero() {
		return next
	}
	d := j.inner.Next(next).Sub(next)
	if d <= time.Second {
		return next
	}
	shifted := next.Add(time.Duration(rand.Int64N(int64(d))) - d/2)
	if !shifted.After(t) {
		// Never schedule in the past: cron would run it at once.
		shifted = t.Add(time.Second)
	}
	return shifted
}

// cronLogger adapts slog to cron.Logger. cron's Info messages (schedule,
// wake, run) go to Debug.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "error", err)...)
}

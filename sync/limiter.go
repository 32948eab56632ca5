package sync

import (
	"context"
	"errors"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// limiter bounds a worker's concurrent per-item requests (activities,
// agenda items, wiki probes) and adapts the bound to what the server
// shows, AIMD as TCP does and as Netflix's concurrency-limits library
// does for services:
//
//   - additive increase: once a limit's worth of requests in a row came
//     back fast (within holdFactor of the smallest latency seen this
//     sync) while the limit was in use, the limit grows by one, up to
//     max. Latency above that means the server (or this machine) is
//     queueing, and the limit holds;
//   - multiplicative decrease: a response that says the server is
//     overloaded or unreachable (429, 5xx, a timeout, a dropped
//     connection; the classification is unreachable's, the same the
//     upstream tracker uses) halves it, down to min. A burst of such
//     answers halves it once: only a request admitted after the last
//     decrease can cause the next one;
//   - a Retry-After the server sends (429, or 503 with one) stops every
//     new request until it has passed, not only the retry of the request
//     that got it.
//
// The limit lives as long as the worker, so a later sync starts where the
// last one ended; begin resets the latency baseline and the per-sync
// figures. With min == max the limit is fixed and only Retry-After
// pauses. It uses the real clock, which testing/synctest replaces.
type limiter struct {
	min, max int
	// busy, if set, caps the limit at busyLimit while it reports true
	// (Options.Busy); the adaptive limit itself is kept for after.
	busy      Busy
	busyLimit int

	mu       gosync.Mutex
	limit    int
	inflight int
	// epoch counts decreases. A request admitted in an earlier epoch saw
	// a higher limit: its failure is part of the burst already answered,
	// and its latency (perhaps including the client's retries) says
	// nothing about the current limit.
	epoch uint64
	// fast counts fast successes toward the next increase.
	fast   int
	minRTT time.Duration
	// pausedUntil is when new requests may start again (Retry-After).
	pausedUntil time.Time
	// yieldUntil is when, while busy, the next request may start: each
	// one ending while busy holds the next back (yieldFor).
	yieldUntil time.Time
	// wake is closed, and replaced, whenever a waiting acquire may
	// proceed: a slot freed, the limit grew.
	wake chan struct{}

	peak, backoffs int
}

// holdFactor is how much slower than the fastest response seen a response
// may be while the limit still grows. Responses of a healthy server vary
// with the item (a work package with fifty comments takes longer than one
// with none), so the band is wide; a server that queues shows latencies
// well beyond it within a few steps.
const holdFactor = 2

// While searches wait (Options.Busy), the sync's CPU work yields to them:
// each per-item request that ends, and each slice of a commit's index
// batch, holds the next back for yieldFactor times what it took, at most
// maxYield. A bound on concurrency alone does not bound that CPU (a fast
// server answers one request after another as quickly as this machine can
// decode them), and a whole page's batch takes every core for a
// noticeable while. The cap keeps a crawl moving when the machine is so
// loaded that every request seems slow. On two cores under 32 clients'
// searches (BenchmarkHTTPLoad32), a first crawl then stored 3,000 work
// packages a minute, a ninth of its pace without yielding, and the
// searches' 99th percentile fell from 265-305 ms to 204-208 ms.
const (
	yieldFactor = 3
	maxYield    = 5 * time.Millisecond
	// busyBatch is the slice of a commit's documents indexed at once
	// while busy.
	busyBatch = 100
)

// yieldFor is how long work that took d holds back the next while busy.
func yieldFor(d time.Duration) time.Duration { return min(yieldFactor*d, maxYield) }

// busyNow reports whether searches are waiting.
func (l *limiter) busyNow() bool { return l.busy != nil && l.busy.Busy() }

// yield waits, while searches are waiting, as long as work that took d
// should hold back the next; it fails only when ctx is done.
func (l *limiter) yield(ctx context.Context, d time.Duration) error {
	if !l.busyNow() {
		return nil
	}
	return waitFor(ctx, nil, yieldFor(d))
}

// newLimiter returns a limiter that starts at initial, within [min, max].
func newLimiter(initial, min, max int) *limiter {
	min = clampInt(min, 1, max)
	initial = clampInt(initial, min, max)
	return &limiter{min: min, max: max, limit: initial, peak: initial, wake: make(chan struct{})}
}

func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }

// ticket is an admitted request; pass it to observe and release.
type ticket struct{ epoch uint64 }

// begin starts a sync: the latency baseline is learnt anew (the server
// may be busier or idler than last time), and the figures count from
// here.
func (l *limiter) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.minRTT, l.fast, l.peak, l.backoffs = 0, 0, l.limit, 0
}

// acquire waits until a request may start: fewer than limit in flight and
// no Retry-After pending. It fails only when ctx is done.
func (l *limiter) acquire(ctx context.Context) (ticket, error) {
	for {
		t, ok, wake, wait := l.tryAcquire()
		if ok {
			return t, nil
		}
		if err := waitFor(ctx, wake, wait); err != nil {
			return ticket{}, err
		}
	}
}

// tryAcquire admits a request if it may start now; otherwise it returns
// what to wait for: wake, and the pause left if one is pending.
func (l *limiter) tryAcquire() (t ticket, ok bool, wake <-chan struct{}, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	wait = time.Until(l.pausedUntil)
	limit := l.limit
	if l.busyNow() {
		limit = min(limit, l.busyLimit)
		wait = max(wait, time.Until(l.yieldUntil))
	}
	if wait <= 0 && l.inflight < limit {
		l.inflight++
		return ticket{epoch: l.epoch}, true, nil, 0
	}
	return ticket{}, false, l.wake, wait
}

// waitFor waits until wake is closed or, if d > 0, d has passed; it fails
// only when ctx is done.
func waitFor(ctx context.Context, wake <-chan struct{}, d time.Duration) error {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-wake:
	case <-timer:
	}
	return nil
}

// observe takes the outcome of one attempt of t's request, as the client
// reports it (openproject.WithAttemptObserver): a failed attempt that the
// client then retries by itself is a signal all the same.
func (l *limiter) observe(t ticket, a openproject.Attempt) {
	if a.Err != nil {
		l.signal(t, a.Err, a.RetryAfter)
	}
}

// release ends t's request, which took latency and ended with err.
func (l *limiter) release(t ticket, latency time.Duration, err error) {
	if err != nil {
		l.signal(t, err, 0)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && t.epoch == l.epoch {
		l.grow(latency)
	}
	if l.busyNow() {
		if until := time.Now().Add(yieldFor(latency)); until.After(l.yieldUntil) {
			l.yieldUntil = until
		}
	}
	l.inflight--
	l.notify()
}

// grow counts a success of the current epoch, still counted in flight;
// l.mu held.
func (l *limiter) grow(latency time.Duration) {
	if l.minRTT == 0 || latency < l.minRTT {
		l.minRTT = latency
	}
	// A limit that is not used says nothing about whether a higher one
	// would hold (the last items of a page trickle in alone).
	if latency > holdFactor*l.minRTT || 2*l.inflight < l.limit {
		return
	}
	l.fast++
	if l.fast >= l.limit && l.limit < l.max {
		l.limit++
		l.fast = 0
		l.peak = max(l.peak, l.limit)
	}
}

// signal answers a failure of t's request: overload halves the limit
// (once per epoch), and a Retry-After the server sent, ra, pauses every
// request. A call's final error (release) brings none: the client has
// waited it out already, or returned it because it was too long to wait,
// which ends the run.
func (l *limiter) signal(t ticket, err error, ra time.Duration) {
	if !unreachable(err) || errors.Is(err, context.Canceled) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ra > 0 {
		if until := time.Now().Add(ra); until.After(l.pausedUntil) {
			l.pausedUntil = until
		}
	}
	if t.epoch != l.epoch {
		return
	}
	l.epoch++
	l.fast = 0
	if l.limit > l.min {
		l.limit = max(l.min, l.limit/2)
		l.backoffs++
	}
}

// notify wakes the waiting acquires; l.mu held.
func (l *limiter) notify() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// limiterStats are a sync's figures of the limiter.
type limiterStats struct {
	// limit is the limit at the end, peak the highest it reached, and
	// backoffs the number of decreases.
	limit, peak, backoffs int
}

func (l *limiter) stats() limiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return limiterStats{limit: l.limit, peak: l.peak, backoffs: l.backoffs}
}

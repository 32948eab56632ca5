package sync

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Errors as the client returns them.
var (
	errRateLimited = &openproject.Error{Kind: openproject.ErrRateLimited, Status: 429}
	errUnavailable = &openproject.Error{Kind: openproject.ErrServer, Status: 503}
	errInternal    = &openproject.Error{Kind: openproject.ErrServer, Status: 500}
	errTimeout     = &openproject.Error{Kind: openproject.ErrNetwork, Err: context.DeadlineExceeded}
	errNotFound    = &openproject.Error{Kind: openproject.ErrNotFound, Status: 404}
	errUnauth      = &openproject.Error{Kind: openproject.ErrUnauthenticated, Status: 401}
	errCancelled   = &openproject.Error{Kind: openproject.ErrNetwork, Err: context.Canceled}
)

// phase is a run of n requests that each take latency and end with err,
// with at most inflight of them in flight (0: as many as the limit
// admits), as fetchEach issues them while work is queued.
type phase struct {
	n        int
	latency  time.Duration
	err      error
	inflight int
}

// drive runs ph against l: it keeps as many requests in flight as l (and
// ph.inflight) admits and ends the oldest first, each after its latency
// of fake time, so a Retry-After pause is waited out on synctest's clock.
// The requests still in flight at the end are abandoned, which tells l
// nothing.
func drive(t *testing.T, l *limiter, ph phase) {
	t.Helper()
	var queue []ticket
	for done := 0; done < ph.n; done++ {
		for ph.inflight == 0 || len(queue) < ph.inflight {
			tk, ok, _, _ := l.tryAcquire()
			if !ok {
				break
			}
			queue = append(queue, tk)
		}
		if len(queue) == 0 {
			tk, err := l.acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			queue = append(queue, tk)
		}
		time.Sleep(ph.latency)
		l.release(queue[0], ph.latency, ph.err)
		queue = queue[1:]
	}
	for _, tk := range queue {
		l.release(tk, 0, context.Canceled)
	}
}

func TestLimiter(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name                  string
		initial, lo, hi       int
		phases                []phase
		limit, peak, backoffs int
	}{
		{name: "grows by one per limit's worth of fast answers", initial: 4, lo: 1, hi: 16,
			phases: []phase{{n: 4 + 5 + 6, latency: 20 * ms}}, limit: 7, peak: 7},
		{name: "one short of the next step", initial: 4, lo: 1, hi: 16,
			phases: []phase{{n: 4 + 5 + 5, latency: 20 * ms}}, limit: 6, peak: 6},
		{name: "stops at its maximum", initial: 4, lo: 1, hi: 6,
			phases: []phase{{n: 200, latency: 20 * ms}}, limit: 6, peak: 6},
		{name: "holds while latency is over twice the fastest", initial: 4, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 10 * ms}, {n: 100, latency: 21 * ms}}, limit: 4, peak: 4},
		{name: "grows again when latency comes back", initial: 4, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 10 * ms}, {n: 100, latency: 21 * ms}, {n: 4, latency: 20 * ms}}, limit: 5, peak: 5},
		{name: "an unused limit does not grow", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 100, latency: 20 * ms, inflight: 3}}, limit: 8, peak: 8},
		{name: "429 halves", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 20 * ms, err: errRateLimited}}, limit: 4, peak: 8, backoffs: 1},
		{name: "503 halves", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 20 * ms, err: errUnavailable}}, limit: 4, peak: 8, backoffs: 1},
		{name: "500 halves", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 20 * ms, err: errInternal}}, limit: 4, peak: 8, backoffs: 1},
		{name: "a timeout halves", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 20 * ms, err: errTimeout}}, limit: 4, peak: 8, backoffs: 1},
		{name: "a burst of failures halves once", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 8, latency: 20 * ms, err: errUnavailable}}, limit: 4, peak: 8, backoffs: 1},
		{name: "failures after a decrease halve again", initial: 16, lo: 1, hi: 16,
			phases: []phase{{n: 16 + 8 + 4, latency: 20 * ms, err: errUnavailable}}, limit: 2, peak: 16, backoffs: 3},
		{name: "never below its minimum", initial: 2, lo: 2, hi: 16,
			phases: []phase{{n: 20, latency: 20 * ms, err: errUnavailable}}, limit: 2, peak: 2},
		{name: "404, 401 and cancellation say nothing of load", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 8, err: errNotFound}, {n: 8, err: errUnauth}, {n: 8, err: errCancelled}}, limit: 8, peak: 8},
		{name: "a fixed limit neither grows nor shrinks", initial: 4, lo: 4, hi: 4,
			phases: []phase{{n: 100, latency: 20 * ms}, {n: 10, latency: 20 * ms, err: errUnavailable}}, limit: 4, peak: 4},
		{name: "recovers after a backoff", initial: 8, lo: 1, hi: 16,
			phases: []phase{{n: 1, latency: 20 * ms, err: errUnavailable}, {n: 4 + 5, latency: 20 * ms}}, limit: 6, peak: 8, backoffs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLimiter(tt.initial, tt.lo, tt.hi)
				l.begin()
				for _, ph := range tt.phases {
					drive(t, l, ph)
				}
				got := l.stats()
				want := limiterStats{limit: tt.limit, peak: tt.peak, backoffs: tt.backoffs}
				if got != want {
					t.Errorf("stats = %+v, want %+v", got, want)
				}
				if l.inflight != 0 {
					t.Errorf("%d left in flight", l.inflight)
				}
			})
		})
	}
}

// TestLimiter_RetryAfterPausesAll: a Retry-After holds back every new
// request, not only the retry of the one that got it, for exactly that
// long; a fixed limit honours it too.
func TestLimiter_RetryAfterPausesAll(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		name := "adaptive"
		if fixed {
			name = "fixed"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLimiter(4, 1, 16)
				if fixed {
					l = newLimiter(4, 4, 4)
				}
				a, err := l.acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				l.observe(a, openproject.Attempt{Err: &openproject.Error{Kind: openproject.ErrRateLimited, Status: 429, RetryAfter: 3 * time.Second}, RetryAfter: 3 * time.Second})
				start := time.Now()
				b, err := l.acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if waited := time.Since(start); waited != 3*time.Second {
					t.Errorf("the next request waited %v, want the 3s of Retry-After", waited)
				}
				l.release(a, 0, nil)
				l.release(b, 0, nil)
				if want := map[bool]int{false: 2, true: 4}[fixed]; l.stats().limit != want {
					t.Errorf("limit = %d, want %d", l.stats().limit, want)
				}
			})
		})
	}
}

// TestLimiter_AcquireWaitsForASlot: at the limit acquire blocks until a
// request ends, and gives up when its context is cancelled.
func TestLimiter_AcquireWaitsForASlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(1, 1, 1)
		a, err := l.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			b, err := l.acquire(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			got.Store(true)
			l.release(b, 0, nil)
		}()
		synctest.Wait()
		if got.Load() {
			t.Fatal("a second request started at a limit of one")
		}
		l.release(a, 0, nil)
		<-done
		if !got.Load() {
			t.Fatal("the waiting request did not start")
		}

		a, _ = l.acquire(t.Context())
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error)
		go func() {
			_, err := l.acquire(ctx)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("acquire after cancel: %v", err)
		}
		l.release(a, 0, nil)
	})
}

func mustAcquire(t *testing.T, l *limiter) ticket {
	t.Helper()
	tk, err := l.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// busyFlag is a Busy that says what the test sets.
type busyFlag struct{ atomic.Bool }

func (b *busyFlag) Busy() bool { return b.Load() }

// TestLimiter_GivesWayWhileBusy: while searches wait (Options.Busy), at
// most busyLimit requests start, whatever the adaptive limit; once they
// are served, the limit is the adaptive one again.
func TestLimiter_GivesWayWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var busy busyFlag
		l := newLimiter(4, 1, 4)
		l.busy, l.busyLimit = &busy, 1
		busy.Store(true)
		a, err := l.acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var started atomic.Int32
		done, hold := make(chan struct{}), make(chan struct{})
		for range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				tk, err := l.acquire(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				started.Add(1)
				defer l.release(tk, 0, nil)
				<-hold
			}()
		}
		synctest.Wait()
		if n := started.Load(); n != 0 {
			t.Fatalf("%d more requests started while busy at a bound of one", n)
		}
		busy.Store(false)
		l.release(a, 0, nil) // wakes the waiting ones
		synctest.Wait()
		if n := started.Load(); n != 3 {
			t.Errorf("%d of 3 waiting requests started once not busy at a limit of 4", n)
		}
		if st := l.stats(); st.limit != 4 {
			t.Errorf("the adaptive limit changed to %d while busy", st.limit)
		}
		close(hold)
		for range 3 {
			<-done
		}

		// While busy, a request that took 1 ms holds the next back for
		// three times that; a slow one for at most maxYield.
		busy.Store(true)
		for _, tc := range []struct{ took, want time.Duration }{{time.Millisecond, 3 * time.Millisecond}, {time.Second, maxYield}} {
			a, err = l.acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			l.release(a, tc.took, nil)
			start := time.Now()
			if a, err = l.acquire(t.Context()); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited != tc.want {
				t.Errorf("while busy the next request waited %v after one of %v, want %v", waited, tc.took, tc.want)
			}
			l.release(a, 0, nil)
			time.Sleep(maxYield) // past the pause of the release above
		}
		// Once the searches are served it starts at once.
		l.release(mustAcquire(t, l), time.Second, nil)
		busy.Store(false)
		start := time.Now()
		if a, err = l.acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("not busy, the next request waited %v", waited)
		}
		l.release(a, 0, nil)
	})
}

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFetchEach_AdaptsToTheServer drives fetchEach through a real client
// whose transport answers in memory after 20 ms of fake time: the
// concurrency grows to its maximum while answers are fast, and a 429 that
// the client retries by itself (the caller never sees it) still halves it
// and holds back every other request for its Retry-After.
func TestFetchEach_AdaptsToTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu             gosync.Mutex
			inflight, peak int
			limitNext      atomic.Int64 // 429s still to answer
			sent, block    time.Time    // the 429's answer, and its Retry-After's end
			lastStart      time.Time
		)
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			// A request that starts at the very instant the 429 is
			// answered has not been held back: the client has yet to read it.
			if now := time.Now(); now.After(sent) && now.Before(block) {
				t.Errorf("a request started at %v, during the Retry-After pause until %v", now, block)
			}
			lastStart = time.Now()
			inflight++
			peak = max(peak, inflight)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			inflight--
			mu.Unlock()
			h := http.Header{"Content-Type": {"application/hal+json"}}
			if limitNext.Add(-1) >= 0 {
				h.Set("Retry-After", "2")
				mu.Lock()
				sent, block = time.Now(), time.Now().Add(2*time.Second)
				mu.Unlock()
				return &http.Response{StatusCode: 429, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
			}
			body := `{"_type":"Collection","total":0,"count":0,"_embedded":{"elements":[]}}`
			return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		c, err := openproject.New(openproject.Config{BaseURL: "http://op.test", APIKey: "k", HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, 400)
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		l := newLimiter(4, 1, 8)
		l.begin()
		if _, failed, err := fetchEach(t.Context(), l, "activities of work package", ids, c.Activities); err != nil || countErrs(failed) > 0 {
			t.Fatalf("fetchEach: %v, %d failed", err, countErrs(failed))
		}
		if s := l.stats(); s.limit != 8 || peak != 8 {
			t.Fatalf("limit %d, %d at most in flight at the server; want 8 (the maximum)", s.limit, peak)
		}

		limitNext.Store(1)
		l.begin()
		if _, failed, err := fetchEach(t.Context(), l, "activities of work package", ids[:16], c.Activities); err != nil || countErrs(failed) > 0 {
			t.Fatalf("fetchEach: %v, %d failed", err, countErrs(failed))
		}
		s := l.stats()
		if s.backoffs != 1 || s.limit >= 8 {
			t.Errorf("after a retried 429: %+v, want one backoff from 8", s)
		}
		mu.Lock()
		defer mu.Unlock()
		if lastStart.Before(block) {
			t.Errorf("the last request started at %v, before the Retry-After passed (%v)", lastStart, block)
		}
	})
}

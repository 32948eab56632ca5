// Package spread runs one search's independent pieces of work (its
// words' look-ups, its candidates' loading and scoring) on the machine's
// cores, so that one query answers sooner on an idle machine.
//
// Work is handed out one index at a time, never in fixed shares: the
// caller's goroutine starts at once, and the others join when the
// scheduler has woken a core for them. On a 2 vCPU virtual machine that
// wake-up took 0.11-0.13 ms (the median start of a new goroutine while
// the other core was idle), against 0.4-0.6 ms for all of a query's
// loading or scoring: with a fixed half each, the caller was done with
// its own and waited for the late one's.
//
// A search that holds a Crew (WithCrew) has its other call run on the
// crew's helper, which spins on the second core while a search runs
// alone and takes the work at once, or as soon as it is done with what
// it runs (on two cores; see Crew); without one, the others are new
// goroutines as before.
package spread

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Run calls work on up to limit goroutines, and never more than one per
// core, the caller's included. The calls share the indexes 0 to n-1:
// each takes the next one from take until take reports false, so every
// index is taken exactly once, in increasing order overall. Run returns
// when every call has returned, with the first error one returned; the
// others still run to the end, since they stop when the indexes do.
//
// A call is where per-goroutine state lives (a read transaction, a
// scratch buffer). With one core, a limit below 2 or n below 2, work is
// called once, on the caller's goroutine. One of the other calls runs on
// ctx's crew's helper when it is free (Crew).
func Run(ctx context.Context, n, limit int, work func(take func() (int, bool)) error) error {
	var next atomic.Int64
	take := func() (int, bool) {
		i := int(next.Add(1) - 1)
		return i, i < n
	}
	workers := min(n, limit, runtime.GOMAXPROCS(0))
	if workers < 2 {
		return work(take)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	first := 1
	c := crewOf(ctx)
	helped := c.offer(func() { errs[1] = work(take) }, queueBehindBusy())
	if helped != nil {
		first = 2
	}
	for w := first; w < workers; w++ {
		wg.Go(func() { errs[w] = work(take) })
	}
	errs[0] = work(take)
	// An offer the helper has not taken by now finds no index left: it
	// is withdrawn rather than waited for.
	if helped != nil && !c.withdraw(helped) {
		helped.await()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Each calls f(0) to f(n-1), spread over the cores as Run does.
func Each(ctx context.Context, n int, f func(i int)) {
	_ = Run(ctx, n, n, func(take func() (int, bool)) error {
		for i, ok := take(); ok; i, ok = take() {
			f(i)
		}
		return nil
	})
}

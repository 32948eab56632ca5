package sync

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/opsearch/opsearch/openproject"
)

// fetchEach fetches what belongs to each of ids (a work package's
// activities, a meeting's agenda items, a wiki page), as many at a time
// as lim admits, and returns the values in the order of ids. Every
// attempt's outcome goes to lim (openproject.WithAttemptObserver), so a
// 429 or 5xx the client retries by itself still slows the fetches down.
//
// An item failure (itemFailure) is recorded at its index in failed, as
// "fetch <what> <id>: ...", and the other fetches go on; any other error
// ends them all and is returned, and so is the first failure when every
// fetch of two or more failed: that is an outage, not a bad item. A fetch
// for which a 404 is an answer (a wiki id that holds no page) returns a
// value for it, not an error.
func fetchEach[T any](ctx context.Context, lim *limiter, what string, ids []int64, fetch func(context.Context, int64) (T, error)) (vals []T, failed []error, err error) {
	vals = make([]T, len(ids))
	failed = make([]error, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	for i, id := range ids {
		t, err := lim.acquire(gctx)
		if err != nil {
			break // g.Wait returns the cause, or ctx's error below
		}
		g.Go(func() error {
			actx := openproject.WithAttemptObserver(gctx, func(a openproject.Attempt) {
				if gctx.Err() == nil {
					lim.observe(t, a)
				}
			})
			began := time.Now()
			v, err := fetch(actx, id)
			if gctx.Err() != nil {
				lim.release(t, 0, gctx.Err())
			} else {
				lim.release(t, time.Since(began), err)
			}
			if itemFailure(gctx, err) {
				failed[i] = fmt.Errorf("fetch %s %d: %w", what, id, err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("fetch %s %d: %w", what, id, err)
			}
			vals[i] = v
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	if nf := countErrs(failed); nf > 1 && nf == len(ids) {
		return nil, nil, failed[0]
	}
	return vals, failed, nil
}

// countErrs counts the non-nil errors of errs.
func countErrs(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

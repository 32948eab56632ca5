package sync

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// fetchEach fetches what belongs to each of ids (a work package's
// activities, a meeting's agenda items, a wiki page), at most limit at a
// time, and returns the values in the order of ids. An item failure
// (itemFailure) is recorded at its index in failed, as "fetch <what>
// <id>: ...", and the other fetches go on; any other error ends them all
// and is returned, and so is the first failure when every fetch of two or
// more failed: that is an outage, not a bad item. A fetch for which a 404
// is an answer (a wiki id that holds no page) returns a value for it, not
// an error.
func fetchEach[T any](ctx context.Context, limit int, what string, ids []int64, fetch func(context.Context, int64) (T, error)) (vals []T, failed []error, err error) {
	vals = make([]T, len(ids))
	failed = make([]error, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i, id := range ids {
		g.Go(func() error {
			// Go keeps starting queued functions after a failure.
			if err := gctx.Err(); err != nil {
				return err
			}
			v, err := fetch(gctx, id)
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

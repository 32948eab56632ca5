package openproject

import (
	"context"
	"errors"
	"time"
)

// An Attempt is one HTTP exchange of a call: a call that the client
// retries makes several.
type Attempt struct {
	Latency time.Duration
	// Err is nil when the server answered 2xx, else the attempt's *Error,
	// which the client may still retry.
	Err error
	// RetryAfter is the Retry-After header the server sent with a
	// failure, 0 when it sent none (Error.RetryAfter then holds the
	// client's own wait for a 429).
	RetryAfter time.Duration
}

type attemptKey struct{}

// WithAttemptObserver returns a context under which every attempt of a
// call is reported to f as it ends, retries included, so a caller that
// paces its own requests (sync's concurrency limiter) learns of a 429 or
// a 503 that the client then waited out and retried by itself, and of its
// Retry-After. f is called from the goroutine making the call and must
// not block. Observers nest: one already on ctx (a sync counting its
// requests) still sees every attempt, after f.
func WithAttemptObserver(ctx context.Context, f func(Attempt)) context.Context {
	if outer, ok := ctx.Value(attemptKey{}).(func(Attempt)); ok {
		inner := f
		f = func(a Attempt) {
			inner(a)
			outer(a)
		}
	}
	return context.WithValue(ctx, attemptKey{}, f)
}

// observeAttempt reports one attempt to the observer of ctx, if any.
func observeAttempt(ctx context.Context, latency time.Duration, err error) {
	if f, ok := ctx.Value(attemptKey{}).(func(Attempt)); ok {
		a := Attempt{Latency: latency, Err: err}
		if e, ok := errors.AsType[*Error](err); ok {
			a.RetryAfter = e.sentRetryAfter
		}
		f(a)
	}
}

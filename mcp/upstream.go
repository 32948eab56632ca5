package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// failFast is how long after OpenProject last failed the live and write
// tools fail at once instead of trying: a call would only wait out
// timeouts and retries to fail the same way. After it, one call goes
// through and finds out whether OpenProject is back.
const failFast = 15 * time.Second

// DefaultLiveTimeout is Options.LiveTimeout's default: one request at the
// client's default 30 s timeout, and the start of a retry.
const DefaultLiveTimeout = 45 * time.Second

// errLiveTimeout is the cause of a live call's own deadline.
var errLiveTimeout = errors.New("no answer from OpenProject in time")

// liveDeadline bounds one live read: a hanging OpenProject would
// otherwise hold the agent for every retry's timeout (four attempts at
// 30 s: two minutes), and a hang does not clear in seconds. Writes keep
// the client's single attempt: cutting one short would leave its outcome
// unknown.
func (s *server) liveDeadline(ctx context.Context, readOnly bool) (context.Context, context.CancelFunc) {
	if !readOnly {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, s.opts.LiveTimeout, errLiveTimeout)
}

// timedOut records a live call that ran out of its own deadline as an
// upstream failure and returns its plain answer.
func (s *server) timedOut() error {
	if s.opts.Upstream != nil {
		s.opts.Upstream.ObserveUpstream(fmt.Errorf("%w: no answer within %s", openproject.ErrNetwork, s.opts.LiveTimeout))
	}
	return &toolError{msg: fmt.Sprintf("OpenProject did not answer within %s; live tools fail at once for the next %s. The search tools still answer from the local index.",
		s.opts.LiveTimeout, failFast), category: "timeout"}
}

// unreachable is the error a live tool answers with while OpenProject is
// known to be down, or nil.
func (s *server) unreachable() error {
	if s.opts.Upstream == nil {
		return nil
	}
	up := s.opts.Upstream.Upstream()
	if !up.Down || time.Since(up.LastFailure) > failFast {
		return nil
	}
	return &toolError{msg: fmt.Sprintf("OpenProject unreachable since %s (%s); not trying again before %s. The search tools still answer from the local index.",
		up.Since.UTC().Format(time.RFC3339), up.LastError, up.LastFailure.Add(failFast).UTC().Format(time.RFC3339)), category: "unavailable"}
}

// observeUpstream reports what a live call learned about reaching
// OpenProject. An answer from OpenProject, even a refusal (404, 403,
// 422), shows it is up.
func (s *server) observeUpstream(err error) {
	if s.opts.Upstream == nil {
		return
	}
	var te *toolError
	switch {
	case err == nil:
		s.opts.Upstream.ObserveUpstream(nil)
	case errors.As(err, &te):
		// The tool's own message, before or without a request.
	case errors.Is(err, openproject.ErrNetwork), errors.Is(err, openproject.ErrServer):
		s.opts.Upstream.ObserveUpstream(err)
	default:
		var apiErr *openproject.Error
		if errors.As(err, &apiErr) {
			s.opts.Upstream.ObserveUpstream(nil)
		}
	}
}

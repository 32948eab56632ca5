package sync

import (
	"errors"
	gosync "sync"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// Upstream is what this process last learned about reaching OpenProject.
type Upstream struct {
	// Down is true when the last request that says something about
	// reachability (a key check, a sync) failed to reach OpenProject or
	// got a server error.
	Down bool `json:"down"`
	// Since is when it became unreachable (the first failure of the
	// current outage); zero when Down is false.
	Since time.Time `json:"since,omitzero"`
	// LastError is the last such failure's message, and LastFailure
	// when it happened.
	LastError   string    `json:"lastError,omitempty"`
	LastFailure time.Time `json:"lastFailure,omitzero"`
}

// UpstreamTracker tracks Upstream from the outcomes reported to it; the
// zero value is ready (OpenProject reachable). Share one between the
// parts of a process that talk to OpenProject.
type UpstreamTracker struct {
	mu    gosync.Mutex
	state Upstream
}

// unreachable reports whether err says OpenProject could not be reached
// or failed (as opposed to refusing a key, or a cancellation).
func unreachable(err error) bool {
	return errors.Is(err, openproject.ErrNetwork) || errors.Is(err, openproject.ErrServer) ||
		errors.Is(err, openproject.ErrRateLimited) || errors.Is(err, openproject.ErrMalformed) ||
		errors.Is(err, errCheckTimeout)
}

// errCheckTimeout marks a key check that OpenProject did not answer in
// time (a hang).
var errCheckTimeout = errors.New("OpenProject did not answer in time")

// observe records the outcome of a request to OpenProject: nil means it
// answered; an error that says nothing about reachability is ignored.
func (u *UpstreamTracker) observe(err error, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case err == nil:
		u.state = Upstream{}
	case unreachable(err):
		if !u.state.Down {
			u.state.Down, u.state.Since = true, now
		}
		u.state.LastError, u.state.LastFailure = err.Error(), now
	}
}

// Upstream implements UpstreamWatch.
func (u *UpstreamTracker) Upstream() Upstream {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state
}

// ObserveUpstream implements UpstreamWatch.
func (u *UpstreamTracker) ObserveUpstream(err error) { u.observe(err, time.Now()) }

// UpstreamWatch is what a server learns about reaching OpenProject,
// shared by the sync side and the tools: the Manager and the Runner
// implement it.
type UpstreamWatch interface {
	// Upstream is the state now.
	Upstream() Upstream
	// ObserveUpstream records the outcome of a request to OpenProject
	// made elsewhere (a live tool): nil means it answered.
	ObserveUpstream(err error)
}

var (
	_ UpstreamWatch = (*UpstreamTracker)(nil)
	_ UpstreamWatch = (*Runner)(nil)
	_ UpstreamWatch = (*Manager[Attachment])(nil)
)

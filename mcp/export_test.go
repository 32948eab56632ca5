package mcp

import (
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// LiveHarness lends the live-tool harness of live_test.go (fake OpenProject
// over testDataset, real client, in-memory session, secret and HAL checks)
// to the golden tests in package mcp_test, which own the golden helper.
type LiveHarness struct{ h *harness }

// LiveHarnessOptions mirror harnessOpts.
type LiveHarnessOptions struct {
	Key           string
	MaxRetryAfter time.Duration
	// Now fixes the fake's clock (nil: the real clock).
	Now func() time.Time
}

// NewLiveHarness starts a harness; see newHarness.
func NewLiveHarness(t *testing.T, o LiveHarnessOptions) *LiveHarness {
	t.Helper()
	h := newHarness(t, harnessOpts{key: o.Key, maxRetryAfter: o.MaxRetryAfter})
	h.op.SetClock(o.Now)
	return &LiveHarness{h}
}

// Base is the fake's base URL, with its random port.
func (l *LiveHarness) Base() string { return l.h.base }

// Data is the fake's data set.
func (l *LiveHarness) Data() *optest.Dataset { return l.h.data }

// Fake is the fake OpenProject, to inject faults or change data.
func (l *LiveHarness) Fake() *optest.Server { return l.h.op }

// OK calls a tool that must succeed and returns its JSON answer.
func (l *LiveHarness) OK(tool string, args map[string]any) []byte {
	l.h.t.Helper()
	return []byte(l.h.ok(tool, args, nil))
}

// Fail calls a tool that must fail with an error containing every want and
// returns the error text.
func (l *LiveHarness) Fail(tool string, args map[string]any, want ...string) string {
	l.h.t.Helper()
	return l.h.fail(tool, args, want...)
}

// CommentedWP is a work package with at least three activities.
func (l *LiveHarness) CommentedWP() openproject.WorkPackage {
	wp, _ := l.h.commentedWP()
	return wp
}

// UnrelatedTo is a work package of id's project that a relation from id
// may go to.
func (l *LiveHarness) UnrelatedTo(id int64) int64 { return l.h.unrelatedTo(id) }

// MeetingWithAgenda is a meeting with agenda items and participants.
func (l *LiveHarness) MeetingWithAgenda() openproject.Meeting { return l.h.meetingWithAgenda() }

// NewSearchSlotsOf returns search slots of n.
func NewSearchSlotsOf(n int) *SearchSlots { return newSearchSlots(n) }

// TryAcquire takes a slot if one is free now: the tests' way to see that
// a search gave its slot back.
func (s *SearchSlots) TryAcquire() bool {
	if !s.sem.TryAcquire(1) {
		return false
	}
	s.queued.Add(1)
	return true
}

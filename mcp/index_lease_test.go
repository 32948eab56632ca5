package mcp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/opsearch/opsearch/mcp"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/sync"
)

// TestUserIndexRefreshDoesNotStallSearches: a refresh that hangs on
// OpenProject holds no lock. SetUser swaps at once (searches see the new
// state while it waits) and returns the old user only when the refresh
// ended, so the caller never closes files under it. Before leases, the
// refresh held the read lock, the waiting SetUser held back every new
// search, and the search below ran only once the refresh gave up.
func TestUserIndexRefreshDoesNotStallSearches(t *testing.T) {
	e := newSearchEnv(t, mcp.Options{})
	id := e.data.WorkPackages[0].ID
	for _, wp := range e.data.WorkPackages {
		if wp.Project.ID == 1 {
			id = wp.ID
			break
		}
	}
	before := e.fake.RequestCount("GET /api/v3/work_packages")
	e.fake.SetFaults(optest.Faults{HangNext: 1 << 30})
	defer e.fake.SetFaults(optest.Faults{})

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	refreshDone := make(chan error, 1)
	go func() { refreshDone <- e.idx.RefreshWorkPackage(ctx, id) }()
	for e.fake.RequestCount("GET /api/v3/work_packages") == before {
		time.Sleep(5 * time.Millisecond) // until the refresh is inside its request
	}

	swapped := make(chan *sync.User, 1)
	go func() { swapped <- e.idx.SetUser(nil) }()
	// The swap is immediate: a search answers "not ready" while the
	// refresh still hangs.
	for {
		_, err := e.idx.Searcher()
		if errors.Is(err, mcp.ErrIndexNotReady) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-refreshDone:
		t.Fatalf("the search waited until the refresh ended (%v)", err)
	case old := <-swapped:
		t.Fatalf("SetUser returned the old user %v while a refresh still used it", old != nil)
	default:
	}
	cancel() // OpenProject gives up
	if err := <-refreshDone; err == nil {
		t.Error("the cancelled refresh succeeded")
	}
	if old := <-swapped; old != e.user {
		t.Errorf("SetUser returned %v, want the old user once the refresh ended", old)
	}
}

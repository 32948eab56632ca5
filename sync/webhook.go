package sync

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// refreshConcurrency bounds the users a RefreshWorkPackages refreshes for
// at once: each refresh is two requests to OpenProject.
const refreshConcurrency = 4

// RefreshWorkPackages fetches work packages ids again for every active
// user, each with their own key, and commits them to their index (or
// the shared store), as a write tool's refresh does: what OpenProject
// told through a webhook is searchable at once instead of at the next
// scheduled sync. A user who may not see one is not shown it (their
// fetch finds nothing). It returns how many users' refreshes succeeded
// and the first failure; the schedule stays the safety net.
func (m *Manager[A]) RefreshWorkPackages(ctx context.Context, ids []int64) (users int, err error) {
	m.mu.Lock()
	var held []*entry[A]
	for _, e := range m.entries {
		if !e.stopping && isClosed(e.ready) && e.err == nil && e.user.Worker != nil {
			e.refs++ // kept open until the refresh ends, as by a lease
			held = append(held, e)
		}
	}
	m.mu.Unlock()
	defer func() {
		for _, e := range held {
			m.release(e)
		}
	}()
	// One user's failure (a revoked key) must not stop the others'.
	var g errgroup.Group
	g.SetLimit(refreshConcurrency)
	done := make([]bool, len(held))
	for i, e := range held {
		g.Go(func() error {
			for _, id := range ids {
				if err := e.user.Worker.RefreshWorkPackage(ctx, id); err != nil {
					return fmt.Errorf("refresh work package %d for user %d: %w", id, e.key.id, err)
				}
			}
			done[i] = true
			return nil
		})
	}
	err = g.Wait()
	for _, d := range done {
		if d {
			users++
		}
	}
	return users, err
}

// TriggerSyncs asks every active user's scheduler for a sync now, for a
// change no refresh of one work package covers (a project's, told by a
// webhook): incremental, it costs a few requests per kind. It returns how
// many users it asked; it never blocks.
func (m *Manager[A]) TriggerSyncs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.entries {
		if !e.stopping && isClosed(e.ready) && e.err == nil && e.sch != nil {
			e.sch.Trigger()
			n++
		}
	}
	return n
}

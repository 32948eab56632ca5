package sync

import (
	"context"
	"fmt"
	"strconv"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// RefreshWorkPackage re-reads one work package and its activities from the
// API and writes them to the store and the index, so that a search right
// after a write through this server sees it (read-your-writes) without
// waiting for the next scheduled sync. A work package the server no longer
// shows (deleted, or hidden from this user) is removed from both.
//
// It does not wait for a running sync, which can take minutes: it commits
// like a sync batch (crash-safe, with the pending-index marker) under the
// worker's commit lock, and the sync never replaces a stored copy with an
// older listed one, so the two converge whatever their order. A stored copy
// newer than the one fetched here is kept for the same reason.
//
// The work package is read through the same list endpoint the crawl uses,
// filtered by id, so its document is built from the same representation.
func (w *Worker) RefreshWorkPackage(ctx context.Context, id int64) error {
	if id <= 0 {
		return fmt.Errorf("refresh work package: invalid id %d", id)
	}
	p, err := w.api.ListWorkPackages(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{openproject.StatusAll(), openproject.IDs(id)},
		PageSize: 1,
	})
	if err != nil {
		return fmt.Errorf("refresh work package %d: %w", id, err)
	}
	var wp openproject.WorkPackage
	found := false
	for _, it := range p.Items {
		if it.ID == id {
			wp, found = it, true
		}
	}
	var acts []openproject.Activity
	if found {
		// A 404 here, right after the listing showed the work package,
		// is not proof of a deletion (a transient 404 would otherwise
		// delete it): the refresh fails and the stored copy stays, for
		// the next sync to settle.
		acts, err = w.api.Activities(ctx, id)
		if err != nil {
			return fmt.Errorf("refresh activities of work package %d: %w", id, err)
		}
	}

	w.commits.Lock()
	defer w.commits.Unlock()
	old, stored, err := w.st.WorkPackage(id)
	if err != nil {
		return fmt.Errorf("refresh work package %d: %w", id, err)
	}
	docID := indexer.DocID(kind.WorkPackage, id)
	if !found {
		if !stored || w.shared() {
			// In a shared store, hidden from this user is not gone.
			return nil
		}
		err = w.commitLocked(ctx, func(tx *store.WriteTx) error {
			return tx.Delete(kind.WorkPackage, id)
		}, nil, []string{docID}, nil)
		if err != nil {
			return fmt.Errorf("refresh work package %d: %w", id, err)
		}
		// The id-filtered listing no longer shows it: a confirmed deletion.
		w.log.Info("deleted entity", "kind", kind.WorkPackage, "id", id, "reason", "a refresh's id-filtered listing no longer shows it")
		return nil
	}
	if stored && old.UpdatedAt.After(wp.UpdatedAt) {
		return nil
	}
	reads, known := w.readsInternal(wp.Project.ID)
	byReader := hasInternal(acts) || reads && known
	if stored && w.keepsInternal(wp.Project.ID, acts) {
		before, _, err := w.st.Activities(id)
		if err != nil {
			return fmt.Errorf("refresh work package %d: %w", id, err)
		}
		acts = withInternal(acts, before)
	}
	docs, stale := workPackageDocs(wp, acts, w.shared())
	err = w.commitLocked(ctx, func(tx *store.WriteTx) error {
		if err := tx.PutWorkPackage(wp); err != nil {
			return err
		}
		if w.opts.Lease != nil && w.shared() {
			// Replicas: the user's next search, on whichever replica,
			// waits until its index holds this commit.
			if err := tx.SetMeta(writtenKey(w.opts.Shared.Owner), []byte(strconv.FormatUint(tx.Generation(), 10))); err != nil {
				return err
			}
		}
		if err := tx.PutActivities(id, acts); err != nil {
			return err
		}
		if w.shared() {
			return tx.SetFetchedByReader(id, byReader)
		}
		return nil
	}, docs, stale, nil)
	if err != nil {
		return fmt.Errorf("refresh work package %d: %w", id, err)
	}
	w.log.Debug("refreshed work package", "id", id, "activities", len(acts))
	return nil
}

package sync

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// syncWorkPackages runs one pass over the cursor window, then looks for
// deletions.
//
// The list is sorted by id inside a fixed lower bound (never by
// updatedAt, which moves while paging). Because items on a later page can
// have any updatedAt, the cursor cannot advance page by page: it advances
// to the newest updatedAt seen only when a whole pass finished and the
// list's total did not change while paging (a shrinking list shifts items
// across page boundaries and can skip one). An interrupted or drifting
// pass leaves the cursor where it was; the next sync re-lists the window,
// and the comparison with the store (id, lockVersion, updatedAt) makes
// the re-listing cost one list request per page and nothing else.
func (w *Worker) syncWorkPackages(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	passStart := w.opts.Now()
	full := st.Cursor.IsZero()
	// Work packages marked by an earlier run go first, so a mark set on
	// the first crawl is cleared by the second even if the listing below
	// fails.
	if err := w.retryWorkPackages(ctx, r, st, kr); err != nil {
		return err
	}
	filters := openproject.Filters{openproject.StatusAll()}
	if !full {
		filters = append(filters, openproject.UpdatedBetween(st.Cursor.Add(-w.opts.CursorMargin), time.Time{}))
	}
	opts := openproject.ListOptions{
		Filters:  filters,
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		PageSize: w.opts.PageSize,
	}
	var (
		maxSeen  = st.Cursor
		total    = -1
		drifted  bool
		seen     map[int64]bool // full pass only: ids listed, for the deletion diff
		done     int
		actFetch int
		// A page is committed in the background while the next one is
		// listed and its activities fetched: the store and index writes
		// of a page cost about as much as its fetches at the default
		// concurrency, and done in turn they left the fetches idle half
		// the time. At most one commit runs, so memory holds two pages.
		// While it runs it owns st and kr's Updated and Retry; the page
		// being fetched compares with retry, the marks as they were when
		// it started, which the commit changes only for its own ids.
		committing background
		retry      = slices.Clone(st.Retry)
	)
	if full {
		seen = map[int64]bool{}
	}
	err := openproject.EachPage(ctx, opts, r.api.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
		if total >= 0 && p.Total != total {
			drifted = true
		}
		total = p.Total
		kr.Fetched += len(p.Items)
		page, err := w.fetchWorkPackagePage(ctx, r, p.Items, retry)
		if page != nil {
			actFetch += len(page.wps)
		}
		if werr := committing.wait(); werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
		retry = slices.Clone(st.Retry)
		if page != nil {
			committing.start(func() error { return w.commitPage(ctx, page, kr, st) })
		}
		for _, wp := range p.Items {
			if wp.UpdatedAt.After(maxSeen) {
				maxSeen = wp.UpdatedAt
			}
			if seen != nil {
				seen[wp.ID] = true
			}
		}
		done += len(p.Items)
		w.progress(kind.WorkPackage, done, p.Total)
		return nil
	})
	if werr := committing.wait(); err == nil {
		err = werr
	}
	w.activityState(ctx, actFetch, err)
	if err != nil {
		return fmt.Errorf("list work packages: %w", err)
	}
	if w.shared() {
		if err := w.markReaders(ctx); err != nil {
			return fmt.Errorf("mark activities fetched by a reader: %w", err)
		}
	}
	st.Complete = true
	if !drifted {
		st.Cursor = maxSeen
	}
	if full && !drifted && w.mayDelete() {
		// A full pass is an id listing too: whatever the store holds that
		// the pass did not list was deleted (or hidden) meanwhile. The
		// pass stored every work package it listed, so a store holding
		// as many as were listed holds no other, and the diff, which
		// reads every stored key and so every page of the work packages
		// (a hundred megabytes of memory at 100,000), is left out.
		n, err := w.st.Count(kind.WorkPackage)
		if err != nil {
			return fmt.Errorf("count stored work packages: %w", err)
		}
		if n != len(seen) {
			if err := w.deleteMissingWorkPackages(ctx, r, seen, kr); err != nil {
				return err
			}
		}
		st.LastFullListing = passStart
	}
	if err := w.commit(ctx, nil, nil, nil, st); err != nil {
		return err
	}
	return w.reconcileWorkPackages(ctx, r, st, kr)
}

// retryWorkPackages fetches the work packages in st.Retry again, through
// an id-filtered listing (verifyChunk ids per request) and the same page
// processing as the crawl. An id the listing no longer returns loses its
// mark: it was deleted or hidden, which the deletion diff handles with
// its own confirmation.
func (w *Worker) retryWorkPackages(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	pending := slices.Clone(st.Retry)
	for len(pending) > 0 {
		chunk := pending[:min(len(pending), verifyChunk)]
		pending = pending[len(chunk):]
		p, err := r.api.ListWorkPackages(ctx, openproject.ListOptions{
			Filters:  openproject.Filters{openproject.StatusAll(), openproject.IDs(chunk...)},
			SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
			PageSize: len(chunk),
		})
		if err != nil {
			return fmt.Errorf("list work packages to retry: %w", err)
		}
		listed := map[int64]bool{}
		for _, wp := range p.Items {
			listed[wp.ID] = true
		}
		for _, id := range chunk {
			if !listed[id] {
				st.Retry = dropID(st.Retry, id)
			}
		}
		page, err := w.fetchWorkPackagePage(ctx, r, p.Items, st.Retry)
		if err == nil && page != nil {
			err = w.commitPage(ctx, page, kr, st)
		}
		if err != nil {
			return fmt.Errorf("retry work packages: %w", err)
		}
	}
	return nil
}

// fetchWorkPackagePage fetches the activities of the new and changed
// work packages of one page, for commitPage to store and index; it
// returns nil when none changed. Unchanged ones (same lockVersion and
// updatedAt as stored) are skipped unless marked in retry: a new comment
// moves updatedAt without lockVersion, so both are compared.
//
// A work package whose activities cannot be fetched (an item failure:
// a 5xx or a dropped connection after the client's retries, or a 404) is
// stored with the activities stored before, if any, and marked in
// st.Retry, so the rest of the page is committed and the next sync
// fetches it again. A 404 is not taken as a deletion: the listing has
// just shown the work package, and deletions go through the id diff.
// Only when every activity fetch of the page failed is it an outage, and
// the page fails as a whole.
func (w *Worker) fetchWorkPackagePage(ctx context.Context, r *run, items []openproject.WorkPackage, retry []int64) (*wpPage, error) {
	changed, err := w.changedWorkPackages(ctx, items, retry)
	if err != nil || len(changed) == 0 {
		return nil, err
	}
	ids := make([]int64, len(changed))
	for i, wp := range changed {
		ids[i] = wp.ID
	}
	acts, failed, err := fetchEach(ctx, w.lim, "activities of work package", ids, r.api.Activities)
	p := &wpPage{wps: changed, acts: acts, failed: failed}
	if w.shared() && err == nil {
		w.readersMu.Lock()
		for i, wp := range changed {
			if failed[i] == nil && hasInternal(acts[i]) {
				if w.readers == nil {
					w.readers = map[int64]bool{}
				}
				w.readers[wp.Project.ID] = true
			}
		}
		w.readersMu.Unlock()
	}
	return p, err
}

// markReaders records, at the end of a shared store's work package
// pass, that the activities stored before this sync learned its user
// reads internal comments in their project were fetched by a reader.
func (w *Worker) markReaders(ctx context.Context) error {
	w.readersMu.Lock()
	var ids []int64
	for p, l := range w.unflagged {
		if w.readers[p] {
			ids = append(ids, l...)
		}
	}
	w.readers, w.unflagged = nil, nil
	w.readersMu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	return w.commit(ctx, func(tx *store.WriteTx) error {
		for _, id := range ids {
			if _, found, err := tx.WorkPackage(id); err != nil || !found {
				if err != nil {
					return err
				}
				continue
			}
			if err := tx.SetFetchedByReader(id, true); err != nil {
				return err
			}
		}
		return nil
	}, nil, nil, nil)
}

// commitPage stores and indexes p, fetched by fetchWorkPackagePage. A
// refresh after a write (RefreshWorkPackage) may have stored a newer copy
// since the page was listed; the check runs under commitMu, so nothing
// can slip in between it and the write, and an older listing never
// replaces what the caller just wrote.
func (w *Worker) commitPage(ctx context.Context, p *wpPage, kr *KindReport, st *store.SyncState) error {
	w.commits.Lock()
	defer w.commits.Unlock()
	if err := w.checkStored(ctx, p); err != nil {
		return err
	}
	return w.commitWorkPackagePage(ctx, p, kr, st)
}

// background runs one function at a time in its own goroutine; wait
// returns its error. The zero value is ready.
type background struct{ done chan error }

// start runs f; the previous function must have been waited for.
func (b *background) start(f func() error) {
	done := make(chan error, 1)
	b.done = done
	go func() { done <- f() }()
}

// wait waits for the function started last, if any, and returns its
// error.
func (b *background) wait() error {
	if b.done == nil {
		return nil
	}
	err := <-b.done
	b.done = nil
	return err
}

// wpPage is what fetchWorkPackagePage and commitPage hold for a page's changed work
// packages, index by index.
type wpPage struct {
	wps  []openproject.WorkPackage
	acts [][]openproject.Activity
	// failed is the item failure of a work package's activity fetch.
	failed []error
	// newer is set where the store holds a newer copy than the listing's.
	newer []bool
	// byReader is set, in a shared store, where the activities were
	// fetched by a user known to read internal comments there.
	byReader []bool
}

// changedWorkPackages returns the work packages of items that are new,
// changed (lockVersion or updatedAt) or marked in retry.
func (w *Worker) changedWorkPackages(ctx context.Context, items []openproject.WorkPackage, retry []int64) ([]openproject.WorkPackage, error) {
	var changed []openproject.WorkPackage
	err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for _, wp := range items {
			old, found, err := tx.WorkPackage(wp.ID)
			if err != nil {
				return err
			}
			_, marked := slices.BinarySearch(retry, wp.ID)
			if found && !marked && old.LockVersion == wp.LockVersion && old.UpdatedAt.Equal(wp.UpdatedAt) &&
				!w.refetchForInternal(tx, wp) {
				continue
			}
			changed = append(changed, wp)
		}
		return nil
	})
	return changed, err
}

// checkStored compares p with the store, under commitMu: it sets p.newer
// where the stored copy is newer, and gives a work package whose
// activities failed, and that will be written, the activities stored
// before, so its document keeps those comments.
func (w *Worker) checkStored(ctx context.Context, p *wpPage) error {
	p.newer = make([]bool, len(p.wps))
	p.byReader = make([]bool, len(p.wps))
	for i, wp := range p.wps {
		if w.shared() && p.failed[i] == nil {
			reads, known := w.readsInternal(wp.Project.ID)
			p.byReader[i] = hasInternal(p.acts[i]) || reads && known
		}
	}
	return w.st.View(ctx, func(tx *store.ReadTx) error {
		for i, wp := range p.wps {
			old, found, err := tx.WorkPackage(wp.ID)
			if err != nil {
				return err
			}
			// Timestamps have a resolution (seconds on older servers):
			// two edits in one second tie, and the lock version, which
			// every edit increments, tells them apart.
			p.newer[i] = found && (old.UpdatedAt.After(wp.UpdatedAt) ||
				old.UpdatedAt.Equal(wp.UpdatedAt) && old.LockVersion > wp.LockVersion)
			if p.failed[i] != nil && !p.newer[i] {
				a, _, err := tx.Activities(wp.ID)
				if err != nil {
					return err
				}
				p.acts[i] = a
			} else if !p.newer[i] && w.keepsInternal(wp.Project.ID, p.acts[i]) {
				a, _, err := tx.Activities(wp.ID)
				if err != nil {
					return err
				}
				p.acts[i] = withInternal(p.acts[i], a)
			}
		}
		return nil
	})
}

// readsInternal reports whether the worker's user reads project p's
// internal comments, and whether that is known: from their view
// (Shared.ReadsInternal) or from this sync's answers, which showed one.
func (w *Worker) readsInternal(p int64) (reads, known bool) {
	w.readersMu.Lock()
	found := w.readers[p]
	w.readersMu.Unlock()
	if found {
		return true, true
	}
	if w.opts.Shared == nil || w.opts.Shared.ReadsInternal == nil {
		return false, false
	}
	return w.opts.Shared.ReadsInternal(p)
}

// refetchForInternal reports whether a shared store's work package wp,
// stored as listed, needs its activities fetched again by this user:
// no reader of internal comments fetched them, and this user is one or
// may be.
func (w *Worker) refetchForInternal(tx *store.ReadTx, wp openproject.WorkPackage) bool {
	if !w.shared() || tx.FetchedByReader(wp.ID) {
		return false
	}
	reads, known := w.readsInternal(wp.Project.ID)
	return reads || !known
}

// keepsInternal reports whether a crawl of a shared store must keep the
// stored internal comments of a work package of project p whose fetched
// activities (acts) show none: unless its user is known to read them
// there, the answer cannot tell.
func (w *Worker) keepsInternal(p int64, acts []openproject.Activity) bool {
	if !w.shared() || hasInternal(acts) {
		return false
	}
	reads, known := w.readsInternal(p)
	return !(reads && known)
}

func hasInternal(acts []openproject.Activity) bool {
	return slices.ContainsFunc(acts, func(a openproject.Activity) bool { return a.Internal })
}

// withInternal returns fetched with the internal activities of stored
// that fetched lacks, in id order: what a user who cannot read internal
// comments fetched, completed with what one who could stored before.
func withInternal(fetched, stored []openproject.Activity) []openproject.Activity {
	out := fetched
	for _, a := range stored {
		if a.Internal && !slices.ContainsFunc(fetched, func(b openproject.Activity) bool { return b.ID == a.ID }) {
			if len(out) == len(fetched) {
				out = slices.Clone(fetched)
			}
			out = append(out, a)
		}
	}
	if len(out) > len(fetched) {
		slices.SortStableFunc(out, func(a, b openproject.Activity) int { return cmp.Compare(a.ID, b.ID) })
	}
	return out
}

// commitWorkPackagePage writes p, except where the store is newer, with
// its documents and the retry marks in one commit (commitMu held). The
// activities are written only where their fetch succeeded.
func (w *Worker) commitWorkPackagePage(ctx context.Context, p *wpPage, kr *KindReport, st *store.SyncState) error {
	write := func(tx *store.WriteTx) error {
		for i, wp := range p.wps {
			if p.newer[i] {
				continue
			}
			if err := tx.PutWorkPackage(wp); err != nil {
				return err
			}
			if p.failed[i] != nil {
				continue
			}
			if err := tx.PutActivities(wp.ID, p.acts[i]); err != nil {
				return err
			}
			if w.shared() {
				if err := tx.SetFetchedByReader(wp.ID, p.byReader[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if w.shared() {
		w.readersMu.Lock()
		for i, wp := range p.wps {
			if !p.newer[i] && p.failed[i] == nil && !p.byReader[i] {
				if w.unflagged == nil {
					w.unflagged = map[int64][]int64{}
				}
				w.unflagged[wp.Project.ID] = append(w.unflagged[wp.Project.ID], wp.ID)
			}
		}
		w.readersMu.Unlock()
	}
	var docs []indexer.Document
	var stale []string
	updated := 0
	for i, wp := range p.wps {
		if !p.newer[i] {
			d, s := workPackageDocs(wp, p.acts[i], w.shared())
			docs, stale = append(docs, d...), append(stale, s...)
			updated++
		}
	}
	retry, marked := w.markWorkPackages(st.Retry, p)
	prev := st.Retry
	st.Retry = retry
	if err := w.commitLocked(ctx, write, docs, stale, st); err != nil {
		st.Retry = prev
		return err
	}
	kr.Updated += updated
	kr.Retry += marked
	return nil
}

// markWorkPackages returns a copy of retry in which the work packages of
// p whose activities failed are marked, and the others not, with the
// number marked.
func (w *Worker) markWorkPackages(retry []int64, p *wpPage) ([]int64, int) {
	retry = slices.Clone(retry)
	marked := 0
	for i, wp := range p.wps {
		if p.failed[i] == nil {
			retry = dropID(retry, wp.ID)
			continue
		}
		// Even when a newer copy is stored: its comments may be the ones
		// that failed here.
		retry = addID(retry, wp.ID)
		marked++
		w.log.Warn("work package marked for the next sync", "id", wp.ID, "error", p.failed[i])
	}
	return retry, marked
}

// activityState records the activities' own sync state, which follows
// the work packages: activities are fetched only for work packages whose
// updatedAt or lockVersion moved.
func (w *Worker) activityState(ctx context.Context, fetched int, runErr error) {
	st, err := w.st.SyncStateOf(w.owner(), kind.Activity)
	if err != nil {
		return
	}
	now := w.opts.Now()
	st.Kind = kind.Activity
	if st.LastStarted.IsZero() || runErr == nil {
		st.LastStarted = now
	}
	st.LastFinished = now
	st.ItemsSeen = fetched
	// Like the other kinds, a failed run leaves Complete as it was: the
	// activities stored are complete as of LastSuccess.
	if runErr != nil {
		st.LastError = runErr.Error()
	} else {
		st.LastError, st.LastSuccess, st.Complete = "", now, true
	}
	_ = w.saveState(context.WithoutCancel(ctx), st)
}

// reconcileWorkPackages finds deleted (or no longer visible) work
// packages. Every sync compares the server's total with the store's count
// (one request with pageSize 1); only when they differ, or every
// FullListingEvery, it lists all ids (select=total,elements/id) and diffs
// them with the store.
func (w *Worker) reconcileWorkPackages(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	if !w.mayDelete() {
		// The store's count is everyone's, and what this user does not
		// list may be another's (see Shared).
		return nil
	}
	idOnly := []string{"total", "elements/id"}
	if w.opts.Now().Sub(st.LastFullListing) < w.opts.FullListingEvery {
		p, err := r.api.ListWorkPackages(ctx, openproject.ListOptions{
			Filters: openproject.Filters{openproject.StatusAll()}, Select: idOnly, PageSize: 1,
		})
		if err != nil {
			return fmt.Errorf("count work packages: %w", err)
		}
		n, err := w.st.Count(kind.WorkPackage)
		if err != nil {
			return fmt.Errorf("count stored work packages: %w", err)
		}
		if p.Total == n {
			return nil
		}
		w.log.Debug("work package count differs, listing ids", "server", p.Total, "store", n)
	}
	started := w.opts.Now()
	listed := map[int64]bool{}
	err := openproject.EachPage(ctx, openproject.ListOptions{
		Filters:  openproject.Filters{openproject.StatusAll()},
		SortBy:   []openproject.Sort{{Field: "id", Direction: "asc"}},
		Select:   idOnly,
		PageSize: w.opts.PageSize,
	}, r.api.ListWorkPackages, func(p openproject.Page[openproject.WorkPackage]) error {
		for _, wp := range p.Items {
			listed[wp.ID] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list work package ids: %w", err)
	}
	if err := w.deleteMissingWorkPackages(ctx, r, listed, kr); err != nil {
		return err
	}
	st.LastFullListing = started
	return w.commit(ctx, nil, nil, nil, st)
}

// verifyChunk bounds the ids per verification request, keeping the URL
// short.
const verifyChunk = 100

// deleteMissingWorkPackages deletes stored work packages absent from
// listed. Offset paging over a shrinking list can skip an item, so each
// candidate is confirmed first with an id-filtered listing (one request
// per verifyChunk candidates): only ids the server no longer returns are
// deleted, all at once after every chunk was checked, so the share limit
// sees the whole deletion.
func (w *Worker) deleteMissingWorkPackages(ctx context.Context, r *run, listed map[int64]bool, kr *KindReport) error {
	stored, err := w.st.IDs(kind.WorkPackage)
	if err != nil {
		return fmt.Errorf("read work package ids: %w", err)
	}
	var cand []int64
	for _, id := range stored {
		if !listed[id] {
			cand = append(cand, id)
		}
	}
	var gone []int64
	for len(cand) > 0 {
		chunk := cand[:min(len(cand), verifyChunk)]
		cand = cand[len(chunk):]
		still := map[int64]bool{}
		p, err := r.api.ListWorkPackages(ctx, openproject.ListOptions{
			Filters:  openproject.Filters{openproject.StatusAll(), openproject.IDs(chunk...)},
			Select:   []string{"total", "elements/id"},
			PageSize: len(chunk),
		})
		if err != nil {
			return fmt.Errorf("verify work package deletions: %w", err)
		}
		for _, wp := range p.Items {
			still[wp.ID] = true
		}
		for _, id := range chunk {
			if !still[id] {
				gone = append(gone, id)
			}
		}
	}
	return w.deleteEntities(ctx, kind.WorkPackage, gone, kr)
}

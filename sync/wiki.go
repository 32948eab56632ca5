package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/store"
)

// Keys of store.SyncState.Extra for a full wiki probe in progress, so an
// interrupted first crawl resumes where it stopped.
const (
	extraProbeNext = "probeNext"
	extraProbeRun  = "probeRun"
)

// noWikiText is the wiki state's note on servers whose pages carry no text.
const noWikiText = "wiki pages carry no text on this server; only titles are searchable"

// maxProbeBatch bounds the ids probed (and committed) per round, so a
// cancelled probe loses little work.
const maxProbeBatch = 100

// wikiOutageRun is the number of consecutive wiki page fetches that may
// fail (after the client's retries) before a probe stops: one failure
// marks that id for the next sync, ten in a row mean the server is down,
// and probing on would only mark every id up to the miss run.
const wikiOutageRun = 10

// syncWiki finds wiki pages by id, the only way the API offers. A full
// probe (the first sync, then every WikiFullProbeEvery) reads every id
// from 1 to WikiDeepMissRun past the highest page found; it also sees
// pages that became visible and re-reads all known ones. An incremental
// sync re-reads WikiRecheck known pages round-robin (pages have no
// updatedAt on most servers, so re-reading is the only change signal) and
// probes past the highest known id until WikiMissRun consecutive misses:
// new pages get ids above every existing one.
//
// There is no listing to confirm a deletion against, and servers answer
// 404 transiently, so a known page that answers 404 is only marked
// missing; it is deleted when it answers 404 again in a later sync. Every
// sync starts by fetching the pages marked by earlier ones (missing, or
// whose fetch failed).
func (w *Worker) syncWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	if st.Extra == nil {
		st.Extra = map[string]string{}
	}
	if err := w.recheckMarkedWiki(ctx, r, st, kr); err != nil {
		return err
	}
	// A full probe runs first, resumes if it was interrupted (probeNext
	// set), and repeats every WikiFullProbeEvery. Complete is not the
	// signal: it says the first probe finished, not the latest.
	full := st.LastFullListing.IsZero() || st.Extra[extraProbeNext] != "" ||
		w.opts.Now().Sub(st.LastFullListing) >= w.opts.WikiFullProbeEvery
	if full && st.Extra[extraProbeNext] == "" && w.shared() {
		// Other users' recent full probes may have asked every id this
		// user's would, with keys reading every wiki this user reads.
		below, at, ok, err := w.coveredProbe()
		if err != nil {
			return err
		}
		if ok {
			maxKnown, err := w.st.MaxID(kind.WikiPage)
			if err != nil {
				return fmt.Errorf("read highest wiki page id: %w", err)
			}
			// Pages made since those probes have higher ids than any
			// then: ask every id above their pages that no user found,
			// then past the highest known page as an incremental sync
			// does.
			if err := w.probeWiki(ctx, r, st, kr, below+1, 0, w.opts.WikiMissRun, maxKnown, probeSkipKnown); err != nil {
				return err
			}
			st.HighestID = max(st.HighestID, maxKnown)
			st.Complete = true
			st.LastFullListing = at
			// Every page this user reads is now known up to the highest
			// known page, whatever the probes relied on knew: recorded
			// as a probe from their start, a later user relying on it
			// need not ask the ids between again.
			write, err := w.recordProbe(r, at, st.HighestID)
			if err != nil {
				return err
			}
			return w.commit(ctx, write, nil, nil, st)
		}
	}
	if full {
		started := w.opts.Now()
		next, _ := strconv.ParseInt(st.Extra[extraProbeNext], 10, 64)
		runLen, _ := strconv.Atoi(st.Extra[extraProbeRun])
		if next <= 0 {
			next, runLen = 1, 0
		}
		maxKnown, err := w.st.MaxID(kind.WikiPage)
		if err != nil {
			return fmt.Errorf("read highest wiki page id: %w", err)
		}
		if err := w.probeWiki(ctx, r, st, kr, next, runLen, w.opts.WikiDeepMissRun, maxKnown, probeFull); err != nil {
			return err
		}
		delete(st.Extra, extraProbeNext)
		delete(st.Extra, extraProbeRun)
		st.Complete = true
		st.LastFullListing = started
		var write func(*store.WriteTx) error
		if w.shared() {
			if write, err = w.recordProbe(r, started, max(maxKnown, st.HighestID)); err != nil {
				return err
			}
		}
		return w.commit(ctx, write, nil, nil, st)
	}
	if err := w.recheckWiki(ctx, r, st, kr); err != nil {
		return err
	}
	if err := w.probeWiki(ctx, r, st, kr, st.HighestID+1, 0, w.opts.WikiMissRun, 0, 0); err != nil {
		return err
	}
	// A full probe finished before (else this run had been one).
	st.Complete = true
	return nil
}

// wikiResult is the outcome of fetching one wiki page id: found, absent
// (404) or failed with an item failure.
type wikiResult struct {
	page  openproject.WikiPage
	found bool
	err   error
}

// fetchWiki fetches ids with fetchEach; 404 means absent, and an item
// failure is recorded in its result.
func (w *Worker) fetchWiki(ctx context.Context, r *run, ids []int64) ([]wikiResult, error) {
	res, failed, err := fetchEach(ctx, w.lim, "wiki page", ids, func(ctx context.Context, id int64) (wikiResult, error) {
		p, err := r.api.WikiPage(ctx, id)
		if errors.Is(err, openproject.ErrNotFound) {
			return wikiResult{}, nil
		}
		return wikiResult{page: p, found: true}, err
	})
	if err != nil {
		return nil, err
	}
	for i, err := range failed {
		res[i].err = err
	}
	for _, x := range res {
		if x.found {
			if r.wikiRead == nil {
				r.wikiRead = map[int64]bool{}
			}
			r.wikiRead[x.page.Project.ID] = true
		}
	}
	return res, nil
}

// reads is what rw knows the user reads: an unknown wiki is not read.
func reads(rw func(int64) (bool, bool), project int64) bool {
	ok, _ := rw(project)
	return ok
}

// applyWiki stores the pages found and, in one commit together with st,
// updates the marks: a failed fetch marks the id for retry; a known page
// answering 404 is marked missing. With confirm set (the pages marked by
// earlier syncs are being fetched), a page already marked missing that
// answers 404 again is returned as a confirmed deletion instead, for the
// caller to delete.
func (w *Worker) applyWiki(ctx context.Context, ids []int64, res []wikiResult, st *store.SyncState, kr *KindReport, confirm bool) ([]int64, error) {
	var puts []openproject.WikiPage
	known := make([]bool, len(ids))
	err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for i, id := range ids {
			old, found, err := tx.WikiPage(id)
			if err != nil {
				return err
			}
			known[i] = found
			if res[i].found && (!found || !sameJSON(old, res[i].page)) {
				puts = append(puts, res[i].page)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read wiki pages: %w", err)
	}
	retry, missing := slices.Clone(st.Retry), slices.Clone(st.Missing)
	var confirmed []int64
	marked := 0
	for i, id := range ids {
		_, wasMissing := slices.BinarySearch(st.Missing, id)
		switch {
		case res[i].found:
			kr.Fetched++
			st.HighestID = max(st.HighestID, id)
			retry, missing = dropID(retry, id), dropID(missing, id)
			if !res[i].page.HasText {
				st.Note = noWikiText
			} else if st.Note == noWikiText {
				st.Note = ""
			}
		case res[i].err != nil:
			retry = addID(retry, id)
			marked++
			w.log.Warn("wiki page marked for the next sync", "id", id, "error", res[i].err)
		case !known[i]:
			retry, missing = dropID(retry, id), dropID(missing, id)
		case confirm && wasMissing:
			retry = dropID(retry, id)
			confirmed = append(confirmed, id)
		case !w.mayDelete():
			// Another user may read the page (see Shared).
			retry, missing = dropID(retry, id), dropID(missing, id)
		default:
			retry, missing = dropID(retry, id), addID(missing, id)
			if !wasMissing {
				w.log.Info("wiki page answered 404, deleted if the next sync confirms", "kind", kind.WikiPage, "id", id)
			}
		}
	}
	docs := wikiDocs(puts)
	prevRetry, prevMissing := st.Retry, st.Missing
	st.Retry, st.Missing = retry, missing
	err = w.commit(ctx, putAll(puts, (*store.WriteTx).PutWikiPage), docs, nil, st)
	if err != nil {
		st.Retry, st.Missing = prevRetry, prevMissing
		return nil, err
	}
	kr.Updated += len(puts)
	kr.Retry += marked
	return confirmed, nil
}

// recheckMarkedWiki fetches the pages earlier syncs marked, missing or
// failed, and deletes those that answered 404 for the second time (the
// share limit applies to them together). A confirmed page stays marked
// missing until its deletion is committed, so a refused or interrupted
// deletion is retried.
func (w *Worker) recheckMarkedWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	marked := slices.Clone(st.Missing)
	for _, id := range st.Retry {
		marked = addID(marked, id)
	}
	var confirmed []int64
	for len(marked) > 0 {
		ids := marked[:min(len(marked), maxProbeBatch)]
		marked = marked[len(ids):]
		res, err := w.fetchWiki(ctx, r, ids)
		if err != nil {
			return err
		}
		c, err := w.applyWiki(ctx, ids, res, st, kr, true)
		if err != nil {
			return err
		}
		confirmed = append(confirmed, c...)
	}
	if err := w.deleteEntities(ctx, kind.WikiPage, confirmed, kr); err != nil {
		return err
	}
	for _, id := range confirmed {
		st.Missing = dropID(st.Missing, id)
	}
	return nil
}

// probeMode says how probeWiki probes.
type probeMode uint8

const (
	// probeSkipKnown: in a shared store, ask only the ids no user found
	// (see probeWiki).
	probeSkipKnown probeMode = 1 << iota
	// probeResumable: record the probe's progress in the sync state, so
	// an interrupted probe resumes as a full probe where it stopped.
	probeResumable

	probeFull = probeSkipKnown | probeResumable
)

// probeWiki probes ids from next on until missRun consecutive ids were
// absent (runLen counts misses already seen before next) and, in a full
// probe, at least up to minEnd. Each round probes just enough ids to
// complete the run, so a sync that finds nothing costs exactly missRun
// requests. A failed id is neither a page nor a miss: it is marked for
// the next sync and the run goes on, until wikiOutageRun failures in a
// row end the probe with the last of them.
//
// A shared store's full probe skips the pages some user's crawl found,
// counting them as pages: the run past them is as long as the user's own
// deep probe would make it, and no id that may hold a page only this
// user reads goes unasked. (Whether a user reads a wiki is per project,
// and a project whose pages no user found could be this user's; so only
// the found ids can be skipped, and the probe costs about what the
// user's own store's would.)
func (w *Worker) probeWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport, next int64, runLen, missRun int, minEnd int64, mode probeMode) error {
	probed, failRun := 0, 0
	var lastErr error
	// A shared store's full probe asks only for the ids no user found:
	// the known pages are re-read round-robin like any (recheckWiki).
	var known []int64
	// unread are the known pages in projects whose wiki the user does
	// not read: misses for this user, not pages.
	unread := map[int64]bool{}
	if w.shared() && mode&probeSkipKnown != 0 {
		err := w.st.ScanWikiPages(ctx, store.DefaultScanBatch, func(ps []openproject.WikiPage) error {
			for _, p := range ps {
				known = append(known, p.ID)
				if rw := w.opts.Shared.ReadsWiki; rw != nil && !reads(rw, p.Project.ID) {
					unread[p.ID] = true
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read wiki pages: %w", err)
		}
		slices.Sort(known)
	}
	for runLen < missRun || next <= minEnd {
		n := max(missRun-runLen, 1)
		if next <= minEnd {
			n = max(n, int(min(minEnd-next+1, maxProbeBatch)))
		}
		n = wholeRounds(min(n, maxProbeBatch), w.lim.stats().limit)
		ids := make([]int64, 0, n)
		for i := range n {
			id := next + int64(i)
			if _, ok := slices.BinarySearch(known, id); ok {
				continue
			}
			ids = append(ids, id)
		}
		res, err := w.fetchWiki(ctx, r, ids)
		if err != nil {
			return err
		}
		got := map[int64]wikiResult{}
		for i, id := range ids {
			got[id] = res[i]
		}
		for id := next; id < next+int64(n); id++ {
			res, asked := got[id]
			switch {
			case !asked && unread[id]: // known, but not this user's
				runLen++
			case !asked: // known: a page
				runLen, failRun = 0, 0
			case res.err != nil:
				failRun++
				lastErr = res.err
			case res.found:
				runLen, failRun = 0, 0
			default:
				runLen++
				failRun = 0
			}
		}
		next += int64(n)
		if mode&probeResumable != 0 {
			st.Extra[extraProbeNext] = strconv.FormatInt(next, 10)
			st.Extra[extraProbeRun] = strconv.Itoa(runLen)
		}
		if _, err := w.applyWiki(ctx, ids, res, st, kr, false); err != nil {
			return err
		}
		probed += n
		w.progress(kind.WikiPage, probed, -1)
		if failRun >= wikiOutageRun {
			return fmt.Errorf("probe wiki pages: %d fetches in a row failed: %w", failRun, lastErr)
		}
	}
	return nil
}

// wholeRounds cuts a probe round of n ids, when it is longer than
// limit (the requests in flight at once), to a multiple of limit. The
// ids of a round are fetched limit at a time and the next round starts
// when the last answer is in: 100 ids at 16 ended with 4 requests alone
// in flight, and the first sync's deep probe (2,160 ids at 20 ms per
// request) kept 13.5 requests in flight instead of 16, 0.4 s longer.
func wholeRounds(n, limit int) int {
	if limit <= 0 || n <= limit {
		return n
	}
	return n - n%limit
}

// recheckWiki re-reads up to WikiRecheck known pages, starting at the
// first known id >= RecheckNext and wrapping around.
func (w *Worker) recheckWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	known, err := w.st.IDs(kind.WikiPage)
	if err != nil {
		return fmt.Errorf("read wiki page ids: %w", err)
	}
	if len(known) == 0 {
		return nil
	}
	start, _ := slices.BinarySearch(known, st.RecheckNext)
	n := min(w.opts.WikiRecheck, len(known))
	ids := make([]int64, 0, n)
	for i := range n {
		ids = append(ids, known[(start+i)%len(known)])
	}
	res, err := w.fetchWiki(ctx, r, ids)
	if err != nil {
		return err
	}
	st.RecheckNext = ids[len(ids)-1] + 1
	if st.RecheckNext > known[len(known)-1] {
		st.RecheckNext = 0
	}
	_, err = w.applyWiki(ctx, ids, res, st, kr, false)
	return err
}

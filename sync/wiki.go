package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/opsearch/opsearch/indexer"
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

// syncWiki finds wiki pages by id, the only way the API offers. A full
// probe (the first sync, then every WikiFullProbeEvery) reads every id
// from 1 to WikiDeepMissRun past the highest page found; it also sees
// pages that became visible and re-reads all known ones. An incremental
// sync re-reads WikiRecheck known pages round-robin (pages have no
// updatedAt on most servers, so re-reading is the only change signal) and
// probes past the highest known id until WikiMissRun consecutive misses:
// new pages get ids above every existing one.
func (w *Worker) syncWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	if st.Extra == nil {
		st.Extra = map[string]string{}
	}
	// A full probe runs first, resumes if it was interrupted (probeNext
	// set), and repeats every WikiFullProbeEvery. Complete is not the
	// signal: any failed run clears it, and a failure must not cost a
	// full probe.
	full := st.LastFullListing.IsZero() || st.Extra[extraProbeNext] != "" ||
		w.opts.Now().Sub(st.LastFullListing) >= w.opts.WikiFullProbeEvery
	if full {
		started := w.opts.Now()
		next, _ := strconv.ParseInt(st.Extra[extraProbeNext], 10, 64)
		runLen, _ := strconv.Atoi(st.Extra[extraProbeRun])
		if next <= 0 {
			next, runLen = 1, 0
		}
		maxKnown, err := w.st.MaxID(store.KindWikiPage)
		if err != nil {
			return fmt.Errorf("read highest wiki page id: %w", err)
		}
		if err := w.probeWiki(ctx, r, st, kr, next, runLen, w.opts.WikiDeepMissRun, maxKnown, true); err != nil {
			return err
		}
		delete(st.Extra, extraProbeNext)
		delete(st.Extra, extraProbeRun)
		st.Complete = true
		st.LastFullListing = started
		return w.commit(ctx, nil, nil, nil, st)
	}
	if err := w.recheckWiki(ctx, r, st, kr); err != nil {
		return err
	}
	return w.probeWiki(ctx, r, st, kr, st.HighestID+1, 0, w.opts.WikiMissRun, 0, false)
}

// wikiResult is the outcome of fetching one wiki page id.
type wikiResult struct {
	page  openproject.WikiPage
	found bool
}

// fetchWiki fetches ids with bounded concurrency; 404 means absent.
func (w *Worker) fetchWiki(ctx context.Context, r *run, ids []int64) ([]wikiResult, error) {
	res := make([]wikiResult, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(w.opts.Concurrency)
	for i, id := range ids {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			p, err := r.api.WikiPage(gctx, id)
			if errors.Is(err, openproject.ErrNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("fetch wiki page %d: %w", id, err)
			}
			res[i] = wikiResult{page: p, found: true}
			return nil
		})
	}
	return res, g.Wait()
}

// applyWiki stores the pages found and deletes known pages that are gone,
// in one commit together with st.
func (w *Worker) applyWiki(ctx context.Context, ids []int64, res []wikiResult, st *store.SyncState, kr *KindReport) error {
	var puts []openproject.WikiPage
	var gone []int64
	err := w.st.View(ctx, func(tx *store.ReadTx) error {
		for i, id := range ids {
			old, known, err := tx.WikiPage(id)
			if err != nil {
				return err
			}
			switch {
			case res[i].found && (!known || !sameJSON(old, res[i].page)):
				puts = append(puts, res[i].page)
			case !res[i].found && known:
				gone = append(gone, id)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read wiki pages: %w", err)
	}
	for i := range res {
		if res[i].found {
			kr.Fetched++
			if !res[i].page.HasText {
				st.Note = noWikiText
			} else if st.Note == noWikiText {
				st.Note = ""
			}
		}
	}
	docs := wikiDocs(puts)
	dels := make([]string, len(gone))
	for i, id := range gone {
		dels[i] = indexer.DocID(indexer.KindWikiPage, id)
	}
	err = w.commit(ctx, func(tx *store.WriteTx) error {
		for _, p := range puts {
			if err := tx.PutWikiPage(p); err != nil {
				return err
			}
		}
		for _, id := range gone {
			if err := tx.Delete(store.KindWikiPage, id); err != nil {
				return err
			}
		}
		return nil
	}, docs, dels, st)
	if err != nil {
		return err
	}
	kr.Updated += len(puts)
	kr.Deleted += len(gone)
	return nil
}

// probeWiki probes ids from next on until missRun consecutive ids were
// absent (runLen counts misses already seen before next) and, in a full
// probe, at least up to minEnd. Each round probes just enough ids to
// complete the run, so a sync that finds nothing costs exactly missRun
// requests.
func (w *Worker) probeWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport, next int64, runLen, missRun int, minEnd int64, full bool) error {
	probed := 0
	for runLen < missRun || next <= minEnd {
		n := max(missRun-runLen, 1)
		if next <= minEnd {
			n = max(n, int(min(minEnd-next+1, maxProbeBatch)))
		}
		n = min(n, maxProbeBatch)
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = next + int64(i)
		}
		res, err := w.fetchWiki(ctx, r, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if res[i].found {
				runLen = 0
				st.HighestID = max(st.HighestID, id)
			} else {
				runLen++
			}
		}
		next += int64(n)
		if full {
			st.Extra[extraProbeNext] = strconv.FormatInt(next, 10)
			st.Extra[extraProbeRun] = strconv.Itoa(runLen)
		}
		if err := w.applyWiki(ctx, ids, res, st, kr); err != nil {
			return err
		}
		probed += n
		w.progress(store.KindWikiPage, probed, -1)
	}
	return nil
}

// recheckWiki re-reads up to WikiRecheck known pages, starting at the
// first known id >= RecheckNext and wrapping around.
func (w *Worker) recheckWiki(ctx context.Context, r *run, st *store.SyncState, kr *KindReport) error {
	known, err := w.st.IDs(store.KindWikiPage)
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
	return w.applyWiki(ctx, ids, res, st, kr)
}

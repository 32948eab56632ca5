package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	gosync "sync"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// The reference server's live work package search constants
// (openproject-mcp src/search and its work package domain).
const (
	// RefMaxCandidates caps the de-duplicated candidates
	// (MAX_WORK_PACKAGE_CANDIDATES).
	RefMaxCandidates = 250
	// RefEnrichLimit is how many candidates are enriched
	// (DEFAULT_ENRICH_LIMIT).
	RefEnrichLimit = 25
	// RefConcurrency bounds parallel enrichments (DEFAULT_CONCURRENCY).
	RefConcurrency = 8
)

// ReferenceSearch is a faithful implementation of the reference server's
// live two-phase work package search, through the API on every query:
//
//  1. Candidates: request A, the server-side filter subject ~ query, and
//     request B, the most recently updated work packages (sortBy updatedAt
//     desc, pageSize 250), in parallel; de-duplicated by id (A first) and
//     capped at 250. Errors of either request count as an empty list.
//  2. Shallow rank on the subject (weight 3), no limit.
//  3. Enrichment of the top 25 that pass the gate, backfilled with the most
//     recent other candidates, at concurrency 8: GET the work package and
//     its activities.
//  4. Deep rank on description (1) and comments (1); the final score is
//     max(shallow, deep); order by score, then id ascending.
//
// Both requests send an empty filter list besides the subject filter, so
// closed work packages are candidates too (with no filters parameter the
// server would hide them, and the reference could never find one).
type ReferenceSearch struct {
	Client *openproject.Client
}

// fieldDecl lists the work package fields the reference declares; deep
// ranking uses all of them so weights normalise by the same maximum (3)
// as the shallow phase.
func refRecord(wp openproject.WorkPackage, acts []openproject.Activity, deep bool) scorer.Record {
	r := scorer.Record{ID: "work_package:" + strconv.FormatInt(wp.ID, 10), Updated: wp.UpdatedAt}
	r.Fields = []scorer.Field{{Name: "subject", Weight: 3, Values: []string{wp.Subject}}}
	if deep {
		var comments []string
		for _, a := range acts {
			if a.IsComment() {
				comments = append(comments, a.Comment)
			}
		}
		r.Fields = append(r.Fields,
			scorer.Field{Name: "description", Weight: 1, Values: []string{wp.Description}},
			scorer.Field{Name: "comments", Weight: 1, Values: comments},
		)
	} else {
		// Declared, so the maximum weight is the same in both phases.
		r.Fields = append(r.Fields, scorer.Field{Name: "description", Weight: 1}, scorer.Field{Name: "comments", Weight: 1})
	}
	return r
}

// RefHit is one ranked work package of the reference search.
type RefHit struct {
	ID    int64
	Score float64
}

// Search runs query and returns up to limit work packages, best first.
// A fatal error (authentication, permission, rate limit) aborts it, as in
// the reference; other enrichment errors degrade the affected record only.
func (r *ReferenceSearch) Search(ctx context.Context, query string, limit int) ([]RefHit, error) {
	cands, err := r.candidates(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, nil
	}
	shallowRecs := make([]scorer.Record, len(cands))
	for i, wp := range cands {
		shallowRecs[i] = refRecord(wp, nil, false)
	}
	opts := scorer.Options{IgnoreRecency: true}
	shallow := scorer.Rank(shallowRecs, query, opts)

	// The enrichment set: top RefEnrichLimit by shallow score, backfilled
	// by recency.
	chosen := make([]int, 0, RefEnrichLimit)
	in := map[int]bool{}
	for _, s := range shallow {
		if len(chosen) == RefEnrichLimit {
			break
		}
		chosen = append(chosen, s.Index)
		in[s.Index] = true
	}
	if len(chosen) < RefEnrichLimit {
		rest := make([]int, 0, len(cands))
		for i := range cands {
			if !in[i] {
				rest = append(rest, i)
			}
		}
		slices.SortStableFunc(rest, func(a, b int) int { return cands[b].UpdatedAt.Compare(cands[a].UpdatedAt) })
		chosen = append(chosen, rest[:min(len(rest), RefEnrichLimit-len(chosen))]...)
	}

	type enriched struct {
		wp   openproject.WorkPackage
		acts []openproject.Activity
		ok   bool
	}
	out := make([]enriched, len(chosen))
	sem := make(chan struct{}, RefConcurrency)
	var wg gosync.WaitGroup
	var fatalMu gosync.Mutex
	var fatal error
	for i, ci := range chosen {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := cands[ci].ID
			var wp openproject.WorkPackage
			var acts []openproject.Activity
			var werr, aerr error
			var inner gosync.WaitGroup
			inner.Add(2)
			go func() { defer inner.Done(); wp, werr = r.Client.WorkPackage(ctx, id) }()
			go func() { defer inner.Done(); acts, aerr = r.Client.Activities(ctx, id) }()
			inner.Wait()
			if err := errors.Join(werr, aerr); err != nil {
				if isFatal(err) {
					fatalMu.Lock()
					fatal = err
					fatalMu.Unlock()
				}
				return
			}
			out[i] = enriched{wp: wp, acts: acts, ok: true}
		}()
	}
	wg.Wait()
	if fatal != nil {
		return nil, fmt.Errorf("reference search: enrich: %w", fatal)
	}

	final := map[int64]float64{}
	for _, s := range shallow {
		final[cands[s.Index].ID] = s.Score
	}
	var deepRecs []scorer.Record
	var deepIDs []int64
	for _, e := range out {
		if e.ok {
			deepRecs = append(deepRecs, refRecord(e.wp, e.acts, true))
			deepIDs = append(deepIDs, e.wp.ID)
		}
	}
	for _, d := range scorer.Rank(deepRecs, query, opts) {
		id := deepIDs[d.Index]
		if s, ok := final[id]; !ok || d.Score > s {
			final[id] = d.Score
		}
	}
	hits := make([]RefHit, 0, len(final))
	for id, s := range final {
		hits = append(hits, RefHit{ID: id, Score: s})
	}
	slices.SortFunc(hits, func(a, b RefHit) int {
		if c := scorer.CompareScores(a.Score, b.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// candidates runs requests A and B in parallel and merges them.
func (r *ReferenceSearch) candidates(ctx context.Context, query string) ([]openproject.WorkPackage, error) {
	var a, b openproject.Page[openproject.WorkPackage]
	var errA, errB error
	var wg gosync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a, errA = r.Client.ListWorkPackages(ctx, openproject.ListOptions{
			Filters:  openproject.Filters{{Name: "subject", Operator: "~", Values: []string{query}}},
			PageSize: RefMaxCandidates,
		})
	}()
	go func() {
		defer wg.Done()
		b, errB = r.Client.ListWorkPackages(ctx, openproject.ListOptions{
			Filters:  openproject.Filters{},
			SortBy:   []openproject.Sort{{Field: "updatedAt", Direction: "desc"}},
			PageSize: RefMaxCandidates,
		})
	}()
	wg.Wait()
	for _, err := range []error{errA, errB} {
		if err != nil && isFatal(err) {
			return nil, fmt.Errorf("reference search: candidates: %w", err)
		}
	}
	seen := map[int64]bool{}
	var out []openproject.WorkPackage
	for _, wp := range append(a.Items, b.Items...) {
		if !seen[wp.ID] && len(out) < RefMaxCandidates {
			seen[wp.ID] = true
			out = append(out, wp)
		}
	}
	return out, nil
}

// isFatal reports the errors that abort a reference search: 401, 403,
// 429.
func isFatal(err error) bool {
	var e *openproject.Error
	if errors.As(err, &e) {
		return e.Status == 401 || e.Status == 403 || e.Status == 429
	}
	return false
}

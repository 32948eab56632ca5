package indexer

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/internal/spread"
)

// A fuzzy query's main request is most of its time in the index, and
// bleve collects a request on one goroutine: the other cores wait, or
// run the small kinds' request, which ends sooner. So a request that
// walks many postings is collected in parts, as Lucene's searcher
// collects its slices: every part on its own core, each matching the
// documents of the ranges of numbers it takes, and their hits are
// merged in the order one request gives. The ranges are handed out one
// at a time (chunker), several per part, so a part that starts late
// (its core was busy with the small kinds' request) or meets denser
// postings takes fewer, and the parts end together. Each part builds
// its own searcher, a fifth of a request's time, so a small request is
// collected whole.

// minPartPostings is the fewest postings of a query's words (their forms
// in the text) for each part of its collection.
const minPartPostings = 20000

// maxParts bounds the parts of one collection.
const maxParts = 4

// rangesPerPart is how many ranges of numbers each part's share is cut
// into (chunker).
const rangesPerPart = 4

// collect runs req, the request of rq (nil for another query) under
// opts's restrictions, in parts when its words have at least postings
// postings (partBounds), else whole.
func (b *Bleve) collect(ctx context.Context, req *bleve.SearchRequest, rq *rankQuery, postings uint64, opts SearchOptions, before index.IndexReader) (Result, error) {
	if bounds, parts := b.partBounds(rq, postings, opts, before); bounds != nil {
		out, ok, err := b.searchParts(ctx, req, rq, opts, before, bounds, parts)
		if err != nil || ok {
			return out, err
		}
	}
	res, err := b.idx.SearchInContext(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return Result{Total: res.Total, Took: res.Took, Hits: hitsOf(res)}, nil
}

// partBounds returns the document numbers that bound the ranges to
// collect rq in, whose words have postings postings (range i from
// bounds[i] to bounds[i+1], the last one unbounded), and how many parts
// share them; nil to collect it whole. before is the snapshot current
// before the request: the ranges split its numbers.
func (b *Bleve) partBounds(rq *rankQuery, postings uint64, opts SearchOptions, before index.IndexReader) ([]uint64, int) {
	if rq == nil || len(opts.IDs) > 0 {
		return nil, 0
	}
	if _, ok := before.(*scorch.IndexSnapshot); !ok {
		return nil, 0 // no snapshot to check the parts read
	}
	per := cmp.Or(b.partPostings, minPartPostings)
	parts := min(uint64(runtime.GOMAXPROCS(0)), maxParts, postings/per)
	if parts < 2 {
		return nil, 0
	}
	docs, err := before.DocCount()
	if err != nil || docs < parts {
		return nil, 0
	}
	// Numbers run over the segments, deleted documents included; the
	// live count splits them evenly enough.
	ranges := min(parts*rangesPerPart, docs)
	bounds := make([]uint64, ranges+1)
	for i := range ranges {
		bounds[i] = docs * i / ranges
	}
	bounds[ranges] = exhausted
	return bounds, int(parts)
}

// searchParts runs req, the request of the rankQuery rq under opts's
// restrictions, in parts (at most parts, one per core) over the ranges
// bounds gives (chunker), at once, and merges their hits. ok is false when the index changed
// meanwhile: the parts may have read different snapshots, so the caller
// runs req whole. A snapshot stays current until a batch or merge
// replaces it, never to return (sameSnapshot): if before is still
// current after the parts, they all read it.
func (b *Bleve) searchParts(ctx context.Context, req *bleve.SearchRequest, rq *rankQuery, opts SearchOptions, before index.IndexReader, bounds []uint64, parts int) (out Result, ok bool, err error) {
	ranges := &chunker{bounds: bounds}
	n := min(len(bounds)-1, parts)
	results := make([]*bleve.SearchResult, n)
	err = spread.Run(ctx, n, n, func(take func() (int, bool)) error {
		for i, ok := take(); ok; i, ok = take() {
			if ranges.done() {
				// The other parts took every range while this one
				// waited for a core: its searcher would find none.
				continue
			}
			part := *rq
			part.chunks = ranges
			// Each part keeps as many of its best as the page reaches,
			// from its first.
			preq := b.textRequest(b.idx, b.restrict(&part, opts.Visible), opts, req.From+req.Size, 0, true)
			res, err := b.idx.SearchInContext(ctx, preq)
			if err != nil {
				return err
			}
			results[i] = res
		}
		return nil
	})
	if err != nil {
		return Result{}, false, err
	}
	after := b.currentReader()
	if after == nil {
		return Result{}, false, nil
	}
	same := sameSnapshot(before, after)
	_ = after.Close()
	if !same {
		return Result{}, false, nil
	}
	return mergeParts(results, req.From, req.Size), true, nil
}

// mergeParts merges the parts' hits, each ordered by score, into the
// order one request over all of them gives: by score, and among equal
// scores by document number (bleve's order of a tie; with no numbers,
// the earlier part's first). A part that took no range has no result.
// It returns those from from on, at most size.
func mergeParts(parts []*bleve.SearchResult, from, size int) Result {
	var out Result
	parts = slices.DeleteFunc(slices.Clone(parts), func(p *bleve.SearchResult) bool { return p == nil })
	at := make([]int, len(parts))
	before := func(a, b *bsearch.DocumentMatch) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.IndexInternalID.Compare(b.IndexInternalID) < 0
	}
	var merged []*bsearch.DocumentMatch
	for len(merged) < from+size {
		best := -1
		for i, p := range parts {
			if at[i] < len(p.Hits) && (best < 0 || before(p.Hits[at[i]], parts[best].Hits[at[best]])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		merged = append(merged, parts[best].Hits[at[best]])
		at[best]++
	}
	var took time.Duration
	for _, p := range parts {
		out.Total += p.Total
		took = max(took, p.Took)
	}
	out.Took = took
	out.Hits = hitsOf(&bleve.SearchResult{Hits: merged[min(from, len(merged)):]})
	return out
}

package indexer

import (
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
)

// partsCorpus is a generated corpus and queries made of its titles'
// words: the first words of titles, and words of titles far apart, so
// that some queries match a few documents and some most of them.
func partsCorpus(t *testing.T) (*Bleve, []string, []Document) {
	t.Helper()
	docs := genDocs(opgen.GenOptions{Seed: 7, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 20})
	b := openFilled(t, docs)
	var queries []string
	for i := 0; i < len(docs); i += 37 {
		w := strings.Fields(docs[i].Title)
		queries = append(queries, strings.Join(w[:min(3, len(w))], " "))
		if j := (i * 7) % len(docs); j != i {
			v := strings.Fields(docs[j].Title)
			queries = append(queries, w[len(w)-1]+" "+v[0]+" status")
		}
	}
	queries = append(queries, "what happened to the meeting about the report", "any ticket about login")
	return b, queries, docs
}

// sameResult fails t when got and want differ in total, hits, order or
// scores (to the bit).
func sameResult(t *testing.T, what string, got, want Result) {
	t.Helper()
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
		t.Errorf("%s: total %d, %d hits; whole %d, %d hits", what, got.Total, len(got.Hits), want.Total, len(want.Hits))
		return
	}
	for i := range got.Hits {
		g, w := got.Hits[i], want.Hits[i]
		if g.ID != w.ID || g.Score != w.Score {
			t.Errorf("%s: hit %d is %s %v; whole %s %v", what, i, g.ID, g.Score, w.ID, w.Score)
			return
		}
	}
}

// TestPartsCollectAsOne: a request collected in parts of the document
// numbers gives the total, hits, order and scores that one collection
// gives, however the numbers are cut (an empty part included), for
// plain, restricted and kind-limited queries and for later pages.
func TestPartsCollectAsOne(t *testing.T) {
	b, queries, docs := partsCorpus(t)
	ctx := t.Context()
	n := uint64(len(docs))
	cuts := map[string][]uint64{
		"halves":     {0, n / 2, exhausted},
		"thirds":     {0, n / 3, 2 * n / 3, exhausted},
		"four":       {0, 1, n / 4, n - 1, exhausted},
		"empty part": {0, 5, 5, exhausted},
		"sevenths":   {0, n / 7, 2 * n / 7, 3 * n / 7, 4 * n / 7, 5 * n / 7, 6 * n / 7, exhausted},
	}
	views := map[string]SearchOptions{
		"all":        {Size: 20},
		"page 2":     {Size: 10, From: 10},
		"restricted": {Size: 20, Visible: &Visibility{Projects: []int64{docs[0].ProjectID}}},
		"wiki pages": {Size: 5, Kinds: []kind.Kind{kind.WikiPage}},
	}
	checked := 0
	for vname, view := range views {
		for _, q := range queries {
			opts := view
			opts.Query = q
			req, _, plan, err := b.buildRequest(ctx, b.idx, opts)
			if err != nil {
				t.Fatal(err)
			}
			rq, ok := plan.text.(*rankQuery)
			if !ok {
				continue
			}
			res, err := b.idx.SearchInContext(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			whole := Result{Total: res.Total, Hits: hitsOf(res)}
			for cname, bounds := range cuts {
				before := b.currentReader()
				got, ok, err := b.searchParts(ctx, req, rq, opts, before, bounds, maxParts)
				_ = before.Close()
				if err != nil || !ok {
					t.Fatalf("%s %q in %s: ok %v, %v", vname, q, cname, ok, err)
				}
				sameResult(t, vname+" "+q+" in "+cname, got, whole)
			}
			if whole.Total > 0 {
				checked++
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d queries with hits: the corpus does not exercise the parts", checked)
	}
}

// TestSearchInParts: Search collects a query in parts when its words'
// postings reach partPostings per part, for the whole query and for a
// commonSplit's rarer words, and answers as it does collecting whole.
func TestSearchInParts(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("parts need two cores (TestPartsCollectAsOne covers the collection)")
	}
	b, queries, _ := partsCorpus(t)
	ctx := t.Context()
	for _, split := range []uint64{math.MaxUint64, 1} {
		b.splitPostings = split
		parted := 0
		for _, q := range queries {
			opts := SearchOptions{Query: q, Size: 15}
			b.partPostings = math.MaxUint64
			whole, err := b.Search(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			b.partPostings = 1
			got, err := b.Search(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			sameResult(t, q, got, whole)
			if got.TotalIsLowerBound != whole.TotalIsLowerBound {
				t.Errorf("%q: lower bound %v, whole %v", q, got.TotalIsLowerBound, whole.TotalIsLowerBound)
			}
			for i, h := range got.Hits {
				if h.Coverage != whole.Hits[i].Coverage {
					t.Errorf("%q: %s covers %v, whole %v", q, h.ID, h.Coverage, whole.Hits[i].Coverage)
				}
			}
			before := b.currentReader()
			if got.Plan != nil && hasBounds(b.partBounds(got.Plan.text.(*rankQuery), got.Plan.postings(false), opts, before)) {
				parted++
			}
			_ = before.Close()
		}
		if parted == 0 {
			t.Errorf("split %d: no query was collected in parts", split)
		}
	}
}

// TestPartsAfterAChange: parts that may have read different snapshots
// (a batch landed since the snapshot they were cut from) are not merged:
// the caller collects the request whole.
func TestPartsAfterAChange(t *testing.T) {
	b, queries, docs := partsCorpus(t)
	ctx := t.Context()
	opts := SearchOptions{Query: queries[0], Size: 10}
	req, _, plan, err := b.buildRequest(ctx, b.idx, opts)
	if err != nil {
		t.Fatal(err)
	}
	before := b.currentReader()
	defer func() { _ = before.Close() }()
	changed := docs[1]
	changed.Title += " changed"
	if err := b.Index(ctx, changed); err != nil {
		t.Fatal(err)
	}
	_, ok, err := b.searchParts(ctx, req, plan.text.(*rankQuery), opts, before, []uint64{0, uint64(len(docs) / 2), exhausted}, 2)
	if err != nil || ok {
		t.Fatalf("parts after a batch: ok %v, %v; want them dropped", ok, err)
	}
}

// TestMergeParts: equal scores keep the earlier part's hits first, as one
// collection orders a tie by document number; the page is cut after the
// merge; the totals add up.
func TestMergeParts(t *testing.T) {
	hit := func(id string, score float64) *bsearch.DocumentMatch {
		return &bsearch.DocumentMatch{ID: id, Score: score}
	}
	a := &bleve.SearchResult{Total: 3, Hits: bsearch.DocumentMatchCollection{hit("a1", 3), hit("a2", 2), hit("a3", 1)}}
	b := &bleve.SearchResult{Total: 4, Hits: bsearch.DocumentMatchCollection{hit("b1", 3), hit("b2", 2.5), hit("b3", 2), hit("b4", 0.5)}}
	empty := &bleve.SearchResult{}
	got := mergeParts([]*bleve.SearchResult{a, empty, b}, 1, 4)
	var ids []string
	for _, h := range got.Hits {
		ids = append(ids, h.ID)
	}
	if strings.Join(ids, " ") != "b1 b2 a2 b3" || got.Total != 7 {
		t.Errorf("merged page %v, total %d; want [b1 b2 a2 b3] of 7 (a1 before b1, a2 before b3)", ids, got.Total)
	}
	if got := mergeParts([]*bleve.SearchResult{a, b}, 10, 5); len(got.Hits) != 0 || got.Total != 7 {
		t.Errorf("page past the hits: %d hits, total %d", len(got.Hits), got.Total)
	}

	// Parts take interleaved ranges: a tie goes to the lower document
	// number, whichever part found it; a part that took no range has no
	// result.
	num := func(id string, n uint64, score float64) *bsearch.DocumentMatch {
		return &bsearch.DocumentMatch{ID: id, Score: score, IndexInternalID: index.NewIndexInternalID(nil, n)}
	}
	first := &bleve.SearchResult{Total: 2, Hits: bsearch.DocumentMatchCollection{num("n3", 3, 1), num("n9", 9, 1)}}
	second := &bleve.SearchResult{Total: 2, Hits: bsearch.DocumentMatchCollection{num("n1", 1, 1), num("n5", 5, 1)}}
	got = mergeParts([]*bleve.SearchResult{first, nil, second}, 0, 4)
	ids = nil
	for _, h := range got.Hits {
		ids = append(ids, h.ID)
	}
	if strings.Join(ids, " ") != "n1 n3 n5 n9" || got.Total != 4 {
		t.Errorf("merged ties %v, total %d; want [n1 n3 n5 n9] of 4", ids, got.Total)
	}
}

// TestChunkerHandsOutEachRangeOnce: ranges come in order, each once,
// across the parts that ask at once, and none once they are taken.
func TestChunkerHandsOutEachRangeOnce(t *testing.T) {
	c := &chunker{bounds: []uint64{0, 10, 20, 30, exhausted}}
	got := make(chan [2]uint64, 8)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for from, to, ok := c.take(); ok; from, to, ok = c.take() {
				got <- [2]uint64{from, to}
			}
		})
	}
	wg.Wait()
	close(got)
	seen := map[[2]uint64]int{}
	for r := range got {
		seen[r]++
	}
	want := [][2]uint64{{0, 10}, {10, 20}, {20, 30}, {30, exhausted}}
	if len(seen) != len(want) {
		t.Fatalf("ranges handed out: %v, want %v", seen, want)
	}
	for _, r := range want {
		if seen[r] != 1 {
			t.Errorf("range %v handed out %d times", r, seen[r])
		}
	}
	if !c.done() {
		t.Error("every range taken, yet not done")
	}
	if _, _, ok := c.take(); ok {
		t.Error("a range after the last")
	}
}

// hasBounds reports whether partBounds cut ranges.
func hasBounds(bounds []uint64, _ int) bool { return bounds != nil }

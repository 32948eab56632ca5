package search

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/eval/querygen"
	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

// syncedQueries syncs a generated data set of wps work packages, with
// wiki pages, meetings and attachments, and generates its labelled
// queries, perKind of each kind. It skips in short mode.
func syncedQueries(t *testing.T, seed int64, wps, perKind int) (*synced.Env, []scorer.LabelledQuery) {
	t.Helper()
	if testing.Short() {
		t.Skipf("syncs a %d work package data set; skipShort: checks what one call returns", wps)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: seed, WorkPackages: wps, WikiPages: wps / 25, Meetings: wps / 25})
	return synced.Start(t, d, optest.AdminKey), querygen.Generate(d, querygen.Options{Seed: seed, PerKind: perKind})
}

// Setting aside the candidates that cannot reach the page (rankHead), and
// scoring candidates as they are loaded (hydrate), must not change any
// answer: every page of every generated query, through an engine that
// does both and one that loads the whole head and scores it in a pass of
// its own, is the same response, while the first loads fewer entities.
// The data set has attachments, whose containers move up beside them,
// meetings and wiki pages beside the work packages, and custom weights in
// one case, which change the weight the scorer normalises by.
func TestPruneKeepsEveryPage(t *testing.T) {
	ctx := context.Background()
	s, queries := syncedQueries(t, 11, 1500, 12)
	if len(queries) < 100 {
		t.Fatalf("%d generated queries, want at least 100", len(queries))
	}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"defaults", Options{}},
		{"custom weights", Options{Weights: map[string]float64{"meeting.title": 6, "work_package.subject": 1, "attachment.file_name": 0}}},
		{"no cross-field score", Options{CrossFieldWeight: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var loadedPruned, loadedFull, compared int
			for _, lq := range queries {
				for _, page := range []struct{ page, size int }{{1, 10}, {1, 1}, {2, 5}, {1, 20}} {
					q := Query{Text: lq.Query, Page: page.page, PageSize: page.size}
					// Fresh engines: their caches then count the entities
					// each loaded for this one query.
					pruning := New(s.Store, s.Index, tc.opts)
					full := New(s.Store, s.Index, tc.opts)
					full.plain = true
					got, err := pruning.Search(ctx, q)
					if err != nil {
						t.Fatalf("search %q: %v", q.Text, err)
					}
					want, err := full.Search(ctx, q)
					if err != nil {
						t.Fatalf("search %q: %v", q.Text, err)
					}
					got.TookMS, want.TookMS = 0, 0
					if !reflect.DeepEqual(got, want) {
						g, _ := json.MarshalIndent(got, "", " ")
						w, _ := json.MarshalIndent(want, "", " ")
						t.Fatalf("%q page %d of %d: pruned answer differs\n got %s\nwant %s", q.Text, page.page, page.size, g, w)
					}
					loadedPruned += len(pruning.cache.byID)
					loadedFull += len(full.cache.byID)
					compared++
				}
			}
			t.Logf("%d searches: %d entities loaded with pruning, %d without", compared, loadedPruned, loadedFull)
			if loadedPruned*10 > loadedFull*9 {
				t.Errorf("pruning loaded %d entities against %d without: it set almost nothing aside", loadedPruned, loadedFull)
			}
		})
	}
}

// The bound prune relies on holds for every candidate of every query: no
// loaded and scored candidate scores above what its hit allowed. (The
// answers' equality above can miss a loose bound: most candidates past
// the first score far below it.)
func TestPruneBoundHolds(t *testing.T) {
	ctx := context.Background()
	s, queries := syncedQueries(t, 12, 1000, 10)
	for _, opts := range []Options{{}, {CrossFieldWeight: 4}, {Weights: map[string]float64{"work_package.description": 3}}} {
		e := New(s.Store, s.Index, opts)
		var checked, high int
		for _, lq := range queries {
			res, err := e.searchIndex(ctx, indexer.SearchOptions{Query: lq.Query, Mode: indexer.MatchFuzzy, Size: 30})
			if err != nil {
				t.Fatalf("search %q: %v", lq.Query, err)
			}
			cands, err := e.hydrate(ctx, res.Hits, nil)
			if err != nil {
				t.Fatal(err)
			}
			sc := e.scaleOf(res.Hits)
			for _, r := range e.rank(cands, Query{Text: lq.Query}, sc) {
				checked++
				if b := e.bound(sc, r.c.hit); r.res.Score > b {
					t.Errorf("%q: %s scored %.4f (evidence %.2f) above its bound %.4f", lq.Query, r.c.hit.ID, r.res.Score, r.evidence, b)
				}
				if r.evidence > 0.7 {
					high++
				}
			}
		}
		if checked < 1000 || high < 10 {
			t.Fatalf("checked %d candidates, %d with evidence over 0.7: too few to test the bound", checked, high)
		}
	}
}

package indexer

import (
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
)

// TestRankQueryScoresAsBoolean: the one-searcher fuzzy query finds the
// same documents with the same scores, to the last bit, as the nested
// boolean query bleve builds from the same clauses, on generated text
// with typos, truncated words, synonyms, identifiers and questions;
// alone (stepped) and inside a conjunction (advanced).
func TestRankQueryScoresAsBoolean(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	b := openFilled(t, benchDocs(600))
	queries := append(slices.Clone(benchQueries), "#12", "ticket 40 rollout", "getUserProfile", "the", "who raised the concern that the backup failed?")
	search := func(req *bleve.SearchRequest, q query.Query, within bool) *bleve.SearchResult {
		t.Helper()
		r := *req
		r.Size = 100000 // every hit (buildRequest caps at maxSize)
		r.Query = q
		if within {
			r.Query = query.NewConjunctionQuery([]query.Query{kindsQuery([]kind.Kind{kind.Meeting, kind.WikiPage}, 0), q})
		}
		res, err := b.idx.Search(&r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ran := 0
	for _, q := range queries {
		req, _, plan, err := b.buildRequest(t.Context(), b.idx, SearchOptions{Query: q, Size: 10000})
		if err != nil {
			t.Fatal(err)
		}
		rq, ok := req.Query.(*rankQuery)
		if !ok {
			if plan != nil && len(plan.Words) > 0 {
				t.Errorf("%q: a fuzzy query without restrictions is not a rankQuery but %T", q, req.Query)
			}
			continue
		}
		ran++
		got := search(req, rq, false)
		want := search(req, query.NewBooleanQuery([]query.Query{disjunction(rq.groups, 0)}, rq.should, nil), false)
		if got.Total == 0 {
			t.Errorf("%q: no hits: the comparison proves nothing", q)
		}
		if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
			t.Errorf("%q: %d hits of %d, want %d of %d", q, len(got.Hits), got.Total, len(want.Hits), want.Total)
		}
		sameScores(t, q, got, want)
		// Advanced by a conjunction, it scores the same. (bleve's
		// boolean does not: TestRestrictedScoresAsUnrestricted.)
		sameScores(t, q+" (in a conjunction)", search(req, rq, true), got)
	}
	if ran < len(benchQueries) {
		t.Errorf("only %d of %d queries ran as a rankQuery", ran, len(queries))
	}
}

// TestRestrictedScoresAsUnrestricted: a restriction to few kinds (a
// conjunct), to many (a filter) or to a project (a filter) keeps each
// hit's unrestricted score, title boosts included. bleve's boolean query
// lost its title boosts when a conjunction advanced it: "landing page"
// scored a meeting 0.125 restricted and 3.17 unrestricted.
func TestRestrictedScoresAsUnrestricted(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	b := openFilled(t, genDocs(opgen.GenOptions{Seed: 1, WorkPackages: 600, Comments: 1800, WikiPages: 20, Meetings: 20}))
	restrictions := []SearchOptions{
		{Kinds: []kind.Kind{kind.Meeting, kind.WikiPage}},
		{Kinds: []kind.Kind{kind.WorkPackage}},
		{ProjectIDs: []int64{1, 2, 3}},
	}
	if !fewDocs(b.idx, restrictions[0].Kinds) || fewDocs(b.idx, restrictions[1].Kinds) {
		t.Fatal("the corpus no longer has few meetings and wiki pages and many work packages")
	}
	for _, q := range []string{"landing page", "helm chart upgrade", "grafana dashbord", "what did we decide about the release"} {
		all, err := b.Search(t.Context(), SearchOptions{Query: q, Size: 10000})
		if err != nil {
			t.Fatal(err)
		}
		scores := scoresOf(all.Hits)
		for _, r := range restrictions {
			r.Query, r.Size = q, 10000
			res, err := b.Search(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 {
				t.Errorf("%q restricted to %v %v: no hits", q, r.Kinds, r.ProjectIDs)
			}
			for _, h := range res.Hits {
				if s, ok := scores[h.ID]; !ok || s != h.Score {
					t.Errorf("%q restricted to %v %v: %s scored %v, unrestricted %v", q, r.Kinds, r.ProjectIDs, h.ID, h.Score, s)
					break
				}
			}
		}
	}
}

func scoresOf(hits []Hit) map[string]float64 {
	m := make(map[string]float64, len(hits))
	for _, h := range hits {
		m[h.ID] = h.Score
	}
	return m
}

// sameScores checks that every hit of got is among want's, with the
// same score to the last bit; got may be a restriction of want.
func sameScores(t *testing.T, q string, got, want *bleve.SearchResult) {
	t.Helper()
	scores := make(map[string]float64, len(want.Hits))
	for _, h := range want.Hits {
		scores[h.ID] = h.Score
	}
	for _, h := range got.Hits {
		if s, ok := scores[h.ID]; !ok || s != h.Score {
			t.Errorf("%q: %s scored %v, want %v (found: %v)", q, h.ID, h.Score, s, ok)
			return
		}
	}
}

package indexer

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/opsearch/opsearch/kind"
)

// TestVisibleSearchEqualsOwnIndex: a search of a shared index restricted
// to one user's documents (SearchOptions.Visible) answers exactly as an
// index holding only those documents: the same total, the same hits
// with the same scores to the last bit and the same coverage, in every
// mode (fuzzy with typos, prefixes, synonyms and ids; kinds, federation,
// paging; exact; filters only). This is what lets per-user mode be the
// reference for the shared one.
func TestVisibleSearchEqualsOwnIndex(t *testing.T) {
	docs := benchDocs(600)
	// The user sees the even projects, plus two work packages of odd
	// projects shared with them alone.
	vis := &Visibility{}
	seen := map[int64]bool{}
	var own []Document
	for _, d := range docs {
		if d.ProjectID%2 == 0 {
			if !seen[d.ProjectID] {
				seen[d.ProjectID] = true
				vis.Projects = append(vis.Projects, d.ProjectID)
			}
			own = append(own, d)
		} else if d.Kind == kind.WorkPackage && len(vis.Docs) < 2 && d.EntityID%7 == 3 {
			vis.Docs = append(vis.Docs, d.ID)
			own = append(own, d)
		}
	}
	if len(vis.Projects) < 2 || len(vis.Docs) != 2 || len(own) == len(docs) {
		t.Fatalf("test data: %d projects, %d shared, %d of %d docs", len(vis.Projects), len(vis.Docs), len(own), len(docs))
	}
	shared, mine := openFilled(t, docs), openFilled(t, own)

	// Words of documents the user cannot see, too: they must find nothing
	// and weigh nothing.
	var hidden string
	for _, d := range docs {
		if d.ProjectID%2 == 1 && d.Kind == kind.WorkPackage && !slices.Contains(vis.Docs, d.ID) {
			hidden = d.Title
			break
		}
	}
	queries := append(slices.Clone(benchQueries), "#12", "ticket 40 rollout", "getUserProfile", "the",
		"who raised the concern that the backup failed?", "dep", "migr", hidden)
	type mode struct {
		name string
		opts func(q string) SearchOptions
	}
	modes := []mode{
		{"fuzzy", func(q string) SearchOptions { return SearchOptions{Query: q, Size: maxSize} }},
		{"kinds and federation", func(q string) SearchOptions {
			return SearchOptions{Query: q, Size: maxSize, Kinds: []kind.Kind{kind.WorkPackage, kind.Meeting}, Federate: []kind.Kind{kind.Meeting}, FederateSize: 5}
		}},
		{"second page", func(q string) SearchOptions { return SearchOptions{Query: q, Size: 7, From: 7} }},
		{"exact", func(q string) SearchOptions { return SearchOptions{Query: q, Mode: MatchExact, Size: maxSize} }},
		{"filters only", func(string) SearchOptions {
			return SearchOptions{ProjectIDs: []int64{vis.Projects[0], 1, 3}, Size: maxSize}
		}},
	}
	compared := 0
	for _, m := range modes {
		for _, q := range queries {
			o := m.opts(q)
			want, err := mine.Search(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			o.Visible = vis
			got, err := shared.Search(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s %q", m.name, q)
			if got.Total != want.Total {
				t.Errorf("%s: total %d, own index %d", name, got.Total, want.Total)
				continue
			}
			if o.Size < maxSize {
				// A page: ties at its edges may fall either way, by
				// segment order; the ids must be the own index's set
				// when no score ties cross the edge, so compare scores.
				if !slices.EqualFunc(got.Hits, want.Hits, func(a, b Hit) bool { return a.Score == b.Score }) {
					t.Errorf("%s: page scores %v, own index %v", name, scores(got.Hits), scores(want.Hits))
				}
				continue
			}
			for _, hs := range [][]Hit{got.Hits, want.Hits, got.Federated, want.Federated} {
				slices.SortFunc(hs, func(a, b Hit) int {
					if c := cmp.Compare(b.Score, a.Score); c != 0 {
						return c
					}
					return cmp.Compare(a.ID, b.ID)
				})
			}
			for _, pair := range [][2][]Hit{{got.Hits, want.Hits}, {got.Federated, want.Federated}} {
				g, w := pair[0], pair[1]
				if len(g) != len(w) {
					t.Errorf("%s: %d hits, own index %d", name, len(g), len(w))
					continue
				}
				for i := range g {
					if g[i].ID != w[i].ID || g[i].Score != w[i].Score || g[i].Coverage != w[i].Coverage {
						t.Errorf("%s: hit %d is %s %v %v, own index %s %v %v", name, i, g[i].ID, g[i].Score, g[i].Coverage, w[i].ID, w[i].Score, w[i].Coverage)
						break
					}
				}
			}
			for _, h := range got.Hits {
				if !slices.ContainsFunc(own, func(d Document) bool { return d.ID == h.ID }) {
					t.Errorf("%s: %s is not the user's", name, h.ID)
				}
			}
			compared++
		}
	}
	if compared < len(queries)*3 {
		t.Errorf("only %d searches compared", compared)
	}
}

func scores(hs []Hit) []float64 {
	out := make([]float64, len(hs))
	for i, h := range hs {
		out[i] = h.Score
	}
	return out
}

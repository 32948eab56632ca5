package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/sync"
)

// collector is a sync.Rebuilder that keeps the documents a rebuild from
// the store would index.
type collector struct{ docs []indexer.Document }

func (c *collector) Rebuild(ctx context.Context, fill func(add func(docs ...indexer.Document) error) error) error {
	return fill(func(docs ...indexer.Document) error {
		c.docs = append(c.docs, docs...)
		return nil
	})
}

// TestE2E_TiesIndependentOfInsertionOrder: two indexes of the same
// documents, one built in store order in one batch and one in reverse
// order in small batches (so its segments differ), answer every
// query with the same results in the same order, page after page; and
// items the ranking cannot tell apart come by kind, then id.
func TestE2E_TiesIndependentOfInsertionOrder(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 8, WorkPackages: 120, Comments: 200, WikiPages: 12, Meetings: 8})
	e := newEnv(t, d, optest.AdminKey)
	ctx := context.Background()
	var c collector
	if err := sync.RebuildIndex(ctx, e.st, &c, nil); err != nil {
		t.Fatal(err)
	}
	build := func(name string, docs []indexer.Document, oneByOne bool, opts search.Options) *search.Engine {
		idx, err := indexer.Open(filepath.Join(t.TempDir(), name), indexer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		if oneByOne {
			// Small batches: many segments, merged as bleve pleases.
			for chunk := range slices.Chunk(docs, 25) {
				if err := idx.Index(ctx, chunk...); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := idx.Index(ctx, docs...); err != nil {
			t.Fatal(err)
		}
		return search.New(e.st, idx, opts)
	}
	reversed := slices.Clone(c.docs)
	slices.Reverse(reversed)
	type pair struct {
		name string
		a, b *search.Engine
	}
	var pairs []pair
	for _, o := range []struct {
		name string
		opts search.Options
	}{
		{"default", search.Options{}},
		{"small head", search.Options{Candidates: 3}},
		{"index order", search.Options{Ranker: search.RankIndex}},
	} {
		pairs = append(pairs, pair{o.name, build(o.name+"-a", c.docs, false, o.opts), build(o.name+"-b", reversed, true, o.opts)})
	}

	// Queries that tie: one common word, a word and a typo, words every
	// kind holds, an id.
	var queries []string
	for _, wp := range d.WorkPackages[:15] {
		f := strings.Fields(wp.Subject)
		queries = append(queries, f[0], strings.Join(f[:min(2, len(f))], " "))
	}
	queries = append(queries, "meeting", "plan review", "the", "#1", "project", "release notes", "api")
	for _, p := range pairs {
		for _, q := range queries {
			for _, exact := range []bool{false, true} {
				for page := 1; page <= 2; page++ {
					sq := search.Query{Text: q, Exact: exact, Page: page, PageSize: 10}
					ra, err := p.a.Search(ctx, sq)
					if err != nil {
						t.Fatal(err)
					}
					rb, err := p.b.Search(ctx, sq)
					if err != nil {
						t.Fatal(err)
					}
					if ga, gb := order(ra), order(rb); !slices.Equal(ga, gb) {
						t.Errorf("%s: %q exact=%v page %d differs:\n a %v\n b %v", p.name, q, exact, page, ga, gb)
					}
				}
			}
		}
	}
}

func order(r search.Response) []string {
	out := make([]string, len(r.Results))
	for i, x := range r.Results {
		out[i] = fmt.Sprintf("%s:%d(%.2f)", x.Kind, x.ID, x.Score)
	}
	return out
}

// TestE2E_TiesByKindThenID: items the ranking cannot tell apart (the
// same text, the same update time) come by kind, then id, on every page,
// whether they were re-ranked or lie past the re-ranked head, and
// whatever the index's own order of ids ("work_package:1000" sorts before
// "work_package:95" as text).
func TestE2E_TiesByKindThenID(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 9, WorkPackages: 60, Comments: 60, WikiPages: 5, Meetings: 3})
	tmpl := d.WorkPackages[0]
	when := tmpl.UpdatedAt
	var want []int64
	for i := range 45 {
		wp := tmpl
		wp.ID = int64(90 + i*i*53) // 90, 143, 302, ..., 102722: text and number order differ
		wp.DisplayID = ""
		wp.Subject = "Zebrafish quokka habitat"
		wp.Description = "The zebrafish and the quokka share a habitat."
		wp.CreatedAt, wp.UpdatedAt = when, when
		d.WorkPackages = append(d.WorkPackages, wp)
		want = append(want, wp.ID)
	}
	// Inserted in descending id order, so neither store nor index order
	// is the answer's.
	slices.Reverse(d.WorkPackages)
	e := newEnv(t, d, optest.AdminKey)
	idx := indexOf(t, e)
	for name, opts := range map[string]search.Options{
		"default": {}, "small head": {Candidates: 7}, "index order": {Ranker: search.RankIndex}, "ignore recency": {IgnoreRecency: true},
	} {
		eng := search.New(e.st, idx, opts)
		var got []int64
		for page := 1; page <= 5; page++ {
			resp, err := eng.Search(context.Background(), search.Query{Text: "zebrafish quokka habitat", Kinds: []kind.Kind{kind.WorkPackage}, Page: page, PageSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Results {
				if r.Title == "Zebrafish quokka habitat" {
					got = append(got, r.ID)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: tied items in the order\n %v\nwant ascending ids\n %v", name, got, want)
		}
	}
}

// indexOf builds a fresh index from e's store.
func indexOf(t *testing.T, e *env) *indexer.Bleve {
	t.Helper()
	idx, err := indexer.Open(filepath.Join(t.TempDir(), "index"), indexer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	if err := sync.RebuildIndex(context.Background(), e.st, idx, nil); err != nil {
		t.Fatal(err)
	}
	return idx
}

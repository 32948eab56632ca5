package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/scorer"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// RankerBleveDefault is the Ranker of the built-in bleve-default variant:
// plain bleve with its documented defaults over the same documents as
// opsearch's index, so every evaluation shows how far opsearch is ahead of
// the engine it is built on when that engine is used untuned.
//
// The index is a throwaway one, built in a temporary directory by
// bleve.New (scorch, bleve's default index type) with
// bleve.NewIndexMapping() untouched: the default mapping, the standard
// analyzer, dynamic fields and the _all composite field. Every stored
// entity becomes one document, built by the same functions as opsearch's
// own index (sync.RebuildIndex and indexer's From* builders) and flattened
// to plain string fields (plainDoc). A query is
// bleve.NewMatchQuery(text) with fuzziness 1 and the default OR operator,
// against _all, 10 hits, bleve's default scoring; the hits are the ranking
// as bleve returns it. There is no score threshold, so a negative query is
// answered cleanly only when nothing at all matches.
//
// The variant's Params, Weights and other fields do not apply to it.
const RankerBleveDefault = "bleve-default"

// plainDoc is what the bleve-default index stores of a document: its
// searchable text as plain string fields, which the default mapping
// indexes dynamically (and copies into _all). Kind and entity id are the
// document id, "kind:id" as in opsearch's index. Facets that are not text
// a person searches for (kind, type, status, dates) are left out, as
// opsearch's text query leaves them out.
type plainDoc struct {
	Title       string `json:"title"`
	Body        string `json:"body"`
	Comments    string `json:"comments"`
	Agenda      string `json:"agenda"`
	People      string `json:"people"`
	Location    string `json:"location"`
	ProjectName string `json:"project_name"`
	Identifiers string `json:"identifiers"`
}

// toPlainDoc flattens d; lists are joined by newlines, empty entries
// dropped.
func toPlainDoc(d indexer.Document) plainDoc {
	var agenda []string
	for _, a := range d.Agenda {
		agenda = append(agenda, a.Title, a.Notes)
		agenda = append(agenda, a.Outcomes...)
	}
	// Each person once, as in opsearch's index (an author who is also the
	// assignee is one name, not two).
	var people []string
	for _, p := range append([]string{d.Author, d.Assignee}, d.Participants...) {
		if !slices.Contains(people, p) {
			people = append(people, p)
		}
	}
	return plainDoc{
		Title: d.Title, Body: d.Body,
		Comments: joinLines(d.Comments), Agenda: joinLines(agenda), People: joinLines(people),
		Location: d.Location, ProjectName: d.ProjectName, Identifiers: joinLines(d.Identifiers),
	}
}

// joinLines joins the non-empty strings of ss by newlines.
func joinLines(ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// defaultIndex is the bleve-default variant's index.
type defaultIndex struct {
	dir string
	idx bleve.Index
	// titles are the documents' titles by document id, for the detail
	// output (the index is searched for ids only).
	titles map[string]string
}

var _ sync.Rebuilder = (*defaultIndex)(nil)

// buildDefaultIndex builds the bleve-default index from every entity in
// st. The caller must Close it, which removes its directory.
func buildDefaultIndex(ctx context.Context, st *store.Store) (_ *defaultIndex, err error) {
	dir, err := os.MkdirTemp("", "opsearch-bleve-default-")
	if err != nil {
		return nil, fmt.Errorf("bleve-default index: %w", err)
	}
	idx, err := bleve.New(dir+"/index", bleve.NewIndexMapping())
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("bleve-default index: %w", err)
	}
	d := &defaultIndex{dir: dir, idx: idx, titles: map[string]string{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	if err := sync.RebuildIndex(ctx, st, d, nil); err != nil {
		return nil, fmt.Errorf("bleve-default index: %w", err)
	}
	// Left to itself, scorch merges the fresh segments in the background
	// while the variants' queries are timed (at 100,000 work packages,
	// 16 s of CPU on a core the queries need); opsearch's own index is
	// merged after its sync. Both are searched settled, and the build's
	// garbage is collected before the first query is timed.
	if err := indexer.MergeSegments(ctx, idx); err != nil {
		return nil, fmt.Errorf("bleve-default index: %w", err)
	}
	runtime.GC()
	return d, nil
}

// Rebuild fills the index with the documents fill adds, a bleve batch per
// call of add. It makes defaultIndex a sync.Rebuilder, so the documents
// come from the same store walk and builders as opsearch's own index.
func (d *defaultIndex) Rebuild(ctx context.Context, fill func(add func(docs ...indexer.Document) error) error) error {
	return fill(func(docs ...indexer.Document) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := d.idx.NewBatch()
		for _, doc := range docs {
			if err := b.Index(doc.ID, toPlainDoc(doc)); err != nil {
				return fmt.Errorf("index %s: %w", doc.ID, err)
			}
			d.titles[doc.ID] = doc.Title
		}
		if err := d.idx.Batch(b); err != nil {
			return fmt.Errorf("index batch: %w", err)
		}
		return nil
	})
}

// search runs bleve's default fuzzy match query for text.
func (d *defaultIndex) search(ctx context.Context, text string) ([]hit, error) {
	q := bleve.NewMatchQuery(text)
	q.SetFuzziness(1)
	res, err := d.idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, K, 0, false))
	if err != nil {
		return nil, fmt.Errorf("bleve-default search: %w", err)
	}
	hits := make([]hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		kind, id, ok := indexer.ParseDocID(h.ID)
		if !ok {
			return nil, fmt.Errorf("bleve-default search: unexpected document id %q", h.ID)
		}
		hits = append(hits, hit{target: scorer.Target{Type: string(kind), ID: id}, score: h.Score, title: d.titles[h.ID]})
	}
	return hits, nil
}

// Close closes the index and removes its directory.
func (d *defaultIndex) Close() error {
	err := d.idx.Close()
	if rerr := os.RemoveAll(d.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("close bleve-default index: %w", err)
	}
	return nil
}

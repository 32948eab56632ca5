package indexer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	index "github.com/blevesearch/bleve_index_api"
)

// Plan is how the index read a fuzzy query: its content words, the index
// terms each may match (the word's stem, its typo variants, its
// completions) with how good a match each is, and how much information
// each word carries (its idf in this index). The caller measures with
// Cover how much of the query a hit holds, so an answer can say "this is
// a weak match" instead of presenting the best of nothing as relevant.
type Plan struct {
	Words []PlanWord
	docs  uint64
}

// PlanWord is one content word of the query.
type PlanWord struct {
	// Text is the word as typed.
	Text string
	// Forms maps the index terms that count as this word to the quality
	// of such a match: 1 for the word itself, less for a typo variant or
	// a completion of the last word.
	Forms map[string]float64
	// Weight is the word's share of the query's information: its idf, or
	// for a word the index holds in no form, half the largest idf.
	Weight float64

	df    uint64
	parts []string // an identifier's parts, all of which match it too
	ident bool     // an id ("#123"), matched in the identifiers
}

// Known reports whether the index holds the word in some form.
func (w PlanWord) Known() bool { return len(w.Forms) > 0 && w.df > 0 }

// idf is BM25's inverse document frequency (never negative).
func idf(df, n uint64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// absentShare is the weight of a word the index holds in no form,
// relative to the rarest word's: such a word is information the query
// carries and no document has ("complaint" in "was there a complaint
// that ..."), yet it is just as often framing. Half keeps a query with
// one unknown word among known ones a good match while a query that is
// mostly unknown words stays weak.
const absentShare = 1.0

// weigh sets every word's Weight.
func (p *Plan) weigh() {
	n := max(p.docs, 1)
	top := idf(1, n)
	for i := range p.Words {
		w := &p.Words[i]
		if w.Known() {
			w.Weight = idf(w.df, n)
		} else {
			w.Weight = absentShare * top
		}
	}
}

// dropWord removes the word typed as text (the number of an id mention,
// which the id itself replaces).
func (p *Plan) dropWord(text string) {
	p.Words = slices.DeleteFunc(p.Words, func(w PlanWord) bool { return !w.ident && strings.EqualFold(w.Text, text) })
}

// Cover measures how much of the query a document holds: the
// weight-averaged quality of the words it matches (0..1), and those
// words as typed. has reports whether the document's field holds an
// index term.
func (p *Plan) Cover(has func(field, term string) bool) (float64, []string) {
	if p == nil || len(p.Words) == 0 {
		return 0, nil
	}
	var got, total float64
	var matched []string
	for _, w := range p.Words {
		total += w.Weight
		field := fieldAll
		if w.ident {
			field = fieldIdents
		}
		best := 0.0
		for t, q := range w.Forms {
			if q > best && has(field, t) {
				best = q
			}
		}
		if best < 1 && len(w.parts) > 0 && allOf(w.parts, func(t string) bool { return has(fieldAll, t) }) {
			best = 1
		}
		if best > 0 {
			got += best * w.Weight
			matched = append(matched, w.Text)
		}
	}
	if total == 0 {
		return 0, matched
	}
	return got / total, matched
}

func allOf(ts []string, has func(string) bool) bool {
	for _, t := range ts {
		if !has(t) {
			return false
		}
	}
	return true
}

// cover sets each hit's Coverage and MatchedWords from the postings of
// the plan's forms: one term reader per form, advanced through the hits in
// index order, instead of re-analysing every candidate's text.
func (p *Plan) cover(ctx context.Context, r index.IndexReader, hits []Hit) error {
	if p == nil || len(p.Words) == 0 || len(hits) == 0 {
		return nil
	}
	type doc struct {
		id  index.IndexInternalID
		hit int
	}
	docs := make([]doc, 0, len(hits))
	for i, h := range hits {
		id, err := r.InternalID(h.DocID())
		if err != nil {
			return fmt.Errorf("look up %s: %w", h.DocID(), err)
		}
		if id != nil {
			docs = append(docs, doc{id, i})
		}
	}
	slices.SortFunc(docs, func(a, b doc) int { return a.id.Compare(b.id) })
	// present[term][k]: the k-th doc (in index order) holds term.
	present := map[string][]bool{}
	look := func(field, t string) error {
		key := field + "\x00" + t
		if _, done := present[key]; done {
			return nil
		}
		in := make([]bool, len(docs))
		present[key] = in
		tfr, err := r.TermFieldReader(ctx, []byte(t), field, false, false, false)
		if err != nil {
			return fmt.Errorf("read postings of %q: %w", t, err)
		}
		defer func() { _ = tfr.Close() }()
		if tfr.Count() == 0 {
			return nil
		}
		var td index.TermFieldDoc
		for k, d := range docs {
			got, err := tfr.Advance(d.id, &td)
			if err != nil {
				return fmt.Errorf("read postings of %q: %w", t, err)
			}
			if got == nil {
				break // past the last posting
			}
			in[k] = got.ID.Equals(d.id)
		}
		return nil
	}
	for _, w := range p.Words {
		field := fieldAll
		if w.ident {
			field = fieldIdents
		}
		for t := range w.Forms {
			if err := look(field, t); err != nil {
				return err
			}
		}
		for _, t := range w.parts {
			if err := look(fieldAll, t); err != nil {
				return err
			}
		}
	}
	for k, d := range docs {
		h := &hits[d.hit]
		h.Coverage, h.MatchedWords = p.Cover(func(field, t string) bool { return present[field+"\x00"+t][k] })
	}
	return nil
}

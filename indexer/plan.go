package indexer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/opsearch/opsearch/internal/spread"
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
	// split, when some of the query's words are common and some not, is
	// the cheaper way to run it.
	split *commonSplit
	// text is the query as planned, before any restriction, and query
	// and vis what it was planned for (SearchOptions.Reuse).
	text    query.Query
	query   string
	vis     *Visibility
	without Features
}

// reusableFor returns a copy of p to run a search of opts with, or nil
// when p was not planned for opts's query and view (or is nil). The copy
// has a split of its own, whose request the search sets.
func (p *Plan) reusableFor(opts SearchOptions) *Plan {
	if p == nil || p.text == nil || opts.Mode == MatchExact || p.query != opts.Query || p.vis != opts.Visible || p.without != opts.Without {
		return nil
	}
	c := *p
	if p.split != nil {
		sp := *p.split
		c.split = &sp
	}
	return &c
}

// commonSplit runs a query with common and rarer words as Lucene's
// CommonTermsQuery does: only the rarer words find candidates and add
// their tf-idf to their scores; the common words count in a candidate's
// coordination factor when it holds them, as in the whole query, read
// from postings without frequencies (rankQuery.present), and every
// word's title boost stays. Left out are documents holding only common
// words, every one of them a weak match (commonWeight), and the common
// words' own tf-idf in the text, which is small: in bleve's tf-idf a
// word in 10% of the documents weighs idf² = 11 (7 at 20%), one in 1%
// weighs 31, and a rare one up to 200.
//
// The posting lists of common words are most of what a query walks in a
// large index, and bleve has no skipping by score bounds (block-max
// WAND). Skipping through a zap posting list that is read with
// frequencies steps through every posting on the way, so scoring the
// candidates by the common words cost as much as walking them; skipping
// through one read without them jumps through its bitmap.
type commonSplit struct {
	// rare is the query of the rarer words.
	rare *rankQuery
	// request is its request, for the same page as the whole query's.
	request *bleve.SearchRequest
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

	df     uint64
	parts  []string // an identifier's parts, all of which match it too
	ident  bool     // an id ("#123"), matched in the identifiers
	common bool     // its group is left out of finding candidates (commonSplit)
	// postings counts its forms' postings (formPostings).
	postings uint64
}

// WeakCover is the share of a query's information (Plan.Cover) under
// which a document is a weak match for it: it holds some of the query's
// words, but not what the query is about. The search engine marks such
// results partial; the index does not look for documents holding only
// common words when those words are less than this share of the query
// (commonSplit), since every such document would be a weak match.
const WeakCover = 0.4

// commonWeight is the share of the query's information in its common
// words: the most a document holding only those can cover.
func (p *Plan) commonWeight() float64 {
	var common, total float64
	for _, w := range p.Words {
		total += w.Weight
		if w.common {
			common += w.Weight
		}
	}
	if total == 0 {
		return 0
	}
	return common / total
}

// postings counts the postings of the words' forms in the text, of the
// rarer words only when rare is set (those a commonSplit finds
// candidates by).
func (p *Plan) postings(rare bool) uint64 {
	var n uint64
	for _, w := range p.Words {
		if !rare || !w.common {
			n += w.postings
		}
	}
	return n
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
		id := index.IndexInternalID(h.at) // set when the search read r's snapshot (Bleve.Search)
		if id == nil {
			var err error
			if id, err = r.InternalID(h.DocID()); err != nil {
				return fmt.Errorf("look up %s: %w", h.DocID(), err)
			}
		}
		if id != nil {
			docs = append(docs, doc{id, i})
		}
	}
	slices.SortFunc(docs, func(a, b doc) int { return a.id.Compare(b.id) })
	// present[term][k]: the k-th doc (in index order) holds term. Each
	// term's postings are read on their own, so the terms are spread over
	// the cores (spread).
	type look struct {
		field, t string
		in       []bool
	}
	present := map[string][]bool{}
	var looks []look
	add := func(field, t string) {
		key := field + "\x00" + t
		if _, done := present[key]; !done {
			l := look{field: field, t: t, in: make([]bool, len(docs))}
			present[key] = l.in
			looks = append(looks, l)
		}
	}
	for _, w := range p.Words {
		field := fieldAll
		if w.ident {
			field = fieldIdents
		}
		for t := range w.Forms {
			add(field, t)
		}
		for _, t := range w.parts {
			add(fieldAll, t)
		}
	}
	errs := make([]error, len(looks))
	spread.Each(ctx, len(looks), func(i int) {
		l := looks[i]
		tfr, err := r.TermFieldReader(ctx, []byte(l.t), l.field, false, false, false)
		if err != nil {
			errs[i] = fmt.Errorf("read postings of %q: %w", l.t, err)
			return
		}
		defer func() { _ = tfr.Close() }()
		if tfr.Count() == 0 {
			return
		}
		// at is the reader's position: the last posting it returned.
		// A reader already at or past a document is not asked to
		// advance to it: scorch's reader takes that for a seek
		// backwards and opens itself again from the first posting, which
		// was a twelfth of a query's allocations (a term rarer than the
		// hits passes several of them at once).
		var td index.TermFieldDoc
		var at index.IndexInternalID
		for k, d := range docs {
			if at == nil || at.Compare(d.id) < 0 {
				got, err := tfr.Advance(d.id, &td)
				if err != nil {
					errs[i] = fmt.Errorf("read postings of %q: %w", l.t, err)
					return
				}
				if got == nil {
					return // past the last posting
				}
				at = got.ID
			}
			l.in[k] = at.Equals(d.id)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for k, d := range docs {
		h := &hits[d.hit]
		h.Coverage, h.MatchedWords = p.Cover(func(field, t string) bool { return present[field+"\x00"+t][k] })
	}
	return nil
}

package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// rankQuery is a fuzzy query's text: a document holding any of the
// words' clauses (groups) is a hit, and the title boosts (should) add to
// its score; restrictions wrap it (a conjunct or a filter, textRequest).
// It scores exactly as bleve scores
//
//	Boolean{Must: Conjunction(Disjunction(groups...)), Should: Disjunction(should...)}
//
// (the same children, query norm, coordination factors and order of
// summation) in one searcher instead of four. Measured at 100,000 work
// packages, the nesting itself was a fifth of a query's time: each
// level compared every child's document id as bytes on every posting,
// and the boolean advanced the title clauses through a third
// disjunction.
type rankQuery struct {
	groups []query.Query
	should []query.Query
	// coordGroups, when set, is the group count the coordination factor
	// divides by instead of len(groups): a query of a whole query's
	// rarer words only (commonSplit) so scores as the whole query scores
	// its matches of those words.
	coordGroups int
	// present are the forms of groups left out of the query (a
	// commonSplit's common words), by group: a hit holding one of a
	// group's forms counts it in its coordination factor, as the whole
	// query would, though the group adds nothing to the sum. Presence is
	// read from postings without frequencies, which skip cheaply.
	present [][]string
	// left are the groups of the whole query left out of this one (a
	// commonSplit's common words): the query norm counts them, so every
	// score is on the whole query's scale, comparable with its hits (the
	// federated ones), and a hit holding no common word scores as in it.
	left []query.Query
	// chunks, when set, are the ranges of document numbers of a
	// collection run in parts (Bleve.searchParts): the searcher matches
	// only documents of the ranges it takes from chunks, one at a time,
	// and the parts' searchers share them.
	chunks *chunker
	// noSynonyms leaves the thesaurus out (FeatureSynonyms): bleve's term
	// searchers expand a term by it when the context holds its entries.
	noSynonyms bool
}

var _ query.Query = (*rankQuery)(nil)

// Searcher builds the children as bleve would, synonyms included: bleve
// finds the thesaurus entries a query needs by walking its tree, which
// cannot see into this type, so they are looked up here for the same
// tree.
func (q *rankQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	if sm, ok := m.(mapping.SynonymMapping); ok && sm.SynonymCount() > 0 && !q.noSynonyms {
		if tr, ok := r.(index.ThesaurusReader); ok {
			fts, _ := ctx.Value(bsearch.FieldTermSynonymMapKey).(bsearch.FieldTermSynonymMap)
			fts, err := query.ExtractSynonyms(ctx, sm, tr, query.NewBooleanQuery(q.groups, q.should, nil), fts)
			if err != nil {
				return nil, fmt.Errorf("look up synonyms: %w", err)
			}
			if fts != nil {
				ctx = context.WithValue(ctx, bsearch.FieldTermSynonymMapKey, fts)
			}
		}
	}
	s := &rankSearcher{to: exhausted, chunks: q.chunks}
	build := func(qs []query.Query) ([]bsearch.Searcher, error) {
		out := make(searcher.OrderedSearcherList, 0, len(qs))
		for _, c := range qs {
			cs, err := c.Searcher(ctx, r, m, opts)
			if err != nil {
				return nil, err
			}
			out = append(out, cs)
		}
		// bleve's disjunctions order their children by count and sum
		// their scores in that order: so do we, to the last bit.
		sort.Sort(out)
		return out, nil
	}
	var err error
	if s.groups, err = build(q.groups); err == nil {
		s.should, err = build(q.should)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	if len(s.groups) == 0 {
		return nil, errors.New("build rank searcher: no clauses")
	}
	for _, forms := range q.present {
		var rs []index.TermFieldReader
		for _, t := range forms {
			tfr, err := r.TermFieldReader(ctx, []byte(t), fieldAll, false, false, false)
			if err != nil {
				for _, o := range rs {
					_ = o.Close()
				}
				_ = s.Close()
				return nil, fmt.Errorf("read postings of %q: %w", t, err)
			}
			rs = append(rs, tfr)
		}
		s.present = append(s.present, presence{readers: rs, docs: make([]index.TermFieldDoc, len(rs)), at: make([]uint64, len(rs)), read: make([]bool, len(rs))})
	}
	s.coordGroups = float64(cmp.Or(q.coordGroups, len(s.groups)))
	s.gcur = make([]*bsearch.DocumentMatch, len(s.groups))
	s.gdoc = make([]uint64, len(s.groups))
	s.scur = make([]*bsearch.DocumentMatch, len(s.should))
	s.sdoc = make([]uint64, len(s.should))
	s.matched = make([]int, 0, len(s.groups))
	if len(q.left) > 0 {
		// The whole query's weight, summed as its searcher sums it (in
		// the order of the groups' counts).
		left, err := build(q.left)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		all := append(slices.Clone(searcher.OrderedSearcherList(s.groups)), left...)
		sort.Sort(all)
		var must, should float64
		for _, c := range all {
			must += c.Weight()
		}
		for _, c := range left {
			err = errors.Join(err, c.Close())
		}
		for _, c := range s.should {
			should += c.Weight()
		}
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.weight = must + should
	}
	// The boolean's query norm, over must and should alike.
	s.SetQueryNorm(1 / math.Sqrt(s.Weight()))
	return s, nil
}

// exhausted marks a child with no more documents.
const exhausted = math.MaxUint64

// rankSearcher is rankQuery's searcher.
type rankSearcher struct {
	groups, should []bsearch.Searcher
	// gcur and scur are each child's current match, gdoc and sdoc its
	// document number (exhausted when done).
	gcur, scur []*bsearch.DocumentMatch
	gdoc, sdoc []uint64
	matched    []int
	started    bool
	// coordGroups divides the groups' coordination factor.
	coordGroups float64
	// present are the groups counted by presence (rankQuery.present).
	present []presence
	// weight, when set, is the whole query's (rankQuery.left).
	weight float64
	// from and to bound the document numbers it matches: the range it
	// took from chunks (rankQuery), or all of them.
	from, to uint64
	chunks   *chunker
	// none is set when chunks had no range left for it.
	none bool
}

// A chunker hands out ranges of document numbers, in increasing order,
// to the searchers of one collection's parts (rankQuery.chunks): range i
// is from bounds[i] up to, not including, bounds[i+1], the last one
// unbounded. Each searcher takes a range when it has done its last, so
// a part that starts late, or holds denser postings, takes fewer, and
// the parts end together.
type chunker struct {
	bounds []uint64
	next   atomic.Int64
}

// take returns the next range, or false when none is left.
func (c *chunker) take() (from, to uint64, ok bool) {
	i := int(c.next.Add(1)) - 1
	if i >= len(c.bounds)-1 {
		return 0, 0, false
	}
	return c.bounds[i], c.bounds[i+1], true
}

// done reports whether every range has been taken.
func (c *chunker) done() bool { return int(c.next.Load()) >= len(c.bounds)-1 }

// nextRange moves s to the next range of its chunks that ends past doc,
// with every group at or past the range's first number; false when no
// range is left.
func (s *rankSearcher) nextRange(ctx *bsearch.SearchContext, doc uint64) (bool, error) {
	for {
		from, to, ok := s.chunks.take()
		if !ok {
			s.none = true
			return false, nil
		}
		if to <= doc {
			continue // wholly behind every group: nothing of it matches
		}
		s.from, s.to = from, to
		break
	}
	for i, g := range s.groups {
		if s.gdoc[i] >= s.from {
			continue
		}
		if s.gcur[i] != nil {
			ctx.DocumentMatchPool.Put(s.gcur[i])
		}
		m, err := g.Advance(ctx, index.NewIndexInternalID(nil, s.from))
		if err != nil {
			return false, err
		}
		s.gcur[i], s.gdoc[i] = m, docNum(m)
	}
	return true, nil
}

// presence is one group counted by presence: a reader per form, and the
// document number each is at (exhausted after its last posting), once
// read. Each reader has its own TermFieldDoc: scorch's reader keeps the
// ID of the one it filled as its position.
type presence struct {
	readers []index.TermFieldReader
	docs    []index.TermFieldDoc
	at      []uint64
	read    []bool
}

// holds reports whether a form of the group is in the document doc
// (number) with id, moving the readers behind it up to it.
func (p *presence) holds(id index.IndexInternalID, doc uint64) (bool, error) {
	in := false
	for k, r := range p.readers {
		if !p.read[k] || p.at[k] < doc {
			got, err := r.Advance(id, p.docs[k].Reset())
			if err != nil {
				return false, err
			}
			p.read[k], p.at[k] = true, exhausted
			if got != nil {
				p.at[k] = got.ID.Value()
			}
		}
		in = in || p.at[k] == doc
	}
	return in, nil
}

func docNum(m *bsearch.DocumentMatch) uint64 {
	if m == nil {
		return exhausted
	}
	return m.IndexInternalID.Value()
}

func (s *rankSearcher) start(ctx *bsearch.SearchContext) error {
	s.started = true
	if s.chunks != nil {
		from, to, ok := s.chunks.take()
		if !ok {
			s.none = true
			return nil
		}
		s.from, s.to = from, to
	}
	// A range after the first starts at its first number.
	first := func(c bsearch.Searcher) (*bsearch.DocumentMatch, error) {
		if s.from == 0 {
			return c.Next(ctx)
		}
		return c.Advance(ctx, index.NewIndexInternalID(nil, s.from))
	}
	for i, g := range s.groups {
		m, err := first(g)
		if err != nil {
			return err
		}
		s.gcur[i], s.gdoc[i] = m, docNum(m)
	}
	for j, c := range s.should {
		m, err := first(c)
		if err != nil {
			return err
		}
		s.scur[j], s.sdoc[j] = m, docNum(m)
	}
	return nil
}

// Next returns the next document holding any group, scored.
func (s *rankSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	var doc uint64
	for {
		doc = exhausted
		for _, d := range s.gdoc {
			doc = min(doc, d)
		}
		if s.none || doc == exhausted {
			return nil, nil
		}
		if doc < s.to {
			break
		}
		if s.chunks == nil {
			return nil, nil
		}
		if ok, err := s.nextRange(ctx, doc); err != nil || !ok {
			return nil, err
		}
	}
	s.matched = s.matched[:0]
	var sum float64
	for i, d := range s.gdoc {
		if d == doc {
			s.matched = append(s.matched, i)
			sum += s.gcur[i].Score
		}
	}
	rv := s.gcur[s.matched[0]]
	matched := len(s.matched)
	for k := range s.present {
		in, err := s.present[k].holds(rv.IndexInternalID, doc)
		if err != nil {
			return nil, err
		}
		if in {
			matched++
		}
	}
	score := sum * (float64(matched) / s.coordGroups)
	var ssum float64
	var sm int
	for j, c := range s.should {
		if s.sdoc[j] < doc {
			if s.scur[j] != nil {
				ctx.DocumentMatchPool.Put(s.scur[j])
			}
			m, err := c.Advance(ctx, rv.IndexInternalID)
			if err != nil {
				return nil, err
			}
			s.scur[j], s.sdoc[j] = m, docNum(m)
		}
		if s.sdoc[j] == doc {
			ssum += s.scur[j].Score
			sm++
		}
	}
	if sm > 0 {
		score += ssum * (float64(sm) / float64(len(s.should)))
	}
	rv.Score = score
	for _, i := range s.matched {
		if s.gcur[i] != rv {
			ctx.DocumentMatchPool.Put(s.gcur[i])
		}
		m, err := s.groups[i].Next(ctx)
		if err != nil {
			return nil, err
		}
		s.gcur[i], s.gdoc[i] = m, docNum(m)
	}
	return rv, nil
}

// Advance moves to the first document at or after id.
func (s *rankSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	target := id.Value()
	if target < s.from {
		target, id = s.from, index.NewIndexInternalID(nil, s.from)
	}
	for i, g := range s.groups {
		if s.gdoc[i] >= target {
			continue
		}
		if s.gcur[i] != nil {
			ctx.DocumentMatchPool.Put(s.gcur[i])
		}
		m, err := g.Advance(ctx, id)
		if err != nil {
			return nil, err
		}
		s.gcur[i], s.gdoc[i] = m, docNum(m)
	}
	return s.Next(ctx)
}

// Close closes every child.
func (s *rankSearcher) Close() error {
	var errs []error
	for _, c := range s.groups {
		errs = append(errs, c.Close())
	}
	for _, c := range s.should {
		errs = append(errs, c.Close())
	}
	for _, p := range s.present {
		for _, r := range p.readers {
			errs = append(errs, r.Close())
		}
	}
	return errors.Join(errs...)
}

// Weight is the sum of the children's squared weights, added up as the
// boolean adds them: each disjunction's sum, then the two; or, for a
// split query, the whole query's (rankQuery.left).
func (s *rankSearcher) Weight() float64 {
	if s.weight > 0 {
		return s.weight
	}
	var must, should float64
	for _, c := range s.groups {
		must += c.Weight()
	}
	for _, c := range s.should {
		should += c.Weight()
	}
	return must + should
}

// SetQueryNorm hands the norm to every child.
func (s *rankSearcher) SetQueryNorm(n float64) {
	for _, c := range s.groups {
		c.SetQueryNorm(n)
	}
	for _, c := range s.should {
		c.SetQueryNorm(n)
	}
}

// Count is an upper bound: the groups' counts summed.
func (s *rankSearcher) Count() uint64 {
	var n uint64
	for _, c := range s.groups {
		n += c.Count()
	}
	return n
}

// Min is 0: one group is enough.
func (s *rankSearcher) Min() int { return 0 }

// Size estimates the searcher's memory.
func (s *rankSearcher) Size() int {
	n := 64 + 24*(len(s.groups)+len(s.should))
	for _, c := range s.groups {
		n += c.Size()
	}
	for _, c := range s.should {
		n += c.Size()
	}
	return n
}

// DocumentMatchPoolSize is the matches held at once: one per child,
// plus the children's own.
func (s *rankSearcher) DocumentMatchPoolSize() int {
	n := len(s.groups) + len(s.should)
	for _, c := range s.groups {
		n += c.DocumentMatchPoolSize()
	}
	for _, c := range s.should {
		n += c.DocumentMatchPoolSize()
	}
	return n
}

package querygen

import (
	"math"
	"slices"
	"strings"

	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/scorer"
)

// Random streams of the kinds with words the target lacks, one per kind,
// so that adding or changing one of them leaves every other kind as it
// was.
var lackingStreams = map[string]uint64{
	KindQuestionFramed: opgen.StreamQueries + 201,
	KindSynonym:        opgen.StreamQueries + 202,
	KindFiller:         opgen.StreamQueries + 203,
	KindNameTopic:      opgen.StreamQueries + 204,
}

// forKind returns the generator for kind: g itself, or one drawing from
// the kind's own random stream.
func (g *queryGen) forKind(kind string) *queryGen {
	if s, ok := lackingStreams[kind]; ok {
		return &queryGen{c: g.c, o: g.o, r: opgen.Rand(g.o.Seed, s)}
	}
	return g
}

// lacks reports whether no word of doc's indexed text matches w, not even
// as a prefix, contained word, variant or typo (scorer.ScoreToken).
func (c *queryCorpus) lacks(doc int, w string) bool {
	d := &c.docs[doc]
	for _, m := range []map[string]bool{d.words, d.extra} {
		for f := range m {
			if scorer.ScoreToken(w, f) > 0 {
				return false
			}
		}
	}
	return true
}

// queryContent returns the distinct normalised non-stopword tokens of q in
// query order.
func queryContent(q string) []string {
	var out []string
	for _, tk := range scorer.Tokenize(q) {
		if !scorer.IsStopword(tk.Text) && !slices.Contains(out, tk.Text) {
			out = append(out, tk.Text)
		}
	}
	return out
}

// acceptLacking checks a query built for doc from the target's words
// present plus added words: every content word of q is one or the other,
// there is at least one added word, doc holds every present word and lacks
// every added one, the present words identify doc, and doc is the clear
// winner on the whole query.
func (c *queryCorpus) acceptLacking(doc int, q string, present []string) bool {
	var have, added []string
	for _, w := range queryContent(q) {
		if slices.Contains(present, w) {
			have = append(have, w)
		} else {
			added = append(added, w)
		}
	}
	if len(added) == 0 || len(have) == 0 {
		return false
	}
	for _, w := range have {
		if !c.docs[doc].has(w) {
			return false
		}
	}
	for _, w := range added {
		if !c.lacks(doc, w) {
			return false
		}
	}
	return uniqueIn(c.all, doc, have) && c.clearWinner(doc, append(have, added...))
}

// clearWinner reports whether doc stays the best match for the query
// words: no other item holds them all, and every other item's
// idf-weighted overlap with them is below 0.9 × doc's, so the words doc
// lacks cannot make another item the better answer.
func (c *queryCorpus) clearWinner(doc int, words []string) bool {
	n := float64(len(c.docs))
	score := map[int]float64{}
	for _, w := range words {
		p := c.all[w]
		if len(p) == 0 {
			continue
		}
		idf := math.Log(1 + n/float64(len(p)))
		for _, d := range p {
			score[d] += idf
		}
	}
	own := score[doc]
	if own == 0 {
		return false
	}
	for d, s := range score {
		if d != doc && (s >= 0.9*own || c.holdsAll(d, words)) {
			return false
		}
	}
	return true
}

func (c *queryCorpus) holdsAll(doc int, words []string) bool {
	for _, w := range words {
		if !c.docs[doc].has(w) {
			return false
		}
	}
	return true
}

// lackSource draws the candidates of one entity type in random order: try
// builds a query from item i, or reports that it cannot.
type lackSource struct {
	order []int
	next  int
	try   func(i int) (scorer.LabelledQuery, bool)
}

func (g *queryGen) source(n int, try func(i int) (scorer.LabelledQuery, bool)) *lackSource {
	return &lackSource{order: g.perm(n), try: try}
}

// take returns the source's next query; ok is false once it has run out
// of items.
func (s *lackSource) take() (scorer.LabelledQuery, bool) {
	for s.next < len(s.order) {
		i := s.order[s.next]
		s.next++
		if q, ok := s.try(i); ok {
			return q, true
		}
	}
	return scorer.LabelledQuery{}, false
}

// interleave takes queries from the sources in the order of pattern
// (indexes into sources), round and round, until PerKind queries are made
// or every source has run out. A source that runs out leaves its turns to
// the others.
func (g *queryGen) interleave(sources []*lackSource, pattern []int) []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	done := make([]bool, len(sources))
	for len(out) < g.o.PerKind {
		progress := false
		for _, si := range pattern {
			if len(out) == g.o.PerKind {
				break
			}
			if done[si] {
				continue
			}
			q, ok := sources[si].take()
			if !ok {
				done[si] = true
				continue
			}
			out = append(out, q)
			progress = true
		}
		if !progress {
			break
		}
	}
	return out
}

// frame puts the topic text (and the name, for {n}) into one of the
// templates, tried in random order, and returns the first query that
// acceptLacking takes.
func (g *queryGen) frame(doc int, templates []string, topic, name string, present []string) (string, bool) {
	for _, ti := range g.perm(len(templates)) {
		q := strings.NewReplacer("{t}", topic, "{n}", name).Replace(templates[ti])
		if g.c.acceptLacking(doc, q, present) {
			return q, true
		}
	}
	return "", false
}

package search

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// rankHead loads and ranks the head's hits for q, and returns them with
// how many of the hits are present in the store and the hits it set aside
// unloaded (when prune is set).
//
// Loading and scoring a candidate is most of a query's time past the
// index (decompressing, decoding, markup to plain text, the scorer's
// tokenizing), and a page shows k = Page×PageSize of the head's 30 or more. A candidate's
// ranking score (rankScore) grows with its coverage and relative index
// score, which the hit carries, and with the scorer's evidence, which
// needs the text but lies between 0 and a ceiling (bound): every hit has a
// lowest and a highest possible score before it is loaded. When k hits'
// lowest scores reach a step of the ranking (quantize) above a hit's
// highest, those k outrank it on the first sort key, so it cannot be on
// the page, and it is set aside. The page is then the one the whole head
// would give, and so are the total and the match quality (Search counts
// what was set aside). Matching attachments are always loaded: their
// containers join the results beside them (followContainers), and count
// in the total, wherever they rank; a container set aside is loaded
// after all (containersIn).
//
// On generated queries (TestPruneKeepsEveryPage: pages of 1 to 20) it
// loads 30% fewer entities: most of a head scores in the lowest steps,
// where the bounds overlap. Scoring the k best-bounded hits first and
// setting the rest aside by their real scores set aside hardly more, and
// the two rounds, each too small to spread over the cores, made queries
// slower (README, Benchmarks).
func (e *Engine) rankHead(ctx context.Context, head []indexer.Hit, q Query, prune bool) (rs []ranked, present int, skip []indexer.Hit, err error) {
	k := q.Page * q.PageSize
	sc := e.scaleOf(head)
	var prep *scorer.Prepared
	if !e.plain {
		prep = e.prepare(q, sc)
	}
	if !prune || e.plain || e.opts.Ranker == RankIndex || strings.TrimSpace(q.Text) == "" ||
		len(head) <= k || k <= 0 || sc.top <= 0 || sc.maxWeight <= 0 {
		cands, err := e.hydrate(ctx, head, prep)
		if err != nil {
			return nil, 0, nil, err
		}
		if len(q.Statuses) > 0 {
			cands = slices.DeleteFunc(cands, func(c *candidate) bool { return !hasStatus(c.wp, q.Statuses) })
		}
		return e.rank(cands, q, rescaled(cands, sc, e.scaleOf(hitsOf(cands)))), len(cands), nil, nil
	}
	// The k-th highest of the lowest scores the hits can have (an
	// evidence of 0) is the bar: k hits reach its step whatever their
	// text.
	lows := make([]float64, len(head))
	for i, h := range head {
		lows[i] = rankScore(h.Coverage, sc.rel(h), 0, h.Kind)
	}
	slices.SortFunc(lows, func(a, b float64) int { return cmp.Compare(b, a) })
	bar := quantize(lows[k-1])
	load := make([]indexer.Hit, 0, len(head))
	for _, h := range head {
		if quantize(e.bound(sc, h)) >= bar || (h.Kind == kind.Attachment && matchOf(h.Coverage) == MatchGood) {
			load = append(load, h)
		} else {
			skip = append(skip, h)
		}
	}
	cands, err := e.hydrate(ctx, load, prep)
	if err != nil {
		return nil, 0, nil, err
	}
	more := e.containersIn(cands, skip)
	if len(cands) < len(load) {
		// An entity left the store since it was indexed: the k hits
		// counted on may not all be there, so nothing is set aside.
		more, skip = skip, nil
	}
	if len(more) > 0 {
		skip = slices.DeleteFunc(skip, func(h indexer.Hit) bool {
			return slices.ContainsFunc(more, func(m indexer.Hit) bool { return m.ID == h.ID })
		})
		mc, err := e.hydrate(ctx, more, prep)
		if err != nil {
			return nil, 0, nil, err
		}
		cands = append(cands, mc...)
	}
	if skip == nil {
		sc = rescaled(cands, sc, e.scaleOf(hitsOf(cands)))
	}
	return e.rank(cands, q, sc), len(cands), skip, nil
}

// rescaled returns the candidates' own scale sc, and drops the scores
// hydrate gave them on scale from when sc normalises the scorer's field
// scores by another weight (the only entity of the heaviest kind left the
// store, or a status filter dropped it): rank then scores them again.
func rescaled(cands []*candidate, from, sc scale) scale {
	if sc.maxWeight != from.maxWeight {
		for _, c := range cands {
			c.res = nil
		}
	}
	return sc
}

// bound is the highest ranking score h can have on scale sc, whatever
// its text: the scorer's evidence is the best weighted field score, at
// most 1 for a field (a field score is at most 1, weighted by at most the
// largest weight) and CrossFieldWeight/maxWeight for the cross-field
// score. The scorer rounds it to two decimals: half a hundredth more
// bounds the rounding.
func (e *Engine) bound(sc scale, h indexer.Hit) float64 {
	most := max(1, e.opts.CrossFieldWeight/sc.maxWeight) + 0.005
	return rankScore(h.Coverage, sc.rel(h), most, h.Kind)
}

// hitsOf returns the candidates' hits.
func hitsOf(cands []*candidate) []indexer.Hit {
	hits := make([]indexer.Hit, len(cands))
	for i, c := range cands {
		hits[i] = c.hit
	}
	return hits
}

// containersIn returns the hits of skip that are the containers of
// attachments among cands: followContainers moves a container up beside
// its file, so it must be ranked like the rest.
func (e *Engine) containersIn(cands []*candidate, skip []indexer.Hit) []indexer.Hit {
	var out []indexer.Hit
	for _, c := range cands {
		if c.att == nil || c.att.ContainerKind() == "" {
			continue
		}
		id := indexer.DocID(c.att.ContainerKind(), c.att.Container.ID)
		for _, h := range skip {
			if (h.ID == id || h.DocID() == id) && !slices.ContainsFunc(out, func(o indexer.Hit) bool { return o.ID == h.ID }) {
				out = append(out, h)
			}
		}
	}
	return out
}

// declaredWeights returns each kind's largest field weight after
// Options.Weights, read off the record an empty entity of that kind
// makes: a record declares the same fields whatever they hold.
func (e *Engine) declaredWeights() map[kind.Kind]float64 {
	empty := map[kind.Kind]*loaded{
		kind.WorkPackage: {wp: &openproject.WorkPackage{}},
		kind.WikiPage:    {wiki: &openproject.WikiPage{}},
		kind.Meeting:     {meeting: &openproject.Meeting{}},
		kind.Project:     {project: &openproject.Project{}},
		kind.Attachment:  {att: &openproject.Attachment{}},
	}
	out := make(map[kind.Kind]float64, len(empty))
	for k, l := range empty {
		r := e.reweight(recordOf(&candidate{hit: indexer.Hit{Kind: k}, loaded: l}), k)
		for _, f := range r.Fields {
			out[k] = max(out[k], f.Weight)
		}
	}
	return out
}

package querygen

import (
	"slices"
	"strings"

	"github.com/opsearch/opsearch/scorer"
)

// negatives invents two-word queries of pronounceable words that no
// visible word matches, even as a typo, prefix or variant.
func (g *queryGen) negatives() []scorer.LabelledQuery {
	vocab := make([]string, 0, len(g.c.postings))
	for w := range g.c.postings {
		vocab = append(vocab, w)
	}
	slices.Sort(vocab)
	const cons, vows = "bdfgklmnprstvz", "aeiou"
	invent := func() string {
		for {
			var b strings.Builder
			for range 3 + g.r.IntN(2) {
				b.WriteByte(cons[g.r.IntN(len(cons))])
				b.WriteByte(vows[g.r.IntN(len(vows))])
			}
			b.WriteByte(cons[g.r.IntN(len(cons))])
			w := b.String()
			clean := true
			for _, v := range vocab {
				if scorer.ScoreToken(w, v) > 0 || scorer.ScoreToken(v, w) > 0 {
					clean = false
					break
				}
			}
			if clean {
				return w
			}
		}
	}
	out := make([]scorer.LabelledQuery, 0, g.o.PerKind)
	for range g.o.PerKind {
		out = append(out, scorer.LabelledQuery{Query: invent() + " " + invent(), Expect: []scorer.Target{}})
	}
	return out
}

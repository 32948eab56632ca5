package querygen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/opsearch/opsearch/scorer"
)

// fromSubjects builds typo, reordered, question and truncated queries
// from work package subjects.
func (g *queryGen) fromSubjects(kind string) []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	for _, i := range g.perm(len(g.c.wps)) {
		if len(out) == g.o.PerKind {
			break
		}
		wp := g.c.wps[i]
		doc := g.c.byTarget[scorer.Target{Type: "work_package", ID: wp.ID}]
		cands := contentWords(wp.Subject)
		minWords := 2
		if kind == KindReordered {
			minWords = 3
		}
		ws, ok := g.c.pickUnique(doc, cands, minWords, 4)
		if !ok {
			continue
		}
		var q string
		switch kind {
		case KindTypo:
			q, ok = g.typo(ws)
		case KindReordered:
			q, ok = g.reorder(ws)
		case KindQuestion:
			q = g.question(ws)
		case KindTruncated:
			q, ok = truncate(ws)
		}
		if ok {
			out = append(out, scorer.LabelledQuery{Query: q, Expect: wpTarget(wp.ID)})
		}
	}
	return out
}

// typo misspells the longest alphabetic word of at least five letters:
// one edit, or two from nine letters on, never on the first letter, and
// never yielding another word of the corpus.
func (g *queryGen) typo(ws []word) (string, bool) {
	best := -1
	for i, w := range ws {
		if isAlpha(w.norm) && len(w.norm) >= 5 && (best < 0 || len(w.norm) > len(ws[best].norm)) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	w := ws[best].norm
	for range 10 {
		// Two edits only where a search engine tolerates them: in a word
		// still nine letters long as typed (Meilisearch's rule).
		t := g.edit(w)
		if len(w) >= 9 && g.r.IntN(2) == 0 {
			if t2 := g.edit(t); len(t2) >= 9 {
				t = t2
			}
		}
		if t != w && g.c.df(t) == 0 {
			parts := surfaces(ws)
			parts[best] = t
			return strings.Join(parts, " "), true
		}
	}
	return "", false
}

const letters = "abcdefghijklmnopqrstuvwxyz"

// edit applies one random edit (substitution, deletion or insertion) at
// a position after the first letter.
func (g *queryGen) edit(w string) string {
	b := []byte(w)
	p := 1 + g.r.IntN(len(b)-1)
	l := letters[g.r.IntN(len(letters))]
	switch g.r.IntN(3) {
	case 0:
		b[p] = l
	case 1:
		b = slices.Delete(b, p, p+1)
	default:
		b = slices.Insert(b, p, l)
	}
	return string(b)
}

func (g *queryGen) reorder(ws []word) (string, bool) {
	parts := surfaces(ws)
	orig := slices.Clone(parts)
	for range 5 {
		g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		if !slices.Equal(parts, orig) {
			return strings.Join(parts, " "), true
		}
	}
	return "", false
}

// questionTemplates wrap distinctive words in a question made of
// stopwords only, as a person asking an assistant would.
var questionTemplates = []string{
	"what about the %s?",
	"where is the %s?",
	"what did we do about %s?",
	"how do we %s?",
	"which was the one with %s?",
	"is there a %s?",
	"who was on the %s?",
}

func (g *queryGen) question(ws []word) string {
	t := questionTemplates[g.r.IntN(len(questionTemplates))]
	return fmt.Sprintf(t, strings.ToLower(strings.Join(surfaces(ws), " ")))
}

// truncate cuts the last word as if the user were still typing: one to
// three letters go, at least three remain.
func truncate(ws []word) (string, bool) {
	last := ws[len(ws)-1]
	n := len(last.norm)
	if !isAlpha(last.norm) || n < 5 || len(last.surface) != n {
		return "", false
	}
	cut := min(3, n-4, max(1, n/3))
	parts := surfaces(ws)
	parts[len(parts)-1] = last.surface[:n-cut]
	return strings.Join(parts, " "), true
}

func (g *queryGen) ids() []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	for _, i := range g.perm(len(g.c.wps)) {
		if len(out) == g.o.PerKind {
			break
		}
		id := g.c.wps[i].ID
		out = append(out, scorer.LabelledQuery{Query: "#" + strconv.FormatInt(id, 10), Expect: wpTarget(id)})
	}
	return out
}

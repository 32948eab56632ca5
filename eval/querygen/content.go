package querygen

import (
	"slices"
	"strings"

	"github.com/opsearch/opsearch/scorer"
)

// commentFacts picks words of one comment that the work package's subject
// and description do not hold, and that identify it.
func (g *queryGen) commentFacts() []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	for _, i := range g.perm(len(g.c.wps)) {
		if len(out) == g.o.PerKind {
			break
		}
		wp := g.c.wps[i]
		comments := g.c.comments[wp.ID]
		if len(comments) == 0 {
			continue
		}
		own := map[string]bool{}
		for _, tk := range scorer.Tokenize(wp.Subject + " " + wp.Description) {
			own[tk.Text] = true
		}
		text := stripMarkup(comments[g.r.IntN(len(comments))])
		cands := slices.DeleteFunc(contentWords(text), func(w word) bool {
			return own[w.norm] || markupWords[w.norm] || !(isAlpha(w.norm) || isNumber(w.norm) && len(w.norm) >= 4)
		})
		doc := g.c.byTarget[scorer.Target{Type: "work_package", ID: wp.ID}]
		if ws, ok := g.c.pickUnique(doc, cands, 2, 4); ok {
			out = append(out, scorer.LabelledQuery{Query: strings.Join(surfaces(ws), " "), Expect: wpTarget(wp.ID)})
		}
	}
	return out
}

// markupWords are words of the mention markup a comment may carry, which
// nobody searches for.
var markupWords = map[string]bool{"mention": true, "class": true, "data": true, "type": true, "user": true, "text": true}

// stripMarkup removes <...> tags.
func stripMarkup(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
			b.WriteByte(' ')
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wikiPhrases picks a verbatim run of three to five words of a wiki body
// whose words identify the page.
func (g *queryGen) wikiPhrases() []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	for _, i := range g.perm(len(g.c.wikis)) {
		if len(out) == g.o.PerKind {
			break
		}
		w := g.c.wikis[i]
		doc := g.c.byTarget[scorer.Target{Type: "wiki_page", ID: w.ID}]
		toks := scorer.Tokenize(w.Text)
		if len(toks) < 8 {
			continue
		}
		for _, start := range g.perm(len(toks) - 5)[:min(40, len(toks)-5)] {
			n := 3 + g.r.IntN(3)
			run := toks[start : start+n]
			var words []string
			plain := true
			for _, tk := range run {
				if !isAlpha(tk.Text) {
					plain = false
				}
				if !scorer.IsStopword(tk.Text) {
					words = append(words, tk.Text)
				}
			}
			phrase := w.Text[run[0].Start:run[len(run)-1].End]
			if run[0].Start > 0 && w.Text[run[0].Start-1] != ' ' {
				continue // starts inside a word ("s" of "Let's")
			}
			if !plain || len(words) < 2 || scorer.IsStopword(run[0].Text) || scorer.IsStopword(run[len(run)-1].Text) ||
				strings.ContainsAny(phrase, "\n#`*[]|.,;:!?()") || !g.c.unique(doc, words) {
				continue
			}
			out = append(out, scorer.LabelledQuery{Query: phrase, Expect: []scorer.Target{{Type: "wiki_page", ID: w.ID}}})
			break
		}
	}
	return out
}

// meetingOutcomes picks words of one outcome note that identify the
// meeting.
func (g *queryGen) meetingOutcomes() []scorer.LabelledQuery {
	type oc struct {
		m    int
		text string
	}
	var all []oc
	for i, m := range g.c.meetings {
		for _, it := range m.AgendaItems {
			for _, o := range it.Outcomes {
				all = append(all, oc{i, o.Notes})
			}
		}
	}
	var out []scorer.LabelledQuery
	used := map[int64]bool{}
	for _, i := range g.perm(len(all)) {
		if len(out) == g.o.PerKind {
			break
		}
		m := g.c.meetings[all[i].m]
		if used[m.ID] {
			continue
		}
		doc := g.c.byTarget[scorer.Target{Type: "meeting", ID: m.ID}]
		if ws, ok := g.c.pickUnique(doc, contentWords(all[i].text), 2, 4); ok {
			used[m.ID] = true
			out = append(out, scorer.LabelledQuery{Query: strings.Join(surfaces(ws), " "), Expect: meetingTarget(m.ID)})
		}
	}
	return out
}

// meetingParticipants names a participant plus the fewest words of the
// meeting's title and agenda titles that identify it.
func (g *queryGen) meetingParticipants() []scorer.LabelledQuery {
	var out []scorer.LabelledQuery
	for _, i := range g.perm(len(g.c.meetings)) {
		if len(out) == g.o.PerKind {
			break
		}
		m := g.c.meetings[i]
		if len(m.Participants) == 0 {
			continue
		}
		name := g.c.name(m.Participants[g.r.IntN(len(m.Participants))])
		nameWords := contentWords(name)
		if len(nameWords) == 0 {
			continue
		}
		var cands []word
		texts := []string{m.Title}
		for _, it := range m.AgendaItems {
			texts = append(texts, it.Title)
		}
		for _, w := range contentWords(strings.Join(texts, " \n ")) {
			if !slices.ContainsFunc(nameWords, func(n word) bool { return n.norm == w.norm }) {
				w.pos += 1000 // after the name
				cands = append(cands, w)
			}
		}
		doc := g.c.byTarget[scorer.Target{Type: "meeting", ID: m.ID}]
		base := norms(nameWords)
		order := slices.Clone(cands)
		slices.SortStableFunc(order, func(a, b word) int { return g.c.df(a.norm) - g.c.df(b.norm) })
		var extra []word
		for _, w := range order {
			extra = append(extra, w)
			if len(extra) > 3 {
				break
			}
			if g.c.unique(doc, append(slices.Clone(base), norms(extra)...)) {
				slices.SortFunc(extra, func(a, b word) int { return a.pos - b.pos })
				q := name + " " + strings.Join(surfaces(extra), " ")
				out = append(out, scorer.LabelledQuery{Query: q, Expect: meetingTarget(m.ID)})
				break
			}
		}
	}
	return out
}

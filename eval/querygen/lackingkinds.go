package querygen

import (
	"slices"
	"strings"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/scorer"
)

// wpFrames are the question templates for a work package of the given
// type: the general ones plus those of its type.
func wpFrames(wp openproject.WorkPackage) []string {
	frames := slices.Clone(framesWorkPackage)
	switch wp.Type.ID {
	case opgen.TypeBug:
		frames = append(frames, framesBug...)
	case opgen.TypeFeature:
		frames = append(frames, framesFeature...)
	case opgen.TypeTask:
		frames = append(frames, framesTask...)
	}
	return frames
}

// questionFramed wraps identifying words of work packages, wiki pages and
// meetings in questions (two work packages to one wiki page and one
// meeting).
func (g *queryGen) questionFramed() []scorer.LabelledQuery {
	c := g.c
	wps := g.source(len(c.wps), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.wpDoc(i)
		ws, ok := pickUniqueIn(c.all, doc, contentWords(c.wps[i].Subject), 2, 4)
		if !ok {
			return scorer.LabelledQuery{}, false
		}
		q, ok := g.frame(doc, wpFrames(c.wps[i]), lowerJoin(ws), "", norms(ws))
		return scorer.LabelledQuery{Query: q, Expect: wpTarget(c.wps[i].ID)}, ok
	})
	wikis := g.source(len(c.wikis), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.wikiDoc(i)
		ws, ok := c.pickWiki(doc, i, 1)
		if !ok {
			return scorer.LabelledQuery{}, false
		}
		q, ok := g.frame(doc, framesWiki, lowerJoin(ws), "", norms(ws))
		return scorer.LabelledQuery{Query: q, Expect: []scorer.Target{{Type: "wiki_page", ID: c.wikis[i].ID}}}, ok
	})
	meetings := g.source(len(c.meetings), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.meetingDoc(i)
		ws, ok := pickUniqueIn(c.all, doc, c.meetingWords(i), 1, 3)
		if !ok {
			return scorer.LabelledQuery{}, false
		}
		q, ok := g.frame(doc, framesMeeting, lowerJoin(ws), "", norms(ws))
		return scorer.LabelledQuery{Query: q, Expect: meetingTarget(c.meetings[i].ID)}, ok
	})
	return g.interleave([]*lackSource{wps, wikis, meetings}, []int{0, 1, 0, 2})
}

// synonyms maps a word to the words that may stand for it (synonymGroups).
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, grp := range synonymGroups {
		for _, w := range grp {
			for _, s := range grp {
				if s != w && !slices.Contains(m[w], s) {
					m[w] = append(m[w], s)
				}
			}
		}
	}
	return m
}()

// withCase gives s the capitalisation of like's first letter.
func withCase(s, like string) string {
	if r := []rune(like); len(r) > 0 && unicode.IsUpper(r[0]) {
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// synonymize replaces one of cands (sometimes two) by a synonym doc lacks, then picks between minWords and 4 of the other words that
// identify doc. It returns the query words in text order, the replacements
// in place of the words they stand for.
func (g *queryGen) synonymize(doc int, cands []word, minWords int) (query []word, present []string, ok bool) {
	type repl struct {
		at  int // index in cands
		syn string
	}
	var repls []repl
	for _, ci := range g.perm(len(cands)) {
		alts := synonyms[cands[ci].norm]
		for _, ai := range g.perm(len(alts)) {
			if g.c.lacks(doc, alts[ai]) {
				repls = append(repls, repl{ci, alts[ai]})
				break
			}
		}
	}
	if len(repls) == 0 {
		return nil, nil, false
	}
	n := 1
	if len(repls) > 1 && g.r.IntN(3) == 0 {
		n = 2
	}
	repls = repls[:n]
	var rest []word
	for i, w := range cands {
		if !slices.ContainsFunc(repls, func(r repl) bool { return r.at == i }) {
			rest = append(rest, w)
		}
	}
	ws, ok := pickUniqueIn(g.c.all, doc, rest, minWords, 4)
	if !ok {
		return nil, nil, false
	}
	query = slices.Clone(ws)
	for _, r := range repls {
		w := cands[r.at]
		query = append(query, word{norm: r.syn, surface: withCase(r.syn, w.surface), pos: w.pos})
	}
	slices.SortFunc(query, func(a, b word) int { return a.pos - b.pos })
	return query, norms(ws), true
}

// synonymQueries replace words of work package subjects, wiki page titles
// and meeting titles by synonyms the target lacks.
func (g *queryGen) synonymQueries() []scorer.LabelledQuery {
	c := g.c
	build := func(doc int, cands []word, minWords int, expect []scorer.Target) (scorer.LabelledQuery, bool) {
		ws, present, ok := g.synonymize(doc, cands, minWords)
		if !ok {
			return scorer.LabelledQuery{}, false
		}
		q := strings.Join(surfaces(ws), " ")
		return scorer.LabelledQuery{Query: q, Expect: expect}, c.acceptLacking(doc, q, present)
	}
	wps := g.source(len(c.wps), func(i int) (scorer.LabelledQuery, bool) {
		return build(c.wpDoc(i), contentWords(c.wps[i].Subject), 2, wpTarget(c.wps[i].ID))
	})
	wikis := g.source(len(c.wikis), func(i int) (scorer.LabelledQuery, bool) {
		title, body := c.wikiWords(i)
		return build(c.wikiDoc(i), append(title, body...), 1, []scorer.Target{{Type: "wiki_page", ID: c.wikis[i].ID}})
	})
	meetings := g.source(len(c.meetings), func(i int) (scorer.LabelledQuery, bool) {
		return build(c.meetingDoc(i), c.meetingWords(i), 1, meetingTarget(c.meetings[i].ID))
	})
	return g.interleave([]*lackSource{wps, wikis, meetings}, []int{0, 0, 1, 0, 2})
}

// fill inserts one to three filler words doc lacks among the words ws,
// at least one of them between two words.
func (g *queryGen) fill(doc int, ws []word) (string, bool) {
	var fillers []string
	want := 1 + g.r.IntN(2)
	if g.r.IntN(6) == 0 {
		want = 3
	}
	for _, fi := range g.perm(len(fillerWords)) {
		if len(fillers) == want {
			break
		}
		if g.c.lacks(doc, fillerWords[fi]) {
			fillers = append(fillers, fillerWords[fi])
		}
	}
	if len(fillers) == 0 || len(ws) < 2 {
		return "", false
	}
	parts := surfaces(ws)
	for k, f := range fillers {
		at := 1 + g.r.IntN(len(parts)-1) // between two words
		if k > 0 {
			at = g.r.IntN(len(parts) + 1)
		}
		parts = slices.Insert(parts, at, f)
	}
	return strings.Join(parts, " "), true
}

// fillerQueries insert filler words among identifying words of work
// package subjects, wiki page titles and meetings.
func (g *queryGen) fillerQueries() []scorer.LabelledQuery {
	c := g.c
	build := func(doc int, ws []word, ok bool, expect []scorer.Target) (scorer.LabelledQuery, bool) {
		if !ok {
			return scorer.LabelledQuery{}, false
		}
		q, ok := g.fill(doc, ws)
		return scorer.LabelledQuery{Query: q, Expect: expect}, ok && c.acceptLacking(doc, q, norms(ws))
	}
	wps := g.source(len(c.wps), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.wpDoc(i)
		ws, ok := pickUniqueIn(c.all, doc, contentWords(c.wps[i].Subject), 2, 4)
		return build(doc, ws, ok, wpTarget(c.wps[i].ID))
	})
	wikis := g.source(len(c.wikis), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.wikiDoc(i)
		ws, ok := c.pickWiki(doc, i, 2)
		return build(doc, ws, ok, []scorer.Target{{Type: "wiki_page", ID: c.wikis[i].ID}})
	})
	meetings := g.source(len(c.meetings), func(i int) (scorer.LabelledQuery, bool) {
		doc := c.meetingDoc(i)
		ws, ok := pickUniqueIn(c.all, doc, c.meetingWords(i), 2, 4)
		return build(doc, ws, ok, meetingTarget(c.meetings[i].ID))
	})
	return g.interleave([]*lackSource{wps, wikis, meetings}, []int{0, 0, 1, 0, 2})
}

// nameVariant writes a person's name as people type it: in full, first
// name or last name only, sometimes lower-cased, and for a name with
// diacritics often folded ("Müller" -> "muller").
func (g *queryGen) nameVariant(name string) string {
	parts := strings.Fields(name)
	switch r := g.r.IntN(4); {
	case len(parts) > 1 && r == 0:
		name = parts[0]
	case len(parts) > 1 && r == 1:
		name = parts[len(parts)-1]
	}
	switch {
	case !isASCII(name) && g.r.IntN(2) == 0:
		return scorer.Normalize(name)
	case g.r.IntN(3) == 0:
		return strings.ToLower(name)
	}
	return name
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// nameTopic picks one to three topic words that, with the name's words,
// identify doc, and frames name and topic with one of the templates.
func (g *queryGen) nameTopic(doc int, name string, topic []word, templates []string) (string, bool) {
	name = g.nameVariant(name)
	nameWords := queryContent(name)
	if len(nameWords) == 0 || !g.c.holdsAll(doc, nameWords) {
		return "", false
	}
	cands := slices.DeleteFunc(slices.Clone(topic), func(w word) bool { return slices.Contains(nameWords, w.norm) })
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b word) int { return len(g.c.all[a.norm]) - len(g.c.all[b.norm]) })
	for n := 1; n <= min(3, len(order)); n++ {
		ws := slices.Clone(order[:n])
		if !uniqueIn(g.c.all, doc, append(slices.Clone(nameWords), norms(ws)...)) {
			continue
		}
		slices.SortFunc(ws, func(a, b word) int { return a.pos - b.pos })
		return g.frame(doc, templates, lowerJoin(ws), name, append(nameWords, norms(ws)...))
	}
	return "", false
}

// nameTopics combine a meeting participant's or a work package assignee's
// name with topic words and framing words.
func (g *queryGen) nameTopics() []scorer.LabelledQuery {
	c := g.c
	meetings := g.source(len(c.meetings), func(i int) (scorer.LabelledQuery, bool) {
		m := c.meetings[i]
		if len(m.Participants) == 0 {
			return scorer.LabelledQuery{}, false
		}
		name := c.name(m.Participants[g.r.IntN(len(m.Participants))])
		q, ok := g.nameTopic(c.meetingDoc(i), name, c.meetingWords(i), framesNameMeeting)
		return scorer.LabelledQuery{Query: q, Expect: meetingTarget(m.ID)}, ok
	})
	wps := g.source(len(c.wps), func(i int) (scorer.LabelledQuery, bool) {
		wp := c.wps[i]
		if wp.Assignee == nil {
			return scorer.LabelledQuery{}, false
		}
		q, ok := g.nameTopic(c.wpDoc(i), c.name(*wp.Assignee), contentWords(wp.Subject), framesNameWorkPackage)
		return scorer.LabelledQuery{Query: q, Expect: wpTarget(wp.ID)}, ok
	})
	return g.interleave([]*lackSource{meetings, wps}, []int{0, 1})
}

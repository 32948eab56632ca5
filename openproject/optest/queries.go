package optest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// Query kinds emitted by GenerateQueries.
const (
	QueryTypo               = "typo"
	QueryReordered          = "reordered"
	QueryQuestion           = "question"
	QueryCommentFact        = "comment_fact"
	QueryWikiPhrase         = "wiki_phrase"
	QueryMeetingOutcome     = "meeting_outcome"
	QueryMeetingParticipant = "meeting_participant"
	QueryTruncated          = "truncated"
	QueryID                 = "id"
	QueryNegative           = "negative"
)

// QueryKinds lists the kinds GenerateQueries emits, in output order.
func QueryKinds() []string {
	return []string{
		QueryTypo, QueryReordered, QueryQuestion, QueryTruncated, QueryID, QueryCommentFact,
		QueryWikiPhrase, QueryMeetingOutcome, QueryMeetingParticipant, QueryNegative,
	}
}

// QueryOptions configure GenerateQueries.
type QueryOptions struct {
	// Seed selects the queries; the same data set and options always give
	// the same set.
	Seed int64
	// PerKind is the number of queries per kind (default 30). A kind may
	// get fewer when the data set has too few items that yield an
	// unambiguous query.
	PerKind int
	// UserID is the user whose visible data the queries are built from
	// (default: the administrator, who sees everything).
	UserID int64
}

// DefaultQueriesPerKind is QueryOptions.PerKind's default.
const DefaultQueriesPerKind = 30

// GenerateQueries builds a labelled query set for d: every query names
// the item it was made from, and is checked to be unambiguous in the data
// the chosen user can see. Words are picked by document frequency (rarest
// first) until no other visible item contains all of the query's words, so
// the expected item really is the right answer and a miss is the
// ranker's fault. Negative queries consist of invented words that no
// visible text matches even fuzzily (scorer.ScoreToken is 0 against every
// word of the corpus).
//
// Kinds: typo (one or two edits, never on the first letter, in a word of
// at least five letters), reordered (subject words shuffled), question (a
// natural-language question around distinctive subject words), truncated
// (the last word cut as if still typing), id ("#123"), comment_fact (words
// found only in a work package's comments), wiki_phrase (a verbatim phrase
// of a wiki body), meeting_outcome (words of an agenda item's outcome),
// meeting_participant (a participant's name plus words of the meeting) and
// negative (nothing relevant exists).
func GenerateQueries(d *Dataset, o QueryOptions) []scorer.LabelledQuery {
	if o.PerKind <= 0 {
		o.PerKind = DefaultQueriesPerKind
	}
	if o.UserID == 0 {
		o.UserID = adminID
	}
	c := newQueryCorpus(d, o.UserID)
	g := &queryGen{c: c, o: o, r: newRand(o.Seed, streamQueries+100)}
	var out []scorer.LabelledQuery
	for _, kind := range QueryKinds() {
		qs := g.kind(kind)
		for i := range qs {
			qs[i].ID = fmt.Sprintf("%s-%03d", kind, i+1)
			qs[i].Kind = kind
		}
		out = append(out, qs...)
	}
	return out
}

// qdoc is one visible searchable item with the normalised words of all
// its searchable text.
type qdoc struct {
	target scorer.Target
	words  map[string]bool
}

// queryCorpus is the visible data with an inverted index of words.
type queryCorpus struct {
	docs     []qdoc
	postings map[string][]int // word -> ascending doc indexes
	byTarget map[scorer.Target]int

	wps      []openproject.WorkPackage
	comments map[int64][]string // work package id -> comments
	wikis    []openproject.WikiPage
	meetings []openproject.Meeting
	userName map[int64]string
}

func newQueryCorpus(d *Dataset, userID int64) *queryCorpus {
	c := &queryCorpus{postings: map[string][]int{}, byTarget: map[scorer.Target]int{}, comments: map[int64][]string{}, userName: map[int64]string{}}
	admin := false
	for _, u := range d.Users {
		c.userName[u.ID] = u.Name
		if u.ID == userID {
			admin = u.Admin
		}
	}
	visible := map[int64]bool{}
	for _, p := range d.Projects {
		if admin || p.Public || slices.Contains(p.Members, userID) {
			visible[p.ID] = true
			c.add(scorer.Target{Type: "project", ID: p.ID}, p.Name, p.Identifier, p.Description)
		}
	}
	wpVisible := map[int64]bool{}
	for _, wp := range d.WorkPackages {
		if visible[wp.Project.ID] {
			wpVisible[wp.ID] = true
			c.wps = append(c.wps, wp)
		}
	}
	for _, a := range d.Activities {
		if wpVisible[a.WorkPackageID] && a.IsComment() && (admin || !a.Internal) {
			c.comments[a.WorkPackageID] = append(c.comments[a.WorkPackageID], a.Comment)
		}
	}
	for _, wp := range c.wps {
		texts := append([]string{wp.Subject, wp.Description}, c.comments[wp.ID]...)
		c.add(scorer.Target{Type: "work_package", ID: wp.ID}, texts...)
	}
	for _, w := range d.WikiPages {
		if visible[w.Project.ID] {
			c.wikis = append(c.wikis, w)
			c.add(scorer.Target{Type: "wiki_page", ID: w.ID}, w.Title, w.Text)
		}
	}
	for _, m := range d.Meetings {
		if !visible[m.Project.ID] {
			continue
		}
		c.meetings = append(c.meetings, m)
		texts := []string{m.Title, m.Location, m.Project.Title, c.name(m.Author)}
		for _, it := range m.AgendaItems {
			texts = append(texts, it.Title, it.Notes)
			for _, oc := range it.Outcomes {
				texts = append(texts, oc.Notes)
			}
		}
		for _, p := range m.Participants {
			texts = append(texts, c.name(p))
		}
		c.add(scorer.Target{Type: "meeting", ID: m.ID}, texts...)
	}
	return c
}

// name is a reference's title, or the user's name when the data set left
// the title to the server.
func (c *queryCorpus) name(r openproject.Ref) string {
	if r.Title != "" {
		return r.Title
	}
	return c.userName[r.ID]
}

func (c *queryCorpus) add(t scorer.Target, texts ...string) {
	i := len(c.docs)
	words := map[string]bool{}
	for _, s := range texts {
		for _, tk := range scorer.Tokenize(s) {
			words[tk.Text] = true
		}
	}
	for w := range words {
		c.postings[w] = append(c.postings[w], i)
	}
	c.docs = append(c.docs, qdoc{target: t, words: words})
	c.byTarget[t] = i
}

func (c *queryCorpus) df(w string) int { return len(c.postings[w]) }

// unique reports whether doc is the only document holding all words.
func (c *queryCorpus) unique(doc int, words []string) bool {
	if len(words) == 0 {
		return false
	}
	var set []int
	for i, w := range words {
		p := c.postings[w]
		if i == 0 {
			set = slices.Clone(p)
		} else {
			set = slices.DeleteFunc(set, func(d int) bool { _, ok := slices.BinarySearch(p, d); return !ok })
		}
		if len(set) == 0 {
			return false
		}
	}
	return len(set) == 1 && set[0] == doc
}

// word is a candidate query word: normalised form and surface text.
type word struct {
	norm, surface string
	pos           int
}

// contentWords returns the distinct non-stopword words of s of at least
// three runes, in text order.
func contentWords(s string) []word {
	var out []word
	seen := map[string]bool{}
	for i, tk := range scorer.Tokenize(s) {
		if len([]rune(tk.Text)) < 3 || scorer.IsStopword(tk.Text) || seen[tk.Text] {
			continue
		}
		seen[tk.Text] = true
		out = append(out, word{norm: tk.Text, surface: s[tk.Start:tk.End], pos: i})
	}
	return out
}

// pickUnique chooses, rarest first (alphabetic words before numbers),
// between minWords and maxWords of cands that together identify doc, and
// returns them in text order; ok is false when no such choice exists.
func (c *queryCorpus) pickUnique(doc int, cands []word, minWords, maxWords int) ([]word, bool) {
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b word) int {
		na, nb := isNumber(a.norm), isNumber(b.norm)
		if na != nb {
			if na {
				return 1
			}
			return -1
		}
		return c.df(a.norm) - c.df(b.norm)
	})
	var chosen []word
	for _, w := range order {
		chosen = append(chosen, w)
		if len(chosen) > maxWords {
			return nil, false
		}
		if len(chosen) >= minWords && c.unique(doc, norms(chosen)) {
			slices.SortFunc(chosen, func(a, b word) int { return a.pos - b.pos })
			return chosen, true
		}
	}
	return nil, false
}

func norms(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.norm
	}
	return out
}

func surfaces(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.surface
	}
	return out
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func isAlpha(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return s != ""
}

// queryGen draws queries of each kind.
type queryGen struct {
	c *queryCorpus
	o QueryOptions
	r *rand.Rand
}

func (g *queryGen) kind(kind string) []scorer.LabelledQuery {
	switch kind {
	case QueryTypo, QueryReordered, QueryQuestion, QueryTruncated:
		return g.fromSubjects(kind)
	case QueryID:
		return g.ids()
	case QueryCommentFact:
		return g.commentFacts()
	case QueryWikiPhrase:
		return g.wikiPhrases()
	case QueryMeetingOutcome:
		return g.meetingOutcomes()
	case QueryMeetingParticipant:
		return g.meetingParticipants()
	case QueryNegative:
		return g.negatives()
	}
	return nil
}

// perm returns the indexes 0..n-1 in random order.
func (g *queryGen) perm(n int) []int { return g.r.Perm(n) }

func wpTarget(id int64) []scorer.Target { return []scorer.Target{{Type: "work_package", ID: id}} }

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
		if kind == QueryReordered {
			minWords = 3
		}
		ws, ok := g.c.pickUnique(doc, cands, minWords, 4)
		if !ok {
			continue
		}
		var q string
		switch kind {
		case QueryTypo:
			q, ok = g.typo(ws)
		case QueryReordered:
			q, ok = g.reorder(ws)
		case QueryQuestion:
			q = g.question(ws)
		case QueryTruncated:
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

func meetingTarget(id int64) []scorer.Target { return []scorer.Target{{Type: "meeting", ID: id}} }

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

package querygen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

// Query kinds emitted by Generate.
const (
	KindTypo               = "typo"
	KindReordered          = "reordered"
	KindQuestion           = "question"
	KindCommentFact        = "comment_fact"
	KindWikiPhrase         = "wiki_phrase"
	KindMeetingOutcome     = "meeting_outcome"
	KindMeetingParticipant = "meeting_participant"
	KindTruncated          = "truncated"
	KindID                 = "id"
	KindNegative           = "negative"

	// Kinds whose queries carry words the target lacks, as people ask:
	// the words that do occur in the target identify it, the others frame
	// the question, stand in for a target word or fill the query.
	KindQuestionFramed = "question_framed"
	KindSynonym        = "synonym"
	KindFiller         = "filler"
	KindNameTopic      = "name_topic"
)

// Kinds lists the kinds Generate emits, in output order.
func Kinds() []string {
	return []string{
		KindTypo, KindReordered, KindQuestion, KindTruncated, KindID, KindCommentFact,
		KindWikiPhrase, KindMeetingOutcome, KindMeetingParticipant, KindNegative,
		KindQuestionFramed, KindSynonym, KindFiller, KindNameTopic,
	}
}

// Options configure Generate.
type Options struct {
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

// DefaultPerKind is Options.PerKind's default.
const DefaultPerKind = 30

// Generate builds a labelled query set for d: every query names the item
// it was made from, and is checked to be unambiguous in the data the
// chosen user can see. Words are picked by document frequency (rarest
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
//
// The kinds question_framed, synonym, filler and name_topic carry words the
// target lacks, so that an engine requiring every query word cannot answer
// them: question_framed wraps identifying words of a work package, wiki
// page or meeting in a question whose framing words the target does not
// hold; synonym replaces one or two of them by a synonym the target does
// not hold; filler inserts words without a topic; name_topic combines a
// participant's or assignee's name (sometimes with its diacritics folded
// away) with topic words and framing words. The words the target holds
// are chosen as for the other kinds (rarest first until no other visible
// item holds them all); an added word must not match any word of the
// target even as a prefix, typo or variant (scorer.ScoreToken), and no
// other item may come close to the target on the whole query (see
// queryCorpus.clearWinner). These kinds draw from random streams of their
// own, so the queries of the other kinds do not depend on them.
func Generate(d *optest.Dataset, o Options) []scorer.LabelledQuery {
	if o.PerKind <= 0 {
		o.PerKind = DefaultPerKind
	}
	if o.UserID == 0 {
		o.UserID = opgen.AdminID
	}
	c := newQueryCorpus(d, o.UserID)
	g := &queryGen{c: c, o: o, r: opgen.Rand(o.Seed, opgen.StreamQueries+100)}
	var out []scorer.LabelledQuery
	for _, kind := range Kinds() {
		qs := g.forKind(kind).kind(kind)
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
	// extra holds the words of the item's other indexed text that words
	// lacks: a work package's project, people and id, a wiki page's
	// project and slug. Only the kinds with words the target lacks use it.
	extra map[string]bool
}

// has reports whether the item's indexed text holds the word w.
func (d *qdoc) has(w string) bool { return d.words[w] || d.extra[w] }

// queryCorpus is the visible data with an inverted index of words.
type queryCorpus struct {
	docs     []qdoc
	postings map[string][]int // word -> ascending doc indexes
	byTarget map[scorer.Target]int
	// all are the postings of words and extra words (qdoc.has).
	all map[string][]int

	commenters map[int64][]string // work package id -> comment authors

	wps      []openproject.WorkPackage
	comments map[int64][]string // work package id -> comments
	wikis    []openproject.WikiPage
	meetings []openproject.Meeting
	userName map[int64]string
}

func newQueryCorpus(d *optest.Dataset, userID int64) *queryCorpus {
	c := &queryCorpus{postings: map[string][]int{}, byTarget: map[scorer.Target]int{}, comments: map[int64][]string{},
		commenters: map[int64][]string{}, userName: map[int64]string{}}
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
			c.commenters[a.WorkPackageID] = append(c.commenters[a.WorkPackageID], c.name(a.User))
		}
	}
	for _, wp := range c.wps {
		texts := append([]string{wp.Subject, wp.Description}, c.comments[wp.ID]...)
		c.add(scorer.Target{Type: "work_package", ID: wp.ID}, texts...)
		people := append([]string{wp.Project.Title, c.name(wp.Author), "#" + strconv.FormatInt(wp.ID, 10), wp.DisplayID}, c.commenters[wp.ID]...)
		if wp.Assignee != nil {
			people = append(people, c.name(*wp.Assignee))
		}
		c.addExtra(len(c.docs)-1, people...)
	}
	for _, w := range d.WikiPages {
		if visible[w.Project.ID] {
			c.wikis = append(c.wikis, w)
			c.add(scorer.Target{Type: "wiki_page", ID: w.ID}, w.Title, w.Text)
			c.addExtra(len(c.docs)-1, w.Project.Title, w.Slug)
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
	c.all = map[string][]int{}
	for i := range c.docs {
		for w := range c.docs[i].words {
			c.all[w] = append(c.all[w], i)
		}
		for w := range c.docs[i].extra {
			c.all[w] = append(c.all[w], i)
		}
	}
	return c
}

// addExtra records the words of texts that doc's words lack as its extra
// words.
func (c *queryCorpus) addExtra(doc int, texts ...string) {
	d := &c.docs[doc]
	for _, s := range texts {
		for _, tk := range scorer.Tokenize(s) {
			if !d.words[tk.Text] {
				if d.extra == nil {
					d.extra = map[string]bool{}
				}
				d.extra[tk.Text] = true
			}
		}
	}
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
func (c *queryCorpus) unique(doc int, words []string) bool { return uniqueIn(c.postings, doc, words) }

// uniqueIn reports whether doc is the only document of postings holding
// all words.
func uniqueIn(postings map[string][]int, doc int, words []string) bool {
	if len(words) == 0 {
		return false
	}
	var set []int
	for i, w := range words {
		p := postings[w]
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
	return pickUniqueIn(c.postings, doc, cands, minWords, maxWords)
}

// pickUniqueIn is pickUnique over the given postings.
func pickUniqueIn(postings map[string][]int, doc int, cands []word, minWords, maxWords int) ([]word, bool) {
	df := func(w string) int { return len(postings[w]) }
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b word) int {
		na, nb := isNumber(a.norm), isNumber(b.norm)
		if na != nb {
			if na {
				return 1
			}
			return -1
		}
		return df(a.norm) - df(b.norm)
	})
	var chosen []word
	for _, w := range order {
		chosen = append(chosen, w)
		if len(chosen) > maxWords {
			return nil, false
		}
		if len(chosen) >= minWords && uniqueIn(postings, doc, norms(chosen)) {
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
	o Options
	r *rand.Rand
}

func (g *queryGen) kind(kind string) []scorer.LabelledQuery {
	switch kind {
	case KindQuestionFramed:
		return g.questionFramed()
	case KindSynonym:
		return g.synonymQueries()
	case KindFiller:
		return g.fillerQueries()
	case KindNameTopic:
		return g.nameTopics()
	case KindTypo, KindReordered, KindQuestion, KindTruncated:
		return g.fromSubjects(kind)
	case KindID:
		return g.ids()
	case KindCommentFact:
		return g.commentFacts()
	case KindWikiPhrase:
		return g.wikiPhrases()
	case KindMeetingOutcome:
		return g.meetingOutcomes()
	case KindMeetingParticipant:
		return g.meetingParticipants()
	case KindNegative:
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

// wpDoc, wikiDoc and meetingDoc are the corpus indexes of the i-th visible
// item of each type.
func (c *queryCorpus) wpDoc(i int) int {
	return c.byTarget[scorer.Target{Type: "work_package", ID: c.wps[i].ID}]
}

func (c *queryCorpus) wikiDoc(i int) int {
	return c.byTarget[scorer.Target{Type: "wiki_page", ID: c.wikis[i].ID}]
}

func (c *queryCorpus) meetingDoc(i int) int {
	return c.byTarget[scorer.Target{Type: "meeting", ID: c.meetings[i].ID}]
}

// wikiWords returns the candidate identifying words of a wiki page: its
// title's, and its body's alphabetic words not in the title (placed after
// the title). A work package's candidates are its subject's words.
func (c *queryCorpus) wikiWords(i int) (title, body []word) {
	w := c.wikis[i]
	title = contentWords(w.Title)
	for _, b := range contentWords(stripMarkup(w.Text)) {
		if isAlpha(b.norm) && !slices.ContainsFunc(title, func(t word) bool { return t.norm == b.norm }) {
			b.pos += 1000
			body = append(body, b)
		}
	}
	return title, body
}

// meetingWords returns the candidate identifying words of a meeting: those
// of its title and agenda titles.
func (c *queryCorpus) meetingWords(i int) []word {
	m := c.meetings[i]
	texts := []string{m.Title}
	for _, it := range m.AgendaItems {
		texts = append(texts, it.Title)
	}
	return contentWords(strings.Join(texts, " \n "))
}

// pickWiki picks identifying words of a wiki page: from its title if they
// suffice, else the title's rarest words plus words of the body.
func (c *queryCorpus) pickWiki(doc, i, minWords int) ([]word, bool) {
	title, body := c.wikiWords(i)
	if ws, ok := pickUniqueIn(c.all, doc, title, minWords, 4); ok {
		return ws, true
	}
	return pickUniqueIn(c.all, doc, append(title, body...), minWords, 4)
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

func lowerJoin(ws []word) string { return strings.ToLower(strings.Join(surfaces(ws), " ")) }

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

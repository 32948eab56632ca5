package querygen

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

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

func lowerJoin(ws []word) string { return strings.ToLower(strings.Join(surfaces(ws), " ")) }

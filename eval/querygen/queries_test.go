package querygen

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/scorer"
)

func TestGenerateQueries(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 30})
	o := Options{Seed: 7, PerKind: 10}
	qs := Generate(d, o)
	if again := Generate(d, o); !reflect.DeepEqual(qs, again) {
		t.Fatal("the same options gave different queries")
	}
	perKind := map[string]int{}
	ids := map[string]bool{}
	for _, q := range qs {
		perKind[q.Kind]++
		if ids[q.ID] {
			t.Errorf("duplicate id %s", q.ID)
		}
		ids[q.ID] = true
		if q.Query == "" {
			t.Errorf("%s: empty query", q.ID)
		}
		if (q.Kind == KindNegative) != q.Negative() {
			t.Errorf("%s: kind %s with expect %v", q.ID, q.Kind, q.Expect)
		}
		if testing.Verbose() {
			t.Logf("%-24s %-50q %v", q.ID, q.Query, q.Expect)
		}
	}
	for _, k := range Kinds() {
		if perKind[k] < 5 {
			t.Errorf("kind %s: %d queries, want at least 5", k, perKind[k])
		}
	}
}

// TestGenerateQueriesVisibility checks that queries for alice only name
// items she can see.
func TestGenerateQueriesVisibility(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 300, WikiPages: 20, Meetings: 20})
	c := newQueryCorpus(d, opgen.AliceID)
	for _, q := range Generate(d, Options{Seed: 1, PerKind: 10, UserID: opgen.AliceID}) {
		for _, e := range q.Expect {
			if _, ok := c.byTarget[e]; !ok {
				t.Errorf("%s expects %v, which alice cannot see", q.ID, e)
			}
		}
	}
	if _, ok := newQueryCorpus(d, opgen.AdminID).byTarget[scorer.Target{Type: "project", ID: 3}]; !ok {
		t.Error("admin does not see bob's private project")
	}
	if _, ok := c.byTarget[scorer.Target{Type: "project", ID: 3}]; ok {
		t.Error("alice sees bob's private project")
	}
}

// indexedWords returns, for every item of d, the normalised words of all
// its text that the search index holds (titles, bodies, comments with
// their authors, agenda, people, project names, ids), built from the data
// set without the generator's corpus.
func indexedWords(d *optest.Dataset) map[scorer.Target]map[string]bool {
	users := map[int64]string{}
	for _, u := range d.Users {
		users[u.ID] = u.Name
	}
	name := func(r openproject.Ref) string {
		if r.Title != "" {
			return r.Title
		}
		return users[r.ID]
	}
	out := map[scorer.Target]map[string]bool{}
	add := func(t scorer.Target, texts ...string) {
		if out[t] == nil {
			out[t] = map[string]bool{}
		}
		for _, s := range texts {
			for _, tk := range scorer.Tokenize(s) {
				out[t][tk.Text] = true
			}
		}
	}
	for _, p := range d.Projects {
		add(scorer.Target{Type: "project", ID: p.ID}, p.Name, p.Identifier, p.Description)
	}
	for _, wp := range d.WorkPackages {
		t := scorer.Target{Type: "work_package", ID: wp.ID}
		add(t, wp.Subject, wp.Description, wp.Project.Title, name(wp.Author), "#"+strconv.FormatInt(wp.ID, 10), wp.DisplayID)
		if wp.Assignee != nil {
			add(t, name(*wp.Assignee))
		}
	}
	for _, a := range d.Activities {
		if a.IsComment() {
			add(scorer.Target{Type: "work_package", ID: a.WorkPackageID}, a.Comment, name(a.User))
		}
	}
	for _, w := range d.WikiPages {
		add(scorer.Target{Type: "wiki_page", ID: w.ID}, w.Title, w.Text, w.Project.Title, w.Slug)
	}
	for _, m := range d.Meetings {
		t := scorer.Target{Type: "meeting", ID: m.ID}
		add(t, m.Title, m.Location, m.Project.Title, name(m.Author))
		for _, p := range m.Participants {
			add(t, name(p))
		}
		for _, it := range m.AgendaItems {
			add(t, it.Title, it.Notes)
			for _, o := range it.Outcomes {
				add(t, o.Notes)
			}
		}
	}
	return out
}

// contentTokens are the normalised non-stopword tokens of a query.
func contentTokens(q string) []string {
	var out []string
	for _, tk := range scorer.Tokenize(q) {
		if !scorer.IsStopword(tk.Text) && !slices.Contains(out, tk.Text) {
			out = append(out, tk.Text)
		}
	}
	return out
}

// tokenSet is the set of normalised tokens of texts.
func tokenSet(texts ...string) map[string]bool {
	set := map[string]bool{}
	for _, s := range texts {
		for _, tk := range scorer.Tokenize(s) {
			set[tk.Text] = true
		}
	}
	return set
}

func holdsAll(words map[string]bool, ws []string) bool {
	for _, w := range ws {
		if !words[w] {
			return false
		}
	}
	return true
}

// TestGenerateQueriesLackingWords checks the kinds whose queries carry
// words the target lacks: every query has such a word, each of them comes
// from the kind's vocabulary and matches no word of the target even
// fuzzily, the target holds every other content word, and no other item
// holds all the target's words of the query, let alone all its words.
func TestGenerateQueriesLackingWords(t *testing.T) {
	var frames []string
	for _, f := range [][]string{framesWorkPackage, framesBug, framesFeature, framesTask, framesWiki, framesMeeting} {
		frames = append(frames, f...)
	}
	var synWords []string
	for _, g := range synonymGroups {
		synWords = append(synWords, g...)
	}
	tests := []struct {
		kind  string
		vocab map[string]bool // words a query may add
		types []string        // target types that must all occur
		names bool            // queries name a person of the target
	}{
		{KindQuestionFramed, tokenSet(frames...), []string{"work_package", "wiki_page", "meeting"}, false},
		{KindSynonym, tokenSet(synWords...), []string{"work_package", "wiki_page", "meeting"}, false},
		{KindFiller, tokenSet(fillerWords...), []string{"work_package", "wiki_page", "meeting"}, false},
		{KindNameTopic, tokenSet(append(slices.Clone(framesNameMeeting), framesNameWorkPackage...)...), []string{"work_package", "meeting"}, true},
	}
	data := []struct {
		gen opgen.GenOptions
		q   Options
	}{
		{opgen.GenOptions{Seed: 3, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 30}, Options{Seed: 7, PerKind: 10}},
		{opgen.GenOptions{Seed: 42, WorkPackages: 2000, Comments: 6000, WikiPages: 100, Meetings: 60}, Options{Seed: 42, PerKind: 30}},
	}
	for _, dc := range data {
		d := opgen.Generate(dc.gen)
		items := indexedWords(d)
		targets := slices.SortedFunc(maps.Keys(items), func(a, b scorer.Target) int {
			return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
		})
		people := map[scorer.Target]map[string]bool{}
		for _, wp := range d.WorkPackages {
			if wp.Assignee != nil {
				people[scorer.Target{Type: "work_package", ID: wp.ID}] = tokenSet(userName(d, wp.Assignee.ID))
			}
		}
		for _, m := range d.Meetings {
			set := map[string]bool{}
			for _, p := range m.Participants {
				maps.Copy(set, tokenSet(userName(d, p.ID)))
			}
			people[scorer.Target{Type: "meeting", ID: m.ID}] = set
		}
		byKind := map[string][]scorer.LabelledQuery{}
		for _, q := range Generate(d, dc.q) {
			byKind[q.Kind] = append(byKind[q.Kind], q)
		}
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/seed%d", tc.kind, dc.gen.Seed), func(t *testing.T) {
				qs := byKind[tc.kind]
				if len(qs) != dc.q.PerKind {
					t.Errorf("%d queries, want PerKind = %d", len(qs), dc.q.PerKind)
				}
				types := map[string]bool{}
				for _, q := range qs {
					if len(q.Expect) != 1 {
						t.Fatalf("%s: expect %v, want one target", q.ID, q.Expect)
					}
					target := q.Expect[0]
					types[target.Type] = true
					own, ok := items[target]
					if !ok {
						t.Fatalf("%s: target %v does not exist", q.ID, target)
					}
					var present, absent []string
					for _, w := range contentTokens(q.Query) {
						if own[w] {
							present = append(present, w)
						} else {
							absent = append(absent, w)
						}
					}
					if len(absent) == 0 {
						t.Errorf("%s %q: every word occurs in %v", q.ID, q.Query, target)
					}
					if len(present) == 0 {
						t.Errorf("%s %q: no word of %v", q.ID, q.Query, target)
					}
					for _, w := range absent {
						if !tc.vocab[w] {
							t.Errorf("%s %q: %q is neither in %v nor an added word of kind %s", q.ID, q.Query, w, target, tc.kind)
						}
						for f := range own {
							if scorer.ScoreToken(w, f) > 0 {
								t.Errorf("%s %q: added word %q matches %q of %v", q.ID, q.Query, w, f, target)
							}
						}
					}
					if tc.names && !slices.ContainsFunc(present, func(w string) bool { return people[target][w] }) {
						t.Errorf("%s %q: no name of a participant or assignee of %v", q.ID, q.Query, target)
					}
					all := append(slices.Clone(present), absent...)
					for _, other := range targets {
						if other == target {
							continue
						}
						if holdsAll(items[other], present) {
							t.Errorf("%s %q: %v also holds the target's words %v", q.ID, q.Query, other, present)
						}
						if holdsAll(items[other], all) {
							t.Errorf("%s %q: %v holds every word", q.ID, q.Query, other)
						}
					}
				}
				for _, ty := range tc.types {
					if !types[ty] {
						t.Errorf("no query targets a %s", ty)
					}
				}
			})
		}
	}
}

func userName(d *optest.Dataset, id int64) string {
	for _, u := range d.Users {
		if u.ID == id {
			return u.Name
		}
	}
	return ""
}

// TestGenerateQueriesNameTopicFolds checks that some name_topic queries
// write a name with diacritics folded away ("Müller" -> "muller") and some
// keep them.
func TestGenerateQueriesNameTopicFolds(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 42, WorkPackages: 2000, Comments: 6000, WikiPages: 100, Meetings: 60})
	var accented []string
	for _, u := range d.Users {
		for _, part := range strings.Fields(u.Name) {
			if f := scorer.Normalize(part); f != strings.ToLower(part) {
				accented = append(accented, part)
			}
		}
	}
	folded, kept := 0, 0
	for _, q := range Generate(d, Options{Seed: 42}) {
		if q.Kind != KindNameTopic {
			continue
		}
		words := strings.FieldsFunc(q.Query, func(r rune) bool { return r == ' ' || r == '?' || r == ',' })
		for _, part := range accented {
			if slices.Contains(words, scorer.Normalize(part)) {
				folded++
			}
			if slices.ContainsFunc(words, func(w string) bool { return strings.EqualFold(w, part) }) {
				kept++
			}
		}
	}
	if folded == 0 || kept == 0 {
		t.Errorf("name_topic: %d folded and %d accented names, want some of each", folded, kept)
	}
}

// TestGenerateQueriesDeterministic checks that the same seed gives the
// same queries byte for byte, and another seed other queries of the new
// kinds.
func TestGenerateQueriesDeterministic(t *testing.T) {
	d := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 30})
	encode := func(o Options) []byte {
		b, err := json.Marshal(Generate(d, o))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	o := Options{Seed: 11, PerKind: 12}
	if a, b := encode(o), encode(o); !bytes.Equal(a, b) {
		t.Fatal("the same seed gave different queries")
	}
	other := Generate(d, Options{Seed: 12, PerKind: 12})
	for _, kind := range []string{KindQuestionFramed, KindSynonym, KindFiller, KindNameTopic} {
		var a, b []string
		for _, q := range Generate(d, o) {
			if q.Kind == kind {
				a = append(a, q.Query)
			}
		}
		for _, q := range other {
			if q.Kind == kind {
				b = append(b, q.Query)
			}
		}
		if slices.Equal(a, b) {
			t.Errorf("kind %s: seeds 11 and 12 gave the same queries", kind)
		}
	}
}

// TestGenerateQueriesExistingKindsUnchanged pins the queries of the kinds
// that existed before question_framed, synonym, filler and name_topic
// (hashes taken before those kinds were added): they draw from their own
// random streams, so adding or changing them must not move a single query
// of the others. If the data generator itself changes, the data sets
// change and these hashes have to be taken again.
func TestGenerateQueriesExistingKindsUnchanged(t *testing.T) {
	old := []string{KindTypo, KindReordered, KindQuestion, KindTruncated, KindID, KindCommentFact,
		KindWikiPhrase, KindMeetingOutcome, KindMeetingParticipant, KindNegative}
	if got := Kinds()[:len(old)]; !slices.Equal(got, old) {
		t.Fatalf("Kinds starts with %v, want the existing kinds %v first", got, old)
	}
	tests := []struct {
		gen  opgen.GenOptions
		q    Options
		n    int
		hash string
	}{
		{opgen.GenOptions{Seed: 3, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 30}, Options{Seed: 7, PerKind: 10},
			100, "61c8d4dbfea882f64c65f06e1409af4c8d048c3b03a8fa616cc3ae16af7db05e"},
		// The golden evaluation's data set and queries (eval/eval_test.go).
		{opgen.GenOptions{Seed: 42, WorkPackages: 2000, Comments: 6000, WikiPages: 100, Meetings: 60}, Options{Seed: 42},
			300, "477afec23e4d2b28b14dd095f0ee1cc6dada70fad5bde4f852fd82576e14f632"},
	}
	for _, tc := range tests {
		h := sha256.New()
		n := 0
		for _, q := range Generate(opgen.Generate(tc.gen), tc.q) {
			if !slices.Contains(old, q.Kind) {
				continue
			}
			n++
			fmt.Fprintf(h, "%s\t%s\t%s\t%v\n", q.ID, q.Kind, q.Query, q.Expect)
		}
		if got := hex.EncodeToString(h.Sum(nil)); n != tc.n || got != tc.hash {
			t.Errorf("seed %d: %d queries of the existing kinds with hash %s, want %d with %s", tc.gen.Seed, n, got, tc.n, tc.hash)
		}
	}
}

package indexer

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// hit returns the hit for id in a search, or fails.
func hit(t *testing.T, b *Bleve, q, id string) Hit {
	t.Helper()
	res, err := b.Search(context.Background(), SearchOptions{Query: q, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.ID == id {
			return h
		}
	}
	t.Fatalf("%q: %s not among %d hits", q, id, len(res.Hits))
	return Hit{}
}

func TestCoverage(t *testing.T) {
	b := openFilled(t, corpus())
	tests := []struct {
		name, q, id string
		min, max    float64 // coverage bounds, inclusive
		matched     []string
	}{
		{"every word", "hiring freeze", "work_package:1250", 1, 1, []string{"hiring", "freeze"}},
		// Framing words the index does not hold still count as the
		// query's information: the item holds part of it.
		{"framing words absent", "anybody grumbling about the hiring freeze", "work_package:1250", 0.2, 0.8, []string{"hiring", "freeze"}},
		// A typo counts less than the word itself.
		{"typo", "budgt", "work_package:1237", 0.5, 0.9, []string{"budgt"}},
		{"completion of the last word", "certificat", "work_package:1234", 0.5, 1, []string{"certificat"}},
		// A comment-only fact and a name.
		{"comment and author", "zanzibar chen", "work_package:1235", 1, 1, []string{"zanzibar", "chen"}},
		{"identifier parts", "cert expired", "work_package:1235", 1, 1, []string{"cert", "expired"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hit(t, b, tc.q, tc.id)
			if h.Coverage < tc.min || h.Coverage > tc.max {
				t.Errorf("%q: coverage of %s = %.3f, want in [%.2f, %.2f]", tc.q, tc.id, h.Coverage, tc.min, tc.max)
			}
			if !slices.Equal(h.MatchedWords, tc.matched) {
				t.Errorf("%q: matched words %q, want %q", tc.q, h.MatchedWords, tc.matched)
			}
		})
	}
	// The rarer word carries more information: holding "zanzibar"
	// (one document) covers more of "zanzibar tables" than holding
	// "tables" (two documents).
	rare := hit(t, b, "zanzibar tables", "work_package:1235").Coverage
	common := hit(t, b, "zanzibar tables", "work_package:1240").Coverage
	if rare <= common {
		t.Errorf("zanzibar tables: rare-word holder %.3f should cover more than common-word holder %.3f", rare, common)
	}
}

func TestIDMentions(t *testing.T) {
	b := openFilled(t, corpus())
	for _, q := range []string{"#1234", "1234", "ticket 1234", "issue #1234", "Bug 1234", "what about wp 1234?", "work package #1234 please"} {
		t.Run(q, func(t *testing.T) {
			res, err := b.Search(context.Background(), SearchOptions{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].ID != "work_package:1234" {
				t.Fatalf("%q: want work_package:1234 first, got %v", q, res.Hits)
			}
			// The mention is the id: "ticket" is no missing word.
			if h := res.Hits[0]; h.Coverage < 0.5 {
				t.Errorf("%q: coverage %.3f, want the id to carry the query", q, h.Coverage)
			}
		})
	}
	// A number that is no id here stays a word of the text.
	if got := idMentions("customer case Ticket#20240249"); !slices.Equal(got, []string{"Ticket#20240249"}) {
		t.Errorf("idMentions: %q", got)
	}
	if got := idNumber("issue #77"); got != "#77" {
		t.Errorf("idNumber(issue #77) = %q", got)
	}
}

func TestShortStemNotAWord(t *testing.T) {
	docs := []Document{
		FromWikiPage(openproject.WikiPage{ID: 1, Title: "Importing .ics files", Text: "Calendars in ics format."}),
		FromWikiPage(openproject.WikiPage{ID: 2, Title: "Cake decoration", Text: "Icing on top."}),
	}
	b := openFilled(t, docs)
	// Porter stems "icing" to "ic", the stem of "ics": the word must not
	// find the calendar page through it.
	for _, id := range search(t, b, SearchOptions{Query: "icing"}) {
		if id == "wiki_page:1" {
			t.Errorf("icing matched the .ics page")
		}
	}
	if ids := search(t, b, SearchOptions{Query: "icing"}); !slices.Contains(ids, "wiki_page:2") {
		t.Errorf("icing: want wiki_page:2, got %v", ids)
	}
}

func TestSynonyms(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	docs := []Document{
		FromWorkPackage(openproject.WorkPackage{ID: 1, Subject: "Defect in the export", Type: openproject.Ref{Title: "Task"}}, nil),
		FromMeeting(openproject.Meeting{ID: 2, Title: "Weekly planning", AgendaItems: []openproject.AgendaItem{{ID: 1, Title: "Roadmap"}}}),
		FromWikiPage(openproject.WikiPage{ID: 3, Title: "Glossary", Text: "A quokka is our mascot."}),
	}
	dir := filepath.Join(t.TempDir(), "index")
	team := Thesaurus{{"quokka", "marsupial"}}
	b, err := Open(dir, Options{Thesaurus: append(BuiltinThesaurus(), team...)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Rebuild(context.Background(), func(add func(...Document) error) error { return add(docs...) }); err != nil {
		t.Fatal(err)
	}
	// Each query word occurs in no document as typed: only a synonym
	// finds it.
	tests := []struct{ q, want string }{
		{"bug", "work_package:1"},    // built-in: bug ~ defect
		{"ticket", "work_package:1"}, // built-in: ticket ~ defect
		{"session", "meeting:2"},     // built-in: session ~ meeting (the kind noun)
		{"marsupial", "wiki_page:3"}, // the team's own group
	}
	for _, tc := range tests {
		res, err := b.Search(context.Background(), SearchOptions{Query: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].ID != tc.want {
			t.Errorf("%q: want %s first, got %v", tc.q, tc.want, res.Hits)
			continue
		}
		// A synonym counts, at less than the word itself.
		if c := res.Hits[0].Coverage; c <= 0 || c >= 1 {
			t.Errorf("%q: coverage %.3f, want a partial credit for the synonym", tc.q, c)
		}
	}
	// Filter-only searches list documents, never thesaurus entries.
	res, err := b.Search(context.Background(), SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != uint64(len(docs)) {
		t.Errorf("filter-only search: total %d, want %d documents", res.Total, len(docs))
	}
	for _, h := range res.Hits {
		if strings.HasPrefix(h.ID, synonymDocPrefix) {
			t.Errorf("filter-only search returned thesaurus entry %s", h.ID)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Other synonyms: the index asks to be rebuilt.
	b, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if needs, why := b.NeedsRebuild(); !needs || why != "synonyms changed" {
		t.Errorf("reopened with the built-in thesaurus only: NeedsRebuild = %v %q, want true \"synonyms changed\"", needs, why)
	}
}

func TestParseThesaurus(t *testing.T) {
	tests := []struct {
		name, in string
		want     Thesaurus
		err      string
	}{
		{"groups and comments", "# c\n\nbug, Defect ,issue\nmeeting,session\n", Thesaurus{{"bug", "defect", "issue"}, {"meeting", "session"}}, ""},
		{"empty entries skipped", "a,,b,\n", Thesaurus{{"a", "b"}}, ""},
		{"one word", "lonely\n", nil, "line 1: a group needs at least two words"},
		{"phrase", "ok, fine\nwork package, wp\n", nil, `line 2: "work package" is not a single word`},
		{"long line", strings.Repeat("a,", 3000), nil, "read thesaurus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseThesaurus(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if !slices.Equal(got[i], tc.want[i]) {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
	if len(BuiltinThesaurus()) < 20 {
		t.Errorf("built-in thesaurus has %d groups", len(BuiltinThesaurus()))
	}
}

func FuzzParseThesaurus(f *testing.F) {
	f.Add("bug, defect\nmeeting,session,call\n")
	f.Add("# only a comment\n")
	f.Add("a b, c\n")
	f.Fuzz(func(t *testing.T, in string) {
		th, err := ParseThesaurus(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, g := range th {
			if len(g) < 2 {
				t.Fatalf("group %q has fewer than two words", g)
			}
			for _, w := range g {
				if w == "" || strings.ContainsAny(w, " \t,") {
					t.Fatalf("bad word %q in %q", w, g)
				}
			}
		}
	})
}

// TestTypoPrefersFrequentVariant: among typo variants equally close, the
// most frequent are kept. The fuzzy dictionary reports no counts, so an
// ordering by its count fell back to dictionary order and kept five rare
// decoys instead of the word meant.
func TestTypoPrefersFrequentVariant(t *testing.T) {
	var docs []Document
	for i, w := range []string{"budgac", "budgal", "budgan", "budgap", "budgas", "budgaz"} {
		docs = append(docs, FromWikiPage(openproject.WikiPage{ID: int64(i + 1), Title: "Decoy " + w}))
	}
	for i := range 3 {
		docs = append(docs, FromWorkPackage(openproject.WorkPackage{ID: int64(100 + i), Subject: "Quarterly budget review"}, nil))
	}
	b := openFilled(t, docs[:4])
	// The rest in a second segment, as a sync adds them.
	if err := b.Index(context.Background(), docs[4:]...); err != nil {
		t.Fatal(err)
	}
	ids := search(t, b, SearchOptions{Query: "budgat"})
	if len(ids) == 0 || !strings.HasPrefix(ids[0], "work_package:") {
		t.Errorf("budgat: want a budget work package first, got %v", ids)
	}
}

// TestNumbersNeverFuzzy: a number or a code with digits matches as
// written, never by edit distance.
func TestNumbersNeverFuzzy(t *testing.T) {
	docs := []Document{
		FromWorkPackage(openproject.WorkPackage{ID: 1, Subject: "Export fails", Description: "Same as REQ-24638 in the old tracker."}, nil),
		FromWorkPackage(openproject.WorkPackage{ID: 2, Subject: "Import fails", Description: "Reported as REQ-21638."}, nil),
		FromWorkPackage(openproject.WorkPackage{ID: 3, Subject: "Upgrade to v2.10.11"}, nil),
	}
	b := openFilled(t, docs)
	for _, tc := range []struct {
		q, number, want, not string
	}{
		{"REQ-21638", "21638", "work_package:2", "work_package:1"},
		{"21638", "21638", "work_package:2", "work_package:1"},
		{"24683", "24683", "", "work_package:1"}, // two digits swapped
		{"v2.10.12", "v2.10.12", "", "work_package:3"},
	} {
		res, err := b.Search(context.Background(), SearchOptions{Query: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want != "" && (len(res.Hits) == 0 || res.Hits[0].ID != tc.want) {
			t.Errorf("%q: want %s first, got %v", tc.q, tc.want, res.Hits)
		}
		// The other item may share "REQ", never the number.
		for _, h := range res.Hits {
			if h.ID == tc.not && slices.Contains(h.MatchedWords, tc.number) {
				t.Errorf("%q: %s matched %q by edit distance (coverage %.2f)", tc.q, h.ID, tc.number, h.Coverage)
			}
		}
	}
}

// TestFoldGreekCyrillic: the index folds with package fold, as the scorer
// does, so accents of every script are ignored in both modes (bleve's
// asciifolding left "Αθήνα" and "Йошкар" alone).
func TestFoldGreekCyrillic(t *testing.T) {
	docs := []Document{
		FromWikiPage(openproject.WikiPage{ID: 1, Title: "Αθήνα office", Text: "Opening hours."}),
		FromWikiPage(openproject.WikiPage{ID: 2, Title: "Йошкар-Ола branch", Text: "Contacts."}),
		FromWikiPage(openproject.WikiPage{ID: 3, Title: "Straße und Łódź", Text: "Notes."}),
	}
	b := openFilled(t, docs)
	for _, tc := range []struct{ q, want string }{
		{"αθηνα", "wiki_page:1"}, {"ΑΘΗΝΑ", "wiki_page:1"}, {"иошкар", "wiki_page:2"}, {"йошкар", "wiki_page:2"},
		{"strasse", "wiki_page:3"}, {"lodz", "wiki_page:3"},
	} {
		for _, mode := range []MatchMode{MatchFuzzy, MatchExact} {
			ids := search(t, b, SearchOptions{Query: tc.q, Mode: mode})
			if len(ids) == 0 || ids[0] != tc.want {
				t.Errorf("%q (%s): want %s first, got %v", tc.q, mode, tc.want, ids)
			}
		}
	}
}

// TestCompletionsOfTheSameWordLeftOut: the last word's completions that
// are only other forms of it ("meetings" for "meeting") are not searched
// beside its stem, which finds every document holding them already;
// completions that are other words ("meetingroom") still are, and a
// document holding only the plural is found.
func TestCompletionsOfTheSameWordLeftOut(t *testing.T) {
	docs := []Document{
		FromWikiPage(openproject.WikiPage{ID: 1, Title: "Notes", Text: "We held two review meetings last week.", Project: ref(1, "Platform")}),
		FromWikiPage(openproject.WikiPage{ID: 2, Title: "Rooms", Text: "The meetingroom on floor two has a projector.", Project: ref(1, "Platform")}),
		FromWikiPage(openproject.WikiPage{ID: 3, Title: "Agenda", Text: "The review meeting starts at ten.", Project: ref(1, "Platform")}),
	}
	b := openFilled(t, docs)
	res, err := b.Search(context.Background(), SearchOptions{Query: "review meeting", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Plan.Words[len(res.Plan.Words)-1]
	if _, ok := w.Forms["meetings"]; ok {
		t.Errorf("forms of %q hold the plural beside the stem: %v", w.Text, w.Forms)
	}
	if _, ok := w.Forms["meetingroom"]; !ok {
		t.Errorf("forms of %q lack the completion meetingroom: %v", w.Text, w.Forms)
	}
	var found bool
	for _, h := range res.Hits {
		found = found || h.ID == "wiki_page:1"
	}
	if !found {
		t.Errorf("the page holding only %q was not found: %v", "meetings", res.Hits)
	}
}

// TestQueryStopWordsAreTheScorers: a query loses the scorer's function
// words and only those. bleve's English list also dropped words that
// mean something in project text ("down", "off", "before", "other").
func TestQueryStopWordsAreTheScorers(t *testing.T) {
	b := openFilled(t, corpus())
	var kept []string
	for _, w := range b.queryWords("what did Ana say about the site down before the other sign off") {
		if len(w.stems) > 0 {
			kept = append(kept, w.exact)
		}
	}
	want := []string{"ana", "say", "site", "down", "before", "other", "sign", "off"}
	if !slices.Equal(kept, want) {
		t.Errorf("content words %q, want %q", kept, want)
	}
}

// TestPlanWordsInQueryOrder: the words are planned side by side (spread),
// but the plan keeps the query's order, and so do a hit's matched words,
// whichever word's look-ups (a typo's variants, the last word's
// completions) finished first.
func TestPlanWordsInQueryOrder(t *testing.T) {
	b := openFilled(t, corpus())
	q := "zanzibar budgt chen hiring freeze certificat"
	want := strings.Fields(q)
	for range 20 {
		res, err := b.Search(context.Background(), SearchOptions{Query: q, Size: 50})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range res.Plan.Words {
			got = append(got, w.Text)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("plan words %q, want %q", got, want)
		}
		i := slices.IndexFunc(res.Hits, func(h Hit) bool { return h.ID == "work_package:1235" })
		if i < 0 {
			t.Fatalf("work_package:1235 not found")
		}
		if m := res.Hits[i].MatchedWords; !slices.Equal(m, []string{"zanzibar", "chen"}) {
			t.Fatalf("work_package:1235 matched %q, want [zanzibar chen]", m)
		}
	}
}

// TestCoverManyHits measures the coverage of many hits at once, with a
// word far rarer than the hits (its reader passes several hits at a
// time), and checks it against each hit measured alone. It also checks
// that this costs no more allocations than a word every hit holds:
// scorch's reader, asked to advance to a document it has already passed,
// opens itself again, and cover once asked it to for every hit between
// two postings of the rare word.
func TestCoverManyHits(t *testing.T) {
	var docs []Document
	for i := range 60 {
		desc := "alpha beta gamma filler"
		if i%10 == 3 {
			desc += " omega"
		}
		docs = append(docs, FromWorkPackage(openproject.WorkPackage{ID: int64(100 + i), Subject: "Ticket " + strconv.Itoa(i), Description: desc}, nil))
	}
	b := openFilled(t, docs)
	ctx := context.Background()
	covered := func(q string) ([]Hit, *Plan) {
		t.Helper()
		res, err := b.Search(ctx, SearchOptions{Query: q, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != len(docs) || res.Plan == nil {
			t.Fatalf("%q: %d hits (plan %v), want %d with a plan", q, len(res.Hits), res.Plan != nil, len(docs))
		}
		return res.Hits, res.Plan
	}
	adv, err := b.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hits, plan := covered("alpha omega")
	var holders int
	for _, h := range hits {
		alone := []Hit{{ID: h.ID, Kind: h.Kind, EntityID: h.EntityID}}
		if err := plan.cover(ctx, r, alone); err != nil {
			t.Fatal(err)
		}
		if a := alone[0]; a.Coverage != h.Coverage || !slices.Equal(a.MatchedWords, h.MatchedWords) {
			t.Errorf("%s: coverage %.3f %q among all hits, %.3f %q alone", h.ID, h.Coverage, h.MatchedWords, a.Coverage, a.MatchedWords)
		}
		if slices.Contains(h.MatchedWords, "omega") {
			holders++
		}
	}
	if holders != 6 {
		t.Errorf("%d hits hold omega, want 6", holders)
	}

	allocs := func(hits []Hit, plan *Plan) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := plan.cover(ctx, r, slices.Clone(hits)); err != nil {
				t.Fatal(err)
			}
		})
	}
	rare := allocs(hits, plan)
	dense := allocs(covered("alpha beta"))
	t.Logf("cover of %d hits: %.0f allocations with a rare word, %.0f with words every hit holds", len(hits), rare, dense)
	if rare > dense+20 {
		t.Errorf("cover allocates %.0f times with a rare word, %.0f with words every hit holds: a reader is reopened per hit", rare, dense)
	}
}

// TestSnapshotNumbers checks what coverage relies on to take the hits'
// document numbers from the search: two readers of an unchanged index
// read one snapshot, a batch makes a new one, and no number leaves
// Search (it holds only in the snapshot the search read).
func TestSnapshotNumbers(t *testing.T) {
	ctx := context.Background()
	b := openFilled(t, corpus())
	r1, r2 := b.currentReader(), b.currentReader()
	if r1 == nil || r2 == nil {
		t.Fatal("no reader of the current snapshot")
	}
	defer r1.Close()
	defer r2.Close()
	if !sameSnapshot(r1, r2) {
		t.Error("two readers of an unchanged index read different snapshots")
	}
	if sameSnapshot(r1, nil) || sameSnapshot(nil, nil) {
		t.Error("a missing reader counts as the same snapshot")
	}
	if err := b.Index(ctx, FromWorkPackage(openproject.WorkPackage{ID: 9999, Subject: "hiring freeze follow-up"}, nil)); err != nil {
		t.Fatal(err)
	}
	r3 := b.currentReader()
	defer r3.Close()
	if sameSnapshot(r1, r3) {
		t.Error("a reader after a batch reads the snapshot from before it")
	}
	res, err := b.Search(ctx, SearchOptions{Query: "hiring freeze", Size: 10, Federate: []kind.Kind{kind.WikiPage}, FederateSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("hiring freeze: no hits")
	}
	for _, h := range append(res.Hits, res.Federated...) {
		if h.at != nil {
			t.Errorf("%s left Search with its document number", h.ID)
		}
		if h.Coverage == 0 {
			t.Errorf("%s: no coverage", h.ID)
		}
	}
}

package indexer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func ref(id int64, title string) openproject.Ref { return openproject.Ref{ID: id, Title: title} }

// corpus is a small hand-made set of entities, one fact per document where
// a test depends on it.
func corpus() []Document {
	web, plat := ref(1, "Website"), ref(2, "Platform")
	anna, ben := ref(7, "Anna Müller"), ref(8, "Ben Carter")
	bug, task, feature := ref(1, "Bug"), ref(2, "Task"), ref(3, "Feature")
	open, closed := ref(1, "New"), ref(2, "Closed")
	wp := func(id int64, subject, desc string, p, typ, st openproject.Ref, isClosed bool, assignee *openproject.Ref, updated string) openproject.WorkPackage {
		return openproject.WorkPackage{
			ID: id, Subject: subject, Description: desc, Project: p, Type: typ, Status: st,
			Closed: isClosed, Assignee: assignee, Author: ref(9, "Dana Ortiz"), UpdatedAt: day(updated),
		}
	}
	w1234 := wp(1234, "TLS certificate expired", "Root cause was an expired certificate on the edge proxy.", web, bug, open, false, &anna, "2025-03-01")
	w1234.DisplayID = "WEB-12"
	docs := []Document{
		FromWorkPackage(w1234, nil),
		FromWorkPackage(wp(1235, "Refactor account service", "The getUserProfile handler returns ERR_TLS_CERT_EXPIRED when the upstream cert is stale.", plat, task, closed, true, &ben, "2025-06-01"),
			[]openproject.Activity{
				{ID: 1, Kind: "comment", Comment: "Customer Zanzibar reported the outage first.", User: ref(10, "Chen Wu"), WorkPackageID: 1235},
			}),
		FromWorkPackage(wp(1236, "Authentication flow for partners", "Partners sign in via OAuth.", web, feature, open, false, nil, "2025-01-15"), nil),
		FromWorkPackage(wp(1237, "Budget planning", "Plan the spending for next year.", plat, task, open, false, nil, "2025-02-01"), nil),
		FromWorkPackage(wp(1240, "Database migration", "Move the tables to the new cluster.", plat, task, open, false, nil, "2025-02-02"), nil),
		FromWorkPackage(wp(1241, "Cleanup tasks", "After the migration we remove the old tables.", plat, task, open, false, nil, "2025-02-03"), nil),
		FromWorkPackage(wp(1250, "Staffing notes", "We agreed on a hiring freeze until the autumn.", web, task, open, false, nil, "2025-02-04"), nil),
		FromWorkPackage(wp(1251, "Deployment window", "The freeze on deployments ends when hiring starts.", web, task, open, false, nil, "2025-02-05"), nil),
		FromWikiPage(openproject.WikiPage{ID: 10, Title: "Deployment guide", Slug: "deployment-guide", Project: web,
			Text: "How to roll out a release to production.", UpdatedAt: day("2025-04-01")}),
		FromMeeting(openproject.Meeting{ID: 5, Title: "Weekly sync", Location: "Room Zürich", Project: web,
			Author: anna, Participants: []openproject.Ref{ben}, UpdatedAt: day("2025-05-01"),
			AgendaItems: []openproject.AgendaItem{{ID: 1, Title: "Hiring plan", Notes: "Discussed candidates.",
				Outcomes: []openproject.Outcome{{ID: 1, Notes: "Decided to open two positions."}}}}}),
		FromProject(openproject.Project{ID: 1, Identifier: "website-relaunch", Name: "Website", Description: "Public site relaunch.", UpdatedAt: day("2024-12-01")}),
		FromProject(openproject.Project{ID: 2, Identifier: "platform", Name: "Platform", Description: "Shared services.", UpdatedAt: day("2024-12-02")}),
	}
	return docs
}

// openFilled opens an index in a temp dir and fills it through Rebuild.
func openFilled(t testing.TB, docs []Document) *Bleve {
	t.Helper()
	b, err := Open(filepath.Join(t.TempDir(), "index"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.Rebuild(context.Background(), func(add func(...Document) error) error { return add(docs...) }); err != nil {
		t.Fatal(err)
	}
	return b
}

func search(t testing.TB, b *Bleve, o SearchOptions) []string {
	t.Helper()
	res, err := b.Search(context.Background(), o)
	if err != nil {
		t.Fatalf("search %+v: %v", o, err)
	}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestFuzzySearch(t *testing.T) {
	b := openFilled(t, corpus())
	tests := []struct {
		name, q string
		want    string // must be among the hits
		top     bool   // and first
	}{
		{"diacritics participant", "muller", "meeting:5", false},
		{"diacritics assignee", "MULLER", "work_package:1234", false},
		{"diacritics in query", "Zürich", "meeting:5", true},
		{"folding both ways", "zurich", "meeting:5", true},
		{"truncated last word", "certificat", "work_package:1234", true},
		{"two typos on long word", "authentification", "work_package:1236", true},
		{"one typo at 5", "budgt", "work_package:1237", true},
		{"transposition", "bugdet", "work_package:1237", true},
		{"camelCase whole", "getUserProfile", "work_package:1235", true},
		{"camelCase joined lower", "getuserprofile", "work_package:1235", true},
		{"camelCase run", "userprofile", "work_package:1235", true},
		{"camelCase part", "profile", "work_package:1235", true},
		{"snake whole", "ERR_TLS_CERT_EXPIRED", "work_package:1235", true},
		{"snake parts", "cert expired", "work_package:1235", false},
		{"hash id", "#1234", "work_package:1234", true},
		{"bare id", "1234", "work_package:1234", true},
		{"display id", "WEB-12", "work_package:1234", true},
		{"display id lower", "web-12", "work_package:1234", true},
		{"comment only", "zanzibar", "work_package:1235", true},
		{"comment author", "chen", "work_package:1235", true},
		{"stemming", "migrations", "work_package:1240", true},
		{"agenda outcome", "positions", "meeting:5", true},
		{"natural language", "what did we decide about hiring", "meeting:5", false},
		{"fuzzy phrase", "hiring frieze", "work_package:1250", false}, // phrase order: search.Engine
		{"project identifier", "website-relaunch", "project:1", true},
		{"wiki slug", "deployment-guide", "wiki_page:10", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := search(t, b, SearchOptions{Query: tc.q})
			if !slices.Contains(ids, tc.want) {
				t.Fatalf("%q: want %s in %v", tc.q, tc.want, ids)
			}
			if tc.top && ids[0] != tc.want {
				t.Fatalf("%q: want %s first, got %v", tc.q, tc.want, ids)
			}
		})
	}
}

func TestNoMatch(t *testing.T) {
	b := openFilled(t, corpus())
	// 3 characters: no typo allowed, so "tsl" is not "tls".
	if ids := search(t, b, SearchOptions{Query: "tsl"}); slices.Contains(ids, "work_package:1234") {
		t.Errorf("tsl matched the TLS document: %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "quantum chromodynamics"}); len(ids) != 0 {
		t.Errorf("quantum chromodynamics: want no hits, got %v", ids)
	}
	// A 4-character word never tolerates a typo, even as the only word.
	if ids := search(t, b, SearchOptions{Query: "tabls"}); !slices.Contains(ids, "work_package:1240") {
		t.Errorf("tabls (5 chars, 1 typo): want 1240, got %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "tbls"}); len(ids) != 0 {
		t.Errorf("tbls (4 chars): want no hits, got %v", ids)
	}
}

func TestRanking(t *testing.T) {
	b := openFilled(t, corpus())
	pos := func(ids []string, id string) int {
		if i := slices.Index(ids, id); i >= 0 {
			return i
		}
		return 1 << 30
	}
	// Title beats body for the same word.
	ids := search(t, b, SearchOptions{Query: "migration"})
	if pos(ids, "work_package:1240") > pos(ids, "work_package:1241") || len(ids) < 2 {
		t.Errorf("migration: title doc 1240 should rank above body doc 1241: %v", ids)
	}
	// Retrieval is disjunctive: a document holding some of the words is
	// found, below one holding all of them (the phrase bonus over bodies
	// is the search engine's, which sees the stored text).
	ids = search(t, b, SearchOptions{Query: "hiring freeze zanzibar"})
	if pos(ids, "work_package:1250") == 1<<30 || pos(ids, "work_package:1235") == 1<<30 {
		t.Errorf("hiring freeze zanzibar: want 1250 (hiring freeze) and 1235 (Zanzibar) both found: %v", ids)
	}
	ids = search(t, b, SearchOptions{Query: "hiring freeze"})
	if len(ids) < 2 {
		t.Errorf("hiring freeze: want both 1250 and 1251, got %v", ids)
	}
	// Deterministic order.
	for range 3 {
		if again := search(t, b, SearchOptions{Query: "hiring freeze"}); !slices.Equal(again, ids) {
			t.Fatalf("unstable order: %v vs %v", again, ids)
		}
	}
}

func TestExactMode(t *testing.T) {
	b := openFilled(t, corpus())
	// Long fields have no positions: the index returns every document
	// holding all the words as written, the phrase first (title phrase
	// boost aside, by term weight); search.Engine verifies the phrase.
	ids := search(t, b, SearchOptions{Query: "hiring freeze", Mode: MatchExact})
	if len(ids) == 0 || ids[0] != "work_package:1250" || !slices.Contains(ids, "work_package:1251") || len(ids) != 2 {
		t.Errorf("exact hiring freeze: got %v, want 1250 (phrase) and 1251 (both words)", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "hiring frieze", Mode: MatchExact}); len(ids) != 0 {
		t.Errorf("exact hiring frieze: want none, got %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "Hiring Frieze"}); !slices.Contains(ids, "work_package:1250") {
		t.Errorf("fuzzy hiring frieze: want 1250, got %v", ids)
	}
	// Case and accents do not matter; stems do.
	if ids := search(t, b, SearchOptions{Query: "ANNA MULLER", Mode: MatchExact}); !slices.Contains(ids, "meeting:5") {
		t.Errorf("exact anna muller: got %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "migrations", Mode: MatchExact}); len(ids) != 0 {
		t.Errorf("exact migrations: want none (no stemming), got %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "certificat", Mode: MatchExact}); len(ids) != 0 {
		t.Errorf("exact certificat: want none (no prefix), got %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "WEB-12", Mode: MatchExact}); !slices.Contains(ids, "work_package:1234") {
		t.Errorf("exact WEB-12: got %v", ids)
	}
}

func TestFilters(t *testing.T) {
	b := openFilled(t, corpus())
	yes, no := true, false
	tests := []struct {
		name string
		o    SearchOptions
		want []string // exact set, in order for empty queries (updated desc)
	}{
		{"kind", SearchOptions{Kinds: []kind.Kind{kind.Meeting, kind.WikiPage}}, []string{"meeting:5", "wiki_page:10"}},
		{"kind with query", SearchOptions{Query: "hiring", Kinds: []kind.Kind{kind.Meeting}}, []string{"meeting:5"}},
		{"project", SearchOptions{Query: "tables", ProjectIDs: []int64{2}}, []string{"work_package:1240", "work_package:1241"}},
		{"project excludes", SearchOptions{Query: "tables", ProjectIDs: []int64{1}}, nil},
		{"closed", SearchOptions{Kinds: []kind.Kind{kind.WorkPackage}, Closed: &yes}, []string{"work_package:1235"}},
		{"open", SearchOptions{Query: "cert", Kinds: []kind.Kind{kind.WorkPackage}, Closed: &no}, []string{"work_package:1234"}},
		{"type", SearchOptions{Types: []string{"BUG", "feature"}}, []string{"work_package:1234", "work_package:1236"}},
		{"assignee", SearchOptions{AssigneeIDs: []int64{8}}, []string{"work_package:1235"}},
		{"updated range", SearchOptions{Kinds: []kind.Kind{kind.WorkPackage}, UpdatedAfter: day("2025-02-04"), UpdatedBefore: day("2025-02-06")},
			[]string{"work_package:1251", "work_package:1250"}},
		{"updated after only", SearchOptions{UpdatedAfter: day("2025-04-01")}, []string{"work_package:1235", "meeting:5", "wiki_page:10"}},
		{"updated before only", SearchOptions{UpdatedBefore: day("2024-12-02")}, []string{"project:1"}},
		{"ids", SearchOptions{Query: "tables", IDs: []string{"work_package:1241", "meeting:5"}}, []string{"work_package:1241"}},
		{"ids none matching", SearchOptions{Query: "tables", IDs: []string{"meeting:5"}}, nil},
		{"ids with project", SearchOptions{Query: "tables", IDs: []string{"work_package:1240"}, ProjectIDs: []int64{1}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := search(t, b, tc.o)
			got, want := slices.Clone(ids), slices.Clone(tc.want)
			if tc.o.Query != "" {
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", ids, tc.want)
			}
		})
	}
}

// TestIDsKeepScores checks that restricting a query to documents by id
// (search.Engine asks whether placed containers match) scores them as the
// unrestricted query does: the ids drive the query at no weight.
func TestIDsKeepScores(t *testing.T) {
	b := openFilled(t, corpus())
	ctx := context.Background()
	all, err := b.Search(ctx, SearchOptions{Query: "tables"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Hits) < 2 {
		t.Fatalf("want at least 2 hits for tables, got %v", all.Hits)
	}
	for _, h := range all.Hits {
		for _, reuse := range []*Plan{nil, all.Plan} {
			one, err := b.Search(ctx, SearchOptions{Query: "tables", IDs: []string{h.ID}, Reuse: reuse})
			if err != nil {
				t.Fatal(err)
			}
			if len(one.Hits) != 1 || one.Hits[0].ID != h.ID || one.Hits[0].Score != h.Score {
				t.Errorf("restricted to %s (reusing the plan: %t): got %+v, want score %v", h.ID, reuse != nil, one.Hits, h.Score)
			}
		}
	}
}

// TestReusePlan checks that a search given an earlier search's plan
// (SearchOptions.Reuse) runs that plan's query as it was built, and that
// a plan of another query or view is not used. The plan of "deploy" holds the
// completions the index had then; a document indexed afterwards with a
// new completion matches a new plan, not the reused one.
func TestReusePlan(t *testing.T) {
	b := openFilled(t, corpus())
	ctx := context.Background()
	first, err := b.Search(ctx, SearchOptions{Query: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Plan == nil || len(first.Hits) == 0 {
		t.Fatalf("deploy: plan %v, hits %v", first.Plan, first.Hits)
	}
	late := FromWikiPage(openproject.WikiPage{ID: 99, Title: "Deployzone review", Project: ref(1, "Website"), UpdatedAt: day("2025-07-01")})
	if err := b.Index(ctx, late); err != nil {
		t.Fatal(err)
	}
	ids := []string{late.ID}
	tests := []struct {
		name  string
		opts  SearchOptions
		match bool
	}{
		{"planned anew", SearchOptions{Query: "deploy", IDs: ids}, true},
		{"reused", SearchOptions{Query: "deploy", IDs: ids, Reuse: first.Plan}, false},
		{"plan of another query", SearchOptions{Query: "deployz", IDs: ids, Reuse: first.Plan}, true},
		{"plan for another view", SearchOptions{Query: "deploy", IDs: ids, Reuse: first.Plan,
			Visible: &Visibility{Projects: []int64{1}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.Search(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Hits) == 1; got != tc.match {
				t.Fatalf("%s matches: %t, want %t (hits %+v)", late.ID, got, tc.match, res.Hits)
			}
			if tc.match && (res.Hits[0].Coverage != 0 || res.Hits[0].MatchedWords != nil) {
				t.Errorf("a search by ids measured coverage: %+v", res.Hits[0])
			}
		})
	}
}

func TestPagingAndFragments(t *testing.T) {
	b := openFilled(t, corpus())
	all := search(t, b, SearchOptions{Size: 100})
	if len(all) != len(corpus()) {
		t.Fatalf("match all: %d hits, want %d", len(all), len(corpus()))
	}
	page := search(t, b, SearchOptions{From: 2, Size: 3})
	if !slices.Equal(page, all[2:5]) {
		t.Errorf("page 2..5 = %v, want %v", page, all[2:5])
	}
	res, err := b.Search(context.Background(), SearchOptions{Query: "certificate"})
	if err != nil {
		t.Fatal(err)
	}
	h := res.Hits[0]
	if h.Kind != kind.WorkPackage || h.EntityID != 1234 || res.Total < 1 {
		t.Fatalf("hit %+v total %d", h, res.Total)
	}
	if fr := h.Fragments["title"]; highlight && (len(fr) == 0 || !strings.Contains(fr[0], "<mark>certificate</mark>")) {
		t.Errorf("title fragments: %v", h.Fragments)
	}
	// Offsets survive folding: the highlight covers the original word.
	res, err = b.Search(context.Background(), SearchOptions{Query: "zurich"})
	if err != nil {
		t.Fatal(err)
	}
	_ = res // location is not stored; nothing to highlight, but no error.
}

func TestIndexDeleteCount(t *testing.T) {
	ctx := context.Background()
	docs := corpus()
	b := openFilled(t, docs)
	n, err := b.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[kind.Kind]uint64{kind.WorkPackage: 8, kind.WikiPage: 1, kind.Meeting: 1, kind.Project: 2, kind.Attachment: 0}
	if fmt.Sprint(n) != fmt.Sprint(want) {
		t.Fatalf("count %v, want %v", n, want)
	}
	if err := b.Delete(ctx, "work_package:1234", "work_package:999999"); err != nil {
		t.Fatal(err)
	}
	if ids := search(t, b, SearchOptions{Query: "certificate"}); slices.Contains(ids, "work_package:1234") {
		t.Errorf("deleted doc still found: %v", ids)
	}
	// Replace: same id, new text.
	d := docs[1]
	d.Title = "Quasar rewrite"
	if err := b.Index(ctx, d); err != nil {
		t.Fatal(err)
	}
	if ids := search(t, b, SearchOptions{Query: "quasar"}); !slices.Equal(ids, []string{d.ID}) {
		t.Errorf("replaced doc: %v", ids)
	}
	if ids := search(t, b, SearchOptions{Query: "refactor"}); slices.Contains(ids, d.ID) {
		t.Errorf("old text still found: %v", ids)
	}
	n, _ = b.Count(ctx)
	if n[kind.WorkPackage] != 7 {
		t.Errorf("work packages after delete: %d", n[kind.WorkPackage])
	}
	// More than one batch.
	var many []Document
	for i := range 2500 {
		many = append(many, Document{ID: DocID(kind.WikiPage, int64(1000+i)), Kind: kind.WikiPage, EntityID: int64(1000 + i), Title: "page"})
	}
	if err := b.Index(ctx, many...); err != nil {
		t.Fatal(err)
	}
	if n, _ = b.Count(ctx); n[kind.WikiPage] != 2501 {
		t.Errorf("wiki pages after bulk: %d", n[kind.WikiPage])
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := b.Search(ctx, SearchOptions{Query: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("search after close: %v", err)
	}
}

func TestNeedsRebuild(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "index")
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if needs, why := b.NeedsRebuild(); !needs || !strings.HasPrefix(why, "missing") {
		t.Errorf("fresh: %v %q", needs, why)
	}
	if err := b.Rebuild(ctx, func(add func(...Document) error) error { return add(corpus()...) }); err != nil {
		t.Fatal(err)
	}
	if needs, why := b.NeedsRebuild(); needs {
		t.Errorf("after rebuild: %v %q", needs, why)
	}
	b.Close()

	b, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if needs, why := b.NeedsRebuild(); needs {
		t.Errorf("reopen: %v %q", needs, why)
	}
	if ids := search(t, b, SearchOptions{Query: "certificate"}); len(ids) == 0 {
		t.Error("reopened index lost its documents")
	}
	b.Close()

	if err := writeMeta(dir, meta{MappingVersion: MappingVersion - 1}); err != nil {
		t.Fatal(err)
	}
	b, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	needs, why := b.NeedsRebuild()
	if !needs || !strings.Contains(why, "mapping version") {
		t.Errorf("old version: %v %q", needs, why)
	}
	// The old index keeps serving until rebuilt.
	if ids := search(t, b, SearchOptions{Query: "certificate"}); len(ids) == 0 {
		t.Error("old-version index does not serve")
	}
}

func TestLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	b2, err := Open(dir, Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		if b2 != nil {
			b2.Close()
		}
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second open took %v", d)
	}
	// The first index is untouched.
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

func TestDamaged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	b := openFilledAt(t, dir, corpus())
	b.Close()
	var bolts []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "root.bolt" {
			bolts = append(bolts, p)
		}
		return nil
	})
	if len(bolts) != 1 {
		t.Fatalf("root.bolt files: %v", bolts)
	}
	if err := os.WriteFile(bolts[0], []byte(strings.Repeat("garbage!", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("open damaged: %v", err)
	}
	defer b.Close()
	if needs, why := b.NeedsRebuild(); !needs || !strings.HasPrefix(why, "damaged: ") {
		t.Errorf("damaged: %v %q", needs, why)
	}
	n, err := b.Count(context.Background())
	if err != nil || n[kind.WorkPackage] != 0 {
		t.Errorf("fresh index count %v %v", n, err)
	}
	if err := b.Rebuild(context.Background(), func(add func(...Document) error) error { return add(corpus()...) }); err != nil {
		t.Fatal(err)
	}
	if ids := search(t, b, SearchOptions{Query: "certificate"}); len(ids) == 0 {
		t.Error("rebuilt index is empty")
	}
	// Nothing left beside the index dir.
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("leftovers: %v", entries)
	}
}

func openFilledAt(t *testing.T, dir string, docs []Document) *Bleve {
	t.Helper()
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Rebuild(context.Background(), func(add func(...Document) error) error { return add(docs...) }); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRebuildWhileSearching(t *testing.T) {
	ctx := context.Background()
	b := openFilled(t, corpus())

	var stop atomic.Bool
	var searches, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				res, err := b.Search(ctx, SearchOptions{Query: "certificat"})
				searches.Add(1)
				if err != nil || len(res.Hits) == 0 {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("err=%v hits=%d", err, len(res.Hits)))
				}
			}
		})
	}
	// A write during the rebuild reaches the new index too.
	extra := Document{ID: DocID(kind.WikiPage, 77), Kind: kind.WikiPage, EntityID: 77, Title: "Zeppelin handbook"}
	err := b.Rebuild(ctx, func(add func(...Document) error) error {
		if err := add(corpus()...); err != nil {
			return err
		}
		if err := b.Index(ctx, extra); err != nil {
			return err
		}
		for i := range 5 {
			var docs []Document
			for j := range 600 {
				id := int64(10000 + i*600 + j)
				docs = append(docs, Document{ID: DocID(kind.WikiPage, id), Kind: kind.WikiPage, EntityID: id,
					Title: fmt.Sprintf("Generated page %d", id), Body: "filler text about releases and budgets"})
			}
			if err := add(docs...); err != nil {
				return err
			}
		}
		return nil
	})
	time.Sleep(20 * time.Millisecond) // a few searches on the new index
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if failures.Load() > 0 {
		t.Fatalf("%d of %d searches failed during rebuild, first: %v", failures.Load(), searches.Load(), firstErr.Load())
	}
	t.Logf("%d searches during rebuild", searches.Load())
	n, _ := b.Count(ctx)
	if n[kind.WikiPage] != 1+1+3000 {
		t.Errorf("wiki pages after rebuild: %d", n[kind.WikiPage])
	}
	if ids := search(t, b, SearchOptions{Query: "zeppelin"}); !slices.Equal(ids, []string{extra.ID}) {
		t.Errorf("write during rebuild lost: %v", ids)
	}
	entries, _ := os.ReadDir(filepath.Dir(b.Dir()))
	if len(entries) != 1 {
		t.Errorf("leftovers after rebuild: %v", entries)
	}
}

func TestRebuildFailureKeepsOld(t *testing.T) {
	b := openFilled(t, corpus())
	boom := errors.New("boom")
	err := b.Rebuild(context.Background(), func(add func(...Document) error) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("rebuild: %v", err)
	}
	if ids := search(t, b, SearchOptions{Query: "certificate"}); len(ids) == 0 {
		t.Error("old index lost after failed rebuild")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = b.Rebuild(ctx, func(add func(...Document) error) error { return add(corpus()...) })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled rebuild: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(b.Dir()))
	if len(entries) != 1 {
		t.Errorf("leftovers: %v", entries)
	}
}

// TestRecallCorpus ports the reference implementation's 5-document recall
// test (reference-openproject-mcp.md §5) as work packages: title → subject,
// body → description, people → author and assignee. bleve's own ranking
// must put the expected document in the top 3; the scorer re-ranks later.
func TestRecallCorpus(t *testing.T) {
	type rec struct {
		id          int64
		title, body string
		people      []string
	}
	recs := []rec{
		{1, "Approval of Q3 budget", "The finance team presented the quarterly figures and the board signed off.", []string{"Anna Müller", "Ben Carter"}},
		{2, "Weekly engineering sync", "After a long discussion about staffing we reached a decision on the hiring freeze.", []string{"Ben Carter"}},
		{3, "Design review", "Walked through the new onboarding flow mockups with the design team.", []string{"Chen Wu", "Dana Ortiz"}},
		{4, "Infrastructure retrospective", "Root cause was an expired TLS certificate on the edge proxy.", []string{"Dana Ortiz"}},
		{5, "Vendor negotiation", "Agreed new payment terms of net 45 with the hosting provider.", []string{"Anna Müller"}},
	}
	var docs []Document
	for _, r := range recs {
		wp := openproject.WorkPackage{ID: r.id, Subject: r.title, Description: r.body, Author: ref(100, r.people[0]), Project: ref(1, "P")}
		if len(r.people) > 1 {
			a := ref(101, r.people[1])
			wp.Assignee = &a
		}
		docs = append(docs, FromWorkPackage(wp, nil))
	}
	b := openFilled(t, docs)
	cases := []struct {
		q    string
		want int64
	}{
		{"budget aproval", 1}, {"approval of the budget", 1}, {"Q3 budget", 1},
		{"what did we decide about hiring", 2}, {"hiring freeze", 2}, {"staffing discussion", 2},
		{"onboarding mockups", 3}, {"design team", 3}, {"tls certificate expired", 4},
		{"certificat", 4}, {"muller", 1}, {"payment terms", 5},
	}
	top1 := 0
	for _, c := range cases {
		ids := search(t, b, SearchOptions{Query: c.q})
		want := DocID(kind.WorkPackage, c.want)
		i := slices.Index(ids, want)
		switch {
		case i < 0 || i > 2:
			t.Errorf("%q: want %s in top 3, got %v", c.q, want, ids)
		case i == 0:
			top1++
		default:
			t.Logf("%q: %s at rank %d: %v", c.q, want, i+1, ids)
		}
	}
	t.Logf("recall corpus: %d of %d top-1", top1, len(cases))
	if ids := search(t, b, SearchOptions{Query: "quantum chromodynamics"}); len(ids) != 0 {
		t.Errorf("negative: got %v", ids)
	}
	// The reference wants exactly [1 5] by an id tie-break; bleve's
	// length norm prefers 5 (one name only), so only the set is bleve's
	// contract and the scorer owns the order. Stability is checked.
	ids := search(t, b, SearchOptions{Query: "muller"})
	if got := slices.Sorted(slices.Values(ids)); !slices.Equal(got, []string{"work_package:1", "work_package:5"}) {
		t.Errorf("muller: %v, want {1, 5}", ids)
	}
	if again := search(t, b, SearchOptions{Query: "muller"}); !slices.Equal(again, ids) {
		t.Errorf("muller unstable: %v then %v", ids, again)
	}
	if ids := search(t, b, SearchOptions{Query: "hiring freeze", Mode: MatchExact}); len(ids) == 0 || ids[0] != "work_package:2" {
		t.Errorf("exact hiring freeze: %v", ids)
	}
}

func TestAnalysis(t *testing.T) {
	b := openFilled(t, nil)
	terms := func(analyzer, s string) []string {
		var out []string
		for _, tok := range b.analyze(analyzer, s) {
			out = append(out, fmt.Sprintf("%s@%d", tok.Term, tok.Position))
		}
		return out
	}
	tests := []struct {
		analyzer, in string
		want         []string
	}{
		{analyzerExact, "call getUserProfile now", []string{"call@1", "getuserprofile@2", "get@2", "user@3", "profile@4", "getuser@2", "userprofile@3", "now@5"}},
		{analyzerExact, "Müller Straße", []string{"muller@1", "strasse@2"}},
		{analyzerExact, "HTTPServer v2", []string{"httpserver@1", "http@1", "server@2", "v2@3"}},
		{analyzerExact, "ERR_TLS", []string{"err_tls@1", "err@1", "tls@2", "errtls@1"}},
		{analyzerIdent, "PROJ-12", []string{"proj-12@1", "proj@1", "12@2"}},
		{analyzerIdent, "#1234", []string{"#1234@1", "1234@1"}},
		{analyzerQuery, "The migrations", []string{"migrat@2"}},
		{analyzerText, "The migrations", []string{"the@1", "migrations@2", "migrat@2"}},
	}
	for _, tc := range tests {
		if got := terms(tc.analyzer, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s(%q) = %v, want %v", tc.analyzer, tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n, want int
	}{{3, 0}, {4, 0}, {5, 1}, {8, 1}, {9, 2}, {16, 2}} {
		if got := typos(tc.n); got != tc.want {
			t.Errorf("typos(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

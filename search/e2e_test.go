package search_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/internal/optesting/synced"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
	"github.com/opsearch/opsearch/store"
	"github.com/opsearch/opsearch/sync"
)

// These tests run the whole path: fake OpenProject over HTTP → client →
// sync → bbolt store and bleve index → search engine.

type env struct {
	srv    *optest.Server
	engine *search.Engine
	st     *store.Store
	idx    search.Index
	worker *sync.Worker
}

func newEnv(t *testing.T, d *optest.Dataset, key string) *env {
	t.Helper()
	s := synced.Start(t, d, key)
	return &env{srv: s.Server, st: s.Store, idx: s.Index, worker: s.Worker, engine: search.New(s.Store, s.Index, search.Options{BaseURL: s.URL})}
}

func (e *env) search(t *testing.T, q search.Query) search.Response {
	t.Helper()
	resp, err := e.engine.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return resp
}

// referenceCorpus loads the reference server's recall corpus (5 records:
// title, body, people) into the fake as meetings: title as the meeting
// title, body as the notes of its one agenda item, people as participants.
func referenceCorpus() *optest.Dataset {
	d := opgen.Generate(opgen.GenOptions{Seed: 5, WorkPackages: 20, Comments: 20, WikiPages: 3, Meetings: -1})
	people := map[string]int64{"Anna Müller": 901, "Ben Carter": 902, "Chen Wu": 903, "Dana Ortiz": 904}
	for name, id := range people {
		d.Users = append(d.Users, optest.User{User: openproject.User{ID: id, Name: name, Login: "u" + name[:3], Status: "active"}, APIKey: "key-" + name})
	}
	var public int64
	for _, p := range d.Projects {
		if p.Public {
			public = p.ID
			break
		}
	}
	corpus := []struct {
		title, body string
		people      []string
	}{
		{"Approval of Q3 budget", "The finance team presented the quarterly figures and the board signed off.", []string{"Anna Müller", "Ben Carter"}},
		{"Weekly engineering sync", "After a long discussion about staffing we reached a decision on the hiring freeze.", []string{"Ben Carter"}},
		{"Design review", "Walked through the new onboarding flow mockups with the design team.", []string{"Chen Wu", "Dana Ortiz"}},
		{"Infrastructure retrospective", "Root cause was an expired TLS certificate on the edge proxy.", []string{"Dana Ortiz"}},
		{"Vendor negotiation", "Agreed new payment terms of net 45 with the hosting provider.", []string{"Anna Müller"}},
	}
	when := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	d.Meetings = nil
	for i, doc := range corpus {
		id := int64(i + 1)
		m := openproject.Meeting{
			ID: id, Title: doc.title, LockVersion: 1, StartTime: when, EndTime: when.Add(time.Hour), Duration: 1,
			Project: openproject.Ref{ID: public}, Author: openproject.Ref{ID: 1},
			CreatedAt: when, UpdatedAt: when, // equal times: ties fall back to ids, as in the reference
			AgendaItems: []openproject.AgendaItem{{ID: 100 + id, MeetingID: id, Title: "Notes", Notes: doc.body, Position: 1, ItemType: "simple", CreatedAt: when, UpdatedAt: when}},
		}
		for _, p := range doc.people {
			m.Participants = append(m.Participants, openproject.Ref{ID: people[p], Title: p})
		}
		d.Meetings = append(d.Meetings, m)
	}
	return d
}

func TestE2E_ReferenceRecall(t *testing.T) {
	e := newEnv(t, referenceCorpus(), optest.AdminKey)
	meetings := []kind.Kind{kind.Meeting}
	cases := []struct {
		query string
		want  int64
	}{
		{"budget aproval", 1},
		{"approval of the budget", 1},
		{"Q3 budget", 1},
		{"what did we decide about hiring", 2},
		{"hiring freeze", 2},
		{"staffing discussion", 2},
		{"onboarding mockups", 3},
		{"design team", 3},
		{"tls certificate expired", 4},
		{"certificat", 4},
		{"muller", 1},
		{"payment terms", 5},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			resp := e.search(t, search.Query{Text: tc.query, Kinds: meetings})
			if len(resp.Results) == 0 || resp.Results[0].ID != tc.want {
				t.Fatalf("top = %v, want meeting %d", ids(resp), tc.want)
			}
			if r := resp.Results[0]; r.Score <= 0 || r.Score > 1 || len(r.MatchedFields) == 0 || r.Snippet == "" {
				t.Errorf("top result lacks score/matchedFields/snippet: %+v", r)
			}
		})
	}
	t.Run("negative", func(t *testing.T) {
		resp := e.search(t, search.Query{Text: "quantum chromodynamics", Kinds: meetings})
		if len(resp.Results) != 0 {
			t.Errorf("got %v, want no results rather than noise", ids(resp))
		}
		if !resp.Index.Complete {
			t.Errorf("index not complete after a full sync: %+v", resp.Index)
		}
	})
	t.Run("stability", func(t *testing.T) {
		a := ids(e.search(t, search.Query{Text: "muller", Kinds: meetings}))
		b := ids(e.search(t, search.Query{Text: "muller", Kinds: meetings}))
		if !slices.Equal(a, b) || !slices.Equal(a, []int64{1, 5}) {
			t.Errorf("muller twice: %v and %v, want [1 5] both times", a, b)
		}
	})
	t.Run("exact", func(t *testing.T) {
		resp := e.search(t, search.Query{Text: "hiring freeze", Kinds: meetings, Exact: true})
		if len(resp.Results) == 0 || resp.Results[0].ID != 2 {
			t.Errorf("exact: %v, want 2 first", ids(resp))
		}
		if resp := e.search(t, search.Query{Text: "hiring frieze", Kinds: meetings, Exact: true}); len(resp.Results) != 0 {
			t.Errorf("exact with a typo found %v", ids(resp))
		}
		// Both words occur in meeting 2's notes, but not as this phrase.
		if resp := e.search(t, search.Query{Text: "freeze hiring", Kinds: meetings, Exact: true}); len(resp.Results) != 0 {
			t.Errorf("exact with the words reordered found %v", ids(resp))
		}
	})
	t.Run("matched agenda item", func(t *testing.T) {
		resp := e.search(t, search.Query{Text: "expired certificate", Kinds: meetings})
		if len(resp.Results) == 0 || len(resp.Results[0].MatchedAgendaItems) != 1 || resp.Results[0].MatchedAgendaItems[0].ID != 104 {
			t.Errorf("results %+v", resp.Results)
		}
	})
}

// TestE2E_DeepComment finds a work package by a fact that appears only in
// one of its comments, on a work package far outside the 25 most recently
// updated ones the reference server would enrich.
func TestE2E_DeepComment(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 9, WorkPackages: 400, Comments: 800})
	byRecency := slices.Clone(d.WorkPackages)
	slices.SortFunc(byRecency, func(a, b openproject.WorkPackage) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	old := byRecency[300] // rank 301 by recency
	var maxAct int64
	for _, a := range d.Activities {
		maxAct = max(maxAct, a.ID)
	}
	d.Activities = append(d.Activities, openproject.Activity{
		ID: maxAct + 1, Kind: "Activity::Comment", Version: 99, WorkPackageID: old.ID,
		Comment:   "Root cause found: the quuxbalancer drops keep-alive connections after 90 seconds.",
		User:      openproject.Ref{ID: 2, Title: "Alice Andersson"},
		CreatedAt: old.CreatedAt.Add(time.Minute), UpdatedAt: old.CreatedAt.Add(time.Minute),
	})
	e := newEnv(t, d, optest.AdminKey)
	resp := e.search(t, search.Query{Text: "quuxbalancer keep-alive"})
	if len(resp.Results) == 0 || resp.Results[0].ID != old.ID || resp.Results[0].Kind != kind.WorkPackage {
		t.Fatalf("results %v, want work package %d first", ids(resp), old.ID)
	}
	r := resp.Results[0]
	if r.MatchedComment == nil || r.MatchedComment.Author != "Alice Andersson" || !slices.Contains(r.MatchedFields, "comments") {
		t.Errorf("matched comment = %+v, fields %v", r.MatchedComment, r.MatchedFields)
	}
	// A typo and a truncated last word still find it.
	if resp := e.search(t, search.Query{Text: "quuxbalanser keep-aliv"}); len(resp.Results) == 0 || resp.Results[0].ID != old.ID {
		t.Errorf("typo query: %v", ids(resp))
	}
}

func TestE2E_Isolation(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 3, WorkPackages: 150, Comments: 200})
	alice := newEnv(t, d, optest.AliceKey)
	bob := newEnv(t, d, optest.BobKey)
	// The generator writes bob's private project's codename into each of
	// its work packages, and alice's likewise.
	for _, tc := range []struct {
		e    *env
		word string
	}{{alice, "Kestrel"}, {bob, "Nightingale"}} {
		resp := tc.e.search(t, search.Query{Text: tc.word})
		for _, r := range resp.Results {
			if r.Project != nil && (r.Project.Name == "Bob Private Budget" || r.Project.Name == "Alice Private Research") {
				t.Errorf("searching %q leaked %s %d of project %q", tc.word, r.Kind, r.ID, r.Project.Name)
			}
		}
	}
	own := bob.search(t, search.Query{Text: "Kestrel"})
	if len(own.Results) == 0 {
		t.Error("bob does not find his own private project's codename")
	}
}

func TestE2E_FreshnessAndValidation(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 4, WorkPackages: 60, Comments: 60})
	e := newEnv(t, d, optest.AdminKey)
	resp := e.search(t, search.Query{Text: "zzzznotaword"})
	if len(resp.Results) != 0 || !resp.Index.Complete || resp.Index.Kinds[kind.WorkPackage].LastSync == nil {
		t.Errorf("freshness = %+v", resp.Index)
	}
	if n := resp.Index.Kinds[kind.WorkPackage].Store; n != 60 {
		t.Errorf("store count = %d", n)
	}
	for _, q := range []search.Query{
		{Text: "x", PageSize: 500},
		{Text: "x", Page: -1},
		{Text: "x", Kinds: []kind.Kind{"issue"}},
		{Text: "x", UpdatedAfter: time.Now(), UpdatedBefore: time.Now().Add(-time.Hour)},
	} {
		if _, err := e.engine.Search(context.Background(), q); err == nil {
			t.Errorf("query %+v accepted", q)
		}
	}
}

func ids(r search.Response) []int64 {
	out := make([]int64, len(r.Results))
	for i, x := range r.Results {
		out[i] = x.ID
	}
	return out
}

package search_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/indexer"
	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
	"github.com/opsearch/opsearch/search"
)

// TestE2E_SmallKindsNotDrowned: 120 work packages hold "nightjar
// rollout" in their subjects, and one meeting holds it once in a long
// agenda note. By index score alone the meeting comes after all of them,
// far behind the re-ranked head; the small kinds' own best join the
// candidates, so the meeting is re-ranked with the head. Paging still
// walks every result once, and the total stays the index's count.
func TestE2E_SmallKindsNotDrowned(t *testing.T) {
	if testing.Short() {
		t.Skip(skipShort)
	}
	d := opgen.Generate(opgen.GenOptions{Seed: 12, WorkPackages: 160, WikiPages: 5, Meetings: -1})
	var public int64
	for _, p := range d.Projects {
		if p.Public {
			public = p.ID
			break
		}
	}
	for i := range d.WorkPackages[:120] {
		d.WorkPackages[i].Project.ID = public
		d.WorkPackages[i].Subject = fmt.Sprintf("Nightjar rollout step %d", i)
		d.WorkPackages[i].Version = nil // the versions belong to the old projects
	}
	// What hangs on the moved work packages' old projects goes with it.
	d.TimeEntries, d.Relations = nil, nil
	when := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	notes := "We went through the budget, the hiring plan, the office move, the vendor contracts and the quarterly targets. " +
		"Someone asked whether the nightjar rollout could wait until the next quarter; it cannot. " +
		"The rest of the hour went to the roadmap, the support backlog and the holiday schedule."
	d.Meetings = []openproject.Meeting{{
		ID: 1, Title: "Quarterly planning", LockVersion: 1, StartTime: when, EndTime: when.Add(time.Hour), Duration: 1,
		Project: openproject.Ref{ID: public}, Author: openproject.Ref{ID: 1}, CreatedAt: when, UpdatedAt: when,
		AgendaItems: []openproject.AgendaItem{{ID: 101, MeetingID: 1, Title: "Notes", Notes: notes, Position: 1, ItemType: "simple", CreatedAt: when, UpdatedAt: when}},
	}}
	e := newEnv(t, d, optest.AdminKey)

	// Where the meeting stands by the index's score alone: behind every
	// work package with the words in its subject.
	res, err := e.idx.Search(t.Context(), indexer.SearchOptions{Query: "nightjar rollout", Size: 1000})
	if err != nil {
		t.Fatal(err)
	}
	at := slices.IndexFunc(res.Hits, func(h indexer.Hit) bool { return h.ID == "meeting:1" })
	if at < 100 {
		t.Fatalf("the meeting is at %d by index score; the test needs it behind the re-ranked head", at)
	}

	got := walk(t, e.engine, "nightjar rollout", 20)
	at = slices.Index(got, "meeting:1")
	if at < 0 || at >= 35 {
		t.Errorf("the meeting is at %d of %d results, want it among the re-ranked candidates (the first 35)", at, len(got))
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("%s appears twice while paging", id)
		}
		seen[id] = true
	}
	if uint64(len(got)) != res.Total {
		t.Errorf("paging walked %d results, the index holds %d matches", len(got), res.Total)
	}
	resp := e.search(t, search.Query{Text: "nightjar rollout", PageSize: 20})
	if resp.Total != len(got) {
		t.Errorf("total %d, walked %d", resp.Total, len(got))
	}

	// Without the small kinds' own candidates the meeting is drowned
	// (opsearch eval's without-small-kinds variant measures that).
	without := search.New(e.st, e.idx, search.Options{Without: indexer.FeatureSmallKinds})
	got = walk(t, without, "nightjar rollout", 20)
	if at := slices.Index(got, "meeting:1"); at >= 0 && at < 35 {
		t.Errorf("without the small kinds' candidates the meeting is at %d, want it behind the re-ranked head", at)
	}

	// Asking for meetings alone is the meetings' own query.
	m := e.search(t, search.Query{Text: "nightjar rollout", Kinds: []kind.Kind{kind.Meeting}})
	if len(m.Results) != 1 || m.Results[0].ID != 1 {
		t.Errorf("meetings only: %v", ids(m))
	}
}

// walk pages through q's results and returns "kind:id" in order.
func walk(t *testing.T, eng *search.Engine, q string, size int) []string {
	t.Helper()
	var out []string
	for page := 1; page < 100; page++ {
		resp, err := eng.Search(t.Context(), search.Query{Text: q, Page: page, PageSize: size})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Results {
			out = append(out, fmt.Sprintf("%s:%d", r.Kind, r.ID))
		}
		if page*size >= resp.Total {
			return out
		}
	}
	t.Fatalf("%q: more than 100 pages", q)
	return nil
}

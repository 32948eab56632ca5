package indexer

import (
	"fmt"
	"testing"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
)

// TestFederatedAndFewKinds: a query restricted to kinds holding few of
// the documents is answered from their documents (fewDocs), with the
// scores the unrestricted query gives them; Federated holds the best of
// those kinds beside the main hits, by the same scores.
func TestFederatedAndFewKinds(t *testing.T) {
	var docs []Document
	for i := range 60 {
		docs = append(docs, FromWorkPackage(openproject.WorkPackage{
			ID: int64(100 + i), Subject: fmt.Sprintf("Hiring plan step %d", i), Description: "Candidates and interviews.",
			Project: ref(1, "Website"), Type: ref(2, "Task"), Status: ref(1, "New"), UpdatedAt: day("2025-02-01"),
		}, nil))
	}
	for i := range 4 {
		docs = append(docs, FromMeeting(openproject.Meeting{ID: int64(1 + i), Title: fmt.Sprintf("Weekly sync %d", i), Project: ref(1, "Website"),
			UpdatedAt: day("2025-05-01"), AgendaItems: []openproject.AgendaItem{{ID: int64(10 + i), Title: "Budget", Notes: "The hiring plan, briefly."}}}))
	}
	b := openFilled(t, docs)
	if !fewDocs(b.idx, []kind.Kind{kind.Meeting}) || fewDocs(b.idx, []kind.Kind{kind.WorkPackage}) {
		t.Fatal("fewDocs: 4 meetings of 64 documents are few, 60 work packages are not")
	}
	ctx := t.Context()
	all, err := b.Search(ctx, SearchOptions{Query: "hiring plan", Size: 100, Federate: []kind.Kind{kind.Meeting}, FederateSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	score := map[string]float64{}
	for _, h := range all.Hits {
		score[h.ID] = h.Score
	}
	meetings, err := b.Search(ctx, SearchOptions{Query: "hiring plan", Size: 100, Kinds: []kind.Kind{kind.Meeting}})
	if err != nil {
		t.Fatal(err)
	}
	if len(meetings.Hits) != 4 {
		t.Fatalf("meetings only: %d hits, want 4", len(meetings.Hits))
	}
	for _, h := range meetings.Hits {
		if h.Kind != kind.Meeting || h.Score != score[h.ID] {
			t.Errorf("%s: score %v restricted, %v unrestricted", h.ID, h.Score, score[h.ID])
		}
	}
	if len(all.Federated) != 3 {
		t.Fatalf("federated: %d hits, want 3", len(all.Federated))
	}
	restricted := map[string]float64{}
	for _, h := range meetings.Hits {
		restricted[h.ID] = h.Score
	}
	for i, h := range all.Federated {
		if s, ok := restricted[h.ID]; !ok || s != h.Score || h.Coverage == 0 {
			t.Errorf("federated %d: %+v, want a meeting with its restricted score %v and its coverage", i, h, s)
		}
		if i > 0 && all.Federated[i-1].ID > h.ID && all.Federated[i-1].Score == h.Score {
			t.Errorf("federated ties not by id: %s before %s", all.Federated[i-1].ID, h.ID)
		}
	}
}

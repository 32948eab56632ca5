package optest

import (
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/scorer"
)

func TestGenerateQueries(t *testing.T) {
	d := Generate(GenOptions{Seed: 3, WorkPackages: 400, Comments: 1200, WikiPages: 30, Meetings: 30})
	o := QueryOptions{Seed: 7, PerKind: 10}
	qs := GenerateQueries(d, o)
	if again := GenerateQueries(d, o); !reflect.DeepEqual(qs, again) {
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
		if (q.Kind == QueryNegative) != q.Negative() {
			t.Errorf("%s: kind %s with expect %v", q.ID, q.Kind, q.Expect)
		}
		if testing.Verbose() {
			t.Logf("%-24s %-50q %v", q.ID, q.Query, q.Expect)
		}
	}
	for _, k := range QueryKinds() {
		if perKind[k] < 5 {
			t.Errorf("kind %s: %d queries, want at least 5", k, perKind[k])
		}
	}
}

// TestGenerateQueriesVisibility checks that queries for alice only name
// items she can see.
func TestGenerateQueriesVisibility(t *testing.T) {
	d := Generate(GenOptions{Seed: 3, WorkPackages: 300, WikiPages: 20, Meetings: 20})
	c := newQueryCorpus(d, aliceID)
	for _, q := range GenerateQueries(d, QueryOptions{Seed: 1, PerKind: 10, UserID: aliceID}) {
		for _, e := range q.Expect {
			if _, ok := c.byTarget[e]; !ok {
				t.Errorf("%s expects %v, which alice cannot see", q.ID, e)
			}
		}
	}
	if _, ok := newQueryCorpus(d, adminID).byTarget[scorer.Target{Type: "project", ID: 3}]; !ok {
		t.Error("admin does not see bob's private project")
	}
	if _, ok := c.byTarget[scorer.Target{Type: "project", ID: 3}]; ok {
		t.Error("alice sees bob's private project")
	}
}

package openproject_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

func TestClient_Relations(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AdminKey)
	if len(f.data.Relations) == 0 {
		t.Fatal("no relations in the data set")
	}
	rel := f.data.Relations[0]
	var want []int64
	for _, r := range f.data.Relations {
		if r.From.ID == rel.To.ID || r.To.ID == rel.To.ID {
			want = append(want, r.ID)
		}
	}
	p, err := c.Relations(ctx, rel.To.ID, openproject.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range p.Items {
		got = append(got, r.ID)
		if _, _, ok := r.Side(rel.To.ID); !ok {
			t.Errorf("relation %+v does not involve %d", r, rel.To.ID)
		}
	}
	if !slices.Equal(got, want) || p.Total != len(want) {
		t.Errorf("relations of %d = %v (total %d), want %v", rel.To.ID, got, p.Total, want)
	}
	r := p.Items[slices.Index(got, rel.ID)]
	if r.Type != rel.Type || r.ReverseType != openproject.ReverseRelationType(rel.Type) || r.From.ID != rel.From.ID || r.To.Title == "" {
		t.Errorf("decoded %+v from %+v", r, rel)
	}
	if typ, other, _ := r.Side(rel.To.ID); typ != openproject.ReverseRelationType(rel.Type) || other.ID != rel.From.ID {
		t.Errorf("seen from %d: %s %+v", rel.To.ID, typ, other)
	}
	// Further filters are ANDed with the involved one.
	p, err = c.Relations(ctx, rel.To.ID, openproject.ListOptions{Filters: openproject.Filters{{Name: "id", Operator: "=", Values: []string{"999999"}}}})
	if err != nil || len(p.Items) != 0 {
		t.Errorf("filtered: %+v, %v", p, err)
	}
	if _, err := c.Relations(ctx, 0, openproject.ListOptions{}); err == nil {
		t.Error("work package 0 accepted")
	}
}

func TestClient_CreateRelation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AdminKey)
	// Two work packages of one project without a relation or hierarchy
	// between them.
	related := map[[2]int64]bool{}
	for _, r := range f.data.Relations {
		related[[2]int64{r.From.ID, r.To.ID}], related[[2]int64{r.To.ID, r.From.ID}] = true, true
	}
	var a, b int64
	for i, x := range f.data.WorkPackages {
		for _, y := range f.data.WorkPackages[i+1:] {
			if x.Project.ID == y.Project.ID && !related[[2]int64{x.ID, y.ID}] && x.Parent == nil && y.Parent == nil {
				a, b = x.ID, y.ID
				break
			}
		}
		if a != 0 {
			break
		}
	}
	lag := 2
	f.srv.ResetRequests()
	r, err := c.CreateRelation(ctx, a, openproject.NewRelation{ToID: b, Type: "precedes", Description: "after the review", Lag: &lag})
	if err != nil {
		t.Fatal(err)
	}
	// Stored reversed: b follows a.
	if typ, other, ok := r.Side(a); !ok || typ != "precedes" || other.ID != b || r.Lag == nil || *r.Lag != 2 || r.Description != "after the review" {
		t.Errorf("created %+v (seen from %d: %s %+v)", r, a, typ, other)
	}

	// Refusals: 422 with the server's message, never retried.
	f.srv.ResetRequests()
	_, err = c.CreateRelation(ctx, b, openproject.NewRelation{ToID: a, Type: "relates"})
	var e *openproject.Error
	if !errors.Is(err, openproject.ErrValidation) || !errors.As(err, &e) || e.Message == "" || e.Attribute != "base" {
		t.Errorf("duplicate: %v", err)
	}
	f.srv.SetFaults(optest.Faults{FailNext: 5, FailStatus: 503})
	if _, err := c.CreateRelation(ctx, a, openproject.NewRelation{ToID: b + 1, Type: "relates"}); !errors.Is(err, openproject.ErrServer) {
		t.Errorf("503: %v", err)
	}
	f.srv.SetFaults(optest.Faults{})
	if n := f.srv.TotalRequests(); n != 2 {
		t.Errorf("%d requests for two refused creates, want 2 (writes are not retried)", n)
	}
	if _, err := f.client(t, optest.BobKey).CreateRelation(ctx, 999999, openproject.NewRelation{ToID: a, Type: "relates"}); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("unknown work package: %v", err)
	}

	// Bad input is refused before any request.
	f.srv.ResetRequests()
	for _, n := range []openproject.NewRelation{
		{ToID: b, Type: "parent"},
		{ToID: 0, Type: "relates"},
		{ToID: b, Type: "relates", Lag: &lag},
		{ToID: b, Type: "follows", Lag: new(-1)},
	} {
		if _, err := c.CreateRelation(ctx, a, n); err == nil {
			t.Errorf("%+v accepted", n)
		}
	}
	if n := f.srv.TotalRequests(); n != 0 {
		t.Errorf("bad input sent %d requests", n)
	}
}

// Servers before 15.0 call the lag "delay"; the client reads both.
func TestClient_RelationDelay(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/hal+json")
		_, _ = w.Write([]byte(`{"_type":"Collection","total":1,"count":1,"pageSize":20,"offset":1,"_embedded":{"elements":[
			{"_type":"Relation","id":"7","type":"follows","reverseType":"precedes","delay":4,"description":null,
			 "_links":{"from":{"href":"/api/v3/work_packages/2","title":"B"},"to":{"href":"/api/v3/work_packages/1","title":"A"}}}]}}`))
	}))
	defer ts.Close()
	c, err := openproject.New(openproject.Config{BaseURL: ts.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Relations(context.Background(), 1, openproject.ListOptions{})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("%+v, %v", p, err)
	}
	r := p.Items[0]
	if r.ID != 7 || r.Lag == nil || *r.Lag != 4 || r.Description != "" || r.From.ID != 2 || r.To.Title != "A" {
		t.Errorf("decoded %+v", r)
	}
}

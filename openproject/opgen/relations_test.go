package opgen

import (
	"encoding/json"
	"testing"
)

// TestGenRelations: relations join work packages of one project, about
// three per ten work packages, mostly relates/blocks/follows, each pair at
// most once, never a parent and its descendant, follows always from the
// later work package to the earlier (so no cycle), in the server's forward
// types only; and they are deterministic.
func TestGenRelations(t *testing.T) {
	d := Generate(GenOptions{Seed: 11, WorkPackages: 600})
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	project := map[int64]int64{}
	parent := map[int64]int64{}
	for _, wp := range d.WorkPackages {
		project[wp.ID] = wp.Project.ID
		if wp.Parent != nil {
			parent[wp.ID] = wp.Parent.ID
		}
	}
	if n := len(d.Relations); n < 600*2/10 || n > 600*3/10 {
		t.Errorf("%d relations for 600 work packages, want about 3 per 10", n)
	}
	pairs := map[[2]int64]bool{}
	types := map[string]int{}
	for i, r := range d.Relations {
		if r.ID != int64(i+1) {
			t.Errorf("relation %d has id %d", i, r.ID)
		}
		types[r.Type]++
		a, b := r.From.ID, r.To.ID
		if project[a] != project[b] {
			t.Errorf("relation %d joins projects %d and %d", r.ID, project[a], project[b])
		}
		key := [2]int64{min(a, b), max(a, b)}
		if pairs[key] {
			t.Errorf("relation %d relates %v again", r.ID, key)
		}
		pairs[key] = true
		for cur := a; cur != 0; cur = parent[cur] {
			if parent[cur] == b {
				t.Errorf("relation %d joins %d and its ancestor %d", r.ID, a, b)
			}
		}
		for cur := b; cur != 0; cur = parent[cur] {
			if parent[cur] == a {
				t.Errorf("relation %d joins %d and its ancestor %d", r.ID, b, a)
			}
		}
		switch r.Type {
		case "follows":
			if a < b || r.Lag == nil || *r.Lag < 0 {
				t.Errorf("follows relation %+v", r)
			}
		case "relates", "blocks", "duplicates", "includes", "requires":
			if r.Lag != nil {
				t.Errorf("relation %+v has a lag", r)
			}
		default:
			t.Errorf("relation %d has type %q", r.ID, r.Type)
		}
	}
	if types["relates"]+types["blocks"]+types["follows"] < len(d.Relations)*3/4 {
		t.Errorf("types %v: want mostly relates, blocks and follows", types)
	}
	a, _ := json.Marshal(d.Relations)
	b, _ := json.Marshal(Generate(GenOptions{Seed: 11, WorkPackages: 600}).Relations)
	if string(a) != string(b) {
		t.Error("relations differ between two runs with the same seed")
	}
}

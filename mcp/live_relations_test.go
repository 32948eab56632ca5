package mcp

import (
	"fmt"
	"slices"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

// relation returns the first relation of the data set.
func (h *harness) relation() openproject.Relation {
	h.t.Helper()
	if len(h.data.Relations) == 0 {
		h.t.Fatal("no relations in the data set")
	}
	return h.data.Relations[0]
}

// unrelatedTo returns a work package of id's project that is neither id,
// related to it, nor its parent or child: a valid relation target.
func (h *harness) unrelatedTo(id int64) int64 {
	h.t.Helper()
	byID := map[int64]openproject.WorkPackage{}
	for _, wp := range h.data.WorkPackages {
		byID[wp.ID] = wp
	}
	related := map[int64]bool{id: true}
	for _, r := range h.data.Relations {
		if r.From.ID == id {
			related[r.To.ID] = true
		}
		if r.To.ID == id {
			related[r.From.ID] = true
		}
	}
	if p := byID[id].Parent; p != nil {
		related[p.ID] = true
	}
	for _, wp := range h.data.WorkPackages {
		if wp.Project.ID == byID[id].Project.ID && !related[wp.ID] && (wp.Parent == nil || wp.Parent.ID != id) {
			return wp.ID
		}
	}
	h.t.Fatalf("no unrelated work package next to %d", id)
	return 0
}

// relationsSeenFrom is what list_relations should answer for wp: every
// relation of the data set it is at an end of, typed from its side.
func relationsSeenFrom(d *optest.Dataset, wp int64) []relationRow {
	var out []relationRow
	for _, r := range d.Relations {
		typ, other, ok := r.Side(wp)
		if ok {
			out = append(out, relationRow{ID: r.ID, Type: typ, WorkPackage: &ref{ID: other.ID}})
		}
	}
	return out
}

func TestListRelations(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	rel := h.relation()
	subjects := map[int64]string{}
	for _, wp := range h.data.WorkPackages {
		subjects[wp.ID] = wp.Subject
	}
	for _, wp := range []int64{rel.From.ID, rel.To.ID} {
		want := relationsSeenFrom(h.data, wp)
		var l list[relationRow]
		h.ok("openproject_list_relations", map[string]any{"workPackageId": wp}, &l)
		if l.Total != len(want) || len(l.Elements) != len(want) {
			t.Fatalf("relations of %d: %+v, want %+v", wp, l, want)
		}
		for i, row := range l.Elements {
			if row.ID != want[i].ID || row.Type != want[i].Type || row.WorkPackage == nil || row.WorkPackage.ID != want[i].WorkPackage.ID {
				t.Errorf("relations of %d, row %d = %+v, want %+v", wp, i, row, want[i])
			}
			if row.WorkPackage != nil && row.WorkPackage.Name != subjects[row.WorkPackage.ID] {
				t.Errorf("row %d names the other work package %q, want its subject %q", i, row.WorkPackage.Name, subjects[row.WorkPackage.ID])
			}
		}
	}
	// The two ends see the relation with opposite types.
	var from, to list[relationRow]
	h.ok("openproject_list_relations", map[string]any{"workPackageId": rel.From.ID, "type": rel.Type}, &from)
	h.ok("openproject_list_relations", map[string]any{"workPackageId": rel.To.ID, "type": openproject.ReverseRelationType(rel.Type)}, &to)
	if !slices.ContainsFunc(from.Elements, func(r relationRow) bool { return r.ID == rel.ID }) ||
		!slices.ContainsFunc(to.Elements, func(r relationRow) bool { return r.ID == rel.ID }) {
		t.Errorf("relation %d (%s) not found by type from both ends: %+v / %+v", rel.ID, rel.Type, from, to)
	}
	for _, r := range from.Elements {
		if r.Type != rel.Type {
			t.Errorf("type filter %s let %+v through", rel.Type, r)
		}
	}

	// Paging over the rows of a work package with several relations.
	busiest, most := int64(0), 0
	count := map[int64]int{}
	for _, r := range h.data.Relations {
		count[r.From.ID]++
		count[r.To.ID]++
	}
	for id, n := range count {
		if n > most || n == most && id < busiest {
			busiest, most = id, n
		}
	}
	if most < 2 {
		t.Fatalf("no work package with two relations")
	}
	var p1, p2 list[relationRow]
	h.ok("openproject_list_relations", map[string]any{"workPackageId": busiest, "pageSize": 1}, &p1)
	h.ok("openproject_list_relations", map[string]any{"workPackageId": busiest, "pageSize": 1, "offset": 2}, &p2)
	if p1.Total != most || p1.Count != 1 || p2.Count != 1 || p2.Offset != 2 || p1.Elements[0].ID == p2.Elements[0].ID {
		t.Errorf("pages: %+v / %+v (total want %d)", p1, p2, most)
	}

	// A work package without relations has an empty list, not an error.
	var none list[relationRow]
	h.ok("openproject_list_relations", map[string]any{"workPackageId": rel.From.ID, "type": "duplicated"}, &none)
	for _, r := range none.Elements {
		if r.Type != "duplicated" {
			t.Errorf("duplicated filter let %+v through", r)
		}
	}
}

func TestListRelations_BadInput(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "workPackageId"},
		{map[string]any{"workPackageId": 0}, "invalid argument workPackageId"},
		{map[string]any{"workPackageId": -3}, "invalid argument workPackageId"},
		{map[string]any{"workPackageId": "seven"}, "workPackageId"},
		{map[string]any{"workPackageId": 1, "type": "parent"}, "must be one of relates, duplicates"},
		{map[string]any{"workPackageId": 1, "pageSize": 0}, "invalid argument pageSize"},
		{map[string]any{"workPackageId": 1, "offset": 0}, "invalid argument offset"},
		{map[string]any{"workPackageId": 999999}, "not found"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			h.t = t
			h.fail("openproject_list_relations", tc.args, tc.want)
		})
	}
}

// A relation is listed only to users who see both of its work packages.
func TestListRelations_Visibility(t *testing.T) {
	admin := newHarness(t, harnessOpts{})
	// A fresh cross-project relation: from a project bob sees to one he
	// does not (alice's private project).
	var alicePrivate, bobSees int64
	for _, p := range admin.data.Projects {
		switch {
		case p.Identifier == "alice-private":
			alicePrivate = p.ID
		case p.Public && bobSees == 0:
			bobSees = p.ID
		}
	}
	if alicePrivate == 0 || bobSees == 0 {
		t.Skip("data set lacks alice-private or a public project")
	}
	first := func(pid int64) int64 {
		for _, wp := range admin.data.WorkPackages {
			if wp.Project.ID == pid {
				return wp.ID
			}
		}
		t.Fatalf("no work package in project %d", pid)
		return 0
	}
	a, b := first(bobSees), first(alicePrivate)
	var out relationOut
	admin.ok("openproject_create_relation", map[string]any{"workPackageId": a, "toId": b, "type": "relates"}, &out)

	bob := newHarnessOn(t, admin, optest.BobKey)
	var l list[relationRow]
	bob.ok("openproject_list_relations", map[string]any{"workPackageId": a}, &l)
	for _, r := range l.Elements {
		if r.ID == out.Relation.ID {
			t.Errorf("bob sees relation %d to a work package he may not see", r.ID)
		}
	}
	admin.ok("openproject_list_relations", map[string]any{"workPackageId": a}, &l)
	if !slices.ContainsFunc(l.Elements, func(r relationRow) bool { return r.ID == out.Relation.ID }) {
		t.Errorf("admin does not see the new relation %d: %+v", out.Relation.ID, l)
	}
}

func TestCreateRelation(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp, _ := h.commentedWP()
	to := h.unrelatedTo(wp.ID)
	var out relationOut
	h.ok("openproject_create_relation", map[string]any{"workPackageId": wp.ID, "toId": to, "type": "blocked", "description": "  waits for the schema  "}, &out)
	r := out.Relation
	if out.WorkPackageID != wp.ID || r.ID == 0 || r.Type != "blocked" || r.WorkPackage == nil || r.WorkPackage.ID != to ||
		r.Description != "waits for the schema" || r.Lag != nil {
		t.Errorf("created = %+v", out)
	}
	// The other end sees it as blocks.
	var l list[relationRow]
	h.ok("openproject_list_relations", map[string]any{"workPackageId": to, "type": "blocks"}, &l)
	if !slices.ContainsFunc(l.Elements, func(x relationRow) bool { return x.ID == r.ID && x.WorkPackage.ID == wp.ID }) {
		t.Errorf("%d does not list relation %d as blocks: %+v", to, r.ID, l)
	}
	// A follows relation with a lag, from a fresh pair.
	h.data = h.op.Dataset()
	next := h.unrelatedTo(to)
	if next == wp.ID {
		t.Skip("no third work package")
	}
	h.ok("openproject_create_relation", map[string]any{"workPackageId": to, "toId": next, "type": "precedes", "lag": 2}, &out)
	if out.Relation.Type != "precedes" || out.Relation.Lag == nil || *out.Relation.Lag != 2 {
		t.Errorf("precedes = %+v", out)
	}
	// The index does not hold relations: nothing was refreshed.
	if calls := h.idx.calls(); len(calls) != 0 {
		t.Errorf("creating relations refreshed %v", calls)
	}
}

func TestCreateRelation_Errors(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	rel := h.relation()
	wp, _ := h.commentedWP()
	free := h.unrelatedTo(wp.ID)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"no workPackageId", map[string]any{"toId": 1, "type": "relates"}, []string{"workPackageId"}},
		{"no toId", map[string]any{"workPackageId": 1, "type": "relates"}, []string{"toId"}},
		{"no type", map[string]any{"workPackageId": 1, "toId": 2}, []string{"type"}},
		{"bad id", map[string]any{"workPackageId": 0, "toId": 2, "type": "relates"}, []string{"invalid argument workPackageId"}},
		{"bad toId", map[string]any{"workPackageId": 1, "toId": -2, "type": "relates"}, []string{"invalid argument toId"}},
		{"to itself", map[string]any{"workPackageId": wp.ID, "toId": wp.ID, "type": "relates"}, []string{"invalid argument toId", "another work package"}},
		{"unknown type", map[string]any{"workPackageId": 1, "toId": 2, "type": "parent"}, []string{"type", "must be one of relates"}},
		{"lag on relates", map[string]any{"workPackageId": wp.ID, "toId": free, "type": "relates", "lag": 1}, []string{"invalid argument lag", "precedes and follows"}},
		{"negative lag", map[string]any{"workPackageId": wp.ID, "toId": free, "type": "follows", "lag": -1}, []string{"lag"}},
		// Refused by OpenProject (422), with its message.
		{"duplicate", map[string]any{"workPackageId": rel.To.ID, "toId": rel.From.ID, "type": "relates"}, []string{"already related"}},
		{"target missing", map[string]any{"workPackageId": wp.ID, "toId": 999999, "type": "relates"}, []string{"does not exist"}},
		// 404 for a work package that does not exist or is hidden.
		{"from missing", map[string]any{"workPackageId": 999999, "toId": wp.ID, "type": "relates"}, []string{"not found"}},
	}
	before := len(h.op.Dataset().Relations)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.fail("openproject_create_relation", tc.args, tc.want...)
		})
	}
	h.t = t
	if after := len(h.op.Dataset().Relations); after != before {
		t.Errorf("failed creates left %d relations, want %d", after, before)
	}

	// A follows cycle is refused: a precedes b, b precedes c, c precedes a.
	a := wp.ID
	b := h.unrelatedTo(a)
	h.ok("openproject_create_relation", map[string]any{"workPackageId": a, "toId": b, "type": "precedes"}, nil)
	h.data = h.op.Dataset()
	c := h.unrelatedTo(b)
	if c == a {
		t.Skip("no third work package")
	}
	h.ok("openproject_create_relation", map[string]any{"workPackageId": b, "toId": c, "type": "precedes"}, nil)
	h.data = h.op.Dataset()
	h.fail("openproject_create_relation", map[string]any{"workPackageId": c, "toId": a, "type": "precedes"}, "circular dependency")
}

// Without manage_work_package_relations the write is refused (403), and
// upstream faults are reported as such.
func TestCreateRelation_Upstream(t *testing.T) {
	admin := newHarness(t, harnessOpts{})
	// A public project whose members do not include bob: he sees its
	// work packages (the Non member role) but may not relate them.
	var pub int64
	for _, p := range admin.data.Projects {
		if p.Public && !slices.Contains(p.Members, bobID(admin.data)) {
			pub = p.ID
			break
		}
	}
	if pub == 0 {
		t.Skip("no public project without bob")
	}
	var wps []int64
	for _, wp := range admin.data.WorkPackages {
		if wp.Project.ID == pub {
			wps = append(wps, wp.ID)
		}
	}
	bob := newHarnessOn(t, admin, optest.BobKey)
	bob.fail("openproject_create_relation", map[string]any{"workPackageId": wps[0], "toId": admin.unrelatedTo(wps[0]), "type": "relates"}, "permission")

	args := map[string]any{"workPackageId": wps[0], "toId": admin.unrelatedTo(wps[0]), "type": "relates"}
	for _, tc := range []struct {
		name   string
		faults optest.Faults
		want   string
	}{
		{"500", optest.Faults{FailNext: 1, FailStatus: 500}, "request id"},
		{"503", optest.Faults{FailNext: 100, FailStatus: 503}, "unavailable"},
		{"404", optest.Faults{NotFoundNext: 1}, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin.t = t
			before := admin.op.TotalRequests()
			admin.op.SetFaults(tc.faults)
			admin.fail("openproject_create_relation", args, tc.want)
			admin.op.SetFaults(optest.Faults{})
			// A write is never retried, whatever the failure.
			if n := admin.op.TotalRequests() - before; n != 1 {
				t.Errorf("%d requests for one create, want 1", n)
			}
		})
	}
	admin.t = t
	for _, tc := range []struct {
		name   string
		faults optest.Faults
		want   string
	}{
		{"500", optest.Faults{FailNext: 100, FailStatus: 500}, "request id"},
		{"404", optest.Faults{NotFoundNext: 1}, "not found"},
	} {
		t.Run("list "+tc.name, func(t *testing.T) {
			admin.t = t
			admin.op.SetFaults(tc.faults)
			admin.fail("openproject_list_relations", map[string]any{"workPackageId": wps[0]}, tc.want)
			admin.op.SetFaults(optest.Faults{})
		})
	}
}

func bobID(d *optest.Dataset) int64 {
	for _, u := range d.Users {
		if u.APIKey == optest.BobKey {
			return u.ID
		}
	}
	return 0
}

package mcp

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/opgen"
	"github.com/opsearch/opsearch/openproject/optest"
)

// timeEntriesOf returns the data set's time entries matching keep, newest
// first as the tool lists them (spentOn, then id, descending).
func timeEntriesOf(d *optest.Dataset, keep func(openproject.TimeEntry) bool) []openproject.TimeEntry {
	var out []openproject.TimeEntry
	for _, te := range d.TimeEntries {
		if keep(te) {
			out = append(out, te)
		}
	}
	slices.SortFunc(out, func(a, b openproject.TimeEntry) int {
		if c := strings.Compare(b.SpentOn, a.SpentOn); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	return out
}

func TestListTimeEntries(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	if len(h.data.TimeEntries) < 10 {
		t.Fatalf("the data set has %d time entries", len(h.data.TimeEntries))
	}
	te := h.data.TimeEntries[len(h.data.TimeEntries)/2]
	wp := te.WorkPackage.ID
	proj := projectByID(h.data, te.Project.ID)
	all := func(openproject.TimeEntry) bool { return true }
	cases := []struct {
		name string
		args map[string]any
		want []openproject.TimeEntry
	}{
		{"all", map[string]any{"pageSize": 100}, timeEntriesOf(h.data, all)},
		{"work package", map[string]any{"workPackageId": wp}, timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.WorkPackage.ID == wp })},
		{"project by identifier", map[string]any{"projectId": proj.Identifier, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.Project.ID == proj.ID })},
		{"project by id", map[string]any{"projectId": proj.ID, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.Project.ID == proj.ID })},
		{"user", map[string]any{"userId": te.User.ID, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.User.ID == te.User.ID })},
		{"one day", map[string]any{"from": te.SpentOn, "to": te.SpentOn, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.SpentOn == te.SpentOn })},
		{"from only", map[string]any{"from": te.SpentOn, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.SpentOn >= te.SpentOn })},
		{"to only", map[string]any{"to": te.SpentOn, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool { return x.SpentOn <= te.SpentOn })},
		{"combined", map[string]any{"projectId": proj.Identifier, "userId": te.User.ID, "to": te.SpentOn, "pageSize": 100},
			timeEntriesOf(h.data, func(x openproject.TimeEntry) bool {
				return x.Project.ID == proj.ID && x.User.ID == te.User.ID && x.SpentOn <= te.SpentOn
			})},
		{"nothing", map[string]any{"from": "2030-01-01"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l list[timeEntryRow]
			h.ok("openproject_list_time_entries", c.args, &l)
			if l.Total != len(c.want) || l.Count != min(len(c.want), l.PageSize) {
				t.Fatalf("total %d count %d, want %d", l.Total, l.Count, len(c.want))
			}
			for i, row := range l.Elements {
				w := c.want[i]
				if row.ID != w.ID || row.Hours != w.Hours || row.SpentOn != w.SpentOn || row.Comment != w.Comment {
					t.Errorf("row %d = %+v, want %+v", i, row, w)
				}
				if row.User == nil || row.User.Name == "" || row.Project == nil || row.Project.Name == "" ||
					row.WorkPackage == nil || row.WorkPackage.ID != w.WorkPackage.ID || row.WorkPackage.Name == "" || row.Activity == "" {
					t.Errorf("row %d lacks names: %+v", i, row)
				}
			}
		})
	}

	// Paging: two pages of 3 continue each other.
	want := timeEntriesOf(h.data, all)
	var p1, p2 list[timeEntryRow]
	h.ok("openproject_list_time_entries", map[string]any{"pageSize": 3}, &p1)
	h.ok("openproject_list_time_entries", map[string]any{"pageSize": 3, "offset": 2}, &p2)
	if p1.Total != len(want) || p2.Offset != 2 || len(p1.Elements) != 3 || len(p2.Elements) != 3 ||
		p1.Elements[0].ID != want[0].ID || p2.Elements[0].ID != want[3].ID {
		t.Errorf("pages = %+v / %+v", p1, p2)
	}
}

// TestListTimeEntriesVisibility: a user sees the time entries of the
// projects whose work packages they see, nothing of the others.
func TestListTimeEntriesVisibility(t *testing.T) {
	h := newHarness(t, harnessOpts{key: optest.BobKey})
	bob := int64(opgen.BobID)
	visible := func(te openproject.TimeEntry) bool {
		p := projectByID(h.data, te.Project.ID)
		return p.Public || slices.Contains(p.Members, bob)
	}
	want := timeEntriesOf(h.data, visible)
	if len(want) == len(h.data.TimeEntries) {
		t.Fatal("bob sees every time entry; the test proves nothing")
	}
	var l list[timeEntryRow]
	h.ok("openproject_list_time_entries", map[string]any{"pageSize": 100}, &l)
	if l.Total != len(want) {
		t.Errorf("bob sees %d time entries, want %d", l.Total, len(want))
	}
	// Filtering by a hidden project says not found (the project lookup);
	// by its id it finds nothing.
	for _, p := range h.data.Projects {
		if p.Identifier == "alice-private" {
			h.fail("openproject_list_time_entries", map[string]any{"projectId": p.Identifier}, "not found")
			h.ok("openproject_list_time_entries", map[string]any{"projectId": p.ID}, &l)
			if l.Total != 0 {
				t.Errorf("bob sees %d time entries of alice's private project", l.Total)
			}
		}
	}
}

type logTimeAnswer struct {
	TimeEntry timeEntryRow
	Note      string
}

func TestLogTime(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp := h.data.WorkPackages[3]
	cases := []struct {
		name    string
		args    map[string]any
		hours   float64
		spentOn string
	}{
		{"all fields", map[string]any{"workPackageId": wp.ID, "hours": 1.5, "spentOn": "2025-06-02", "comment": "Reviewed the rollout plan", "activityId": 4},
			1.5, "2025-06-02"},
		{"minutes", map[string]any{"workPackageId": wp.ID, "hours": 0.25, "spentOn": "2025-06-03"}, 0.25, "2025-06-03"},
		{"a third of an hour", map[string]any{"workPackageId": wp.ID, "hours": 1.0 / 3, "spentOn": "2025-06-03"}, 0.33, "2025-06-03"},
		{"today by default", map[string]any{"workPackageId": wp.ID, "hours": 2}, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a logTimeAnswer
			h.ok("openproject_log_time", c.args, &a)
			e := a.TimeEntry
			if e.ID == 0 || e.Hours != c.hours || (c.spentOn != "" && e.SpentOn != c.spentOn) || e.SpentOn == "" ||
				e.WorkPackage == nil || e.WorkPackage.ID != wp.ID || e.WorkPackage.Name != wp.Subject ||
				e.Project == nil || e.Project.ID != wp.Project.ID || e.User == nil || e.User.ID != 1 {
				t.Errorf("logged = %+v", e)
			}
			if cm, _ := c.args["comment"].(string); e.Comment != cm {
				t.Errorf("comment = %q, want %q", e.Comment, cm)
			}
			if c.args["activityId"] != nil && e.Activity != "Development" {
				t.Errorf("activity = %q", e.Activity)
			}
			for _, w := range []string{fmt.Sprintf("time entry %d", e.ID), fmt.Sprintf("work package %d", wp.ID), e.SpentOn, "not in the search index"} {
				if !strings.Contains(a.Note, w) {
					t.Errorf("note %q lacks %q", a.Note, w)
				}
			}
			// It is really there, and the index was left alone.
			var l list[timeEntryRow]
			h.ok("openproject_list_time_entries", map[string]any{"workPackageId": wp.ID, "pageSize": 100}, &l)
			if !slices.ContainsFunc(l.Elements, func(r timeEntryRow) bool { return r.ID == e.ID }) {
				t.Errorf("time entry %d is not listed on work package %d", e.ID, wp.ID)
			}
		})
	}
	if n := len(h.idx.calls()); n != 0 {
		t.Errorf("logging time refreshed the index %d times", n)
	}
}

func TestLogTimeRefused(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	wp := h.data.WorkPackages[5]
	ok := map[string]any{"workPackageId": wp.ID, "hours": 1, "spentOn": "2025-06-02"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	// Bad arguments are refused before OpenProject is asked.
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{with("hours", -1), []string{"hours", "more than 0"}},
		{with("hours", 0), []string{"hours", "more than 0"}},
		{with("hours", 25), []string{"hours", "at most 24"}},
		{with("hours", "1h30"), []string{"hours"}},
		{with("hours", nil), []string{"hours"}},
		{with("hours", 0.0001), []string{"hours", "less than a second"}},
		{with("spentOn", "02.06.2025"), []string{"spentOn", "YYYY-MM-DD"}},
		{with("spentOn", "2025-02-30"), []string{"spentOn"}},
		{with("workPackageId", 0), []string{"workPackageId", "positive"}},
		{with("workPackageId", nil), []string{"workPackageId"}},
		{with("activityId", -4), []string{"activityId", "positive"}},
	} {
		before := h.op.TotalRequests()
		h.fail("openproject_log_time", c.args, c.want...)
		if n := h.op.TotalRequests() - before; n != 0 {
			t.Errorf("%v: a bad argument sent %d requests", c.args, n)
		}
	}
	// OpenProject's own refusals come back in its words.
	h.fail("openproject_log_time", with("workPackageId", 999999), "OpenProject rejected the change", "Work package is invalid")
	h.fail("openproject_log_time", with("activityId", 99), "OpenProject rejected the change", "Activity")
	h.ok("openproject_log_time", with("hours", 20), nil)
	h.fail("openproject_log_time", with("hours", 5), "OpenProject rejected the change", "24 hours per day")

	// Upstream faults on the write: reported, never retried.
	for _, c := range []struct {
		faults optest.Faults
		want   string
	}{
		{optest.Faults{FailNext: 1, FailStatus: 500}, "OpenProject is unavailable"},
		{optest.Faults{FailNext: 1, FailStatus: 503}, "OpenProject is unavailable"},
		{optest.Faults{NotFoundNext: 1}, "not found"},
	} {
		before := h.op.TotalRequests()
		h.op.SetFaults(c.faults)
		h.fail("openproject_log_time", with("spentOn", "2025-06-09"), c.want, "request id")
		if n := h.op.TotalRequests() - before; n != 1 {
			t.Errorf("%+v: %d requests, want 1 (writes are not retried)", c.faults, n)
		}
	}
	h.op.SetFaults(optest.Faults{})
}

// TestLogTimeVisibility: time on a work package of a project the user
// may not log time in is refused (403, as the real server answers even
// when the work package is hidden from them).
func TestLogTimeVisibility(t *testing.T) {
	h := newHarness(t, harnessOpts{key: optest.BobKey})
	for _, p := range h.data.Projects {
		if slices.Contains(p.Members, int64(opgen.BobID)) {
			continue
		}
		for _, wp := range h.data.WorkPackages {
			if wp.Project.ID == p.ID {
				h.fail("openproject_log_time", map[string]any{"workPackageId": wp.ID, "hours": 1, "spentOn": "2025-06-02"}, "no permission")
				break
			}
		}
	}
	var l list[timeEntryRow]
	h.ok("openproject_list_time_entries", map[string]any{"userId": opgen.BobID, "from": "2025-06-02", "to": "2025-06-02"}, &l)
	for _, r := range l.Elements {
		if r.Hours == 1 {
			t.Errorf("a refused entry was stored: %+v", r)
		}
	}
}

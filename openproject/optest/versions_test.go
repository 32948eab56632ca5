package optest

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// versionsDataset is srvDataset with versions of every sharing (project 4,
// "bulk", is a child of project 1, "demo"), custom fields, and a Non
// member role that may not view work packages, so that only memberships
// and sharing decide who sees a version.
func versionsDataset() *Dataset {
	d := srvDataset()
	v := func(id, pid int64, name, status, sharing string) openproject.Version {
		return openproject.Version{ID: id, Name: name, Status: status, Sharing: sharing, Project: openproject.Ref{ID: pid},
			StartDate: "2024-01-01", EndDate: "2024-03-31", CreatedAt: srvDay(1, 1), UpdatedAt: srvDay(1, 2)}
	}
	d.Versions = []openproject.Version{
		v(1, 1, "Demo 1.0", "closed", "none"),
		v(2, 1, "Demo 2.0", "open", "descendants"),
		v(3, 4, "Bulk 1.0", "locked", "hierarchy"),
		v(4, 3, "Bob 1.0", "open", "none"),
		v(5, 3, "Company 2024", "open", "system"),
		v(6, 2, "Alice 1.0", "open", "tree"),
	}
	d.WorkPackages[0].Version = &openproject.Ref{ID: 1}
	d.WorkPackages[1].Version = &openproject.Ref{ID: 1}
	d.WorkPackages[4].Version = &openproject.Ref{ID: 2}
	d.NonMemberRole = &Role{ID: 99, Name: "Non member", Permissions: []string{PermViewWikiPages}}
	d.CustomFields = []CustomField{
		{ID: 1, Name: "Customer", Format: "string"},
		{ID: 2, Name: "Component", Format: "list"},
		{ID: 3, Name: "Platforms", Format: "list", Multi: true},
		{ID: 4, Name: "Story points", Format: "int"},
		{ID: 5, Name: "Notes", Format: "text"},
	}
	d.CustomValues = []CustomValue{
		{WorkPackageID: 1, FieldID: 1, Values: []string{"Acme"}},
		{WorkPackageID: 1, FieldID: 2, Values: []string{"Backend"}},
		{WorkPackageID: 1, FieldID: 3, Values: []string{"Linux", "macOS"}},
		{WorkPackageID: 1, FieldID: 4, Values: []string{"5"}},
	}
	return d
}

func TestVersionProjects(t *testing.T) {
	st := newStore(versionsDataset())
	want := map[int64][]int64{1: {1}, 2: {1, 4}, 3: {1, 4}, 4: {3}, 5: {1, 2, 3, 4}, 6: {2}}
	for id, w := range want {
		var got []int64
		for pid := range st.versionProjects(st.versions[id]) {
			got = append(got, pid)
		}
		slices.Sort(got)
		if !slices.Equal(got, w) {
			t.Errorf("version %d (%s) is usable in %v, want %v", id, st.versions[id].Sharing, got, w)
		}
	}
}

func TestVersions(t *testing.T) {
	d := versionsDataset()
	srv, base := Start(t, d, Options{Now: func() time.Time { return srvClock }})
	ids := func(r srvResp) []int64 {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
		return elementIDs(r.body)
	}
	sharing := func(op string, vs ...string) string {
		return srvQ("filters", filtersParam(openproject.Filter{Name: "sharing", Operator: op, Values: vs}))
	}
	lists := []struct {
		name, path, key string
		want            []int64
	}{
		{"alice sees by membership and sharing", "/api/v3/versions", AliceKey, []int64{1, 2, 3, 5, 6}},
		{"bob sees his own and the system-wide", "/api/v3/versions", BobKey, []int64{4, 5}},
		{"carol, a member of nothing, sees none", "/api/v3/versions", srvCarolKey, []int64{}},
		{"admin sees all", "/api/v3/versions", AdminKey, []int64{1, 2, 3, 4, 5, 6}},
		{"a child project uses its parent's descendants version", "/api/v3/projects/4/versions", AliceKey, []int64{2, 3, 5}},
		{"a parent uses its child's hierarchy version", "/api/v3/projects/demo/versions", AliceKey, []int64{1, 2, 3, 5}},
		{"bob's project", "/api/v3/projects/bob-private/versions", BobKey, []int64{4, 5}},
		{"sharing = system", "/api/v3/versions" + sharing("=", "system"), AliceKey, []int64{5}},
		{"sharing ! none", "/api/v3/versions" + sharing("!", "none"), AliceKey, []int64{2, 3, 5, 6}},
		{"project list filtered", "/api/v3/projects/1/versions" + sharing("=", "descendants", "hierarchy"), AliceKey, []int64{2, 3}},
	}
	for _, c := range lists {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(srvGet(t, base, c.path, c.key)); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("GET %s = %v, want %v", c.path, got, c.want)
			}
		})
	}

	t.Run("one version", func(t *testing.T) {
		r := srvGet(t, base, "/api/v3/versions/3", AliceKey)
		if r.status != 200 || jget(r.body, "_type") != "Version" || jget(r.body, "name") != "Bulk 1.0" ||
			jget(r.body, "status") != "locked" || jget(r.body, "sharing") != "hierarchy" || jget(r.body, "endDate") != "2024-03-31" ||
			jget(r.body, "_links", "definingProject", "href") != "/api/v3/projects/4" || jget(r.body, "description", "format") != "plain" {
			t.Errorf("GET /versions/3 = %d %s", r.status, r.raw)
		}
		// Shared with alice, defined in a project she cannot see: no
		// definingProject link, as VersionRepresenter skips it.
		r = srvGet(t, base, "/api/v3/versions/5", AliceKey)
		if r.status != 200 || jget(r.body, "_links", "definingProject") != nil {
			t.Errorf("GET /versions/5 as alice = %d %s", r.status, r.raw)
		}
	})

	errs := []struct {
		name, path, key string
		status          int
		identifier      string
	}{
		{"a version of a project alice cannot see", "/api/v3/versions/4", AliceKey, 404, "NotFound"},
		{"no such version", "/api/v3/versions/77", AdminKey, 404, "NotFound"},
		{"a project alice cannot see", "/api/v3/projects/3/versions", AliceKey, 404, "NotFound"},
		{"a project carol sees but may not view work packages in", "/api/v3/projects/demo/versions", srvCarolKey, 403, "MissingPermission"},
		{"unknown filter", "/api/v3/versions" + srvQ("filters", `[{"status":{"operator":"=","values":["open"]}}]`), AdminKey, 400, "InvalidQuery"},
		{"bad sharing", "/api/v3/versions" + sharing("=", "everyone"), AdminKey, 400, "InvalidQuery"},
		{"bad operator", "/api/v3/versions" + sharing("~", "none"), AdminKey, 400, "InvalidQuery"},
		{"schema of a project alice cannot see", "/api/v3/work_packages/schemas/3-1", AliceKey, 404, "NotFound"},
		{"schema with a bad id", "/api/v3/work_packages/schemas/1", AliceKey, 404, "NotFound"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, srvGet(t, base, c.path, c.key), c.status, c.identifier, "")
		})
	}

	t.Run("work packages by version", func(t *testing.T) {
		for _, name := range []string{"version", "targetVersion"} {
			q := srvQ("filters", filtersParam(openproject.StatusAll(), openproject.Filter{Name: name, Operator: "=", Values: []string{"1"}}))
			if got := ids(srvGet(t, base, "/api/v3/work_packages"+q, AdminKey)); !slices.Equal(got, []int64{1, 2}) {
				t.Errorf("work packages of version 1 by %s = %v, want [1 2]", name, got)
			}
		}
		r := srvGet(t, base, "/api/v3/work_packages/5", AdminKey)
		if jget(r.body, "_links", "version", "href") != "/api/v3/versions/2" || jget(r.body, "_links", "version", "title") != "Demo 2.0" {
			t.Errorf("version link of work package 5 = %v", jget(r.body, "_links", "version"))
		}
	})

	t.Run("custom fields and schema", func(t *testing.T) {
		r := srvGet(t, base, "/api/v3/work_packages/1", AliceKey)
		if jget(r.body, "customField1") != "Acme" || jget(r.body, "customField4") != float64(5) ||
			jget(r.body, "_links", "customField2", "title") != "Backend" ||
			jget(r.body, "_links", "customField3", 1, "title") != "macOS" ||
			jget(r.body, "customField5") != nil {
			t.Errorf("custom fields of work package 1: %s", r.raw)
		}
		r = srvGet(t, base, "/api/v3/work_packages/schemas/1-2", AliceKey)
		if r.status != 200 || jget(r.body, "_type") != "Schema" || jget(r.body, "customField3", "name") != "Platforms" ||
			jget(r.body, "customField3", "type") != "[]CustomOption" {
			t.Errorf("schema 1-2 = %d %s", r.status, r.raw)
		}
	})

	t.Run("assign a version", func(t *testing.T) {
		wp2 := base + "/api/v3/work_packages/2"
		patch := func(key, url string, lock int, href any) srvResp {
			t.Helper()
			return srvDo(t, http.MethodPatch, url, key, map[string]any{"lockVersion": lock,
				"_links": map[string]any{"version": map[string]any{"href": href}}})
		}
		// Shared with every project and open: assignable.
		r := patch(AliceKey, wp2, 0, "/api/v3/versions/5")
		if r.status != 200 || jget(r.body, "_links", "version", "title") != "Company 2024" || jnum(r.body["lockVersion"]) != 1 {
			t.Fatalf("assign version 5 = %d %s", r.status, r.raw)
		}
		// Not shared with project 1, locked, closed, or unknown: 422,
		// nothing changed.
		for _, v := range []string{"/api/v3/versions/6", "/api/v3/versions/3", "/api/v3/versions/1", "/api/v3/versions/77", "/api/v3/projects/1"} {
			wantError(t, patch(AliceKey, wp2, 1, v), 422, "PropertyConstraintViolation", "Version is not set to one of the allowed values.")
		}
		// Defined in project 1, shared with its descendants.
		if r := patch(AliceKey, wp2, 1, "/api/v3/versions/2"); r.status != 200 || jget(r.body, "_links", "version", "href") != "/api/v3/versions/2" {
			t.Errorf("assign version 2 = %d %s", r.status, r.raw)
		}
		if r := patch(AliceKey, wp2, 2, nil); r.status != 200 || jget(r.body, "_links", "version", "href") != nil || jnum(r.body["lockVersion"]) != 3 {
			t.Errorf("remove the version = %d %s", r.status, r.raw)
		}
		// Keeping a closed version while changing something else is allowed.
		r = srvDo(t, http.MethodPatch, base+"/api/v3/work_packages/1", AliceKey, map[string]any{"lockVersion": 3, "subject": "Still in 1.0",
			"_links": map[string]any{"version": map[string]any{"href": "/api/v3/versions/1"}}})
		if r.status != 200 || jget(r.body, "_links", "version", "href") != "/api/v3/versions/1" {
			t.Errorf("keep the closed version = %d %s", r.status, r.raw)
		}
		acts := srvGet(t, base, "/api/v3/work_packages/2/activities", AliceKey)
		n := jnum(acts.body["total"])
		if last := jget(acts.body, "_embedded", "elements", n-1, "details", 0, "raw"); n != 3 || last != "Version changed" {
			t.Errorf("journal: %d entries, the last change %v", n, last)
		}
	})

	t.Run("faults apply", func(t *testing.T) {
		for _, path := range []string{"/api/v3/versions", "/api/v3/versions/1", "/api/v3/projects/1/versions", "/api/v3/work_packages/schemas/1-1"} {
			srv.SetFaults(Faults{FailNext: 1, FailStatus: 503})
			if r := srvGet(t, base, path, AdminKey); r.status != 503 {
				t.Errorf("GET %s under a fault = %d, want 503", path, r.status)
			}
			if r := srvGet(t, base, path, AdminKey); r.status != 200 {
				t.Errorf("GET %s after the fault = %d, want 200", path, r.status)
			}
		}
		srv.SetFaults(Faults{})
	})
}

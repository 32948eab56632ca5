package optest

import (
	"slices"
	"testing"
)

// TestQueryEmbedsResults: GET /queries/{id} embeds a page of results, as
// the real server does, honouring offset and pageSize.
func TestQueryEmbedsResults(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/queries/1"+srvQ("pageSize", "1", "offset", "2"))
	res, _ := jget(r.body, "_embedded", "results").(map[string]any)
	if res == nil || res["_type"] != "WorkPackageCollection" || jnum(res["total"]) != 2 || jnum(res["count"]) != 1 || jnum(res["offset"]) != 2 {
		t.Fatalf("query results = %s", r.raw)
	}
	if ids := elementIDs(res); !slices.Equal(ids, []int64{5}) {
		t.Errorf("page 2 ids = %v, want [5]", ids)
	}
	if r.body["name"] != "All open" {
		t.Errorf("query lost its own fields: %s", r.raw)
	}
	// A global query lists the open work packages of all visible projects.
	r = srvGet(t, base, "/api/v3/queries/3")
	if got := jnum(jget(r.body, "_embedded", "results", "total")); got != srvAliceOpen {
		t.Errorf("global query total = %d, want %d", got, srvAliceOpen)
	}
}

func TestUserStatusFilter(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/users"+srvQ("filters", `[{"status":{"operator":"=","values":["active"]}}]`), AdminKey)
	if jnum(r.body["total"]) != 4 {
		t.Errorf("active users = %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/users"+srvQ("filters", `[{"status":{"operator":"=","values":["locked"]}}]`), AdminKey)
	if jnum(r.body["total"]) != 0 {
		t.Errorf("locked users = %s", r.raw)
	}
	r = srvGet(t, base, "/api/v3/users"+srvQ("filters", `[{"status":{"operator":"=","values":["sleepy"]}}]`), AdminKey)
	wantError(t, r, 400, "InvalidQuery", "Status filter has invalid values.")
}

func TestSpec(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvGet(t, base, "/api/v3/spec.json")
	if r.status != 200 || r.body["openapi"] != "3.0.3" || jget(r.body, "paths", "/api/v3/work_packages/{id}", "patch", "operationId") != "update_work_package" {
		t.Errorf("spec = %d %s", r.status, r.raw)
	}
}

// TestPatchNullClearsDate: "dueDate": null removes the date, as on the real
// server; an absent property leaves it alone.
func TestPatchNullClearsDate(t *testing.T) {
	_, base := srvStart(t, Options{})
	r := srvDo(t, "PATCH", base+"/api/v3/work_packages/1", AliceKey, map[string]any{"lockVersion": 3, "subject": "Renamed"})
	if r.status != 200 || r.body["dueDate"] != "2024-01-31" || r.body["startDate"] != "2024-01-02" {
		t.Fatalf("patch without dates = %d %s", r.status, r.raw)
	}
	r = srvDo(t, "PATCH", base+"/api/v3/work_packages/1", AliceKey, map[string]any{"lockVersion": 4, "dueDate": nil})
	if r.status != 200 || r.body["dueDate"] != nil || r.body["startDate"] != "2024-01-02" {
		t.Errorf("patch dueDate null = %d %s", r.status, r.raw)
	}
}

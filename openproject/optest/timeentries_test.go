package optest

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// teDataset is srvDataset with time entries:
//
//	1: wp 1 (demo, public), alice, 2 h,    2024-03-04, activity 4
//	2: wp 1,                admin, 0.5 h,  2024-03-05
//	3: wp 3 (alice-private), alice, 1 h,   2024-03-06
//	4: wp 4 (bob-private),  bob,   3 h,    2024-03-04
//	5: wp 5 (demo),         alice, 1.25 h, 2024-03-10
func teDataset() *Dataset {
	d := srvDataset()
	entry := func(id, wp, project, user int64, hours float64, day, comment string) openproject.TimeEntry {
		return openproject.TimeEntry{ID: id, Hours: hours, SpentOn: day, Comment: comment,
			User: openproject.Ref{ID: user}, WorkPackage: &openproject.Ref{ID: wp}, Project: openproject.Ref{ID: project},
			CreatedAt: srvDay(3, 11), UpdatedAt: srvDay(3, 11)}
	}
	d.TimeEntries = []openproject.TimeEntry{
		entry(1, 1, 1, 2, 2, "2024-03-04", "Debugging the login"),
		entry(2, 1, 1, 1, 0.5, "2024-03-05", ""),
		entry(3, 3, 2, 2, 1, "2024-03-06", "Secret work"),
		entry(4, 4, 3, 3, 3, "2024-03-04", ""),
		entry(5, 5, 1, 2, 1.25, "2024-03-10", ""),
	}
	d.TimeEntries[0].Activity = &openproject.Ref{ID: 4}
	return d
}

func teStart(t *testing.T) (*Server, string) {
	t.Helper()
	return Start(t, teDataset(), Options{Now: func() time.Time { return srvClock }})
}

func TestTimeEntriesList(t *testing.T) {
	_, base := teStart(t)
	f := func(fs ...openproject.Filter) string { return srvQ("filters", filtersParam(fs...)) }
	cases := []struct {
		name, key, query string
		want             []int64
	}{
		// Visibility: where the caller may view work packages; ordered by
		// spentOn, then id.
		{"alice", AliceKey, "", []int64{1, 2, 3, 5}},
		{"bob sees the public project and his own", BobKey, "", []int64{1, 4, 2, 5}},
		{"carol, member of nothing, sees the public project", srvCarolKey, "", []int64{1, 2, 5}},
		{"admin", AdminKey, "", []int64{1, 4, 2, 3, 5}},
		{"work package", AliceKey, f(openproject.Filter{Name: "work_package", Operator: "=", Values: []string{"1"}}), []int64{1, 2}},
		{"workPackage spelled camelCase", AliceKey, f(openproject.Filter{Name: "workPackage", Operator: "=", Values: []string{"5", "3"}}), []int64{3, 5}},
		{"project", AliceKey, f(openproject.InProjects(2)), []int64{3}},
		{"hidden project", BobKey, f(openproject.InProjects(2)), []int64{}},
		{"user", AliceKey, f(openproject.Filter{Name: "user", Operator: "=", Values: []string{"1"}}), []int64{2}},
		{"user me", AliceKey, f(openproject.Filter{Name: "user", Operator: "=", Values: []string{"me"}}), []int64{1, 3, 5}},
		{"not user", AliceKey, f(openproject.Filter{Name: "user", Operator: "!", Values: []string{"2"}}), []int64{2}},
		{"activity", AliceKey, f(openproject.Filter{Name: "activity", Operator: "=", Values: []string{"4"}}), []int64{1}},
		{"spent between", AliceKey, f(openproject.SpentBetween("2024-03-05", "2024-03-06")), []int64{2, 3}},
		{"spent from", AliceKey, f(openproject.SpentBetween("2024-03-06", "")), []int64{3, 5}},
		{"spent until", AdminKey, f(openproject.SpentBetween("", "2024-03-04")), []int64{1, 4}},
		{"spent on one day", AdminKey, f(openproject.Filter{Name: "spentOn", Operator: "=d", Values: []string{"2024-03-10"}}), []int64{5}},
		{"combined", AliceKey, f(openproject.InProjects(1), openproject.Filter{Name: "user", Operator: "=", Values: []string{"2"}}, openproject.SpentBetween("2024-03-01", "2024-03-31")), []int64{1, 5}},
		{"sort by hours desc", AdminKey, srvQ("sortBy", `[["hours","desc"]]`), []int64{4, 1, 5, 3, 2}},
		{"sort by id desc", AliceKey, srvQ("sortBy", `[["id","desc"]]`), []int64{5, 3, 2, 1}},
		{"page 2 of 2", AliceKey, srvQ("pageSize", "2", "offset", "2"), []int64{3, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := srvGet(t, base, "/api/v3/time_entries"+c.query, c.key)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if got := elementIDs(r.body); !slices.Equal(got, c.want) {
				t.Errorf("ids = %v, want %v", got, c.want)
			}
			if c.name == "page 2 of 2" && (jnum(r.body["total"]) != 4 || jnum(r.body["count"]) != 2 || jget(r.body, "_links", "previousByOffset") == nil) {
				t.Errorf("paging = %s", r.raw)
			}
		})
	}
}

func TestTimeEntriesBadQueries(t *testing.T) {
	_, base := teStart(t)
	for _, c := range []struct {
		name string
		fs   openproject.Filter
		msg  string
	}{
		{"unknown filter", openproject.Filter{Name: "subject", Operator: "~", Values: []string{"x"}}, msgFilterUnknown},
		{"bad operator", openproject.Filter{Name: "work_package", Operator: "~", Values: []string{"1"}}, ""},
		{"bad id", openproject.Filter{Name: "project", Operator: "=", Values: []string{"demo"}}, ""},
		{"bad date", openproject.SpentBetween("2024-13-01", ""), ""},
		{"one date for between", openproject.Filter{Name: "spent_on", Operator: "<>d", Values: []string{"2024-03-01"}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := srvGet(t, base, "/api/v3/time_entries"+srvQ("filters", filtersParam(c.fs)))
			wantError(t, r, http.StatusBadRequest, "InvalidQuery", c.msg)
		})
	}
	wantError(t, srvGet(t, base, "/api/v3/time_entries"+srvQ("sortBy", `[["subject","asc"]]`)), http.StatusBadRequest, "InvalidQuery", "")
	wantError(t, srvGet(t, base, "/api/v3/time_entries"+srvQ("filters", "[{")), http.StatusBadRequest, "InvalidQuery", "")
}

func TestTimeEntryRepresentation(t *testing.T) {
	_, base := teStart(t)
	r := srvGet(t, base, "/api/v3/time_entries"+srvQ("sortBy", `[["id","asc"]]`))
	first := jget(r.body, "_embedded", "elements", 0)
	for path, want := range map[string]any{
		"_type": "TimeEntry", "hours": "PT2H", "spentOn": "2024-03-04", "ongoing": false,
		"createdAt": "2024-03-11T00:00:00.000Z",
	} {
		if got := jget(first, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	for keys, want := range map[[2]string]any{
		{"comment", "format"}:           "plain",
		{"comment", "raw"}:              "Debugging the login",
		{"comment", "html"}:             "<p>Debugging the login</p>",
		{"project", "title"}:            "Demo",
		{"workPackage", "title"}:        "Login page broken",
		{"workPackage", "href"}:         "/api/v3/work_packages/1",
		{"user", "title"}:               "Alice Doe",
		{"activity", "href"}:            "/api/v3/time_entries/activities/4",
		{"activity", "title"}:           "Development",
		{"self", "href"}:                "/api/v3/time_entries/1",
		{"updateImmediately", "method"}: "patch",
	} {
		var got any
		if keys[0] == "comment" {
			got = jget(first, keys[0], keys[1])
		} else {
			got = jget(first, "_links", keys[0], keys[1])
		}
		if got != want {
			t.Errorf("%v = %v, want %v", keys, got, want)
		}
	}
	if got := jget(r.body, "_embedded", "elements", 3, "hours"); got != "PT1H15M" {
		t.Errorf("1.25 h = %v, want PT1H15M", got)
	}
	if got := jget(r.body, "_embedded", "elements", 1, "_links", "activity", "href"); got != nil {
		t.Errorf("no activity renders %v, want a null link", got)
	}
	if jget(r.body, "_links", "createTimeEntryImmediately", "href") != "/api/v3/time_entries" {
		t.Errorf("collection links = %v", jget(r.body, "_links"))
	}
	// Bob sees alice's entry in the public project without edit links.
	r = srvGet(t, base, "/api/v3/time_entries"+srvQ("sortBy", `[["id","asc"]]`), BobKey)
	if jget(r.body, "_embedded", "elements", 0, "_links", "updateImmediately") != nil {
		t.Error("bob may edit alice's time entry")
	}
}

func TestTimeEntryCreate(t *testing.T) {
	s, base := teStart(t)
	post := func(key string, body any) srvResp {
		t.Helper()
		return srvDo(t, http.MethodPost, base+"/api/v3/time_entries", key, body)
	}
	body := func(wp string, hours, spentOn any) map[string]any {
		b := map[string]any{"comment": map[string]any{"raw": "Fixed it"}}
		if hours != nil {
			b["hours"] = hours
		}
		if spentOn != nil {
			b["spentOn"] = spentOn
		}
		if wp != "" {
			b["_links"] = map[string]any{"workPackage": map[string]any{"href": wp}}
		}
		return b
	}
	r := post(AliceKey, map[string]any{"hours": "PT1H30M", "spentOn": "2024-03-12", "comment": map[string]any{"raw": "Fixed it"},
		"_links": map[string]any{"workPackage": map[string]any{"href": "/api/v3/work_packages/5"}, "activity": map[string]any{"href": "/api/v3/time_entries/activities/5"}}})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	if jnum(r.body["id"]) != 6 || r.body["hours"] != "PT1H30M" || r.body["spentOn"] != "2024-03-12" ||
		jget(r.body, "comment", "raw") != "Fixed it" || jget(r.body, "_links", "user", "href") != "/api/v3/users/2" ||
		jget(r.body, "_links", "project", "href") != "/api/v3/projects/1" || jget(r.body, "_links", "activity", "title") != "Testing" ||
		r.body["createdAt"] != "2025-01-15T12:00:00.000Z" {
		t.Errorf("created = %s", r.raw)
	}
	if got := elementIDs(srvGet(t, base, "/api/v3/time_entries"+srvQ("filters", filtersParam(openproject.Filter{Name: "work_package", Operator: "=", Values: []string{"5"}}))).body); !slices.Equal(got, []int64{5, 6}) {
		t.Errorf("work package 5 has time entries %v, want [5 6]", got)
	}
	if tes := s.Dataset().TimeEntries; len(tes) != 6 || tes[5].Hours != 1.5 || tes[5].User.ID != 2 {
		t.Errorf("snapshot = %+v", tes)
	}

	wp1 := "/api/v3/work_packages/1"
	for _, c := range []struct {
		name, key  string
		body       any
		status     int
		identifier string
		message    string
	}{
		{"no hours", AliceKey, body(wp1, nil, "2024-03-12"), 422, "PropertyConstraintViolation", "Hours can't be blank."},
		{"hours not a duration", AliceKey, body(wp1, "1.5", "2024-03-12"), 422, "PropertyFormatError", ""},
		{"hours a number", AliceKey, body(wp1, 1.5, "2024-03-12"), 422, "PropertyFormatError", ""},
		{"no spentOn", AliceKey, body(wp1, "PT1H", nil), 422, "PropertyConstraintViolation", "Date can't be blank."},
		{"spentOn not a date", AliceKey, body(wp1, "PT1H", "12.03.2024"), 422, "PropertyFormatError", ""},
		{"no work package", AliceKey, body("", "PT1H", "2024-03-12"), 422, "PropertyConstraintViolation", "Work package is invalid."},
		{"unknown work package", AliceKey, body("/api/v3/work_packages/999", "PT1H", "2024-03-12"), 422, "PropertyConstraintViolation", "Work package is invalid."},
		{"not a work package href", AliceKey, body("/api/v3/projects/1", "PT1H", "2024-03-12"), 422, "PropertyConstraintViolation", "Work package is invalid."},
		{"hidden work package", BobKey, body("/api/v3/work_packages/3", "PT1H", "2024-03-12"), 403, "MissingPermission", msgForbidden},
		{"visible, but no log_time", srvCarolKey, body(wp1, "PT1H", "2024-03-12"), 403, "MissingPermission", msgForbidden},
		{"unknown activity", AliceKey, map[string]any{"hours": "PT1H", "spentOn": "2024-03-12", "_links": map[string]any{
			"workPackage": map[string]any{"href": wp1}, "activity": map[string]any{"href": "/api/v3/time_entries/activities/99"}}}, 422, "PropertyConstraintViolation", ""},
		{"over 24 hours a day", AliceKey, body(wp1, "PT22H30M", "2024-03-04"), 422, "PropertyConstraintViolation", ""},
		{"not JSON", AliceKey, []any{1}, 400, "InvalidRequestBody", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(s.Dataset().TimeEntries)
			wantError(t, post(c.key, c.body), c.status, c.identifier, c.message)
			if after := len(s.Dataset().TimeEntries); after != before {
				t.Errorf("a refused time entry was stored")
			}
		})
	}
	// 22 hours fit on a day alice logged 2 on.
	if r := post(AliceKey, body(wp1, "PT22H", "2024-03-04")); r.status != http.StatusCreated || r.body["hours"] != "PT22H" {
		t.Errorf("22 h: %d %s", r.status, r.raw)
	}
	if r := post(AdminKey, body(wp1, "P1D", "2024-03-20")); r.status != http.StatusCreated || r.body["hours"] != "P1D" {
		t.Errorf("a whole day: %d %s", r.status, r.raw)
	}
}

func TestTimeEntryFaultsAndDeletion(t *testing.T) {
	s, base := teStart(t)
	s.SetFaults(Faults{FailNext: 2, FailStatus: 500, PathPrefix: "/api/v3/time_entries"})
	wantError(t, srvGet(t, base, "/api/v3/time_entries"), 500, "InternalServerError", "")
	r := srvDo(t, http.MethodPost, base+"/api/v3/time_entries", AliceKey, map[string]any{"hours": "PT1H", "spentOn": "2024-03-12",
		"_links": map[string]any{"workPackage": map[string]any{"href": "/api/v3/work_packages/1"}}})
	wantError(t, r, 500, "InternalServerError", "")
	if n := len(s.Dataset().TimeEntries); n != 5 {
		t.Errorf("a failed POST stored a time entry (%d)", n)
	}
	s.SetFaults(Faults{NotFoundNext: 1, PathPrefix: "/api/v3/time_entries"})
	wantError(t, srvGet(t, base, "/api/v3/time_entries"), 404, "NotFound", "")
	s.SetFaults(Faults{})
	if r := srvGet(t, base, "/api/v3/time_entries"); r.status != 200 {
		t.Fatalf("after the faults: %d", r.status)
	}
	// Deleting a work package deletes its time entries (and its child's).
	if err := s.DeleteWorkPackage(1); err != nil {
		t.Fatal(err)
	}
	if got := elementIDs(srvGet(t, base, "/api/v3/time_entries", AdminKey).body); !slices.Equal(got, []int64{4, 3}) {
		t.Errorf("after deleting work package 1: %v, want [4 3]", got)
	}
}

func TestValidateTimeEntries(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*openproject.TimeEntry)
		want string
	}{
		{"duplicate id", func(te *openproject.TimeEntry) { te.ID = 1 }, "duplicated"},
		{"unknown user", func(te *openproject.TimeEntry) { te.User.ID = 99 }, "unknown user"},
		{"unknown work package", func(te *openproject.TimeEntry) { te.WorkPackage.ID = 99 }, "unknown work package"},
		{"another project", func(te *openproject.TimeEntry) { te.Project.ID = 2 }, "is in project"},
		{"bad date", func(te *openproject.TimeEntry) { te.SpentOn = "yesterday" }, "not a date"},
		{"negative hours", func(te *openproject.TimeEntry) { te.Hours = -1 }, "hours"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := teDataset()
			c.edit(&d.TimeEntries[1])
			if err := d.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate = %v, want %q", err, c.want)
			}
		})
	}
}

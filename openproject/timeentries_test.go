package openproject_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/openproject/optest"
)

func TestParseAndFormatHours(t *testing.T) {
	for _, c := range []struct {
		in    string
		hours float64
	}{
		{"PT5H", 5}, {"PT1H30M", 1.5}, {"PT45M", 0.75}, {"PT0S", 0}, {"PT1.5H", 1.5}, {"PT0,5H", 0.5},
		{"PT90S", 0.025}, {"P1D", 24}, {"P1DT2H", 26}, {"P1W", 168}, {" PT2H ", 2},
	} {
		got, err := openproject.ParseHours(c.in)
		if err != nil || got != c.hours {
			t.Errorf("ParseHours(%q) = %v, %v; want %v", c.in, got, err, c.hours)
		}
	}
	for _, bad := range []string{"", "P", "PT", "5H", "1.5", "PT5", "PTH", "P1Y", "P1M", "PT1D", "P1H", "PT1HT2M", "-PT1H", "PT1H30"} {
		if got, err := openproject.ParseHours(bad); err == nil {
			t.Errorf("ParseHours(%q) = %v, want an error", bad, got)
		}
	}
	for _, c := range []struct {
		hours float64
		want  string
	}{
		{1.5, "PT1H30M"}, {5, "PT5H"}, {0.25, "PT15M"}, {1.0 / 3, "PT20M"}, {0.0001, "PT0S"}, {0, "PT0S"}, {-1, "PT0S"},
		{26.5, "PT26H30M"}, {0.5 + 1.0/3600, "PT30M1S"},
	} {
		if got := openproject.FormatHours(c.hours); got != c.want {
			t.Errorf("FormatHours(%v) = %q, want %q", c.hours, got, c.want)
		}
		if c.hours > 0.001 {
			if back, err := openproject.ParseHours(openproject.FormatHours(c.hours)); err != nil || back-c.hours > 1.0/3600 || c.hours-back > 1.0/3600 {
				t.Errorf("round trip of %v gives %v, %v", c.hours, back, err)
			}
		}
	}
}

func TestClient_TimeEntries(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, optest.Options{})
	c := f.client(t, optest.AliceKey)
	if len(f.data.TimeEntries) == 0 {
		t.Fatal("no time entries in the data set")
	}
	te := f.data.TimeEntries[0]
	admin := f.client(t, optest.AdminKey)
	p, err := admin.ListTimeEntries(ctx, openproject.ListOptions{
		Filters: openproject.Filters{{Name: "work_package", Operator: "=", Values: []string{fmt.Sprint(te.WorkPackage.ID)}}, openproject.SpentBetween(te.SpentOn, te.SpentOn)},
		SortBy:  []openproject.Sort{{Field: "id", Direction: "asc"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total == 0 || p.Items[0].ID != te.ID {
		t.Fatalf("page = %+v, want time entry %d first", p, te.ID)
	}
	got := p.Items[0]
	if got.Hours != te.Hours || got.SpentOn != te.SpentOn || got.Comment != te.Comment || got.User.ID != te.User.ID || got.User.Title == "" ||
		got.WorkPackage == nil || got.WorkPackage.ID != te.WorkPackage.ID || got.WorkPackage.Title == "" || got.Project.ID != te.Project.ID ||
		got.Activity == nil || got.Activity.ID != te.Activity.ID || got.Activity.Title != te.Activity.Title || !got.CreatedAt.Equal(te.CreatedAt) {
		t.Errorf("decoded %+v, want %+v", got, te)
	}

	// Paging follows the server.
	var seen int
	err = openproject.EachPage(ctx, openproject.ListOptions{PageSize: 7}, c.ListTimeEntries, func(p openproject.Page[openproject.TimeEntry]) error {
		seen += len(p.Items)
		return nil
	})
	all, _ := c.ListTimeEntries(ctx, openproject.ListOptions{PageSize: 1})
	if err != nil || seen != all.Total || seen == 0 {
		t.Errorf("EachPage saw %d of %d, %v", seen, all.Total, err)
	}

	// A bad filter is an invalid query.
	_, err = c.ListTimeEntries(ctx, openproject.ListOptions{Filters: openproject.Filters{openproject.SpentBetween("yesterday", "")}})
	if !errors.Is(err, openproject.ErrInvalidQuery) {
		t.Errorf("bad date filter: err = %v, want an invalid query", err)
	}

	// Create, then find it.
	wp := f.data.WorkPackages[0]
	for _, w := range f.data.WorkPackages {
		if w.Project.ID == f.projectID(t, "alice-private") {
			wp = w
			break
		}
	}
	created, err := c.CreateTimeEntry(ctx, openproject.NewTimeEntry{WorkPackageID: wp.ID, Hours: 1.5, SpentOn: "2025-05-05", Comment: "Pairing", ActivityID: 4})
	if err != nil {
		t.Fatal(err)
	}
	if created.ID == 0 || created.Hours != 1.5 || created.SpentOn != "2025-05-05" || created.Comment != "Pairing" ||
		created.WorkPackage == nil || created.WorkPackage.ID != wp.ID || created.Project.ID != wp.Project.ID || created.User.ID != 2 ||
		created.Activity == nil || created.Activity.ID != 4 {
		t.Errorf("created %+v", created)
	}

	// Refusals, each in one request: writes are never retried.
	for _, tc := range []struct {
		name   string
		client *openproject.Client
		n      openproject.NewTimeEntry
		faults optest.Faults
		kind   error
		attr   string
	}{
		{"unknown work package", c, openproject.NewTimeEntry{WorkPackageID: 999999, Hours: 1, SpentOn: "2025-05-05"}, optest.Faults{}, openproject.ErrValidation, "workPackage"},
		{"unknown activity", c, openproject.NewTimeEntry{WorkPackageID: wp.ID, Hours: 1, SpentOn: "2025-05-05", ActivityID: 77}, optest.Faults{}, openproject.ErrValidation, "activity"},
		{"over the day limit", c, openproject.NewTimeEntry{WorkPackageID: wp.ID, Hours: 23, SpentOn: "2025-05-05"}, optest.Faults{}, openproject.ErrValidation, "hours"},
		{"no permission", f.client(t, optest.BobKey), openproject.NewTimeEntry{WorkPackageID: wp.ID, Hours: 1, SpentOn: "2025-05-05"}, optest.Faults{}, openproject.ErrPermission, ""},
		{"server error", c, openproject.NewTimeEntry{WorkPackageID: wp.ID, Hours: 1, SpentOn: "2025-05-06"}, optest.Faults{FailNext: 5, FailStatus: 503}, openproject.ErrServer, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.srv.SetFaults(tc.faults)
			defer f.srv.SetFaults(optest.Faults{})
			f.srv.ResetRequests()
			_, err := tc.client.CreateTimeEntry(ctx, tc.n)
			var e *openproject.Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &e) || e.Attribute != tc.attr {
				t.Errorf("err = %v (%+v), want %v on %q", err, e, tc.kind, tc.attr)
			}
			if n := f.srv.TotalRequests(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
	// Input the server would refuse is refused without a request.
	f.srv.ResetRequests()
	for _, n := range []openproject.NewTimeEntry{
		{WorkPackageID: 0, Hours: 1, SpentOn: "2025-05-05"},
		{WorkPackageID: wp.ID, Hours: 0, SpentOn: "2025-05-05"},
		{WorkPackageID: wp.ID, Hours: -2, SpentOn: "2025-05-05"},
		{WorkPackageID: wp.ID, Hours: 1, SpentOn: ""},
		{WorkPackageID: wp.ID, Hours: 1, SpentOn: "5.5.2025"},
	} {
		if _, err := c.CreateTimeEntry(ctx, n); err == nil {
			t.Errorf("CreateTimeEntry(%+v) succeeded", n)
		}
	}
	if n := f.srv.TotalRequests(); n != 0 {
		t.Errorf("invalid input sent %d requests", n)
	}
}

// TestClient_TimeEntryDecodingIsLenient: hours as a number or garbage,
// a comment as a plain string, missing links: the page still decodes.
func TestClient_TimeEntryDecodingIsLenient(t *testing.T) {
	body := `{"_type":"Collection","total":4,"count":4,"pageSize":20,"offset":1,"_embedded":{"elements":[
		{"_type":"TimeEntry","id":1,"hours":"PT2H","spentOn":"2025-01-02","comment":{"format":"plain","raw":"a","html":"<p>a</p>"},
		 "_links":{"user":{"href":"/api/v3/users/5","title":"Eve"},"workPackage":{"href":"/api/v3/work_packages/9","title":"WP"},"project":{"href":"/api/v3/projects/3","title":"P"},"activity":{"href":null}}},
		{"_type":"TimeEntry","id":"2","hours":1.25,"comment":"plain string","_links":{}},
		{"_type":"TimeEntry","id":3,"hours":"garbage","comment":null},
		{"_type":"TimeEntry","id":4,"hours":null,"ongoing":true,"createdAt":"2025-01-02T10:00:00Z"}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/hal+json")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	c, err := openproject.New(openproject.Config{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.ListTimeEntries(context.Background(), openproject.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 4 {
		t.Fatalf("%d items", len(p.Items))
	}
	a, b, d, e := p.Items[0], p.Items[1], p.Items[2], p.Items[3]
	if a.Hours != 2 || a.Comment != "a" || a.User.Title != "Eve" || a.WorkPackage.ID != 9 || a.Project.ID != 3 || a.Activity != nil {
		t.Errorf("first = %+v", a)
	}
	if b.ID != 2 || b.Hours != 1.25 || b.Comment != "plain string" || b.WorkPackage != nil {
		t.Errorf("second = %+v", b)
	}
	if d.ID != 3 || d.Hours != 0 || d.Comment != "" {
		t.Errorf("third = %+v", d)
	}
	if e.Hours != 0 || !e.CreatedAt.Equal(time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("fourth = %+v", e)
	}
}

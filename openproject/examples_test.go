package openproject_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// The payloads in testdata/examples are copies of the real examples from
// OpenProject's API spec (shared/openproject-api/examples). Each test below
// serves one over real HTTP and decodes it with the client.

const examplesDir = "testdata/examples"

// exampleServer serves example files at fixed paths with a status code.
type exampleServer struct {
	routes map[string]exampleRoute
}

type exampleRoute struct {
	file   string
	status int
}

func (s exampleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := s.routes[r.URL.Path]
	if !ok {
		route = exampleRoute{file: "error_404_not_found_generic.json", status: 404}
	}
	b, err := os.ReadFile(filepath.Join(examplesDir, route.file))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/hal+json; charset=utf-8")
	if route.status == 401 {
		w.Header().Set("WWW-Authenticate", `Basic realm="OpenProject API"`)
	}
	if route.status != 0 {
		w.WriteHeader(route.status)
	}
	_, _ = w.Write(b)
}

func newExampleClient(t *testing.T, routes map[string]exampleRoute) *openproject.Client {
	t.Helper()
	ts := httptest.NewServer(exampleServer{routes: routes})
	t.Cleanup(ts.Close)
	c, err := openproject.New(openproject.Config{BaseURL: ts.URL, APIKey: "k", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestExamples_Decode(t *testing.T) {
	ctx := context.Background()
	routes := map[string]exampleRoute{
		"/api/v3":                            {file: "root.json"},
		"/api/v3/users/me":                   {file: "user.json"},
		"/api/v3/projects/1":                 {file: "project.json"},
		"/api/v3/projects":                   {file: "project_collection.json"},
		"/api/v3/work_packages/1528":         {file: "work_package.json"},
		"/api/v3/work_packages":              {file: "work_package_collection.json"},
		"/api/v3/projects/14/work_packages":  {file: "work_package_collection_by_project.json"},
		"/api/v3/work_packages/1/activities": {file: "activity_collection.json"},
		"/api/v3/statuses":                   {file: "status_collection.json"},
		"/api/v3/types":                      {file: "type_collection.json"},
		"/api/v3/priorities":                 {file: "priority_collection.json"},
		"/api/v3/wiki_pages/72":              {file: "wiki_page.json"},
		"/api/v3/meetings/1":                 {file: "meeting.json"},
		"/api/v3/meetings/72":                {file: "meeting_view_path.json"},
		"/api/v3/meetings":                   {file: "meeting_collection.json"},
		"/api/v3/attachments/1":              {file: "attachment.json"},
	}
	c := newExampleClient(t, routes)

	t.Run("root", func(t *testing.T) {
		r, err := c.Root(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.InstanceName != "OpenProject" || r.CoreVersion != "12.1.0" || r.UserID != 3 {
			t.Errorf("root = %+v", r)
		}
	})
	t.Run("user", func(t *testing.T) {
		u, err := c.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if u.ID != 14 || u.Name != "Mara Jade" || u.Login != "member" || u.Email != "m.jade@empire.org" || u.Status != "active" {
			t.Errorf("user = %+v", u)
		}
		if !u.UpdatedAt.Equal(mustTime(t, "2024-02-09T09:01:17.382Z")) {
			t.Errorf("updatedAt = %v", u.UpdatedAt)
		}
	})
	t.Run("project", func(t *testing.T) {
		p, err := c.Project(ctx, "1")
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != 1 || p.Identifier != "project_example" || p.Public || !p.Active ||
			p.Description != "Lorem **ipsum** dolor sit amet" || p.StatusExplanation != "Everything **fine**" {
			t.Errorf("project = %+v", p)
		}
		if p.Parent == nil || p.Parent.ID != 123 || p.Parent.Title != "Parent project" {
			t.Errorf("parent = %+v", p.Parent)
		}
	})
	t.Run("project collection", func(t *testing.T) {
		page, err := c.ListProjects(ctx, openproject.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 2 || page.PageSize != 20 || page.Offset != 1 || len(page.Items) != 2 || page.Items[1].Identifier != "mysecret" || page.Items[1].Public {
			t.Errorf("page = %+v", page)
		}
		if !page.Last() {
			t.Error("a page holding all of total must be the last")
		}
	})
	t.Run("work package", func(t *testing.T) {
		wp, err := c.WorkPackage(ctx, 1528)
		if err != nil {
			t.Fatal(err)
		}
		want := openproject.WorkPackage{ID: 1528, Subject: "Develop API", Description: "Develop super cool OpenProject API."}
		if wp.ID != want.ID || wp.Subject != want.Subject || wp.Description != want.Description {
			t.Errorf("wp = %+v", wp)
		}
		if wp.Status.ID != 1 || wp.Status.Title != "New" || wp.Closed {
			t.Errorf("status = %+v closed=%v", wp.Status, wp.Closed)
		}
		if wp.Type.ID != 1 || wp.Priority.Title != "Normal" || wp.Project.ID != 1 || wp.Author.ID != 1 {
			t.Errorf("links = type %+v priority %+v project %+v author %+v", wp.Type, wp.Priority, wp.Project, wp.Author)
		}
		if wp.Assignee == nil || wp.Assignee.ID != 11 || wp.Responsible == nil || wp.Responsible.ID != 23 {
			t.Errorf("assignee %+v responsible %+v", wp.Assignee, wp.Responsible)
		}
		if wp.Parent == nil || wp.Parent.ID != 1298 || wp.Version == nil || wp.Version.ID != 1 {
			t.Errorf("parent %+v version %+v", wp.Parent, wp.Version)
		}
		if wp.PercentageDone == nil || *wp.PercentageDone != 0 || wp.StartDate != "" {
			t.Errorf("percentageDone %v startDate %q", wp.PercentageDone, wp.StartDate)
		}
		if !wp.CreatedAt.Equal(mustTime(t, "2014-08-29T12:40:53.373Z")) || !wp.UpdatedAt.Equal(mustTime(t, "2014-08-29T12:44:41.981Z")) {
			t.Errorf("times %v %v", wp.CreatedAt, wp.UpdatedAt)
		}
	})
	t.Run("work package collections", func(t *testing.T) {
		page, err := c.ListWorkPackages(ctx, openproject.ListOptions{Filters: openproject.Filters{}})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 2 || len(page.Items) != 2 || page.Items[1].ID != 2 {
			t.Errorf("page = %+v", page)
		}
		page, err = c.ListProjectWorkPackages(ctx, "14", openproject.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 2 || page.Items[0].Subject != "Skipped other properties for brevity" {
			t.Errorf("page = %+v", page)
		}
	})
	t.Run("activities", func(t *testing.T) {
		acts, err := c.Activities(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts) != 2 || acts[0].Comment != "Lorem ipsum dolor sit amet." || acts[1].Version != 2 ||
			acts[0].WorkPackageID != 1 || acts[0].User.ID != 1 || !acts[0].IsComment() {
			t.Errorf("activities = %+v", acts)
		}
	})
	t.Run("metadata", func(t *testing.T) {
		sts, err := c.Statuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		closed := 0
		for _, s := range sts {
			if s.IsClosed {
				closed++
			}
		}
		if len(sts) != 6 || closed == 0 || sts[0].Name != "New" || !sts[0].IsDefault {
			t.Errorf("statuses = %+v", sts)
		}
		types, err := c.Types(ctx, "")
		if err != nil || len(types) == 0 || types[0].Name != "Bug" || !types[0].IsDefault {
			t.Errorf("types = %+v, %v", types, err)
		}
		prios, err := c.Priorities(ctx)
		if err != nil || len(prios) < 2 || prios[1].Name != "Normal" || !prios[1].IsDefault || !prios[1].IsActive {
			t.Errorf("priorities = %+v, %v", prios, err)
		}
	})
	t.Run("wiki page without text", func(t *testing.T) {
		p, err := c.WikiPage(ctx, 72)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != 72 || p.Title != "A wiki page with a name" || p.Project.ID != 12 || p.Project.Title != "some project" || p.HasText {
			t.Errorf("wiki = %+v", p)
		}
	})
	t.Run("meetings", func(t *testing.T) {
		m, err := c.Meeting(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if m.Title != "Meeting No 42" || m.Location != "Death Star - Level 1337 L13/42" || m.LockVersion != 13 ||
			m.Duration != 1.0 || m.Project.ID != 10 || m.Author.Title != "Darth Vader" ||
			!m.StartTime.Equal(mustTime(t, "2026-02-16T10:00:00Z")) {
			t.Errorf("meeting = %+v", m)
		}
		old, err := c.Meeting(ctx, 72)
		if err != nil || old.Duration != 120 || old.LockVersion != 5 {
			t.Errorf("old meeting = %+v, %v", old, err)
		}
		page, err := c.ListMeetings(ctx, openproject.ListOptions{})
		if err != nil || page.Total != 2 || len(page.Items) != 2 || page.Items[0].ID != 6 {
			t.Errorf("meetings = %+v, %v", page, err)
		}
	})
	t.Run("attachment", func(t *testing.T) {
		a, err := c.Attachment(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if a.FileName != "cat.png" || a.FileSize != 24 || a.ContentType != "image/png" || a.Container.ID != 1 ||
			a.Description != "A picture of a cute cat" || a.DownloadURL != "/some/remote/aws/url/image.png" {
			t.Errorf("attachment = %+v", a)
		}
	})
}

func TestExamples_Errors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		file       string
		status     int
		kind       error
		identifier string
		attribute  string
	}{
		{"error_400_invalid_query_filter.json", 400, openproject.ErrInvalidQuery, "InvalidQuery", ""},
		{"error_400_invalid_query_operator.json", 400, openproject.ErrInvalidQuery, "InvalidQuery", ""},
		{"error_401_unauthenticated_no_credentials.json", 401, openproject.ErrUnauthenticated, "Unauthenticated", ""},
		{"error_401_unauthenticated_bad_credentials.json", 401, openproject.ErrUnauthenticated, "Unauthenticated", ""},
		{"error_403_missing_permission_generic.json", 403, openproject.ErrPermission, "MissingPermission", ""},
		{"error_403_missing_permission_work_packages.json", 403, openproject.ErrPermission, "MissingPermission", ""},
		{"error_404_not_found_generic.json", 404, openproject.ErrNotFound, "NotFound", ""},
		{"error_404_not_found_work_package.json", 404, openproject.ErrNotFound, "NotFound", ""},
		{"error_409_update_conflict.json", 409, openproject.ErrConflict, "UpdateConflict", ""},
		{"error_422_property_constraint_violation.json", 422, openproject.ErrValidation, "PropertyConstraintViolation", "Subject"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c := newExampleClient(t, map[string]exampleRoute{"/api/v3/work_packages/1": {file: tt.file, status: tt.status}})
			_, err := c.WorkPackage(ctx, 1)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want kind %v", err, tt.kind)
			}
			var e *openproject.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T is not *openproject.Error", err)
			}
			if e.Status != tt.status || e.Identifier != tt.identifier || e.Message == "" || e.Attribute != tt.attribute {
				t.Errorf("error = %+v", e)
			}
		})
	}
}

// TestExamples_InSyncWithShared guards the copies against drifting from the
// shared originals, when the shared folder is present beside the checkout.
func TestExamples_InSyncWithShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "openproject-api", "examples")
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Skipf("shared examples not present: %v", err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(shared, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(examplesDir, e.Name()))
		if err != nil {
			t.Errorf("%s: missing from %s (copy it): %v", e.Name(), examplesDir, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the shared original; copy it again", e.Name())
		}
	}
}

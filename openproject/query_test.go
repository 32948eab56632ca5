package openproject_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// A saved query as OpenProject renders it: filters with titled operator
// and value links (or literal values), sort links, and a results link.
// The fake renders none of the filters, so they are checked here.
const queryHAL = `{
  "_type": "Query", "id": 7, "name": "Team bugs", "public": true, "starred": false,
  "createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-02-03T04:05:06.5Z",
  "filters": [
    {"_type": "StatusQueryFilter", "name": "Status",
     "_links": {"filter": {"href": "/api/v3/queries/filters/status", "title": "Status"},
                "operator": {"href": "/api/v3/queries/operators/o", "title": "open"}, "values": []}},
    {"_type": "AssigneeQueryFilter", "name": "Assignee",
     "_links": {"operator": {"href": "/api/v3/queries/operators/=", "title": "is (OR)"},
                "values": [{"href": "/api/v3/users/3", "title": "Alice"}, {"href": "/api/v3/users/4", "title": "Bob"}]}},
    {"_type": "DueDateQueryFilter", "name": "Finish date", "values": ["2025-03-01", 7, null],
     "_links": {"operator": {"href": "/api/v3/queries/operators/<>d", "title": "between"}}}
  ],
  "_links": {
    "project": {"href": "/api/v3/projects/2", "title": "Website"},
    "sortBy": [{"href": "/api/v3/queries/sort_bys/id-asc", "title": "ID (Ascending)"}, {"href": "/api/v3/queries/sort_bys/x"}],
    "results": {"href": "/prefix/api/v3/projects/2/work_packages?query_id=7&offset=9"}
  }
}`

const resultsHAL = `{
  "_type": "WorkPackageCollection", "total": 41, "count": 1, "pageSize": 1, "offset": 3,
  "_embedded": {"elements": [{"id": 12, "subject": "Crash", "lockVersion": 1,
    "_links": {"status": {"href": "/api/v3/statuses/5", "title": "Closed"}, "project": {"href": "/api/v3/projects/2", "title": "Website"}}}]}
}`

const statusesHAL = `{"_type": "Collection", "total": 1, "count": 1,
  "_embedded": {"elements": [{"id": 5, "name": "Closed", "isClosed": true}]}}`

func TestQueryWithResults_FollowsResultsLink(t *testing.T) {
	var resultsQuery string
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v3/queries/7", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("pageSize"); got != "1" {
			t.Errorf("query request pageSize = %q", got)
		}
		_, _ = w.Write([]byte(queryHAL))
	})
	mux.HandleFunc("/api/v3/projects/2/work_packages", func(w http.ResponseWriter, r *http.Request) {
		resultsQuery = r.URL.RawQuery
		_, _ = w.Write([]byte(resultsHAL))
	})
	mux.HandleFunc("/api/v3/statuses", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(statusesHAL)) })
	c := queryClient(t, mux)

	q, page, err := c.QueryWithResults(context.Background(), 7, openproject.ListOptions{PageSize: 1, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantFilters := []openproject.QueryFilter{
		{Name: "Status", Operator: "open"},
		{Name: "Assignee", Operator: "is (OR)", Values: []string{"Alice", "Bob"}},
		{Name: "Finish date", Operator: "between", Values: []string{"2025-03-01", "7", ""}},
	}
	if !reflect.DeepEqual(q.Filters, wantFilters) {
		t.Errorf("filters = %+v, want %+v", q.Filters, wantFilters)
	}
	if want := []string{"ID (Ascending)", ""}; !reflect.DeepEqual(q.SortBy, want) {
		t.Errorf("sortBy = %q, want %q", q.SortBy, want)
	}
	if q.ID != 7 || q.Name != "Team bugs" || q.Project == nil || q.Project.ID != 2 || q.UpdatedAt.Nanosecond() != 5e8 {
		t.Errorf("query = %+v", q)
	}
	// The caller's paging replaces the link's; its other parameters stay.
	if resultsQuery != "offset=3&pageSize=1&query_id=7" {
		t.Errorf("results request query = %q", resultsQuery)
	}
	if page.Total != 41 || page.Offset != 3 || len(page.Items) != 1 || page.Items[0].ID != 12 || !page.Items[0].Closed {
		t.Errorf("results = %+v", page)
	}
}

func TestQueryWithResults_NoResults(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v3/queries/8", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id": 8, "name": "Bare", "filters": "not a list", "_links": {"results": {"href": null}}}`))
	})
	mux.HandleFunc("/api/v3/queries/9", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id": 9, "_links": {"results": {"href": "https://elsewhere.example/work_packages"}}}`))
	})
	c := queryClient(t, mux)
	q, page, err := c.QueryWithResults(context.Background(), 8, openproject.ListOptions{})
	if err != nil || q.Name != "Bare" || q.Filters != nil || len(page.Items) != 0 || page.Total != 0 {
		t.Errorf("query = %+v, page = %+v, err = %v", q, page, err)
	}
	if _, _, err := c.QueryWithResults(context.Background(), 9, openproject.ListOptions{}); !errors.Is(err, openproject.ErrMalformed) {
		t.Errorf("results link outside the API: err = %v, want ErrMalformed", err)
	}
}

func TestListWikiPageLinks(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v3/wiki_page_links", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("filters"); got != `[{"workPackage":{"operator":"=","values":["4"]}}]` {
			t.Errorf("filters = %s", got)
		}
		_, _ = w.Write([]byte(`{"_type": "Collection", "total": 1, "count": 1, "pageSize": 30, "offset": 1,
		  "_embedded": {"elements": [{"id": 3, "_links": {"workPackage": {"href": "/api/v3/work_packages/4", "title": "Login"},
		    "wikiPage": {"href": "/api/v3/wiki_pages/6", "title": "Auth"}}}]}}`))
	})
	c := queryClient(t, mux)
	p, err := c.ListWikiPageLinks(context.Background(), openproject.ListOptions{PageSize: 30, Filters: openproject.Filters{{Name: "workPackage", Operator: "=", Values: []string{"4"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 1 || p.Items[0].ID != 3 || p.Items[0].WorkPackage.ID != 4 || p.Items[0].WikiPage.Title != "Auth" {
		t.Errorf("links = %+v", p)
	}
	if _, err := queryClient(t, http.NotFoundHandler()).ListWikiPageLinks(context.Background(), openproject.ListOptions{}); !errors.Is(err, openproject.ErrNotFound) {
		t.Errorf("no endpoint: err = %v, want ErrNotFound", err)
	}
}

func TestOpenAPISpec_Fallback(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v3/openapi.json", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"openapi": "3.1.0"}`)) })
	raw, err := queryClient(t, mux).OpenAPISpec(context.Background())
	if err != nil || string(raw) != `{"openapi": "3.1.0"}` {
		t.Errorf("spec = %s, %v", raw, err)
	}
}

func queryClient(t *testing.T, h http.Handler) *openproject.Client {
	t.Helper()
	ts := httptest.NewServer(http.StripPrefix("/prefix", h))
	t.Cleanup(ts.Close)
	c, err := openproject.New(openproject.Config{BaseURL: ts.URL + "/prefix", APIKey: "k", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

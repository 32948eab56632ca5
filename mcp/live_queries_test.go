package mcp

import (
	"reflect"
	"testing"

	"github.com/opsearch/opsearch/openproject"
)

// TestQueryDetailOf: a saved query's filters read as people write them,
// from the titles the client decoded (the fake renders no filters).
func TestQueryDetailOf(t *testing.T) {
	d := queryDetailOf(openproject.Query{ID: 7, Name: "Team bugs",
		Filters: []openproject.QueryFilter{
			{Name: "Status", Operator: "open"},
			{Name: "Assignee", Operator: "is (OR)", Values: []string{"Alice", "Bob"}},
			{Name: "Subject", Values: []string{"login"}},
		},
		SortBy: []string{"ID (Ascending)"},
	})
	if want := []string{"Status open", "Assignee is (OR) Alice, Bob", "Subject login"}; !reflect.DeepEqual(d.Filters, want) {
		t.Errorf("filters = %q, want %q", d.Filters, want)
	}
	if want := []string{"ID (Ascending)"}; !reflect.DeepEqual(d.SortBy, want) {
		t.Errorf("sortBy = %q, want %q", d.SortBy, want)
	}
	if d.Project != nil {
		t.Errorf("a global query has project %+v", d.Project)
	}
	// Empty, never null: the answer's shape does not depend on the query.
	empty := queryDetailOf(openproject.Query{ID: 1})
	if empty.Filters == nil || empty.SortBy == nil {
		t.Errorf("empty query: filters %#v, sortBy %#v", empty.Filters, empty.SortBy)
	}
}

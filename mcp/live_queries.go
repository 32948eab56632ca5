package mcp

import (
	"context"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// The saved query tools: list_queries and get_query (a query's filters,
// sort and one page of its work packages).

type listQueriesIn struct {
	paging
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier"`
}

func (s *server) listQueries(ctx context.Context, in listQueriesIn) (listOut[queryRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[queryRow]{}, err
	}
	if in.ProjectID != "" {
		id, err := s.projectID(ctx, "projectId", in.ProjectID)
		if err != nil {
			return listOut[queryRow]{}, err
		}
		opts.Filters = openproject.Filters{openproject.InProjects(id)}
	}
	p, err := s.api.ListQueries(ctx, opts)
	if err != nil {
		return listOut[queryRow]{}, err
	}
	return pageOf(p, queryRowOf), nil
}

type getQueryIn struct {
	paging
	QueryID int64 `json:"queryId" jsonschema:"saved query id"`
}

type queryOut struct {
	Query   queryDetail    `json:"query"`
	Results listOut[wpRow] `json:"results"`
}

func (s *server) getQuery(ctx context.Context, in getQueryIn) (queryOut, error) {
	if err := checkID("queryId", in.QueryID); err != nil {
		return queryOut{}, err
	}
	opts, err := in.options(20)
	if err != nil {
		return queryOut{}, err
	}
	q, results, err := s.api.QueryWithResults(ctx, in.QueryID, opts)
	if err != nil {
		return queryOut{}, err
	}
	return queryOut{Query: queryDetailOf(q), Results: pageOf(results, wpRowOf)}, nil
}

type queryRow struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Project   *ref      `json:"project"`
	Public    bool      `json:"public"`
	Starred   bool      `json:"starred"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

func queryRowOf(q openproject.Query) (queryRow, bool) {
	return queryRow{ID: q.ID, Name: q.Name, Project: optRefOf(q.Project), Public: q.Public, Starred: q.Starred, UpdatedAt: q.UpdatedAt}, false
}

type queryDetail struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Project   *ref      `json:"project"`
	Public    bool      `json:"public"`
	Starred   bool      `json:"starred"`
	Filters   []string  `json:"filters"`
	SortBy    []string  `json:"sortBy"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

func queryDetailOf(q openproject.Query) queryDetail {
	d := queryDetail{ID: q.ID, Name: q.Name, Project: optRefOf(q.Project), Public: q.Public, Starred: q.Starred,
		Filters: []string{}, SortBy: append([]string{}, q.SortBy...), UpdatedAt: q.UpdatedAt}
	for _, f := range q.Filters {
		d.Filters = append(d.Filters, filterText(f))
	}
	return d
}

// filterText renders one query filter as "Status open" or
// "Assignee is (OR) Alice, Bob", from the titles the server provides.
func filterText(f openproject.QueryFilter) string {
	parts := []string{f.Name}
	if f.Operator != "" {
		parts = append(parts, f.Operator)
	}
	if len(f.Values) > 0 {
		parts = append(parts, strings.Join(f.Values, ", "))
	}
	return strings.Join(parts, " ")
}

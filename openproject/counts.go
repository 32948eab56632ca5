package openproject

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// MaxPageSize is apiv3_max_page_size's default (1000), the most a server
// sends per page unless its administrator changed the setting. Servers cap
// a larger request silently, so asking for it is always safe.
const MaxPageSize = 1000

// WorkPackageCounts is how many work packages the user can see, in all and
// per project.
type WorkPackageCounts struct {
	Total int
	// ByProject maps a project id to its count. Projects without a work
	// package that matched are absent.
	ByProject map[int64]int
}

// wireGroupedCollection is a grouped work package collection reduced to
// what counting needs: the total and the groups (nil when the server sent
// none).
type wireGroupedCollection struct {
	Total  lenientInt   `json:"total"`
	Groups *[]wireGroup `json:"groups"`
}

// wireGroup is one group as API::Decorators::AggregationGroup renders it:
// value, count and _links.valueLink, an array holding the link to the
// group's value (href null for "none").
type wireGroup struct {
	Count lenientInt `json:"count"`
	Links halLinks   `json:"_links"`
}

// projectCounts converts a collection grouped by project; false means it
// carried no groups. A group's project is the id its value link names
// (0 when the link is missing or not a project's); counts below zero,
// which no server sends, count as zero, and groups of one project add up.
func (w wireGroupedCollection) projectCounts() (WorkPackageCounts, bool) {
	if w.Groups == nil {
		return WorkPackageCounts{}, false
	}
	out := WorkPackageCounts{Total: max(int(w.Total), 0), ByProject: make(map[int64]int, len(*w.Groups))}
	for _, g := range *w.Groups {
		var pid int64
		if refs := g.Links.refs("valueLink"); len(refs) > 0 && strings.Contains(refs[0].Href, "/projects/") {
			pid = refs[0].ID
		}
		out.ByProject[pid] += max(int(g.Count), 0)
	}
	return out, true
}

// WorkPackageCountsByProject counts, in one request, the work packages the
// user can see that match filters, per project: GET /api/v3/work_packages
// with groupBy=project and pageSize=0, whose answer carries no elements,
// only the total and the groups. Nil filters send none, so the server
// counts open work packages only; pass Filters{StatusAll()} for all. A
// server that ignores groupBy (it sends no groups) gives ErrUnsupported.
func (c *Client) WorkPackageCountsByProject(ctx context.Context, filters Filters) (WorkPackageCounts, error) {
	q := ListOptions{Filters: filters}.Values()
	q.Set("groupBy", "project")
	q.Set("pageSize", "0")
	r := get("/api/v3/work_packages", q)
	var w wireGroupedCollection
	if err := c.do(ctx, r, &w); err != nil {
		return WorkPackageCounts{}, err
	}
	counts, ok := w.projectCounts()
	if !ok {
		return WorkPackageCounts{}, &Error{Kind: ErrUnsupported, Status: http.StatusOK, Message: "the server did not group the work packages by project", Method: r.method, Path: r.path}
	}
	return counts, nil
}

// wireID is a collection element pruned to its id by select.
type wireID struct {
	ID lenientInt `json:"id"`
}

// WorkPackageIDPage lists one page of the ids of the work packages the
// user can see, pruned with select=elements/id,total,count so the server
// renders nothing else. opts.Select is replaced; sort by id (the server's
// default) for stable pages.
func (c *Client) WorkPackageIDPage(ctx context.Context, opts ListOptions) (Page[int64], error) {
	// total and count besides the ids: paging needs them once select
	// has pruned pageSize and offset away.
	opts.Select = []string{"elements/id", "total", "count"}
	return decodePage(ctx, c, get("/api/v3/work_packages", opts.Values()), func(w wireID) int64 { return int64(w.ID) })
}

// WorkPackageIDs lists the ids of every work package the user can see
// that matches filters, in pages of MaxPageSize (or the server's lower
// maximum), sorted by id. Nil filters send none, so the server lists open
// work packages only; pass Filters{StatusAll()} for all. A page whose ids
// are not all positive is malformed.
func (c *Client) WorkPackageIDs(ctx context.Context, filters Filters) ([]int64, error) {
	opts := ListOptions{Filters: filters, SortBy: []Sort{{Field: "id", Direction: "asc"}}, PageSize: MaxPageSize}
	var ids []int64
	err := EachPage(ctx, opts, c.WorkPackageIDPage, func(p Page[int64]) error {
		for _, id := range p.Items {
			if id <= 0 {
				return c.errorf(get("/api/v3/work_packages", nil), ErrMalformed, http.StatusOK, errors.New("a work package without a positive id"))
			}
		}
		ids = append(ids, p.Items...)
		return nil
	})
	return ids, err
}

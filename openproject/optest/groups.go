package optest

import (
	"cmp"
	"net/url"
	"slices"

	"github.com/opsearch/opsearch/openproject"
)

// groupColumn is a work package property groupBy may name.
type groupColumn struct {
	// name is the API name, as in groupBy=<name> and in the groupBy link.
	name string
	// caption is the column's title on the groupBy link.
	caption string
	// key returns the group's id and title for a work package: the linked
	// resource's id (0: none) and what value renders.
	key func(r *renderer, wp *openproject.WorkPackage) (int64, string)
	// base is the href of a group value without its id.
	base string
}

// groupColumns are the columns the fake groups by (read-only). The real server groups
// by many more (every groupable query column); these are the ones whose
// value is a resource the fake stores.
var groupColumns = []groupColumn{
	{"project", "Project", func(r *renderer, wp *openproject.WorkPackage) (int64, string) {
		if p, ok := r.st.projects[wp.Project.ID]; ok {
			return p.ID, p.Name
		}
		return wp.Project.ID, ""
	}, "/api/v3/projects/"},
	{"status", "Status", func(r *renderer, wp *openproject.WorkPackage) (int64, string) {
		st, _ := r.st.statusByID(wp.Status.ID)
		return wp.Status.ID, st.Name
	}, "/api/v3/statuses/"},
	{"type", "Type", func(r *renderer, wp *openproject.WorkPackage) (int64, string) {
		t, _ := r.st.typeByID(wp.Type.ID)
		return wp.Type.ID, t.Name
	}, "/api/v3/types/"},
	{"priority", "Priority", func(r *renderer, wp *openproject.WorkPackage) (int64, string) {
		p, _ := r.st.priorityByID(wp.Priority.ID)
		return wp.Priority.ID, p.Name
	}, "/api/v3/priorities/"},
	{"assignee", "Assignee", func(r *renderer, wp *openproject.WorkPackage) (int64, string) {
		id := refID(wp.Assignee)
		if u, ok := r.st.users[id]; ok {
			return id, u.Name
		}
		return id, ""
	}, "/api/v3/users/"},
}

// readGroupBy parses the groupBy parameter: nil when it is absent or
// empty (no grouping, as on the real server), an InvalidQuery error for a
// column the fake cannot group by.
func readGroupBy(q url.Values) (*groupColumn, *apiError) {
	name := q.Get("groupBy")
	if name == "" {
		return nil, nil
	}
	for i := range groupColumns {
		if groupColumns[i].name == name {
			return &groupColumns[i], nil
		}
	}
	// The real Query validates group_by against its groupable columns and
	// reports the error through InvalidQuery; the exact message is
	// unverified.
	return nil, errInvalidQuery("Group by is invalid.")
}

// groups renders the groups of a grouped work package list: one per
// distinct value among all matching work packages (not only the page's),
// with how many of them have it. The shape is what
// API::Decorators::AggregationGroup renders (lib/api/decorators/
// aggregation_group.rb; spec/lib/api/v3/work_packages/
// work_package_aggregation_group_spec.rb): value (the value's name, null
// for none), count, _links.valueLink (an array with the value's link,
// href null for none) and _links.groupBy (the query column). The
// decorator defines no _type, so none is rendered. The real order follows
// the database's grouping; the fake orders by the value's id.
func (r *renderer) groups(col *groupColumn, match []*openproject.WorkPackage) []obj {
	type group struct {
		id    int64
		title string
		count int
	}
	byID := map[int64]*group{}
	var order []*group
	for _, wp := range match {
		id, title := col.key(r, wp)
		g, ok := byID[id]
		if !ok {
			g = &group{id: id, title: title}
			byID[id] = g
			order = append(order, g)
		}
		g.count++
	}
	slices.SortFunc(order, func(a, b *group) int { return cmp.Compare(a.id, b.id) })
	groupBy := link("/api/v3/queries/group_bys/"+col.name, col.caption)
	out := make([]obj, 0, len(order))
	for _, g := range order {
		var value, href any
		if g.id != 0 {
			value, href = g.title, col.base+itoa(g.id)
		}
		out = append(out, obj{
			{"_links", obj{
				{"valueLink", []obj{{{"href", href}}}},
				{"groupBy", groupBy},
			}},
			{"value", value},
			{"count", g.count},
		})
	}
	return out
}

// withGroups adds groups to a rendered collection, after its paging
// properties, where API::Decorators::Collection renders them.
func withGroups(coll obj, groups []obj) obj {
	out := make(obj, 0, len(coll)+1)
	for _, p := range coll {
		if p.Key == "_embedded" {
			out = append(out, kv{"groups", groups})
		}
		out = append(out, p)
	}
	return out
}

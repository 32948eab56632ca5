package optest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// wpElementNames is what select may address on a work package element:
// every property, link and embedded resource the renderer can produce.
var wpElementNames = []string{
	"_type", "id", "lockVersion", "subject", "description", "scheduleManually", "readonly",
	"startDate", "dueDate", "derivedStartDate", "derivedDueDate", "estimatedTime",
	"derivedEstimatedTime", "percentageDone", "createdAt", "updatedAt",
	"self", "schema", "update", "delete", "attachments", "addAttachment", "author", "responsible",
	"relations", "revisions", "assignee", "priority", "project", "status", "type", "version",
	"addComment", "parent", "category", "children", "ancestors", "timeEntries", "watchers",
}

// wpSelectSchema lists what select may address on work package lists.
var wpSelectSchema = &selectSchema{
	names: []string{"_type", "total", "count", "pageSize", "offset", "elements", "schemas",
		"self", "jumpTo", "changeSize", "previousByOffset", "nextByOffset"},
	elements: &selectSchema{names: wpElementNames},
}

func (s *Server) listAllWorkPackages(ex *exchange, _ []string) {
	s.listWorkPackages(ex, "")
}

func (s *Server) listProjectWorkPackages(ex *exchange, args []string) {
	s.listWorkPackages(ex, args[0])
}

// listWorkPackages answers GET /work_packages and
// GET /projects/{id}/work_packages (that project's work packages only).
// Without a filters parameter only open work packages are listed, as the
// real server applies [{"status":{"operator":"o"}}] by default.
func (s *Server) listWorkPackages(ex *exchange, projectArg string) {
	q := ex.r.URL.Query()
	sel := parseSelect(q)
	if sel != nil {
		if bad, ok := wpSelectSchema.validate(sel, ""); !ok {
			ex.sendAPIError(errInvalidSelect(bad, wpSelectSchema))
			return
		}
	}
	pg := s.parsePage(q)
	now := s.clock()

	s.st.mu.RLock()
	out, apiErr := s.renderWorkPackageList(ex, q, projectArg, pg, now)
	s.st.mu.RUnlock()
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	if sel != nil {
		out = prune(out, sel)
	}
	ex.sendHAL(http.StatusOK, out)
}

// renderWorkPackageList filters, sorts, pages and renders a work package
// list. The caller holds the store's read lock.
func (s *Server) renderWorkPackageList(ex *exchange, q url.Values, projectArg string, pg page, now time.Time) (obj, *apiError) {
	r := s.newRenderer(ex.user)
	base := "/api/v3/work_packages"
	var scope int64
	if projectArg != "" {
		p, ok := s.visibleProject(ex.user, projectArg)
		if !ok {
			return nil, errNotFound(msgProjectMissing)
		}
		scope = p.ID
		base = "/api/v3/projects/" + itoa(p.ID) + "/work_packages"
		// A visible project whose work packages the caller may not see
		// refuses its list (403, paths/project_work_packages.yml). A share
		// in the project is enough to list it, as for the global list;
		// that newer servers ask authorize_in_any_work_package here too is
		// an assumption (older ones asked authorize(:view_work_packages)).
		if !s.st.seesWPsIn(ex.user, p.ID) {
			return nil, errForbidden(msgProjectWPForbidden)
		}
	} else if !s.st.seesAnyWP(ex.user) {
		// Without view_work_packages in any project, or a shared work
		// package, the real server refuses the global list
		// (authorize_in_any_work_package(:view_work_packages),
		// lib/api/v3/work_packages/work_packages_api.rb).
		return nil, errForbidden(msgWPForbidden)
	}
	fs, given, apiErr := readFilters(q, true)
	if apiErr != nil {
		return nil, apiErr
	}
	group, apiErr := readGroupBy(q)
	if apiErr != nil {
		return nil, apiErr
	}
	if !given {
		fs = openproject.Filters{openproject.StatusOpen()}
	}
	env := wpFilterEnv{st: s.st, caller: ex.user, now: now}
	preds, apiErr := env.compileWPFilters(fs)
	if apiErr != nil {
		return nil, apiErr
	}
	keys, apiErr := readSort(q, wpSortField)
	if apiErr != nil {
		return nil, apiErr
	}
	var match []*openproject.WorkPackage
	for _, wp := range s.st.wpOrder {
		if scope != 0 && wp.Project.ID != scope {
			continue
		}
		if !r.canSeeWP(wp) {
			continue
		}
		if matchAll(wp, preds) {
			match = append(match, wp)
		}
	}
	sortItems(match, keys, func(wp *openproject.WorkPackage) int64 { return wp.ID })
	from, to := pg.window(len(match))
	pageItems := match[from:to]
	elems := make([]obj, 0, len(pageItems))
	var schemaIDs []string
	for _, wp := range pageItems {
		elems = append(elems, r.workPackage(wp))
		sid := fmt.Sprintf("%d-%d", wp.Project.ID, wp.Type.ID)
		if !slices.Contains(schemaIDs, sid) {
			schemaIDs = append(schemaIDs, sid)
		}
	}
	schemaFilter := openproject.Filters{{Name: "id", Operator: "=", Values: schemaIDs}}.String()
	schemaElems := make([]obj, 0, len(schemaIDs))
	for _, sid := range schemaIDs {
		schemaElems = append(schemaElems, obj{
			{"_type", "Schema"},
			{"_links", obj{{"self", link("/api/v3/work_packages/schemas/"+sid, "")}}},
		})
	}
	schemas := unpaginatedCollection("/api/v3/work_packages/schemas?filters="+url.QueryEscape(schemaFilter), schemaElems)
	extraLinks := obj{{"schemas", link("/api/v3/work_packages/schemas?filters="+url.QueryEscape(schemaFilter), "")}}
	out := pagedCollection("WorkPackageCollection", base, q, pg, len(match), elems, extraLinks, obj{{"schemas", schemas}})
	if group != nil {
		out = withGroups(out, r.groups(group, match))
	}
	return out, nil
}

// visibleWP returns a work package the caller can see. The caller holds
// the store lock.
func (s *Server) visibleWP(u *User, arg string) (*openproject.WorkPackage, bool) {
	return visibleByID(arg, s.st.wps, func(x *openproject.WorkPackage) bool { return s.st.canSeeWP(u, x) })
}

func (s *Server) getWorkPackage(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	wp, ok := s.visibleWP(ex.user, args[0])
	if ok {
		o = s.newRenderer(ex.user).workPackage(wp)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

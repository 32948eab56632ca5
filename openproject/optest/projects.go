package optest

import (
	"net/http"
)

// projectSelectSchema lists what select may address on the project list.
var projectSelectSchema = &selectSchema{
	names: []string{"_type", "total", "count", "pageSize", "offset", "elements",
		"self", "jumpTo", "changeSize", "previousByOffset", "nextByOffset", "representations"},
	elements: &selectSchema{names: []string{
		"_type", "id", "identifier", "name", "active", "public", "statusExplanation", "description",
		"createdAt", "updatedAt", "self", "createWorkPackage", "createWorkPackageImmediate", "categories",
		"types", "versions", "workPackages", "memberships", "parent", "ancestors", "status",
	}},
}

// listProjects answers GET /projects: the projects the caller can see.
func (s *Server) listProjects(ex *exchange, _ []string) {
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	preds, apiErr := compileProjectFilters(fs)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	keys, apiErr := readSort(q, projectSortField)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	sel := parseSelect(q)
	if sel != nil {
		if bad, ok := projectSelectSchema.validate(sel, ""); !ok {
			ex.sendAPIError(errInvalidSelect(bad, projectSelectSchema))
			return
		}
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var match []*Project
	for _, id := range s.st.projectOrder {
		p := s.st.projects[id]
		if r.canSee(id) && matchAll(p, preds) {
			match = append(match, p)
		}
	}
	sortItems(match, keys, func(p *Project) int64 { return p.ID })
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, p := range match[from:to] {
		o, _ := r.project(p.ID)
		elems = append(elems, o)
	}
	s.st.mu.RUnlock()
	csv := pageHref("/projects.csv", q, itoa(int64(pg.offset)), itoa(int64(pg.size)))
	xls := pageHref("/projects.xls", q, itoa(int64(pg.offset)), itoa(int64(pg.size)))
	extra := obj{{"representations", []obj{
		{{"href", csv}, {"identifier", "csv"}, {"type", "text/csv"}, {"title", "CSV"}},
		{{"href", xls}, {"identifier", "xls"}, {"type", "application/vnd.ms-excel"}, {"title", "XLS"}},
	}}}
	out := pagedCollection("Collection", "/api/v3/projects", q, pg, len(match), elems, extra, nil)
	if sel != nil {
		out = prune(out, sel)
	}
	ex.sendHAL(http.StatusOK, out)
}

// visibleProject resolves a project by id or identifier if the caller can
// see it. The caller holds the store lock.
func (s *Server) visibleProject(u *User, arg string) (*Project, bool) {
	p, ok := s.st.resolveProject(arg)
	if !ok || !s.st.canSee(u, p.ID) {
		return nil, false
	}
	return p, true
}

func (s *Server) getProject(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	p, ok := s.visibleProject(ex.user, args[0])
	if ok {
		o, _ = s.newRenderer(ex.user).project(p.ID)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

func (s *Server) listProjectTypes(ex *exchange, args []string) {
	s.st.mu.RLock()
	p, ok := s.visibleProject(ex.user, args[0])
	var elems []obj
	if ok {
		r := s.newRenderer(ex.user)
		for _, t := range s.st.types {
			o, _ := r.typ(t.ID)
			elems = append(elems, o)
		}
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgProjectMissing))
		return
	}
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/projects/"+itoa(p.ID)+"/types", elems))
}

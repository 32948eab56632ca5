package optest

import (
	"cmp"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// route is one endpoint: a method and a path pattern below /api/v3 whose
// "*" segments are passed to the handler.
type route struct {
	method  string
	pattern []string
	handle  func(ex *exchange, args []string)
}

// routes is the endpoint table. Paths are matched segment by segment;
// the first route whose pattern and method match answers.
func (s *Server) routes() []route {
	r := func(method, pattern string, h func(*exchange, []string)) route {
		var segs []string
		if pattern != "" {
			segs = strings.Split(pattern, "/")
		}
		return route{method: method, pattern: segs, handle: h}
	}
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	return []route{
		r(get, "", s.getRoot),
		r(get, "users", s.listUsers),
		r(get, "users/*", s.getUser),
		r(get, "projects", s.listProjects),
		r(get, "projects/*", s.getProject),
		r(get, "projects/*/work_packages", s.listProjectWorkPackages),
		r(post, "projects/*/work_packages", s.createProjectWorkPackage),
		r(get, "projects/*/types", s.listProjectTypes),
		r(get, "work_packages", s.listAllWorkPackages),
		r(post, "work_packages", s.createWorkPackage),
		r(get, "work_packages/*", s.getWorkPackage),
		r(patch, "work_packages/*", s.patchWorkPackage),
		r(del, "work_packages/*", s.deleteWorkPackage),
		r(get, "work_packages/*/activities", s.listActivities),
		r(post, "work_packages/*/activities", s.postComment),
		r(get, "work_packages/*/attachments", s.listWorkPackageAttachments),
		r(get, "activities/*", s.getActivity),
		r(get, "statuses", s.listStatuses),
		r(get, "statuses/*", s.getStatus),
		r(get, "types", s.listTypes),
		r(get, "types/*", s.getType),
		r(get, "priorities", s.listPriorities),
		r(get, "priorities/*", s.getPriority),
		r(get, "wiki_pages/*", s.getWikiPage),
		r(get, "wiki_pages/*/attachments", s.listWikiAttachments),
		r(get, "attachments/*", s.getAttachment),
		r(get, "meetings", s.listMeetings),
		r(get, "meetings/*", s.getMeeting),
		r(get, "meetings/*/attachments", s.listMeetingAttachments),
		r(get, "meetings/*/agenda_items", s.listAgendaItems),
		r(get, "meetings/*/agenda_items/*", s.getMeetingAgendaItem),
		r(get, "meeting_agenda_items/*", s.getAgendaItem),
		r(get, "queries", s.listQueries),
		r(get, "queries/*", s.getQuery),
		r(get, "spec.json", s.getSpec),
	}
}

// route dispatches an authenticated request.
func (s *Server) route(ex *exchange) {
	path := strings.TrimSuffix(ex.r.URL.Path, "/")
	if path != "/api/v3" && !strings.HasPrefix(path, "/api/v3/") {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	method := ex.r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodDelete && !ex.checkContentType() {
		return
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/api/v3"), "/")
	var segs []string
	if rest != "" {
		segs = strings.Split(rest, "/")
	}
	var allowed []string
	for _, rt := range s.routeTable() {
		args, ok := matchPattern(rt.pattern, segs)
		if !ok {
			continue
		}
		if rt.method == method {
			rt.handle(ex, args)
			return
		}
		allowed = append(allowed, rt.method)
	}
	if len(allowed) > 0 {
		// Undocumented in the spec; Grape answers 405 for a known path
		// with another method.
		ex.send(http.StatusMethodNotAllowed, halContentType,
			encodeJSON(errorBody("MethodNotAllowed", "The requested HTTP method is not allowed for this resource.", "")),
			map[string]string{"Allow": strings.Join(allowed, ", ")})
		return
	}
	ex.sendAPIError(errNotFound(msgNotFound))
}

// routeTable returns the endpoint table, built once.
func (s *Server) routeTable() []route {
	s.routesOnce.Do(func() { s.routeList = s.routes() })
	return s.routeList
}

// matchPattern matches path segments against a pattern.
func matchPattern(pattern, segs []string) ([]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var args []string
	for i, p := range pattern {
		switch {
		case p == "*":
			if segs[i] == "" {
				return nil, false
			}
			args = append(args, segs[i])
		case p != segs[i]:
			return nil, false
		}
	}
	return args, true
}

// checkContentType enforces the real server's rules for requests with a
// body: no Content-Type gives 406 with a text/plain body, a type other than
// JSON gives 415.
func (ex *exchange) checkContentType() bool {
	ct := ex.r.Header.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		ex.send(http.StatusNotAcceptable, "text/plain; charset=utf-8", []byte("Missing content-type header"), nil)
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && mt != "application/hal+json") {
		ex.sendAPIError(&apiError{
			status:     http.StatusUnsupportedMediaType,
			identifier: "TypeNotSupported",
			message:    fmt.Sprintf("Expected CONTENT-TYPE to be (application/json or application/hal+json) but got (%s).", ct),
		})
		return false
	}
	return true
}

func (s *Server) getRoot(ex *exchange, _ []string) {
	s.st.mu.RLock()
	o := s.newRenderer(ex.user).root(s.st.instanceName, s.opts.CoreVersion)
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, o)
}

// listUsers answers GET /users. Listing users needs an administrator (the
// real server requires manage_user); others get 403.
func (s *Server) listUsers(ex *exchange, _ []string) {
	if !ex.user.Admin {
		ex.sendAPIError(errForbidden(msgForbidden))
		return
	}
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	var preds []func(*User) bool
	for _, f := range fs {
		name := canonicalFilterName(f.Name)
		var p func(*User) bool
		var err *apiError
		switch name {
		case "id":
			p, err = idFilter(f, name, func(u *User) int64 { return u.ID })
		case "status":
			p, err = userStatusFilter(f)
		default:
			err = errInvalidQuery(msgFilterUnknown)
		}
		if err != nil {
			ex.sendAPIError(err)
			return
		}
		preds = append(preds, p)
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var match []*User
	for _, id := range s.st.userOrder {
		if u := s.st.users[id]; matchAll(u, preds) {
			match = append(match, u)
		}
	}
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, u := range match[from:to] {
		o, _ := r.user(u.ID)
		elems = append(elems, o)
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/users", q, pg, len(match), elems, nil, nil))
}

// getUser answers GET /users/{id} and /users/me. Any authenticated user
// may read other users' public properties.
func (s *Server) getUser(ex *exchange, args []string) {
	id := ex.user.ID
	if args[0] != "me" {
		var ok bool
		if id, ok = parseID(args[0]); !ok {
			ex.sendAPIError(errNotFound(msgUserNotFound))
			return
		}
	}
	s.st.mu.RLock()
	o, ok := s.newRenderer(ex.user).user(id)
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgUserNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

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
	} else if !ex.user.Admin && len(s.st.visibleProjects(ex.user)) == 0 {
		// Without view_work_packages in any project the real server
		// refuses the global list.
		return nil, errForbidden(msgWPForbidden)
	}
	fs, given, apiErr := readFilters(q, true)
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
		if scope != 0 {
			if wp.Project.ID != scope {
				continue
			}
		} else if !r.canSee(wp.Project.ID) {
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
	return pagedCollection("WorkPackageCollection", base, q, pg, len(match), elems, extraLinks, obj{{"schemas", schemas}}), nil
}

// visibleWP returns a work package the caller can see. The caller holds
// the store lock.
func (s *Server) visibleWP(u *User, arg string) (*openproject.WorkPackage, bool) {
	return visibleByID(s.st, u, arg, s.st.wps, func(x *openproject.WorkPackage) int64 { return x.Project.ID })
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

// listActivities answers GET /work_packages/{id}/activities: every journal
// of the work package in one unpaginated collection. Paging parameters
// are ignored, as on the real server.
func (s *Server) listActivities(ex *exchange, args []string) {
	s.st.mu.RLock()
	wp, ok := s.visibleWP(ex.user, args[0])
	var elems []obj
	if ok {
		r := s.newRenderer(ex.user)
		for _, a := range s.st.actsByWP[wp.ID] {
			if r.activityVisible(a, wp) {
				elems = append(elems, r.activity(a))
			}
		}
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/work_packages/"+itoa(wp.ID)+"/activities", elems))
}

func (s *Server) getActivity(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	found := false
	if id, ok := parseID(args[0]); ok {
		if a, ok := s.st.acts[id]; ok {
			if wp, ok := s.st.wps[a.WorkPackageID]; ok && s.st.canSee(ex.user, wp.Project.ID) {
				r := s.newRenderer(ex.user)
				if r.activityVisible(a, wp) {
					o, found = r.activity(a), true
				}
			}
		}
	}
	s.st.mu.RUnlock()
	if !found {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

func (s *Server) listWorkPackageAttachments(ex *exchange, args []string) {
	s.st.mu.RLock()
	wp, ok := s.visibleWP(ex.user, args[0])
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgWPNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, emptyCollection("/api/v3/work_packages/"+itoa(wp.ID)+"/attachments"))
}

func (s *Server) listStatuses(ex *exchange, _ []string) {
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	elems := make([]obj, 0, len(s.st.statuses))
	for _, st := range s.st.statuses {
		o, _ := r.status(st.ID)
		elems = append(elems, o)
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/statuses", elems))
}

func (s *Server) getStatus(ex *exchange, args []string) {
	s.getSimple(ex, args[0], func(r *renderer, id int64) (obj, bool) { return r.status(id) })
}

func (s *Server) listTypes(ex *exchange, _ []string) {
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	elems := make([]obj, 0, len(s.st.types))
	for _, t := range s.st.types {
		o, _ := r.typ(t.ID)
		elems = append(elems, o)
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/types", elems))
}

func (s *Server) getType(ex *exchange, args []string) {
	s.getSimple(ex, args[0], func(r *renderer, id int64) (obj, bool) { return r.typ(id) })
}

func (s *Server) listPriorities(ex *exchange, _ []string) {
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	elems := make([]obj, 0, len(s.st.priorities))
	for _, p := range s.st.priorities {
		o, _ := r.priority(p.ID)
		elems = append(elems, o)
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/priorities", elems))
}

func (s *Server) getPriority(ex *exchange, args []string) {
	s.getSimple(ex, args[0], func(r *renderer, id int64) (obj, bool) { return r.priority(id) })
}

// getSimple answers a GET of a global resource by numeric id.
func (s *Server) getSimple(ex *exchange, arg string, render func(*renderer, int64) (obj, bool)) {
	id, ok := parseID(arg)
	var o obj
	if ok {
		s.st.mu.RLock()
		o, ok = render(s.newRenderer(ex.user), id)
		s.st.mu.RUnlock()
	}
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// visibleWiki returns a wiki page the caller can see. The caller holds the
// store lock.
func (s *Server) visibleWiki(u *User, arg string) (*openproject.WikiPage, bool) {
	return visibleByID(s.st, u, arg, s.st.wikis, func(x *openproject.WikiPage) int64 { return x.Project.ID })
}

// getWikiPage answers GET /wiki_pages/{id}. There is no wiki page list on
// the servers imitated, so /wiki_pages itself is an unknown path (404).
func (s *Server) getWikiPage(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	w, ok := s.visibleWiki(ex.user, args[0])
	if ok {
		o = s.newRenderer(ex.user).wikiPage(w)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

func (s *Server) listWikiAttachments(ex *exchange, args []string) {
	s.st.mu.RLock()
	w, ok := s.visibleWiki(ex.user, args[0])
	var elems []obj
	if ok {
		r := s.newRenderer(ex.user)
		for i := range w.Attachments {
			elems = append(elems, r.attachment(&w.Attachments[i], w))
		}
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/wiki_pages/"+itoa(w.ID)+"/attachments", elems))
}

func (s *Server) getAttachment(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	found := false
	if id, ok := parseID(args[0]); ok {
		if wid, ok := s.st.attachments[id]; ok {
			if w, ok := s.st.wikis[wid]; ok && s.st.canSee(ex.user, w.Project.ID) {
				for i := range w.Attachments {
					if w.Attachments[i].ID == id {
						o, found = s.newRenderer(ex.user).attachment(&w.Attachments[i], w), true
					}
				}
			}
		}
	}
	s.st.mu.RUnlock()
	if !found {
		ex.sendAPIError(errNotFound("The specified attachment does not exist."))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// listMeetings answers GET /meetings on current servers; legacy servers
// have no such route and answer 404.
func (s *Server) listMeetings(ex *exchange, _ []string) {
	if s.opts.Profile == ProfileLegacy {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	preds, apiErr := compileMeetingFilters(fs, s.clock())
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	keys, apiErr := readSort(q, meetingSortField)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var match []*openproject.Meeting
	for _, id := range s.st.meetingOrder {
		m := s.st.meetings[id]
		if r.canSee(m.Project.ID) && matchAll(m, preds) {
			match = append(match, m)
		}
	}
	sortItems(match, keys, func(m *openproject.Meeting) int64 { return m.ID })
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, m := range match[from:to] {
		elems = append(elems, r.meeting(m))
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/meetings", q, pg, len(match), elems, nil, nil))
}

// visibleMeeting returns a meeting the caller can see. The caller holds
// the store lock.
func (s *Server) visibleMeeting(u *User, arg string) (*openproject.Meeting, bool) {
	return visibleByID(s.st, u, arg, s.st.meetings, func(x *openproject.Meeting) int64 { return x.Project.ID })
}

func (s *Server) getMeeting(ex *exchange, args []string) {
	s.st.mu.RLock()
	var o obj
	m, ok := s.visibleMeeting(ex.user, args[0])
	if ok {
		o = s.newRenderer(ex.user).meeting(m)
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

func (s *Server) listMeetingAttachments(ex *exchange, args []string) {
	s.st.mu.RLock()
	m, ok := s.visibleMeeting(ex.user, args[0])
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, emptyCollection("/api/v3/meetings/"+itoa(m.ID)+"/attachments"))
}

// sortedAgenda returns a meeting's agenda items by position, then id.
func sortedAgenda(m *openproject.Meeting) []*openproject.AgendaItem {
	items := make([]*openproject.AgendaItem, len(m.AgendaItems))
	for i := range m.AgendaItems {
		items[i] = &m.AgendaItems[i]
	}
	slices.SortStableFunc(items, func(a, b *openproject.AgendaItem) int {
		if c := cmp.Compare(a.Position, b.Position); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return items
}

// listAgendaItems answers GET /meetings/{id}/agenda_items: an unpaginated
// collection (current servers only).
func (s *Server) listAgendaItems(ex *exchange, args []string) {
	if s.opts.Profile == ProfileLegacy {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	s.st.mu.RLock()
	m, ok := s.visibleMeeting(ex.user, args[0])
	var elems []obj
	if ok {
		r := s.newRenderer(ex.user)
		for _, it := range sortedAgenda(m) {
			elems = append(elems, r.agendaItem(m, it))
		}
	}
	s.st.mu.RUnlock()
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, unpaginatedCollection("/api/v3/meetings/"+itoa(m.ID)+"/agenda_items", elems))
}

func (s *Server) getMeetingAgendaItem(ex *exchange, args []string) {
	s.sendAgendaItem(ex, args[0], args[1])
}

func (s *Server) getAgendaItem(ex *exchange, args []string) {
	s.sendAgendaItem(ex, "", args[0])
}

// sendAgendaItem answers a single agenda item (current servers only);
// meetingArg, when given, must be the item's meeting.
func (s *Server) sendAgendaItem(ex *exchange, meetingArg, itemArg string) {
	if s.opts.Profile == ProfileLegacy {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	s.st.mu.RLock()
	var o obj
	found := false
	if id, ok := parseID(itemArg); ok {
		if mid, ok := s.st.agenda[id]; ok && (meetingArg == "" || meetingArg == itoa(mid)) {
			if m, ok := s.visibleMeeting(ex.user, itoa(mid)); ok {
				for i := range m.AgendaItems {
					if m.AgendaItems[i].ID == id {
						o, found = s.newRenderer(ex.user).agendaItem(m, &m.AgendaItems[i]), true
					}
				}
			}
		}
	}
	s.st.mu.RUnlock()
	if !found {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	ex.sendHAL(http.StatusOK, o)
}

// queryVisible reports whether the caller sees a saved query. The fake has
// no query owners, so private queries are visible to administrators only;
// public ones to whoever sees their project (global ones to everyone).
func (s *Server) queryVisible(u *User, q *openproject.Query) bool {
	if u.Admin {
		return true
	}
	if !q.Public {
		return false
	}
	return q.Project == nil || q.Project.ID == 0 || s.st.canSee(u, q.Project.ID)
}

func (s *Server) listQueries(ex *exchange, _ []string) {
	q := ex.r.URL.Query()
	fs, _, apiErr := readFilters(q, false)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	preds, apiErr := compileQueryFilters(fs)
	if apiErr != nil {
		ex.sendAPIError(apiErr)
		return
	}
	pg := s.parsePage(q)
	s.st.mu.RLock()
	r := s.newRenderer(ex.user)
	var match []*openproject.Query
	for _, id := range s.st.queryOrder {
		qu := s.st.queries[id]
		if s.queryVisible(ex.user, qu) && matchAll(qu, preds) {
			match = append(match, qu)
		}
	}
	from, to := pg.window(len(match))
	elems := make([]obj, 0, to-from)
	for _, qu := range match[from:to] {
		elems = append(elems, r.query(qu))
	}
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/queries", q, pg, len(match), elems, nil, nil))
}

// getQuery answers GET /queries/{id}. Like the real server it embeds the
// first page of results, honouring offset and pageSize; the fake's queries
// store no filters, so the results are the open work packages of the
// query's project (of all visible projects for global queries).
func (s *Server) getQuery(ex *exchange, args []string) {
	q := ex.r.URL.Query()
	pq := url.Values{}
	for _, k := range []string{"offset", "pageSize"} {
		if v, ok := q[k]; ok {
			pq[k] = v
		}
	}
	pg := s.parsePage(pq)
	now := s.clock()
	s.st.mu.RLock()
	var o obj
	var apiErr *apiError
	found := false
	if id, ok := parseID(args[0]); ok {
		if qu, ok := s.st.queries[id]; ok && s.queryVisible(ex.user, qu) {
			o, found = s.newRenderer(ex.user).query(qu), true
			project := ""
			if qu.Project != nil && qu.Project.ID != 0 {
				project = itoa(qu.Project.ID)
			}
			var results obj
			if results, apiErr = s.renderWorkPackageList(ex, pq, project, pg, now); apiErr == nil {
				o = append(obj{{"_embedded", obj{{"results", results}}}}, o...)
			}
		}
	}
	s.st.mu.RUnlock()
	switch {
	case !found:
		ex.sendAPIError(errNotFound(msgNotFound))
	case apiErr != nil:
		ex.sendAPIError(apiErr)
	default:
		ex.sendHAL(http.StatusOK, o)
	}
}

// userStatusFilter implements the users' status filter (=, !) over the
// status names active, locked, invited and registered.
func userStatusFilter(f openproject.Filter) (func(*User) bool, *apiError) {
	if f.Operator != "=" && f.Operator != "!" {
		return nil, errOperator("status")
	}
	if len(f.Values) == 0 {
		return nil, errValues("status")
	}
	want := map[string]bool{}
	for _, v := range f.Values {
		switch v {
		case "active", "locked", "invited", "registered":
			want[v] = true
		default:
			return nil, errValues("status")
		}
	}
	neg := f.Operator == "!"
	return func(u *User) bool {
		st := u.Status
		if st == "" {
			st = "active"
		}
		return want[st] != neg
	}, nil
}

// getSpec answers GET /spec.json with a small OpenAPI document in the
// shape of the real one (the real document is about 1.2 MB), enough for
// clients that summarise or filter it.
func (s *Server) getSpec(ex *exchange, _ []string) {
	op := func(tag, summary, id string) obj {
		return obj{{"tags", []string{tag}}, {"summary", summary}, {"operationId", id},
			{"responses", obj{{"200", obj{{"description", "OK"}}}}}}
	}
	schema := func(props ...string) obj {
		p := obj{}
		for _, name := range props {
			p = append(p, kv{name, obj{{"type", "string"}}})
		}
		return obj{{"type", "object"}, {"properties", p}}
	}
	ex.sendHAL(http.StatusOK, obj{
		{"openapi", "3.0.3"},
		{"info", obj{{"title", "OpenProject API V3 (Stable)"}, {"version", "3"}}},
		{"tags", []obj{{{"name", "Projects"}}, {{"name", "Work Packages"}}, {{"name", "Meetings"}}}},
		{"paths", obj{
			{"/api/v3/projects", obj{{"get", op("Projects", "List projects", "list_projects")}}},
			{"/api/v3/projects/{id}", obj{{"get", op("Projects", "View project", "view_project")}}},
			{"/api/v3/work_packages", obj{
				{"get", op("Work Packages", "List work packages", "list_work_packages")},
				{"post", op("Work Packages", "Create work package", "create_work_package")},
			}},
			{"/api/v3/work_packages/{id}", obj{
				{"get", op("Work Packages", "View work package", "view_work_package")},
				{"patch", op("Work Packages", "Update a work package", "update_work_package")},
			}},
			{"/api/v3/meetings/{id}", obj{{"get", op("Meetings", "View meeting", "view_meeting")}}},
		}},
		{"components", obj{{"schemas", obj{
			{"ProjectModel", schema("identifier", "name")},
			{"WorkPackageModel", schema("subject", "startDate", "dueDate")},
			{"WorkPackagePatchModel", schema("subject", "lockVersion")},
		}}}},
	})
}

// visibleByID looks up the entity whose id is arg in byID and returns it
// when u may see its project. The caller holds the store lock.
func visibleByID[T any](st *store, u *User, arg string, byID map[int64]*T, project func(*T) int64) (*T, bool) {
	id, ok := parseID(arg)
	if !ok {
		return nil, false
	}
	v, ok := byID[id]
	if !ok || !st.canSee(u, project(v)) {
		return nil, false
	}
	return v, true
}

package optest

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
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

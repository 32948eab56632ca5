package optest

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// endpoint is one route of the API: a method, a path below /api/v3 in
// http.ServeMux pattern syntax, and the handler, which gets the path's
// wildcards in order.
type endpoint struct {
	method, path string
	handle       func(ex *exchange, args []string)
}

// endpoints is the endpoint table. Its order is the order of the methods
// a 405 answer allows.
func (s *Server) endpoints() []endpoint {
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	return []endpoint{
		{get, "", s.getRoot},
		{get, "/users", s.listUsers},
		{get, "/users/{id}", s.getUser},
		{get, "/projects", s.listProjects},
		{get, "/projects/{id}", s.getProject},
		{get, "/projects/{id}/work_packages", s.listProjectWorkPackages},
		{post, "/projects/{id}/work_packages", s.createProjectWorkPackage},
		{get, "/projects/{id}/types", s.listProjectTypes},
		{get, "/projects/{id}/versions", s.listProjectVersions},
		{get, "/work_packages", s.listAllWorkPackages},
		{post, "/work_packages", s.createWorkPackage},
		{get, "/work_packages/{id}", s.getWorkPackage},
		{patch, "/work_packages/{id}", s.patchWorkPackage},
		{del, "/work_packages/{id}", s.deleteWorkPackage},
		{get, "/work_packages/{id}/activities", s.listActivities},
		{post, "/work_packages/{id}/activities", s.postComment},
		{get, "/work_packages/{id}/attachments", s.listWorkPackageAttachments},
		{get, "/work_packages/{id}/relations", s.listWorkPackageRelations},
		{post, "/work_packages/{id}/relations", s.createRelation},
		{get, "/relations", s.listRelations},
		{get, "/relations/{id}", s.getRelation},
		{get, "/activities/{id}", s.getActivity},
		{get, "/statuses", s.listStatuses},
		{get, "/statuses/{id}", s.getStatus},
		{get, "/types", s.listTypes},
		{get, "/types/{id}", s.getType},
		{get, "/priorities", s.listPriorities},
		{get, "/priorities/{id}", s.getPriority},
		{get, "/wiki_pages/{id}", s.getWikiPage},
		{get, "/wiki_pages/{id}/attachments", s.listWikiAttachments},
		{get, "/attachments/{id}", s.getAttachment},
		{del, "/attachments/{id}", s.deleteAttachment},
		{get, "/attachments/{id}/content", s.getAttachmentContent},
		{get, "/meetings", s.listMeetings},
		{get, "/meetings/{id}", s.getMeeting},
		{get, "/meetings/{id}/attachments", s.listMeetingAttachments},
		{get, "/meetings/{id}/agenda_items", s.listAgendaItems},
		{get, "/meetings/{id}/agenda_items/{item}", s.getMeetingAgendaItem},
		{get, "/meeting_agenda_items/{id}", s.getAgendaItem},
		{get, "/queries", s.listQueries},
		{get, "/queries/{id}", s.getQuery},
		{get, "/time_entries", s.listTimeEntries},
		{post, "/time_entries", s.createTimeEntry},
		{get, "/versions", s.listVersions},
		{get, "/versions/{id}", s.getVersion},
		// GET /work_packages/schemas/{id}; see route for the path the
		// mux sees.
		{get, schemaMuxPath + "/{id}", s.workPackageSchema},
		{get, "/spec.json", s.getSpec},
	}
}

// schemaMuxPath is where route files the work package schemas for the mux.
const schemaMuxPath = "/work_packages-schemas"

// exchangeKey is the context key under which route hands the exchange to
// the mux's handlers.
type exchangeKey struct{}

func exchangeOf(r *http.Request) *exchange { return r.Context().Value(exchangeKey{}).(*exchange) }

// newMux registers the endpoints on a ServeMux, each as "METHOD
// /api/v3/path". So that the mux's own plain-text 404 and 405 never
// answer, every path also gets a pattern without method, which answers
// the HAL 405 with the path's methods, and "/" answers the HAL 404.
func (s *Server) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	var paths []string
	allowed := map[string][]string{}
	for _, e := range s.endpoints() {
		pattern := "/api/v3" + e.path
		if allowed[pattern] == nil {
			paths = append(paths, pattern)
		}
		allowed[pattern] = append(allowed[pattern], e.method)
		mux.HandleFunc(e.method+" "+pattern, endpointHandler(pattern, e.handle))
	}
	for _, p := range paths {
		allow := strings.Join(allowed[p], ", ")
		mux.HandleFunc(p, func(_ http.ResponseWriter, r *http.Request) {
			// Undocumented in the spec; Grape answers 405 for a known path
			// with another method.
			exchangeOf(r).send(http.StatusMethodNotAllowed, halContentType,
				encodeJSON(errorBody("MethodNotAllowed", "The requested HTTP method is not allowed for this resource.", "")),
				map[string]string{"Allow": allow})
		})
	}
	mux.HandleFunc("/", func(_ http.ResponseWriter, r *http.Request) {
		exchangeOf(r).sendAPIError(errNotFound(msgNotFound))
	})
	return mux
}

// endpointHandler adapts a handler to the mux: it passes the values of
// pattern's wildcards in order.
func endpointHandler(pattern string, handle func(*exchange, []string)) http.HandlerFunc {
	var names []string
	for seg := range strings.SplitSeq(pattern, "/") {
		if strings.HasPrefix(seg, "{") {
			names = append(names, strings.Trim(seg, "{}"))
		}
	}
	return func(_ http.ResponseWriter, r *http.Request) {
		var args []string
		for _, n := range names {
			args = append(args, r.PathValue(n))
		}
		ex := exchangeOf(r)
		ex.route = pattern
		handle(ex, args)
	}
}

// route dispatches an authenticated request. The mux sees a request of
// its own: the path without its trailing slash in a form it neither
// cleans nor redirects (muxURL), and HEAD as GET. The real server answers
// an unclean path with 404, not a redirect.
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
	// /work_packages/schemas/{id} and /work_packages/{id}/activities
	// would be conflicting mux patterns, so the schemas get a path of
	// their own.
	if rest, ok := strings.CutPrefix(path, "/api/v3/work_packages/schemas/"); ok {
		path = "/api/v3" + schemaMuxPath + "/" + rest
	}
	u, ok := muxURL(path)
	if !ok {
		ex.sendAPIError(errNotFound(msgNotFound))
		return
	}
	r := ex.r.WithContext(context.WithValue(ex.r.Context(), exchangeKey{}, ex))
	r.Method, r.URL, r.RequestURI = method, u, ""
	s.mux.ServeHTTP(ex.w, r)
}

// muxURL returns the URL the mux matches for path, an /api/v3 path
// without trailing slash. Every segment is escaped, "." and ".." as %2E
// and %2E%2E, so that the mux takes them for arguments instead of
// cleaning the path; false means a segment is empty, which no endpoint
// takes.
func muxURL(path string) (*url.URL, bool) {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/api/v3"), "/")
	if rest == "" {
		return &url.URL{Path: "/api/v3"}, true
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		switch seg {
		case "":
			return nil, false
		case ".":
			segs[i] = "%2E"
		case "..":
			segs[i] = "%2E%2E"
		default:
			segs[i] = url.PathEscape(seg)
		}
	}
	return &url.URL{Path: "/api/v3/" + rest, RawPath: "/api/v3/" + strings.Join(segs, "/")}, true
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

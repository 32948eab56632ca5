package optest

import (
	"net/http"
	"net/url"

	"github.com/opsearch/opsearch/openproject"
)

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

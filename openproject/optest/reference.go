package optest

import (
	"net/http"
)

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

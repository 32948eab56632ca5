package optest

import (
	"net/http"
)

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
			if wp, ok := s.st.wps[a.WorkPackageID]; ok && s.st.canSeeWP(ex.user, wp) {
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

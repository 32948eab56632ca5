package optest

import (
	"net/http"

	"github.com/opsearch/opsearch/openproject"
)

// visibleWiki returns a wiki page the caller can see: one of a project
// where they hold view_wiki_pages. The caller holds the store lock.
func (s *Server) visibleWiki(u *User, arg string) (*openproject.WikiPage, bool) {
	return visibleByID(arg, s.st.wikis, func(x *openproject.WikiPage) bool {
		return s.st.allowed(u, x.Project.ID, PermViewWikiPages)
	})
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
			if w, ok := s.st.wikis[wid]; ok && s.st.allowed(ex.user, w.Project.ID, PermViewWikiPages) {
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

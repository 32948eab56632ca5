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

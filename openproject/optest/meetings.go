package optest

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/opsearch/opsearch/openproject"
)

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
	elems, total := visiblePage(s, ex.user, s.st.meetingOrder, func(id int64) *openproject.Meeting { return s.st.meetings[id] },
		func(m *openproject.Meeting) int64 { return m.Project.ID }, func(m *openproject.Meeting) int64 { return m.ID },
		PermViewMeetings, preds, keys, pg, r.meeting)
	s.st.mu.RUnlock()
	ex.sendHAL(http.StatusOK, pagedCollection("Collection", "/api/v3/meetings", q, pg, total, elems, nil, nil))
}

// visibleMeeting returns a meeting the caller can see: one of a project
// where they hold view_meetings. The caller holds the store lock.
func (s *Server) visibleMeeting(u *User, arg string) (*openproject.Meeting, bool) {
	return visibleByID(arg, s.st.meetings, func(x *openproject.Meeting) bool {
		return s.st.allowed(u, x.Project.ID, PermViewMeetings)
	})
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

package optest

import (
	"cmp"
	"net/http"

	"github.com/opsearch/opsearch/openproject"
)

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
		st := cmp.Or(u.Status, "active")
		return want[st] != neg
	}, nil
}

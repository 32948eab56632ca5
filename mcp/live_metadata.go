package mcp

import (
	"context"
	"strings"

	"github.com/opsearch/opsearch/openproject"
)

// The metadata tools: list_types, list_statuses, list_priorities and
// list_users.

type typesIn struct {
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"only types enabled in this project (id or identifier)"`
}

func (s *server) listTypes(ctx context.Context, in typesIn) (listOut[typeRow], error) {
	project := ""
	if in.ProjectID != "" {
		var err error
		if project, err = in.ProjectID.project("projectId"); err != nil {
			return listOut[typeRow]{}, err
		}
	}
	ts, err := s.api.Types(ctx, project)
	if err != nil {
		return listOut[typeRow]{}, err
	}
	return allOf(ts, func(t openproject.Type) typeRow {
		return typeRow{ID: t.ID, Name: t.Name, IsMilestone: t.IsMilestone, IsDefault: t.IsDefault}
	}), nil
}

type noArgs struct{}

func (s *server) listStatuses(ctx context.Context, _ noArgs) (listOut[statusRow], error) {
	sts, err := s.api.Statuses(ctx)
	if err != nil {
		return listOut[statusRow]{}, err
	}
	return allOf(sts, func(st openproject.Status) statusRow {
		return statusRow{ID: st.ID, Name: st.Name, IsClosed: st.IsClosed, IsDefault: st.IsDefault}
	}), nil
}

func (s *server) listPriorities(ctx context.Context, _ noArgs) (listOut[priorityRow], error) {
	ps, err := s.api.Priorities(ctx)
	if err != nil {
		return listOut[priorityRow]{}, err
	}
	return allOf(ps, func(p openproject.Priority) priorityRow {
		return priorityRow{ID: p.ID, Name: p.Name, IsDefault: p.IsDefault, IsActive: p.IsActive}
	}), nil
}

type usersIn struct {
	paging
	Status string `json:"status,omitempty" jsonschema:"active, locked or invited"`
}

func (s *server) listUsers(ctx context.Context, in usersIn) (listOut[userRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[userRow]{}, err
	}
	switch st := strings.ToLower(strings.TrimSpace(in.Status)); st {
	case "":
	case "active", "locked", "invited":
		opts.Filters = openproject.Filters{{Name: "status", Operator: "=", Values: []string{st}}}
	default:
		return listOut[userRow]{}, argErr("status", "must be active, locked or invited, got %q", in.Status)
	}
	p, err := s.api.ListUsers(ctx, opts)
	if err != nil {
		return listOut[userRow]{}, err
	}
	return pageOf(p, userRowOf), nil
}

type typeRow struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	IsMilestone bool   `json:"isMilestone"`
	IsDefault   bool   `json:"isDefault"`
}

type statusRow struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	IsClosed  bool   `json:"isClosed"`
	IsDefault bool   `json:"isDefault"`
}

type priorityRow struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	IsDefault bool   `json:"isDefault"`
	IsActive  bool   `json:"isActive"`
}

type userRow struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Login  string `json:"login,omitempty"`
	Status string `json:"status,omitempty"`
	Admin  bool   `json:"admin,omitempty"`
}

func userRowOf(u openproject.User) (userRow, bool) {
	return userRow{ID: u.ID, Name: u.Name, Login: u.Login, Status: u.Status, Admin: u.Admin}, false
}

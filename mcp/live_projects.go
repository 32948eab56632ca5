package mcp

import (
	"context"
	"time"

	"github.com/opsearch/opsearch/openproject"
)

// The project tools: list_projects and get_project.

type listProjectsIn struct {
	paging
	SortBy  string `json:"sortBy,omitempty" jsonschema:"sort, e.g. name:asc or id:desc"`
	Filters string `json:"filters,omitempty" jsonschema:"OpenProject filter JSON, e.g. [{\"active\":{\"operator\":\"=\",\"values\":[\"t\"]}}]"`
}

func (s *server) listProjects(ctx context.Context, in listProjectsIn) (listOut[projectRow], error) {
	opts, err := in.options(20)
	if err == nil {
		opts.SortBy, err = parseSort(in.SortBy)
	}
	if err == nil {
		opts.Filters, err = parseFilters(in.Filters)
	}
	if err != nil {
		return listOut[projectRow]{}, err
	}
	p, err := s.api.ListProjects(ctx, opts)
	if err != nil {
		return listOut[projectRow]{}, err
	}
	return pageOf(p, projectRowOf), nil
}

type projectIn struct {
	ProjectID idOrSlug `json:"projectId" jsonschema:"numeric id or identifier"`
}

func (s *server) getProject(ctx context.Context, in projectIn) (projectDetail, error) {
	p, err := in.ProjectID.project("projectId")
	if err != nil {
		return projectDetail{}, err
	}
	proj, err := s.api.Project(ctx, p)
	if err != nil {
		return projectDetail{}, err
	}
	return projectDetailOf(proj, s.baseURL()), nil
}

type projectRow struct {
	ID          int64     `json:"id"`
	Identifier  string    `json:"identifier"`
	Name        string    `json:"name"`
	Active      bool      `json:"active"`
	Public      bool      `json:"public"`
	Parent      *ref      `json:"parent"`
	Description string    `json:"description"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
}

func projectRowOf(p openproject.Project) (projectRow, bool) {
	desc, cut := capText(p.Description, capRow)
	return projectRow{ID: p.ID, Identifier: p.Identifier, Name: p.Name, Active: p.Active, Public: p.Public,
		Parent: optRefOf(p.Parent), Description: desc, UpdatedAt: p.UpdatedAt}, cut
}

type projectDetail struct {
	ID                int64     `json:"id"`
	Identifier        string    `json:"identifier"`
	Name              string    `json:"name"`
	Active            bool      `json:"active"`
	Public            bool      `json:"public"`
	Parent            *ref      `json:"parent"`
	Description       string    `json:"description"`
	StatusExplanation string    `json:"statusExplanation"`
	CreatedAt         time.Time `json:"createdAt,omitzero"`
	UpdatedAt         time.Time `json:"updatedAt,omitzero"`
	URL               string    `json:"url,omitempty"`
	Truncated         bool      `json:"truncated"`
}

func projectDetailOf(p openproject.Project, base string) projectDetail {
	desc, cut1 := capText(p.Description, capDetail)
	expl, cut2 := capText(p.StatusExplanation, capComment)
	d := projectDetail{ID: p.ID, Identifier: p.Identifier, Name: p.Name, Active: p.Active, Public: p.Public,
		Parent: optRefOf(p.Parent), Description: desc, StatusExplanation: expl,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, Truncated: cut1 || cut2}
	if base != "" && p.Identifier != "" {
		d.URL = base + "/projects/" + p.Identifier
	}
	return d
}

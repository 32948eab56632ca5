package mcp

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/opsearch/opsearch/openproject"
)

// The version tool: list_versions, which with versionId also lists the
// work packages planned for that version.

type listVersionsIn struct {
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier: versions usable there (own and shared)"`
	Status    string   `json:"status,omitempty" jsonschema:"open, locked or closed"`
	VersionID *int64   `json:"versionId,omitempty" jsonschema:"one version: it and its work packages"`
}

type versionsOut struct {
	Total    int          `json:"total"`
	Count    int          `json:"count"`
	Elements []versionRow `json:"elements"`
	// WorkPackages and WorkPackagesTotal are set with versionId only.
	WorkPackages      []wpRow `json:"workPackages,omitempty"`
	WorkPackagesTotal *int    `json:"workPackagesTotal,omitempty"`
	Truncated         bool    `json:"truncated"`
}

type versionRow struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	StartDate   string `json:"startDate,omitempty"`
	EndDate     string `json:"endDate,omitempty"`
	Sharing     string `json:"sharing,omitempty"`
	Project     *ref   `json:"definingProject"`
	Description string `json:"description,omitempty"`
}

// maxVersions bounds the rows of one answer: the versions collection is
// not paginated, and an old instance can have hundreds.
const maxVersions = 100

// maxVersionWPs bounds the work packages listed with one version.
const maxVersionWPs = 50

var versionStatuses = []string{"open", "locked", "closed"}

func (s *server) listVersions(ctx context.Context, in listVersionsIn) (versionsOut, error) {
	status := strings.ToLower(strings.TrimSpace(in.Status))
	if status != "" && !slices.Contains(versionStatuses, status) {
		return versionsOut{}, argErr("status", "must be open, locked or closed, got %q", in.Status)
	}
	var project string
	if in.ProjectID != "" {
		p, err := in.ProjectID.project("projectId")
		if err != nil {
			return versionsOut{}, err
		}
		project = p
	}
	if in.VersionID != nil {
		if err := checkID("versionId", *in.VersionID); err != nil {
			return versionsOut{}, err
		}
		return s.versionWithWorkPackages(ctx, *in.VersionID, project)
	}
	p, err := s.api.ListVersions(ctx, project, openproject.ListOptions{})
	if err != nil {
		return versionsOut{}, err
	}
	out := versionsOut{Elements: []versionRow{}}
	for _, v := range p.Items {
		// The API filters versions by sharing only; status is checked here.
		if status != "" && v.Status != status {
			continue
		}
		out.Total++
		if len(out.Elements) == maxVersions {
			out.Truncated = true
			continue
		}
		row, cut := versionRowOf(v)
		out.Elements = append(out.Elements, row)
		out.Truncated = out.Truncated || cut
	}
	out.Count = len(out.Elements)
	return out, nil
}

// versionWithWorkPackages answers for one version: the version, and its
// work packages (in project, when given), open and closed, most recently
// updated first.
func (s *server) versionWithWorkPackages(ctx context.Context, id int64, project string) (versionsOut, error) {
	v, err := s.api.Version(ctx, id)
	if err != nil {
		return versionsOut{}, err
	}
	row, cut := versionRowOf(v)
	opts := openproject.ListOptions{PageSize: maxVersionWPs, Offset: 1,
		SortBy: []openproject.Sort{{Field: "updatedAt", Direction: "desc"}}}
	list := func(filter string) (openproject.Page[openproject.WorkPackage], error) {
		opts.Filters = openproject.Filters{openproject.StatusAll(),
			{Name: filter, Operator: "=", Values: []string{strconv.FormatInt(id, 10)}}}
		if project != "" {
			return s.api.ListProjectWorkPackages(ctx, project, opts)
		}
		return s.api.ListWorkPackages(ctx, opts)
	}
	// Every released server filters work packages by "version". 17.8
	// made versions multi-valued (targetVersions); in OpenProject's
	// source the version filter then matches any target version
	// (FilterOnTargetVersionsMixin), next to a TargetVersionsFilter whose
	// key, target_version_id, the API names "targetVersion". Should a
	// server drop the old name, it rejects the query as invalid, and the
	// new one is tried.
	p, err := list("version")
	if errors.Is(err, openproject.ErrInvalidQuery) {
		p, err = list("targetVersion")
	}
	if err != nil {
		return versionsOut{}, err
	}
	wps := pageOf(p, wpRowOf)
	total := p.Total
	return versionsOut{Total: 1, Count: 1, Elements: []versionRow{row}, WorkPackages: wps.Elements,
		WorkPackagesTotal: &total, Truncated: cut || wps.Truncated || total > len(wps.Elements)}, nil
}

func versionRowOf(v openproject.Version) (versionRow, bool) {
	name, cut1 := capText(v.Name, capRow)
	desc, cut2 := capText(v.Description, capRow)
	return versionRow{ID: v.ID, Name: name, Status: v.Status, StartDate: v.StartDate, EndDate: v.EndDate,
		Sharing: v.Sharing, Project: refOf(v.Project), Description: desc}, cut1 || cut2
}

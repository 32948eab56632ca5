package mcp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// The work package tools: list_work_packages, get_work_package and
// list_work_package_activities (the journal, optionally ranked).

type listWPIn struct {
	paging
	ProjectID  idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier"`
	Status     string   `json:"status,omitempty" jsonschema:"open (default), closed, all, or a status id"`
	Type       *int64   `json:"type,omitempty" jsonschema:"type id"`
	AssigneeID *int64   `json:"assigneeId,omitempty" jsonschema:"assignee user id"`
	Subject    string   `json:"subject,omitempty" jsonschema:"subject contains this text"`
	SortBy     string   `json:"sortBy,omitempty" jsonschema:"default updatedAt:desc"`
	Filters    string   `json:"filters,omitempty" jsonschema:"OpenProject filter JSON; replaces the filter of the same name from the arguments above"`
}

func (s *server) listWorkPackages(ctx context.Context, in listWPIn) (listOut[wpRow], error) {
	var zero listOut[wpRow]
	opts, err := in.options(20)
	if err != nil {
		return zero, err
	}
	if opts.SortBy, err = parseSort(in.SortBy); err != nil {
		return zero, err
	}
	if opts.SortBy == nil {
		opts.SortBy = []openproject.Sort{{Field: "updatedAt", Direction: "desc"}}
	}
	raw, err := parseFilters(in.Filters)
	if err != nil {
		return zero, err
	}
	fs := slices.Clone(raw)
	add := func(f openproject.Filter) {
		// Raw filters win over the convenience arguments of the same name.
		if !slices.ContainsFunc(raw, func(r openproject.Filter) bool { return r.Name == f.Name }) {
			fs = append(fs, f)
		}
	}
	switch st := strings.ToLower(strings.TrimSpace(in.Status)); st {
	case "":
		if raw == nil {
			add(openproject.StatusOpen())
		}
	case "open":
		add(openproject.StatusOpen())
	case "closed":
		add(openproject.StatusClosed())
	case "all", "*":
		add(openproject.StatusAll())
	default:
		id, err := strconv.ParseInt(st, 10, 64)
		if err != nil || id <= 0 {
			return zero, argErr("status", "must be open, closed, all or a status id, got %q", in.Status)
		}
		add(openproject.Filter{Name: "status", Operator: "=", Values: []string{st}})
	}
	if in.Type != nil {
		if err := checkID("type", *in.Type); err != nil {
			return zero, err
		}
		add(openproject.Filter{Name: "type", Operator: "=", Values: []string{strconv.FormatInt(*in.Type, 10)}})
	}
	if in.AssigneeID != nil {
		if err := checkID("assigneeId", *in.AssigneeID); err != nil {
			return zero, err
		}
		add(openproject.Filter{Name: "assignee", Operator: "=", Values: []string{strconv.FormatInt(*in.AssigneeID, 10)}})
	}
	if subj := strings.TrimSpace(in.Subject); subj != "" {
		add(openproject.SubjectContains(subj))
	}
	opts.Filters = fs
	var p openproject.Page[openproject.WorkPackage]
	if in.ProjectID != "" {
		proj, perr := in.ProjectID.project("projectId")
		if perr != nil {
			return zero, perr
		}
		p, err = s.api.ListProjectWorkPackages(ctx, proj, opts)
	} else {
		p, err = s.api.ListWorkPackages(ctx, opts)
	}
	if err != nil {
		return zero, err
	}
	return pageOf(p, wpRowOf), nil
}

type wpIn struct {
	WorkPackageID int64 `json:"workPackageId" jsonschema:"work package id"`
}

func (s *server) getWorkPackage(ctx context.Context, in wpIn) (wpDetail, error) {
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return wpDetail{}, err
	}
	wp, err := s.api.WorkPackage(ctx, in.WorkPackageID)
	if err != nil {
		return wpDetail{}, err
	}
	return s.workPackageDetail(ctx, wp)
}

// workPackageDetail is get_work_package's answer for a work package just
// read: its custom fields named from its schema.
func (s *server) workPackageDetail(ctx context.Context, wp openproject.WorkPackage) (wpDetail, error) {
	d := wpDetailOf(wp, s.baseURL())
	if len(wp.CustomFields) > 0 {
		// The work package names its custom fields only by key; the
		// schema of its project and type holds the names people use.
		names, err := s.api.WorkPackageSchemaNames(ctx, wp.Project.ID, wp.Type.ID)
		if err != nil && ctx.Err() != nil {
			return wpDetail{}, err
		}
		// Without the schema (an error, or a server that hides it) the
		// values still help, under their keys.
		cut := false
		d.CustomFields, cut = customFieldRows(wp.CustomFields, names)
		d.Truncated = d.Truncated || cut
	}
	return d, nil
}

// customFieldRow is one custom field of a work package: the name from the
// schema (the key, customFieldN, when the schema did not name it) and the
// value as text.
type customFieldRow struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// maxCustomFields bounds the custom fields of one answer.
const maxCustomFields = 30

func customFieldRows(cfs []openproject.CustomField, names map[string]string) ([]customFieldRow, bool) {
	rows := make([]customFieldRow, 0, min(len(cfs), maxCustomFields))
	cut := len(cfs) > maxCustomFields
	for _, cf := range cfs[:min(len(cfs), maxCustomFields)] {
		v, c := capText(cf.Value, capRow)
		cut = cut || c
		name := cf.Key
		if n := names[cf.Key]; n != "" {
			name = n
		}
		rows = append(rows, customFieldRow{Name: name, Value: v})
	}
	return rows, cut
}

type wpRow struct {
	ID int64 `json:"id"`
	// DisplayID is the project-based id ("PROJ-12") of servers with
	// semantic identifiers, where the server sends one.
	DisplayID string    `json:"displayId,omitempty"`
	Subject   string    `json:"subject"`
	Type      string    `json:"type"`
	Status    string    `json:"status"`
	Closed    bool      `json:"closed"`
	Priority  string    `json:"priority"`
	Assignee  *ref      `json:"assignee"`
	Project   *ref      `json:"project"`
	DueDate   string    `json:"dueDate,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

func wpRowOf(wp openproject.WorkPackage) (wpRow, bool) {
	subj, cut := capText(wp.Subject, capRow)
	return wpRow{ID: wp.ID, DisplayID: wp.DisplayID, Subject: subj, Type: wp.Type.Title, Status: wp.Status.Title, Closed: wp.Closed,
		Priority: wp.Priority.Title, Assignee: optRefOf(wp.Assignee), Project: refOf(wp.Project),
		DueDate: wp.DueDate, UpdatedAt: wp.UpdatedAt}, cut
}

type wpDetail struct {
	ID             int64     `json:"id"`
	DisplayID      string    `json:"displayId,omitempty"`
	Subject        string    `json:"subject"`
	Description    string    `json:"description"`
	LockVersion    int       `json:"lockVersion"`
	Project        *ref      `json:"project"`
	Type           *ref      `json:"type"`
	Status         *ref      `json:"status"`
	Closed         bool      `json:"closed"`
	Priority       *ref      `json:"priority"`
	Author         *ref      `json:"author"`
	Assignee       *ref      `json:"assignee"`
	Responsible    *ref      `json:"responsible"`
	Parent         *ref      `json:"parent"`
	Version        *ref      `json:"version"`
	StartDate      string    `json:"startDate,omitempty"`
	DueDate        string    `json:"dueDate,omitempty"`
	PercentageDone *int      `json:"percentageDone,omitempty"`
	CreatedAt      time.Time `json:"createdAt,omitzero"`
	UpdatedAt      time.Time `json:"updatedAt,omitzero"`
	// CustomFields are the work package's custom field values, by name.
	CustomFields []customFieldRow `json:"customFields,omitempty"`
	URL          string           `json:"url,omitempty"`
	Truncated    bool             `json:"truncated"`
}

func wpDetailOf(wp openproject.WorkPackage, base string) wpDetail {
	desc, cut := capText(wp.Description, capDetail)
	d := wpDetail{ID: wp.ID, DisplayID: wp.DisplayID, Subject: wp.Subject, Description: desc, LockVersion: wp.LockVersion,
		Project: refOf(wp.Project), Type: refOf(wp.Type), Status: refOf(wp.Status), Closed: wp.Closed,
		Priority: refOf(wp.Priority), Author: refOf(wp.Author), Assignee: optRefOf(wp.Assignee),
		Responsible: optRefOf(wp.Responsible), Parent: optRefOf(wp.Parent), Version: optRefOf(wp.Version),
		StartDate: wp.StartDate, DueDate: wp.DueDate, PercentageDone: wp.PercentageDone,
		CreatedAt: wp.CreatedAt, UpdatedAt: wp.UpdatedAt, Truncated: cut}
	if base != "" {
		d.URL = base + "/work_packages/" + strconv.FormatInt(wp.ID, 10)
	}
	return d
}

// --- activities ---

type activitiesIn struct {
	WorkPackageID int64  `json:"workPackageId" jsonschema:"work package id"`
	OnlyComments  bool   `json:"onlyComments,omitempty" jsonschema:"skip entries without a comment"`
	Query         string `json:"query,omitempty" jsonschema:"keep only entries matching this text, best first"`
	MatchMode     string `json:"matchMode,omitempty" jsonschema:"fuzzy (default, typo-tolerant) or exact (substring)"`
}

type activitiesOut struct {
	WorkPackageID int64         `json:"workPackageId"`
	Total         int           `json:"total"`
	Count         int           `json:"count"`
	Elements      []activityRow `json:"elements"`
	Truncated     bool          `json:"truncated"`
}

// maxActivities bounds one answer; a long-lived work package can have
// hundreds of journal entries.
const maxActivities = 100

// Field weights for ranking activities: the comment is what people wrote,
// the change lines are generated text.
const (
	weightComment = 3
	weightDetails = 1
)

func (s *server) listActivities(ctx context.Context, in activitiesIn) (activitiesOut, error) {
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return activitiesOut{}, err
	}
	mode := strings.ToLower(strings.TrimSpace(in.MatchMode))
	if mode != "" && mode != "fuzzy" && mode != "exact" {
		return activitiesOut{}, argErr("matchMode", "must be fuzzy or exact, got %q", in.MatchMode)
	}
	acts, err := s.api.Activities(ctx, in.WorkPackageID)
	if err != nil {
		return activitiesOut{}, err
	}
	if in.OnlyComments {
		acts = slices.DeleteFunc(acts, func(a openproject.Activity) bool { return !a.IsComment() })
	}
	out := activitiesOut{WorkPackageID: in.WorkPackageID, Elements: []activityRow{}}
	if q := strings.TrimSpace(in.Query); q != "" {
		records := make([]scorer.Record, len(acts))
		for i, a := range acts {
			records[i] = scorer.Record{ID: strconv.FormatInt(a.ID, 10), Updated: a.CreatedAt, Fields: []scorer.Field{
				{Name: "comment", Weight: weightComment, Values: []string{a.Comment}},
				{Name: "details", Weight: weightDetails, Values: a.Details},
			}}
		}
		ranked := scorer.Rank(records, q, scorer.Options{Exact: mode == "exact"})
		matched := make([]openproject.Activity, len(ranked))
		for i, r := range ranked {
			matched[i] = acts[r.Index]
		}
		acts = matched
		if len(acts) > maxActivities {
			acts, out.Truncated = acts[:maxActivities], true
		}
		out.Total = len(ranked)
	} else {
		out.Total = len(acts)
		if len(acts) > maxActivities {
			// Keep the newest: the end of a history is what an agent asks about.
			acts, out.Truncated = acts[len(acts)-maxActivities:], true
		}
	}
	for _, a := range acts {
		row, cut := activityRowOf(a)
		out.Elements = append(out.Elements, row)
		out.Truncated = out.Truncated || cut
	}
	out.Count = len(out.Elements)
	return out, nil
}

type activityRow struct {
	ID        int64     `json:"id"`
	Version   int       `json:"version"`
	User      *ref      `json:"user"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	IsComment bool      `json:"isComment"`
	Comment   string    `json:"comment"`
	Details   []string  `json:"details"`
	Internal  bool      `json:"internal,omitempty"`
}

// maxDetails bounds the change lines kept per activity; a bulk edit can
// touch dozens of fields.
const maxDetails = 20

func activityRowOf(a openproject.Activity) (activityRow, bool) {
	c, cut := capText(a.Comment, capComment)
	row := activityRow{ID: a.ID, Version: a.Version, User: refOf(a.User), CreatedAt: a.CreatedAt,
		IsComment: a.IsComment(), Comment: c, Internal: a.Internal, Details: []string{}}
	for i, d := range a.Details {
		if i == maxDetails {
			cut = true
			break
		}
		d, c := capText(d, capRow)
		cut = cut || c
		row.Details = append(row.Details, d)
	}
	return row, cut
}

package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/opsearch/opsearch/openproject"
)

// This file holds the compact JSON shapes the live tools return. Tool
// answers land in a model's context window, so they carry names next to ids
// (the agent should not need a second call to resolve "status 7"), drop
// HAL plumbing (_links, _embedded, schemas, action links), and cap every
// text that can be long.

// ref is a linked resource: its id and display name.
type ref struct {
	ID   int64  `json:"id"`
	Name string `json:"name,omitempty"`
}

// refOf converts a HAL link; nil when the link is empty (no assignee, no
// parent). An undisclosed link keeps a placeholder name, so the agent learns
// that something exists without seeing it.
func refOf(r openproject.Ref) *ref {
	if r.IsZero() && r.ID == 0 && r.Title == "" {
		return nil
	}
	if r.Undisclosed() {
		return &ref{Name: "(not visible to this API key)"}
	}
	return &ref{ID: r.ID, Name: r.Title}
}

func optRefOf(r *openproject.Ref) *ref {
	if r == nil {
		return nil
	}
	return refOf(*r)
}

// listOut is the shape of every list tool: the API's paging numbers, the
// thin rows of this page, and whether any text in them was cut.
type listOut[T any] struct {
	Total     int  `json:"total"`
	Count     int  `json:"count"`
	PageSize  int  `json:"pageSize"`
	Offset    int  `json:"offset"`
	Elements  []T  `json:"elements"`
	Truncated bool `json:"truncated"`
}

// pageOf builds a list answer from an API page.
func pageOf[T, R any](p openproject.Page[T], row func(T) (R, bool)) listOut[R] {
	out := listOut[R]{Total: p.Total, Count: len(p.Items), PageSize: p.PageSize, Offset: max(p.Offset, 1), Elements: make([]R, 0, len(p.Items))}
	for _, it := range p.Items {
		r, cut := row(it)
		out.Elements = append(out.Elements, r)
		out.Truncated = out.Truncated || cut
	}
	return out
}

// allOf builds a list answer from an unpaginated collection.
func allOf[T, R any](items []T, row func(T) R) listOut[R] {
	out := listOut[R]{Total: len(items), Count: len(items), PageSize: len(items), Offset: 1, Elements: make([]R, 0, len(items))}
	for _, it := range items {
		out.Elements = append(out.Elements, row(it))
	}
	return out
}

// --- projects ---

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

// --- work packages ---

type wpRow struct {
	ID        int64     `json:"id"`
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
	return wpRow{ID: wp.ID, Subject: subj, Type: wp.Type.Title, Status: wp.Status.Title, Closed: wp.Closed,
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
	URL            string    `json:"url,omitempty"`
	Truncated      bool      `json:"truncated"`
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

// --- saved queries ---

type queryRow struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Project   *ref      `json:"project"`
	Public    bool      `json:"public"`
	Starred   bool      `json:"starred"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

func queryRowOf(q openproject.Query) (queryRow, bool) {
	return queryRow{ID: q.ID, Name: q.Name, Project: optRefOf(q.Project), Public: q.Public, Starred: q.Starred, UpdatedAt: q.UpdatedAt}, false
}

type queryDetail struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Project   *ref      `json:"project"`
	Public    bool      `json:"public"`
	Starred   bool      `json:"starred"`
	Filters   []string  `json:"filters"`
	SortBy    []string  `json:"sortBy"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

func queryDetailOf(q openproject.Query) queryDetail {
	d := queryDetail{ID: q.ID, Name: q.Name, Project: optRefOf(q.Project), Public: q.Public, Starred: q.Starred,
		Filters: []string{}, SortBy: append([]string{}, q.SortBy...), UpdatedAt: q.UpdatedAt}
	for _, f := range q.Filters {
		d.Filters = append(d.Filters, filterText(f))
	}
	return d
}

// filterText renders one query filter as "Status open" or
// "Assignee is (OR) Alice, Bob", from the titles the server provides.
func filterText(f openproject.QueryFilter) string {
	parts := []string{f.Name}
	if f.Operator != "" {
		parts = append(parts, f.Operator)
	}
	if len(f.Values) > 0 {
		parts = append(parts, strings.Join(f.Values, ", "))
	}
	return strings.Join(parts, " ")
}

// --- metadata ---

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

// --- meetings ---

type meetingRow struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	StartTime time.Time `json:"startTime,omitzero"`
	EndTime   time.Time `json:"endTime,omitzero"`
	Location  string    `json:"location,omitempty"`
	Project   *ref      `json:"project"`
}

func meetingRowOf(m openproject.Meeting) (meetingRow, bool) {
	title, cut1 := capText(m.Title, capRow)
	loc, cut2 := capText(m.Location, capRow)
	return meetingRow{ID: m.ID, Title: title, StartTime: m.StartTime, EndTime: m.EndTime, Location: loc, Project: refOf(m.Project)}, cut1 || cut2
}

type agendaRow struct {
	ID              int64        `json:"id"`
	Position        int          `json:"position"`
	Title           string       `json:"title"`
	ItemType        string       `json:"itemType"`
	DurationMinutes *int         `json:"durationInMinutes,omitempty"`
	Notes           string       `json:"notes"`
	WorkPackage     *ref         `json:"workPackage,omitempty"`
	Presenter       *ref         `json:"presenter,omitempty"`
	Section         *ref         `json:"section,omitempty"`
	Outcomes        []outcomeRow `json:"outcomes"`
}

type outcomeRow struct {
	ID    int64  `json:"id"`
	Notes string `json:"notes"`
}

func agendaRowOf(it openproject.AgendaItem) (agendaRow, bool) {
	title, cut := capText(it.Title, capRow)
	notes, c := capText(it.Notes, capComment)
	cut = cut || c
	row := agendaRow{ID: it.ID, Position: it.Position, Title: title, ItemType: it.ItemType, DurationMinutes: it.DurationMinutes,
		Notes: notes, WorkPackage: optRefOf(it.WorkPackage), Presenter: optRefOf(it.Presenter), Section: optRefOf(it.Section),
		Outcomes: []outcomeRow{}}
	for _, o := range it.Outcomes {
		n, c := capText(o.Notes, capComment)
		cut = cut || c
		row.Outcomes = append(row.Outcomes, outcomeRow{ID: o.ID, Notes: n})
	}
	return row, cut
}

// --- wiki and attachments ---

type attachmentRow struct {
	ID          int64  `json:"id"`
	FileName    string `json:"fileName"`
	FileSize    int64  `json:"fileSize"`
	ContentType string `json:"contentType,omitempty"`
	Description string `json:"description,omitempty"`
	DownloadURL string `json:"downloadUrl,omitempty"`
}

func attachmentRowOf(a openproject.Attachment) (attachmentRow, bool) {
	desc, cut := capText(a.Description, capRow)
	return attachmentRow{ID: a.ID, FileName: a.FileName, FileSize: a.FileSize, ContentType: a.ContentType, Description: desc, DownloadURL: a.DownloadURL}, cut
}

// --- wiki page links ---

type wikiLinkRow struct {
	ID          int64 `json:"id"`
	WorkPackage *ref  `json:"workPackage"`
	WikiPage    *ref  `json:"wikiPage"`
}

func wikiLinkRowOf(l openproject.WikiPageLink) (wikiLinkRow, bool) {
	return wikiLinkRow{ID: l.ID, WorkPackage: refOf(l.WorkPackage), WikiPage: refOf(l.WikiPage)}, false
}

// --- schemas ---

// idOrSlug is a project reference given as a number or a string. Agents
// pass ids as JSON numbers as often as strings, so both are accepted.
type idOrSlug string

func (v *idOrSlug) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = idOrSlug(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("must be a number or a string")
	}
	if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
		return fmt.Errorf("must be a whole number or an identifier, got %s", n)
	}
	*v = idOrSlug(n.String())
	return nil
}

// numericID reports the id when the reference is numeric.
func (v idOrSlug) numericID() (int64, bool) {
	id, err := strconv.ParseInt(string(v), 10, 64)
	return id, err == nil && id > 0
}

var schemaOverrides = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[idOrSlug](): {Types: []string{"integer", "string"}},
}

// inputSchema derives a tool's input schema from its argument struct, with
// two changes to what AddTool would infer: optional pointer fields get a
// plain type instead of ["null", T] (several LLM tool APIs reject union
// types), and project references accept a number or a string. A schema
// problem is a programming error caught by the tests, like AddTool's own
// panic.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: schemaOverrides})
	if err != nil {
		panic(err)
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	return s
}

package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/scorer"
)

// The live tools read the OpenProject API directly, as the user the API
// key belongs to. They answer exact, current listings and single items;
// finding things by words is the search tools' job (local, typo-tolerant),
// and the descriptions say so where the two overlap.

// addTool registers a typed tool whose handler returns (Out, error).
// Errors go through s.fail, so the agent sees a short user-safe message and
// the log gets the cause; a *toolError is already such a message.
//
// The SDK is given Out as any: answers still arrive as structuredContent
// plus the same JSON as text, but tools/list carries no output schema.
// Output schemas for these tools would add about 6 KB to a tools/list
// answer that must stay under 24 KB, and the field names say what the
// schemas would.
func addTool[In, Out any](s *Server, srv *sdk.Server, t *sdk.Tool, h func(context.Context, In) (Out, error)) {
	t.InputSchema = inputSchema[In]()
	name := t.Name
	sdk.AddTool(srv, t, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if err := s.unreachable(); err != nil {
			return nil, nil, err
		}
		out, err := h(ctx, in)
		s.observeUpstream(err)
		if err != nil {
			var te *toolError
			if errors.As(err, &te) {
				return nil, nil, te
			}
			return nil, nil, s.fail(ctx, name, err)
		}
		return nil, out, nil
	})
}

// toolError is a failure message written for the agent (and logged where
// needed) by the tool itself, passed on unchanged.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func (s *Server) registerLiveTools(srv *sdk.Server) {
	live := func(name, desc string) *sdk.Tool {
		return &sdk.Tool{Name: name, Description: desc, Annotations: readOnlyLive()}
	}
	addTool(s, srv, live("openproject_list_projects",
		"List projects visible to the user (live API), paged."), s.listProjects)
	addTool(s, srv, live("openproject_get_project",
		"Get one project by numeric id or identifier (slug), with its description."), s.getProject)
	addTool(s, srv, live("openproject_list_work_packages",
		"List work packages (live API) by exact filters: project, status, type, assignee, subject substring. "+
			"Thin rows; use openproject_get_work_package for details. To find work packages by words or topic, prefer openproject_search_work_packages."), s.listWorkPackages)
	addTool(s, srv, live("openproject_get_work_package",
		"Get one work package in full: description, status, type, priority, people, parent, version, dates and lockVersion (needed to update it)."), s.getWorkPackage)
	addTool(s, srv, live("openproject_list_work_package_activities",
		"List a work package's journal (comments and changes), oldest first, at most 100. "+
			"With query, returns only matching entries ranked by relevance instead of the full history."), s.listActivities)
	addTool(s, srv, live("openproject_list_queries",
		"List saved queries (work package views) visible to the user."), s.listQueries)
	addTool(s, srv, live("openproject_get_query",
		"Get a saved query: its filters and sort, and one page of its work packages."), s.getQuery)
	addTool(s, srv, live("openproject_list_types",
		"List work package types (Task, Bug, ...), optionally those enabled in one project."), s.listTypes)
	addTool(s, srv, live("openproject_list_statuses",
		"List work package statuses and whether each counts as closed."), s.listStatuses)
	addTool(s, srv, live("openproject_list_priorities",
		"List work package priorities."), s.listPriorities)
	addTool(s, srv, live("openproject_list_users",
		"List users, paged (needs admin or user-management permission)."), s.listUsers)
	addTool(s, srv, live("openproject_get_openapi_spec",
		"Inspect this instance's API v3 OpenAPI spec. Without arguments: a summary (title, version, paths with methods). "+
			"path/tag/schema return only that part; full returns the raw document (cut at 100 KB)."), s.getOpenAPISpec)
	addTool(s, srv, live("openproject_list_meetings",
		"List meetings (live API), upcoming or past, optionally in one project. To find meetings by topic, prefer openproject_search_meetings."), s.listMeetings)
	addTool(s, srv, live("openproject_get_meeting",
		"Get one meeting: time, location, participants and agenda items with notes and outcomes."), s.getMeeting)
	addTool(s, srv, live("openproject_get_wiki_page",
		"Get one wiki page by numeric id: title, project, text (if the server provides it) and attachments. To find pages by words, prefer openproject_search_wiki_pages."), s.getWikiPage)
	addTool(s, srv, live("openproject_list_wiki_page_links",
		"List links between work packages and wiki pages, where the server offers them (most OpenProject versions do not)."), s.listWikiPageLinks)

	if s.opts.ReadOnly {
		srv.AddReceivingMiddleware(s.refuseWrites)
	}
}

// refuseWrites answers calls to write tools on a read-only server with a
// clear tool error: the tools are not listed, but an agent that remembers
// them from elsewhere should learn why they are missing rather than get
// "unknown tool".
func (s *Server) refuseWrites(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil && slices.Contains(writeToolNames, r.Params.Name) {
			s.log.WarnContext(ctx, "write refused on a read-only server", "tool", r.Params.Name, "request_id", requestID())
			res := &sdk.CallToolResult{}
			res.SetError(errReadOnly)
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// --- shared arguments ---

// paging are the paging arguments of list tools; pointers tell an explicit
// 0 (an error) from an absent value (the default).
type paging struct {
	PageSize *int `json:"pageSize,omitempty" jsonschema:"rows per page, 1-100 (default 20)"`
	Offset   *int `json:"offset,omitempty" jsonschema:"1-based page number (default 1)"`
}

const maxPageSize = 100

func (p paging) options(def int) (openproject.ListOptions, error) {
	o := openproject.ListOptions{PageSize: def, Offset: 1}
	if p.PageSize != nil {
		if *p.PageSize < 1 || *p.PageSize > maxPageSize {
			return o, argErr("pageSize", "must be between 1 and %d, got %d", maxPageSize, *p.PageSize)
		}
		o.PageSize = *p.PageSize
	}
	if p.Offset != nil {
		if *p.Offset < 1 {
			return o, argErr("offset", "must be a page number of 1 or more, got %d", *p.Offset)
		}
		o.Offset = *p.Offset
	}
	return o, nil
}

// parseSort accepts "field:dir[,field:dir]" or the API's JSON form.
func parseSort(s string) ([]openproject.Sort, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if strings.HasPrefix(s, "[") {
		sorts, err := openproject.ParseSortBy(s)
		if err != nil {
			return nil, argErr("sortBy", "%v", err)
		}
		return sorts, nil
	}
	var out []openproject.Sort
	for part := range strings.SplitSeq(s, ",") {
		field, dir, _ := strings.Cut(strings.TrimSpace(part), ":")
		dir = strings.ToLower(strings.TrimSpace(dir))
		if dir == "" {
			dir = "asc"
		}
		if field == "" || (dir != "asc" && dir != "desc") {
			return nil, argErr("sortBy", `want "field:asc" or "field:desc", got %q`, part)
		}
		out = append(out, openproject.Sort{Field: strings.TrimSpace(field), Direction: dir})
	}
	return out, nil
}

func parseFilters(s string) (openproject.Filters, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	// The shape is checked here first: ParseFilters would pass on the
	// JSON decoder's words for a wrong shape, which name Go types.
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, argErr("filters", "is not valid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return nil, argErr("filters", "is not valid JSON")
	}
	arr, ok := v.([]any)
	if ok {
		for _, f := range arr {
			if _, isObj := f.(map[string]any); !isObj {
				ok = false
			}
		}
	}
	if !ok {
		return nil, argErr("filters", `must be a JSON array of filter objects, e.g. [{"status":{"operator":"o","values":[]}}]`)
	}
	fs, err := openproject.ParseFilters(s)
	if err != nil {
		return nil, argErr("filters", "%v", err)
	}
	return fs, nil
}

func checkID(param string, id int64) error {
	if id <= 0 {
		return argErr(param, "must be a positive id, got %d", id)
	}
	return nil
}

// project returns the project reference as the API path wants it.
func (v idOrSlug) project(param string) (string, error) {
	s := string(v)
	if s == "" {
		return "", argErr(param, "must not be empty")
	}
	if strings.ContainsAny(s, "/?#% ") {
		return "", argErr(param, "%q is neither a numeric id nor a project identifier", s)
	}
	return s, nil
}

// projectID resolves a project reference to its numeric id, which filters
// need; an identifier costs one request.
func (s *Server) projectID(ctx context.Context, param string, v idOrSlug) (int64, error) {
	if id, ok := v.numericID(); ok {
		return id, nil
	}
	p, err := v.project(param)
	if err != nil {
		return 0, err
	}
	proj, err := s.api.Project(ctx, p)
	if err != nil {
		return 0, err
	}
	return proj.ID, nil
}

// baseURL is the instance's web address for links in answers, when the
// API implementation knows it.
func (s *Server) baseURL() string {
	if b, ok := s.api.(interface{ BaseURL() string }); ok {
		return strings.TrimRight(b.BaseURL(), "/")
	}
	return ""
}

// unsupported turns a missing endpoint into a tool error that says what is
// missing, logged like every failure.
func (s *Server) unsupported(ctx context.Context, tool string, err error, what string) error {
	id := requestID()
	s.log.WarnContext(ctx, "tool call failed", "tool", tool, "request_id", id, "error", err.Error())
	return &toolError{fmt.Sprintf("not supported by this OpenProject server: %s (request id %s)", what, id)}
}

// --- projects ---

type listProjectsIn struct {
	paging
	SortBy  string `json:"sortBy,omitempty" jsonschema:"sort, e.g. name:asc or id:desc"`
	Filters string `json:"filters,omitempty" jsonschema:"OpenProject filter JSON, e.g. [{\"active\":{\"operator\":\"=\",\"values\":[\"t\"]}}]"`
}

func (s *Server) listProjects(ctx context.Context, in listProjectsIn) (listOut[projectRow], error) {
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

func (s *Server) getProject(ctx context.Context, in projectIn) (projectDetail, error) {
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

// --- work packages ---

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

func (s *Server) listWorkPackages(ctx context.Context, in listWPIn) (listOut[wpRow], error) {
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

func (s *Server) getWorkPackage(ctx context.Context, in wpIn) (wpDetail, error) {
	if err := checkID("workPackageId", in.WorkPackageID); err != nil {
		return wpDetail{}, err
	}
	wp, err := s.api.WorkPackage(ctx, in.WorkPackageID)
	if err != nil {
		return wpDetail{}, err
	}
	return wpDetailOf(wp, s.baseURL()), nil
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

func (s *Server) listActivities(ctx context.Context, in activitiesIn) (activitiesOut, error) {
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

// --- saved queries ---

type listQueriesIn struct {
	paging
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"only queries of this project (id or identifier)"`
}

func (s *Server) listQueries(ctx context.Context, in listQueriesIn) (listOut[queryRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[queryRow]{}, err
	}
	if in.ProjectID != "" {
		id, err := s.projectID(ctx, "projectId", in.ProjectID)
		if err != nil {
			return listOut[queryRow]{}, err
		}
		opts.Filters = openproject.Filters{openproject.InProjects(id)}
	}
	p, err := s.api.ListQueries(ctx, opts)
	if err != nil {
		return listOut[queryRow]{}, err
	}
	return pageOf(p, queryRowOf), nil
}

type getQueryIn struct {
	paging
	QueryID int64 `json:"queryId" jsonschema:"saved query id"`
}

type queryOut struct {
	Query   queryDetail    `json:"query"`
	Results listOut[wpRow] `json:"results"`
}

func (s *Server) getQuery(ctx context.Context, in getQueryIn) (queryOut, error) {
	if err := checkID("queryId", in.QueryID); err != nil {
		return queryOut{}, err
	}
	opts, err := in.options(20)
	if err != nil {
		return queryOut{}, err
	}
	q, results, err := s.api.QueryWithResults(ctx, in.QueryID, opts)
	if err != nil {
		return queryOut{}, err
	}
	return queryOut{Query: queryDetailOf(q), Results: pageOf(results, wpRowOf)}, nil
}

// --- metadata ---

type typesIn struct {
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"only types enabled in this project (id or identifier)"`
}

func (s *Server) listTypes(ctx context.Context, in typesIn) (listOut[typeRow], error) {
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

func (s *Server) listStatuses(ctx context.Context, _ noArgs) (listOut[statusRow], error) {
	sts, err := s.api.Statuses(ctx)
	if err != nil {
		return listOut[statusRow]{}, err
	}
	return allOf(sts, func(st openproject.Status) statusRow {
		return statusRow{ID: st.ID, Name: st.Name, IsClosed: st.IsClosed, IsDefault: st.IsDefault}
	}), nil
}

func (s *Server) listPriorities(ctx context.Context, _ noArgs) (listOut[priorityRow], error) {
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

func (s *Server) listUsers(ctx context.Context, in usersIn) (listOut[userRow], error) {
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

// --- OpenAPI spec ---

type specIn struct {
	Path   string `json:"path,omitempty" jsonschema:"only paths containing this text, e.g. /work_packages/{id}"`
	Tag    string `json:"tag,omitempty" jsonschema:"only operations with this tag, e.g. Work Packages"`
	Schema string `json:"schema,omitempty" jsonschema:"only component schemas whose name contains this text"`
	Full   bool   `json:"full,omitempty" jsonschema:"return the raw document (large; prefer the filters)"`
}

type specPath struct {
	Path       string         `json:"path"`
	Methods    []string       `json:"methods"`
	Operations map[string]any `json:"operations,omitempty"`
}

type specOut struct {
	Title       string         `json:"title"`
	Version     string         `json:"version"`
	OpenAPI     string         `json:"openapi"`
	PathCount   int            `json:"pathCount"`
	SchemaCount int            `json:"schemaCount"`
	Tags        []string       `json:"tags"`
	Paths       []specPath     `json:"paths"`
	Schemas     map[string]any `json:"schemas"`
	Document    string         `json:"document"`
	Truncated   bool           `json:"truncated"`
}

// Size caps of spec answers, in bytes of JSON: the full document of a
// current server is about 1.2 MB.
const (
	capSpecFull    = 100 << 10
	capSpecPart    = 60 << 10
	capSpecSummary = 24 << 10
)

var httpMethods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	Swagger string `json:"swagger"`
	Info    struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"info"`
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

func (s *Server) getOpenAPISpec(ctx context.Context, in specIn) (specOut, error) {
	raw, err := s.api.OpenAPISpec(ctx)
	if err != nil {
		return specOut{}, err
	}
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return specOut{}, &openproject.Error{Kind: openproject.ErrMalformed, Method: "GET", Path: "/api/v3/spec.json", Err: err}
	}
	out := specOut{Title: doc.Info.Title, Version: doc.Info.Version, OpenAPI: cmp.Or(doc.OpenAPI, doc.Swagger),
		PathCount: len(doc.Paths), SchemaCount: len(doc.Components.Schemas), Tags: []string{}, Paths: []specPath{}, Schemas: map[string]any{}}
	for _, t := range doc.Tags {
		out.Tags = append(out.Tags, t.Name)
	}
	paths := slices.Sorted(maps.Keys(doc.Paths))
	filtered := in.Path != "" || in.Tag != "" || in.Schema != ""
	switch {
	case in.Full:
		text := string(raw)
		if len(text) > capSpecFull {
			cut := capSpecFull
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text, out.Truncated = text[:cut], true
		}
		out.Document = text
	case !filtered:
		size := 0
		for _, p := range paths {
			sp := specPath{Path: p, Methods: methodsOf(doc.Paths[p], "")}
			size += len(p) + 8*len(sp.Methods) + 30
			if size > capSpecSummary {
				out.Truncated = true
				break
			}
			out.Paths = append(out.Paths, sp)
		}
	default:
		size := 0
		if in.Path != "" || in.Tag != "" {
			needle := strings.ToLower(in.Path)
			for _, p := range paths {
				if !strings.Contains(strings.ToLower(p), needle) {
					continue
				}
				sp := specPath{Path: p, Methods: methodsOf(doc.Paths[p], in.Tag), Operations: map[string]any{}}
				if len(sp.Methods) == 0 {
					continue
				}
				for _, m := range sp.Methods {
					var op any
					_ = json.Unmarshal(doc.Paths[p][m], &op)
					sp.Operations[m] = op
					size += len(doc.Paths[p][m])
				}
				if size > capSpecPart {
					out.Truncated = true
					break
				}
				out.Paths = append(out.Paths, sp)
			}
		}
		if in.Schema != "" {
			needle := strings.ToLower(in.Schema)
			for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
				if !strings.Contains(strings.ToLower(name), needle) {
					continue
				}
				size += len(doc.Components.Schemas[name])
				if size > capSpecPart {
					out.Truncated = true
					break
				}
				var sch any
				_ = json.Unmarshal(doc.Components.Schemas[name], &sch)
				out.Schemas[name] = sch
			}
		}
	}
	return out, nil
}

// methodsOf lists a path item's operations, only those tagged tag when it
// is not empty.
func methodsOf(item map[string]json.RawMessage, tag string) []string {
	var out []string
	for _, m := range httpMethods {
		raw, ok := item[m]
		if !ok {
			continue
		}
		if tag != "" {
			var op struct {
				Tags []string `json:"tags"`
			}
			_ = json.Unmarshal(raw, &op)
			if !slices.ContainsFunc(op.Tags, func(t string) bool { return strings.EqualFold(t, tag) }) {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// --- meetings ---

type listMeetingsIn struct {
	paging
	ProjectID idOrSlug `json:"projectId,omitempty" jsonschema:"project id or identifier"`
	Time      string   `json:"time,omitempty" jsonschema:"upcoming or past"`
}

func (s *Server) listMeetings(ctx context.Context, in listMeetingsIn) (listOut[meetingRow], error) {
	opts, err := in.options(20)
	if err != nil {
		return listOut[meetingRow]{}, err
	}
	fs := openproject.Filters{}
	switch t := strings.ToLower(strings.TrimSpace(in.Time)); t {
	case "":
	case "upcoming", "past":
		fs = append(fs, openproject.Filter{Name: "time", Operator: "=", Values: []string{t}})
	default:
		return listOut[meetingRow]{}, argErr("time", "must be upcoming or past, got %q", in.Time)
	}
	if in.ProjectID != "" {
		id, err := s.projectID(ctx, "projectId", in.ProjectID)
		if err != nil {
			return listOut[meetingRow]{}, err
		}
		fs = append(fs, openproject.InProjects(id))
	}
	if len(fs) > 0 {
		opts.Filters = fs
	}
	p, err := s.api.ListMeetings(ctx, opts)
	if errors.Is(err, openproject.ErrUnsupported) {
		return listOut[meetingRow]{}, s.unsupported(ctx, "openproject_list_meetings", err,
			"it has no meetings list (OpenProject before the meetings API); use openproject_search_meetings, or openproject_get_meeting with an id")
	}
	if err != nil {
		return listOut[meetingRow]{}, err
	}
	return pageOf(p, meetingRowOf), nil
}

type getMeetingIn struct {
	ID                 int64 `json:"id" jsonschema:"meeting id"`
	IncludeAgendaItems *bool `json:"includeAgendaItems,omitempty" jsonschema:"include agenda items (default true)"`
}

type meetingOut struct {
	ID           int64       `json:"id"`
	Title        string      `json:"title"`
	StartTime    string      `json:"startTime,omitempty"`
	EndTime      string      `json:"endTime,omitempty"`
	Duration     float64     `json:"duration,omitempty"`
	Location     string      `json:"location"`
	Project      *ref        `json:"project"`
	Author       *ref        `json:"author"`
	Participants []ref       `json:"participants"`
	AgendaItems  []agendaRow `json:"agendaItems"`
	URL          string      `json:"url,omitempty"`
	Note         string      `json:"note"`
	Truncated    bool        `json:"truncated"`
}

// maxParticipants bounds the participant list of one answer.
const maxParticipants = 100

func (s *Server) getMeeting(ctx context.Context, in getMeetingIn) (meetingOut, error) {
	if err := checkID("id", in.ID); err != nil {
		return meetingOut{}, err
	}
	m, err := s.api.Meeting(ctx, in.ID)
	if err != nil {
		return meetingOut{}, err
	}
	loc, cut := capText(m.Location, capRow)
	out := meetingOut{ID: m.ID, Title: m.Title, Duration: m.Duration, Location: loc, Project: refOf(m.Project),
		Author: refOf(m.Author), Participants: []ref{}, AgendaItems: []agendaRow{}, Truncated: cut}
	if !m.StartTime.IsZero() {
		out.StartTime = m.StartTime.Format("2006-01-02T15:04:05Z07:00")
	}
	if !m.EndTime.IsZero() {
		out.EndTime = m.EndTime.Format("2006-01-02T15:04:05Z07:00")
	}
	if b := s.baseURL(); b != "" {
		out.URL = b + "/meetings/" + strconv.FormatInt(m.ID, 10)
	}
	for i, p := range m.Participants {
		if i == maxParticipants {
			out.Truncated = true
			break
		}
		if r := refOf(p); r != nil {
			out.Participants = append(out.Participants, *r)
		}
	}
	if in.IncludeAgendaItems == nil || *in.IncludeAgendaItems {
		items, err := s.api.AgendaItems(ctx, in.ID)
		switch {
		case errors.Is(err, openproject.ErrNotFound):
			// The meeting exists (we just read it), so a 404 here means the
			// server predates the agenda items API, not a hidden meeting.
			out.Note = "this OpenProject server does not provide agenda items through its API"
		case err != nil:
			// Never an empty agenda for an auth or network failure.
			return meetingOut{}, err
		}
		for _, it := range items {
			row, cut := agendaRowOf(it)
			out.AgendaItems = append(out.AgendaItems, row)
			out.Truncated = out.Truncated || cut
		}
	}
	return out, nil
}

// --- wiki ---

type wikiIn struct {
	ID int64 `json:"id" jsonschema:"wiki page id"`
}

type wikiOut struct {
	ID          int64           `json:"id"`
	Title       string          `json:"title"`
	Slug        string          `json:"slug,omitempty"`
	Project     *ref            `json:"project"`
	HasText     bool            `json:"hasText"`
	Text        string          `json:"text"`
	Attachments []attachmentRow `json:"attachments"`
	UpdatedAt   string          `json:"updatedAt,omitempty"`
	URL         string          `json:"url,omitempty"`
	Note        string          `json:"note"`
	Truncated   bool            `json:"truncated"`
}

func (s *Server) getWikiPage(ctx context.Context, in wikiIn) (wikiOut, error) {
	if err := checkID("id", in.ID); err != nil {
		return wikiOut{}, err
	}
	p, err := s.api.WikiPage(ctx, in.ID)
	if err != nil {
		return wikiOut{}, err
	}
	text, cut := capText(p.Text, capDetail)
	out := wikiOut{ID: p.ID, Title: p.Title, Slug: p.Slug, Project: refOf(p.Project), HasText: p.HasText, Text: text,
		Attachments: []attachmentRow{}, Truncated: cut}
	if !p.UpdatedAt.IsZero() {
		out.UpdatedAt = p.UpdatedAt.Format("2006-01-02T15:04:05Z07:00")
	}
	if !p.HasText {
		out.Note = "this OpenProject server does not provide wiki page text through its API; only title, project and attachments are available"
	}
	if b := s.baseURL(); b != "" && p.Slug != "" && p.Project.ID != 0 {
		out.URL = b + "/projects/" + strconv.FormatInt(p.Project.ID, 10) + "/wiki/" + url.PathEscape(p.Slug)
	}
	atts := p.Attachments
	if atts == nil {
		if atts, err = s.api.WikiPageAttachments(ctx, in.ID); err != nil {
			return wikiOut{}, err
		}
	}
	for _, a := range atts {
		row, cut := attachmentRowOf(a)
		out.Attachments = append(out.Attachments, row)
		out.Truncated = out.Truncated || cut
	}
	return out, nil
}

type wikiLinksIn struct {
	paging
	WorkPackageID int64 `json:"workPackageId,omitempty" jsonschema:"only links of this work package"`
}

func (s *Server) listWikiPageLinks(ctx context.Context, in wikiLinksIn) (listOut[wikiLinkRow], error) {
	var zero listOut[wikiLinkRow]
	opts, err := in.options(30)
	if err != nil {
		return zero, err
	}
	if in.WorkPackageID != 0 {
		if err := checkID("workPackageId", in.WorkPackageID); err != nil {
			return zero, err
		}
		opts.Filters = openproject.Filters{{Name: "workPackage", Operator: "=", Values: []string{strconv.FormatInt(in.WorkPackageID, 10)}}}
	}
	p, err := s.api.ListWikiPageLinks(ctx, opts)
	if errors.Is(err, openproject.ErrNotFound) || errors.Is(err, openproject.ErrRequest) || errors.Is(err, openproject.ErrUnsupported) {
		return zero, s.unsupported(ctx, "openproject_list_wiki_page_links", err,
			"its API v3 has no wiki page links endpoint; to find wiki pages that mention a work package, use openproject_search_wiki_pages")
	}
	if err != nil {
		return zero, err
	}
	return pageOf(p, wikiLinkRowOf), nil
}

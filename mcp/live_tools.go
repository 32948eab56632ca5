package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
func addTool[In, Out any](s *server, srv *sdk.Server, t *sdk.Tool, h func(context.Context, In) (Out, error)) {
	t.InputSchema = schemaJSON(inputSchema[In]())
	name := t.Name
	readOnly := t.Annotations == nil || t.Annotations.ReadOnlyHint
	sdk.AddTool(srv, t, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		var out Out
		err := s.live(ctx, readOnly, func(ctx context.Context) error {
			var err error
			out, err = h(ctx, in)
			return err
		})
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

// live runs h, one use of the live API, as every live tool does: refused
// at once while OpenProject is known to be down (unreachable), a read
// bounded by Options.LiveTimeout (liveDeadline; running out of it answers
// timedOut's message), and the outcome reported to Options.Upstream.
func (s *server) live(ctx context.Context, readOnly bool, h func(context.Context) error) error {
	if err := s.unreachable(); err != nil {
		return err
	}
	ctx, cancel := s.liveDeadline(ctx, readOnly)
	defer cancel()
	err := h(ctx)
	if err != nil && errors.Is(context.Cause(ctx), errLiveTimeout) {
		return s.timedOut()
	}
	s.observeUpstream(err)
	return err
}

// toolError is a failure message written for the agent (and logged where
// needed) by the tool itself, passed on unchanged. category is what the
// audit log records of it (errorCategory).
type toolError struct{ msg, category string }

func (e *toolError) Error() string { return e.msg }

func (s *server) registerLiveTools(srv *sdk.Server) {
	live := func(name, desc string) *sdk.Tool {
		return &sdk.Tool{Name: name, Description: desc, Annotations: readOnlyLive()}
	}
	addTool(s, srv, live("openproject_list_projects",
		"List projects visible to the user, paged."), s.listProjects)
	addTool(s, srv, live("openproject_get_project",
		"Get one project by numeric id or identifier (slug), with its description."), s.getProject)
	addTool(s, srv, live("openproject_list_work_packages",
		"List work packages by exact filters (project, status, type, assignee, subject text); thin rows. "+
			"To find them by topic, prefer openproject_search_work_packages."), s.listWorkPackages)
	addTool(s, srv, live("openproject_get_work_package",
		"Get one work package in full, with custom fields (by name) and lockVersion (needed to update it)."), s.getWorkPackage)
	addTool(s, srv, live("openproject_list_relations",
		"List a work package's relations (blocks, follows, relates, ...), each as seen from it, with the other work package."), s.listRelations)
	addTool(s, srv, live("openproject_list_work_package_activities",
		"List a work package's journal (comments and changes), oldest first, at most 100; with query, only matching entries, best first."), s.listActivities)
	addTool(s, srv, live("openproject_list_versions",
		"List versions (releases): of one project (own and shared) or all visible; status, dates, sharing. "+
			"With versionId: it and its work packages (at most 50)."), s.listVersions)
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
		"This instance's API v3 OpenAPI spec: without arguments a summary (paths with methods); "+
			"path/tag/schema give only that part, full the raw document (cut at 100 KB)."), s.getOpenAPISpec)
	addTool(s, srv, live("openproject_list_meetings",
		"List meetings, upcoming or past, optionally of one project. To find them by topic, prefer openproject_search_meetings."), s.listMeetings)
	addTool(s, srv, live("openproject_get_meeting",
		"Get one meeting: time, location, participants and agenda items with notes and outcomes."), s.getMeeting)
	addTool(s, srv, live("openproject_get_wiki_page",
		"Get one wiki page by id: title, project, text (if the server gives it) and attachments. To find pages by words, prefer openproject_search_wiki_pages."), s.getWikiPage)
	addTool(s, srv, live("openproject_get_attachment",
		"Get a file attached to a work package, wiki page or meeting: name, size, type, container and text (indexed, or read now), capped; never raw bytes."), s.getAttachment)
	addTool(s, srv, live("openproject_list_wiki_page_links",
		"List links between work packages and wiki pages, where the server has them (most versions do not)."), s.listWikiPageLinks)
	addTool(s, srv, live(toolWorkPackageContext,
		"One call before working on a work package: it in full, its newest comments, relations, meetings and wiki pages that mention it (local index), "+
			"its project's statuses and types. Each part capped, saying what it left out."), s.workPackageContext)
	addTool(s, srv, live(toolMyWork,
		"Your work in one call: open work packages assigned to you, yours updated since a time (closed too), upcoming meetings you are invited to. "+
			"Each list capped, saying what it left out."), s.myWork)
	addTool(s, srv, live("openproject_list_time_entries",
		"List logged time, newest first, by work package, project, user and day range (from/to)."), s.listTimeEntries)

	if s.opts.ReadOnly {
		srv.AddReceivingMiddleware(s.refuseWrites)
	}
}

// refuseWrites answers calls to write tools on a read-only server with a
// clear tool error: the tools are not listed, but an agent that remembers
// them from elsewhere should learn why they are missing rather than get
// "unknown tool".
func (s *server) refuseWrites(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil && slices.Contains(writeToolNames, r.Params.Name) {
			s.log.WarnContext(ctx, "write refused on a read-only server", "tool", r.Params.Name, "request_id", callID(ctx))
			res := &sdk.CallToolResult{}
			res.SetError(errReadOnly)
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// baseURL is the instance's web address for links in answers, without a
// trailing slash.
func (s *server) baseURL() string {
	return strings.TrimRight(s.api.BaseURL(), "/")
}

// unsupported turns a missing endpoint into a tool error that says what is
// missing, logged like every failure.
func (s *server) unsupported(ctx context.Context, tool string, err error, what string) error {
	id := callID(ctx)
	s.log.WarnContext(ctx, "tool call failed", "tool", tool, "request_id", id, "error", err.Error())
	return &toolError{msg: fmt.Sprintf("not supported by this OpenProject server: %s (request id %s)", what, id), category: "unsupported"}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opsearch/opsearch/kind"
	"github.com/opsearch/opsearch/openproject"
	"github.com/opsearch/opsearch/search"
)

// The resources: one item of OpenProject by URI,
// openproject://<collection>/<id>, listed as resource templates (an
// instance holds too many items to list them one by one), and each
// search result names its item's URI. An agent or a person reads the
// item in full without a tool call; a client can attach it to a
// conversation.
//
// Who sees what. A resource read answers exactly what the user may see,
// never more, by this rule:
//
//   - From the local store when the user's index shows the item. A
//     user's own index holds only what OpenProject showed them: all of it
//     is theirs. An index every user of the instance shares is read only
//     through the user's own view of it (search.Engine.Item): the item's
//     document must be one the user's restricted index shows, exactly as
//     their searches would find it, and a work package's internal
//     comments show only where the user reads them. With
//     Options.VerifyResults, OpenProject is asked too, as for a search
//     result.
//   - Otherwise live, from OpenProject with the user's own key, the way
//     the get_* tools read: an item not indexed yet (or not yet in the
//     user's view) is still found, and one OpenProject hides from the
//     user is not.
//   - What neither shows is not found: the answer is the SDK's
//     resource-not-found error (the protocol's 404), the same for an item
//     that does not exist and for one the user may not see, so the answer
//     tells nothing of the other's items.
//
// The contents are JSON in the get_* tools' shapes, with the same caps
// (capDetail, capComment, capRow), plus "source": "index" or "live".

// Resource URIs and MIME types.
const (
	// resourceScheme begins every item's URI.
	resourceScheme = "openproject://"
	// UISearchURI is the MCP Apps view of a search answer (searchUI).
	UISearchURI = "ui://opsearch/search"
	// mimeMCPApp is the MCP Apps HTML profile (SEP-1865, 2026-01-26:
	// "mimeType MUST be text/html;profile=mcp-app").
	mimeMCPApp = "text/html;profile=mcp-app"
	mimeJSON   = "application/json"
)

// itemResource is one kind of item read as a resource.
type itemResource struct {
	kind kind.Kind
	// collection is the URI's path segment, as OpenProject's API names
	// the collection.
	collection   string
	name, title  string
	description  string
	readLiveItem func(s *server, ctx context.Context, id int64) (any, error)
}

var itemResources = []itemResource{
	{kind.Project, "projects", "project", "OpenProject project",
		"A project by numeric id: identifier, name, status, description.",
		(*server).liveProject},
	{kind.WorkPackage, "work_packages", "work_package", "OpenProject work package",
		"A work package by id: subject, description, status, type, people, dates and its comments (the newest 100).",
		(*server).liveWorkPackage},
	{kind.WikiPage, "wiki_pages", "wiki_page", "OpenProject wiki page",
		"A wiki page by id: title, project, text and attachments.",
		(*server).liveWikiPage},
	{kind.Meeting, "meetings", "meeting", "OpenProject meeting",
		"A meeting by id: time, location, participants and agenda items with notes and outcomes.",
		(*server).liveMeeting},
}

// resourceURI is the URI of item id of kind k, "" for a kind without
// resources (attachments: openproject_get_attachment reads them).
func resourceURI(k kind.Kind, id int64) string {
	for _, r := range itemResources {
		if r.kind == k {
			return resourceScheme + r.collection + "/" + strconv.FormatInt(id, 10)
		}
	}
	return ""
}

// registerResources adds the item resource templates and the search UI.
func (s *server) registerResources(srv *sdk.Server) {
	for _, r := range itemResources {
		srv.AddResourceTemplate(&sdk.ResourceTemplate{
			URITemplate: resourceScheme + r.collection + "/{id}",
			Name:        r.name, Title: r.title, Description: r.description, MIMEType: mimeJSON,
		}, s.readItem(r))
	}
	srv.AddResource(&sdk.Resource{
		URI: UISearchURI, Name: "search_results", Title: "Search results",
		Description: "MCP Apps view of an openproject_search answer: a compact list with kind, title, project, status, snippet and freshness.",
		MIMEType:    mimeMCPApp,
		Meta:        sdk.Meta{"ui": uiResourceMeta()},
	}, s.readSearchUI)
}

// readItem is the handler of r's template.
func (s *server) readItem(r itemResource) sdk.ResourceHandler {
	prefix := resourceScheme + r.collection + "/"
	what := "resources/read " + r.name
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		idText, ok := strings.CutPrefix(uri, prefix)
		id, err := strconv.ParseInt(idText, 10, 64)
		if !ok || err != nil || id <= 0 || strconv.FormatInt(id, 10) != idText {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		out, err := s.item(ctx, r, id)
		var te *toolError
		switch {
		case errors.Is(err, openproject.ErrNotFound), errors.Is(err, openproject.ErrPermission):
			return nil, sdk.ResourceNotFoundError(uri)
		case errors.As(err, &te):
			return nil, readError{te}
		case err != nil:
			// fail logs the cause and words it for the caller.
			if !errors.As(s.fail(ctx, what, err), &te) {
				te = &toolError{msg: "internal error", category: "internal"}
			}
			return nil, readError{te}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", uri, err)
		}
		return &sdk.ReadResourceResult{
			Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mimeJSON, Text: string(b)}},
			// The user's own: no one else's client or cache may keep it,
			// and it changes with every sync.
			Cacheable: sdk.Cacheable{CacheScope: "private"},
		}, nil
	}
}

// readError is a failed read's answer: an internal error for the
// protocol, whose message is te's (user-safe, with the request id), and
// te's category for the audit log (callOutcome).
type readError struct{ te *toolError }

func (e readError) Error() string { return e.te.msg }

// Unwrap gives the SDK the JSON-RPC error code and the audit log the
// tool error.
func (e readError) Unwrap() []error {
	return []error{e.te, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: e.te.msg}}
}

// isResourceNotFound reports whether err is the SDK's
// ResourceNotFoundError.
func isResourceNotFound(err error) bool {
	var got, nf *jsonrpc.Error
	return errors.As(err, &got) && errors.As(sdk.ResourceNotFoundError(""), &nf) && got.Code == nf.Code && got.Message == nf.Message
}

// item reads item id of r's kind by the rule at the top of this file:
// from the store when the user's index shows it, else live.
func (s *server) item(ctx context.Context, r itemResource, id int64) (any, error) {
	it, found, err := s.storedItem(ctx, r.kind, id)
	if err != nil {
		return nil, err
	}
	if found {
		return s.itemOut(it), nil
	}
	var out any
	err = s.live(ctx, true, func(ctx context.Context) error {
		var err error
		out, err = r.readLiveItem(s, ctx, id)
		return err
	})
	return out, err
}

// storedItem is item id of kind k from the user's index, if it shows it.
// An index that is not open, or not ready for the user yet, shows
// nothing: the item is then read live.
func (s *server) storedItem(ctx context.Context, k kind.Kind, id int64) (search.Item, bool, error) {
	if s.idx == nil {
		return search.Item{}, false, nil
	}
	sr, err := s.idx.Searcher()
	if err != nil {
		return search.Item{}, false, nil
	}
	ir, ok := sr.(itemReader)
	if !ok {
		return search.Item{}, false, nil
	}
	it, found, err := ir.Item(ctx, k, id)
	if errors.Is(err, ErrIndexNotReady) {
		return search.Item{}, false, nil
	}
	if err != nil || !found {
		return search.Item{}, false, err
	}
	if s.verify != nil {
		// As for a search result: what OpenProject no longer shows the
		// user is not shown from the index; reading it live says so.
		denied, unknown, err := s.verify.check(ctx, []search.Result{{Kind: k, ID: id}})
		if err != nil {
			return search.Item{}, false, err
		}
		if denied[0] || unknown[0] {
			return search.Item{}, false, nil
		}
	}
	return it, true, nil
}

// Resource contents: the get_* tools' answers, and where they came from.
type (
	projectResource struct {
		projectDetail
		Source string `json:"source"`
	}
	wpResource struct {
		wpDetail
		// Comments are the work package's comments, oldest first: the
		// newest maxActivities when it has more (CommentsTotal says how
		// many).
		Comments      []activityRow `json:"comments"`
		CommentsTotal int           `json:"commentsTotal"`
		Source        string        `json:"source"`
	}
	wikiResource struct {
		wikiOut
		Source string `json:"source"`
	}
	meetingResource struct {
		meetingOut
		Source string `json:"source"`
	}
)

// Where a resource's contents came from.
const (
	sourceIndex = "index"
	sourceLive  = "live"
)

// itemOut shapes a stored item as its resource.
func (s *server) itemOut(it search.Item) any {
	base := s.baseURL()
	switch {
	case it.WorkPackage != nil:
		out := wpResource{wpDetail: wpDetailOf(*it.WorkPackage, base), Source: sourceIndex}
		out.addComments(it.Activities)
		return out
	case it.WikiPage != nil:
		atts := it.Attachments
		if len(atts) == 0 {
			atts = it.WikiPage.Attachments
		}
		return wikiResource{wikiOut: wikiOutOf(*it.WikiPage, atts, base), Source: sourceIndex}
	case it.Meeting != nil:
		out := meetingResource{meetingOut: meetingOutOf(*it.Meeting, base), Source: sourceIndex}
		out.addAgenda(it.Meeting.AgendaItems)
		return out
	case it.Project != nil:
		return projectResource{projectDetail: projectDetailOf(*it.Project, base), Source: sourceIndex}
	}
	return nil
}

// addComments adds the comments of a work package's journal acts, the
// newest maxActivities of them, capped.
func (out *wpResource) addComments(acts []openproject.Activity) {
	out.Comments = []activityRow{}
	var comments []openproject.Activity
	for _, a := range acts {
		if a.IsComment() {
			comments = append(comments, a)
		}
	}
	out.CommentsTotal = len(comments)
	if len(comments) > maxActivities {
		comments, out.Truncated = comments[len(comments)-maxActivities:], true
	}
	for _, a := range comments {
		row, cut := activityRowOf(a)
		out.Comments = append(out.Comments, row)
		out.Truncated = out.Truncated || cut
	}
}

func (s *server) liveProject(ctx context.Context, id int64) (any, error) {
	p, err := s.getProject(ctx, projectIn{ProjectID: idOrSlug(strconv.FormatInt(id, 10))})
	return projectResource{projectDetail: p, Source: sourceLive}, err
}

func (s *server) liveWorkPackage(ctx context.Context, id int64) (any, error) {
	d, err := s.getWorkPackage(ctx, wpIn{WorkPackageID: id})
	if err != nil {
		return nil, err
	}
	acts, err := s.api.Activities(ctx, id)
	if err != nil {
		return nil, err
	}
	out := wpResource{wpDetail: d, Source: sourceLive}
	out.addComments(acts)
	return out, nil
}

func (s *server) liveWikiPage(ctx context.Context, id int64) (any, error) {
	w, err := s.getWikiPage(ctx, wikiIn{ID: id})
	return wikiResource{wikiOut: w, Source: sourceLive}, err
}

func (s *server) liveMeeting(ctx context.Context, id int64) (any, error) {
	m, err := s.getMeeting(ctx, getMeetingIn{ID: id})
	return meetingResource{meetingOut: m, Source: sourceLive}, err
}
